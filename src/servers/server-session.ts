// One server session to a server process: one spawn of it, the initialize handshake, the table of
// requests in flight (with their timeouts), and teardown that settles every one of them. Forwarded
// calls are relayed as raw lines; only the gateway's own requests (initialize, lists) are promises.
// A session lives once; the supervised connection (connection.ts) starts a new one to reconnect.
// A server of the 2026-07-28 revision (era.ts) has no handshake: `server/discover` stands for
// initialize, every request carries the `_meta` envelope, change notifications come on a
// `subscriptions/listen` request kept open, and an input-required answer to an agent's call is turned
// into ordinary server→client requests (hooks.request, related to the call) whose answers go back in
// the retried call (`inputResponses` + the server's `requestState`), same id, same session.

import { InitializeResultSchema } from '@modelcontextprotocol/core';
import { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } from '../wire/protocol.js';
import { DEFAULT_LIMITS, type ServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import {
  encodeError, encodeNotification, encodeRequest, parseMessage,
  type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId,
} from '../wire/jsonrpc.js';
import type { JsonRpcErrorObject } from '../errors.js';
import { PARAM_HEADERS, type WithParamHeaders } from '../wire/era.js';
import { RAW_REQUEST, spliceRequest, type WithRawRequest } from '../wire/request-splice.js';
import { StdioProcess, type StopTimings, DEFAULT_STOP_TIMINGS } from './stdio-process.js';
import type { UpstreamCredentials } from './credentials.js';
import { HttpTransport } from './http-transport.js';
import { SseTransport } from './sse-transport.js';
import type { ServerTransport, TransportFactory } from './transport.js';
import { GATEWAY_INFO } from '../version.js';
import {
  CLIENT_CAPABILITIES, listenFilter, MAX_INPUT_ROUNDS, mcpName, MODERN_PROTOCOL_VERSION, readDiscover, readInputRequired,
  wantedEra, withEnvelope, type SessionEra,
} from './era.js';

export type SessionState = 'connecting' | 'ready' | 'failed' | 'closed';

/** Where the answer to one request goes. Exactly one of reply/fail is called, once. */
export interface CallSink {
  /** The server answered; `line` is the raw text, so the caller can relay it without re-encoding. */
  reply(msg: JsonRpcResponse, line: string): void;
  /** The call ended without an answer (timeout, server gone, shutdown). */
  fail(err: GatewayError): void;
  /** A progress notification for this call (its token was rewritten to the call's id). */
  progress?(params: Record<string, unknown>): void;
  /**
   * The server ended this call's answer stream to be polled (SEP-1699): it is resumed after
   * `retryMs`, or sooner by `resume()` (when the agent, told the same, comes back sooner).
   */
  paused?(retryMs: number, resume: () => void): void;
}

export interface SessionHooks {
  /** A notification the session does not consume itself (list_changed, logging, resources/updated…). */
  notification(session: ServerSession, msg: JsonRpcNotification): void;
  /**
   * A server→client request other than ping; answer with session.respond / session.respondError.
   * `related` is the id of the forwarded call it belongs to, when the transport knows (HTTP).
   */
  request(session: ServerSession, msg: JsonRpcRequest, related?: number): void;
  state(session: ServerSession, state: SessionState, reason?: GatewayError): void;
  /** A forwarded call ended: answered (true), or timed out / could not be written (false). */
  outcome?(session: ServerSession, ok: boolean): void;
}

export interface SessionOptions {
  startupTimeoutMs: number;
  stopTimings?: StopTimings;
  /** Request ids shared by every session of one connection, so an id is never reused after a reconnect. */
  ids?: { next: number };
  /** How to reach the server; default: spawn a stdio child (remote servers pass theirs). */
  transport?: TransportFactory;
  /** Names of mcpgate's own secret variables, never inherited by a stdio server. */
  secretEnv?: () => ReadonlySet<string>;
  /** The era an `"era": "auto"` server was found to speak, shared by a connection's sessions (probe once). */
  era?: { known?: SessionEra };
  /** A Streamable HTTP server's OAuth credentials (kept by the connection across sessions). */
  credentials?: UpstreamCredentials;
}

/** One round of a modern server's input requests for one call: the agent's answers as they come. */
interface InputRound {
  answers: Record<string, unknown>;
  keys: Map<string, string>;
  requestState: string | undefined;
}

interface Pending {
  sink: CallSink;
  /** An agent's call (its outcome feeds the circuit breaker), not one of the gateway's own requests. */
  forwarded: boolean;
  method: string;
  timeoutMs: number;
  /** performance.now() by which the server must answer (pushed back by progress, never past `ceiling`). */
  deadline: number;
  /** performance.now() past which the call ends however much progress it reports (hardening §5). */
  ceiling: number;
  /** performance.now() of the call's last progress notification, if any. */
  progressAt?: number;
  /** A modern server's forwarded call: the request as sent, to retry it with the agent's input. */
  request?: JsonRpcRequest;
  /** Input-required rounds so far, and the one waiting for the agent's answers. */
  rounds?: number;
  input?: InputRound;
}

/** Timeouts are checked by one sweep per connection, at a tenth of the shortest timeout (10 ms–1 s). */
const MIN_SWEEP_MS = 10;
const MAX_SWEEP_MS = 1000;

export interface ServerInfo {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string };
  instructions: string | undefined;
}

/** The share of the startup time an "auto" server's `server/discover` probe may take before initialize is tried. */
const PROBE_SHARE = 0.5;
/** A listen stream that keeps failing is given up after this many tries in a row (logged). */
const MAX_LISTEN_FAILURES = 5;
const LISTEN_RETRY_MS = 1000;
/** The prefix of the ids of input requests relayed to agents (a server's own ids never reach respond with it). */
const INPUT_ID = 'mcpgate-input-';

export class ServerSession {
  readonly name: string;
  state: SessionState = 'connecting';
  info: ServerInfo | undefined;
  lastError: GatewayError | undefined;
  private readonly pending = new Map<number, Pending>();
  // One interval instead of a timer per call: creating and clearing a Node timer on every call of a
  // sequential agent rebuilds the timer list each time, measurably on the hot path.
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweepMs = Infinity;
  private readonly ids: { next: number };
  /** The server's `limits.maxCallMs`: a call's total ceiling. */
  private readonly ceilingMs: number;
  private process: ServerTransport | undefined;
  private closing: Promise<void> | undefined;
  /** `modern`: the server speaks 2026-07-28 (no session; the envelope on every request). */
  era: SessionEra = 'legacy';
  /** The open `subscriptions/listen` request's id (modern only), and its failures in a row. */
  private listenId: number | undefined;
  private listenFailures = 0;
  private listenTimer: NodeJS.Timeout | undefined;
  private readonly resourceSubscriptions = new Set<string>();
  /** The synthetic ids of input requests relayed to agents → the call and the key they answer. */
  private readonly inputs = new Map<string, { callId: number; round: InputRound; key: string }>();

  constructor(
    readonly config: ServerConfig,
    private readonly hooks: SessionHooks,
    private readonly log: Logger,
    private readonly options: SessionOptions,
  ) {
    this.name = config.name;
    this.ids = options.ids ?? { next: 1 };
    this.ceilingMs = config.limits?.maxCallMs ?? DEFAULT_LIMITS.maxCallMs;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Spawns and initializes the server. Resolves when ready; rejects (and marks `failed`) otherwise. */
  async start(): Promise<void> {
    const events = {
      line: (line: string, related?: number) => this.onLine(line, related),
      overflow: (length: number) => this.log.warn('server sent a message over the size limit; discarded', { length }),
      exit: (reason: GatewayError) => this.onExit(reason),
      fail: (id: number, reason: GatewayError) => this.onFailed(id, reason),
      paused: (id: number, retryMs: number) => this.pending.get(id)?.sink.paused?.(retryMs, () => this.process?.resumeNow?.(id)),
    };
    const open = this.options.transport;
    if (open !== undefined) this.process = open(this.config, this.log, events);
    else if (this.config.type === 'stdio') this.process = new StdioProcess(this.config, this.log, events, { secretEnv: this.options.secretEnv });
    else if (this.config.type === 'http') this.process = new HttpTransport(this.config, this.log, events, this.options.credentials === undefined ? {} : { credentials: this.options.credentials });
    else this.process = new SseTransport(this.config, this.log, events);
    const wanted = wantedEra(this.config);
    const started = performance.now();
    let probed: 'answered' | 'silent' | undefined;
    if (wanted === '2026-07-28' || (wanted === 'auto' && this.options.era?.known !== 'legacy')) {
      probed = await this.discover(wanted === 'auto');
      if (probed === undefined) return;
    }
    const params = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: CLIENT_CAPABILITIES, clientInfo: GATEWAY_INFO };
    // After a probe that went unanswered, initialize gets what is left of the startup time.
    const timeoutMs = probed === 'silent' ? Math.max(1, this.options.startupTimeoutMs - Math.round(performance.now() - started)) : this.options.startupTimeoutMs;
    let raw: Record<string, unknown>;
    try {
      raw = await this.request('initialize', params, timeoutMs);
    } catch (err) {
      // An "auto" server remembered as legacy (its probe crashed it) that refuses initialize: probe it next time.
      if (wanted === 'auto' && this.options.era !== undefined && this.state === 'connecting' && !(err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT')) delete this.options.era.known;
      const reason = err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT'
        ? new GatewayError('MCPG_SERVER_START_FAILED', `server "${this.name}" did not answer ${probed === 'silent' ? 'server/discover or initialize' : 'initialize'} within ${this.options.startupTimeoutMs} ms`, { server: this.name })
        : toStartError(err, this.name);
      this.fail(reason);
      throw reason;
    }
    const parsed = InitializeResultSchema.safeParse(raw);
    if (!parsed.success) {
      const reason = new GatewayError('MCPG_SERVER_START_FAILED', `server "${this.name}" sent an invalid initialize result: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { server: this.name });
      this.fail(reason);
      throw reason;
    }
    const result = parsed.data;
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(result.protocolVersion)) {
      const reason = new GatewayError('MCPG_SERVER_START_FAILED', `server "${this.name}" speaks protocol ${result.protocolVersion}, which mcpgate does not support (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`, { server: this.name });
      this.fail(reason);
      throw reason;
    }
    this.info = {
      protocolVersion: result.protocolVersion,
      capabilities: result.capabilities,
      serverInfo: { name: result.serverInfo.name, version: result.serverInfo.version },
      instructions: result.instructions,
    };
    this.notify('notifications/initialized');
    if (this.options.era !== undefined && wanted === 'auto') this.options.era.known = 'legacy';
    this.setState('ready');
  }

  /**
   * `server/discover` in place of initialize. Undefined: the server speaks 2026-07-28 and the session
   * is ready. Otherwise (only when `fallback`, for "auto") it does not, and initialize comes next:
   * `answered` — it refused or did not offer the revision; `silent` — no answer within the probe's
   * share of the startup time (a legacy server may drop what it does not know before initialize).
   * Any other failure fails the start; a server that died of the probe is initialized next time.
   */
  private async discover(fallback: boolean): Promise<'answered' | 'silent' | undefined> {
    this.era = 'modern';
    let raw: Record<string, unknown>;
    const timeoutMs = fallback ? Math.max(1, Math.floor(this.options.startupTimeoutMs * PROBE_SHARE)) : this.options.startupTimeoutMs;
    try {
      raw = await this.request('server/discover', undefined, timeoutMs);
    } catch (err) {
      const alive = this.closing === undefined && this.state === 'connecting';
      const timedOut = err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT';
      if (fallback && alive) {
        this.log.debug(timedOut ? 'server/discover went unanswered; falling back to initialize' : 'server/discover was refused; falling back to initialize', { error: err instanceof Error ? err.message : String(err) });
        this.era = 'legacy';
        return timedOut ? 'silent' : 'answered';
      }
      if (fallback && this.options.era !== undefined && this.closing === undefined) this.options.era.known = 'legacy';
      const reason = timedOut
        ? new GatewayError('MCPG_SERVER_START_FAILED', `server "${this.name}" did not answer server/discover within ${this.options.startupTimeoutMs} ms`, { server: this.name })
        : err instanceof GatewayError && err.code !== 'MCPG_SERVER_START_FAILED' && err.code !== 'MCPG_SERVER_NEEDS_LOGIN'
          ? new GatewayError('MCPG_SERVER_START_FAILED', `${err.message} (before completing server/discover; ${fallback ? 'the probe for its era: it is initialized next time' : `the entry's "era" is "${MODERN_PROTOCOL_VERSION}"`})`, { server: this.name, cause: err })
          : toStartError(err, this.name);
      this.fail(reason);
      throw reason;
    }
    const found = readDiscover(raw, this.name);
    if (typeof found === 'string') {
      if (fallback) {
        this.log.debug('server/discover did not offer 2026-07-28; falling back to initialize', { why: found });
        this.era = 'legacy';
        return 'answered';
      }
      const reason = new GatewayError('MCPG_SERVER_START_FAILED', `server "${this.name}" cannot be spoken to in the ${MODERN_PROTOCOL_VERSION} era: ${found} (set its "era" to "2025" or "auto")`, { server: this.name });
      this.fail(reason);
      throw reason;
    }
    this.info = { protocolVersion: MODERN_PROTOCOL_VERSION, ...found };
    if (this.options.era !== undefined) this.options.era.known = 'modern';
    this.setState('ready');
    this.listen();
    return undefined;
  }

  /**
   * Opens the `subscriptions/listen` request that carries a modern server's change notifications (it
   * stays open; its answer, or its failure, ends it and it is reopened, up to MAX_LISTEN_FAILURES in
   * a row). Reopened with the new filter when the resource subscriptions change.
   */
  private listen(): void {
    if (this.listenId !== undefined) {
      const old = this.listenId;
      this.listenId = undefined;
      this.cancel(old, 'the subscription filter changed');
    }
    if (this.state !== 'ready' || this.closing !== undefined || this.info === undefined) return;
    const filter = listenFilter(this.info.capabilities, this.resourceSubscriptions);
    if (filter === undefined) return;
    // Declared before the call: a write that fails at once ends the listen inside call() itself.
    let id = 0;
    const ended = (why: string): void => {
      if (this.listenId !== id) return;
      this.listenId = undefined;
      if (this.state !== 'ready' || this.closing !== undefined) return;
      this.listenFailures += 1;
      if (this.listenFailures > MAX_LISTEN_FAILURES) return this.log.warn('the subscriptions/listen stream keeps ending; change notifications from this server are not followed', { why });
      this.listenTimer = setTimeout(() => this.listen(), LISTEN_RETRY_MS);
      this.listenTimer.unref();
    };
    id = this.call('subscriptions/listen', { notifications: filter }, {
      reply: (msg) => ended('error' in msg ? msg.error.message : 'the server ended the subscription'),
      fail: (err) => ended(err.message),
    }, Infinity);
    if (this.pending.has(id)) this.listenId = id;
  }

  /** Sends a request whose answer goes to `sink`; returns the id used on this connection. */
  call(method: string, params: Record<string, unknown> | undefined, sink: CallSink, timeoutMs = this.config.timeout): number {
    const id = this.ids.next++;
    if (this.closing !== undefined || this.state === 'failed' || this.state === 'closed') {
      sink.fail(this.unavailable());
      return id;
    }
    const now = performance.now();
    // The listen request (timeout Infinity) has no deadline and no ceiling: it is open by design.
    const ceiling = timeoutMs === Infinity ? Infinity : now + this.ceilingMs;
    this.track(id, { sink, forwarded: false, method, timeoutMs, deadline: Math.min(now + timeoutMs, ceiling), ceiling });
    const modern = this.era === 'modern';
    if (modern) {
      if (method === 'resources/subscribe' || method === 'resources/unsubscribe') {
        this.settle(id);
        this.subscribe(method, params?.uri, sink);
        return id;
      }
      params = withEnvelope(params);
    }
    if (!this.process!.write(encodeRequest(id, method, params), id, modern ? { method, name: mcpName(method, params) } : undefined)) {
      this.settle(id)?.sink.fail(this.unavailable());
    }
    return id;
  }

  /**
   * Forwards an agent's request object as is, after re-addressing it (hot path: one stringify).
   * Returns the id used on this connection, or 0 when nothing was sent (the sink has been told why):
   * a call refused before it left is never pending and never counts against the breaker.
   */
  forward(msg: JsonRpcRequest, sink: CallSink, timeoutMs: number = this.config.timeout): number {
    if (this.state !== 'ready' || this.closing !== undefined) {
      sink.fail(this.unavailable());
      return 0;
    }
    const id = this.ids.next++;
    msg.id = id;
    const meta = msg.params?._meta as Record<string, unknown> | undefined;
    if (meta !== undefined && meta.progressToken !== undefined) meta.progressToken = id;
    const modern = this.era === 'modern';
    if (modern) {
      msg.params = withEnvelope(msg.params);
    }
    // The agent's own line with only the id and the name replaced, where that is certain to mean the
    // same (wire/request-splice.ts); else the parsed request encoded again.
    const raw = (msg as WithRawRequest)[RAW_REQUEST];
    const params = msg.params;
    let line: string | undefined;
    if (raw !== undefined && !modern && params !== undefined && raw.params === params && typeof params.name === 'string' && params._meta === undefined) line = spliceRequest(raw.line, id, params.name);
    try {
      line ??= JSON.stringify(msg);
    } catch (err) {
      sink.fail(new GatewayError('MCPG_INVALID_PARAMS', `${msg.method}: the request could not be encoded for server "${this.name}": ${err instanceof Error ? err.message : String(err)}`));
      return 0;
    }
    const now = performance.now();
    const ceiling = now + this.ceilingMs;
    this.track(id, { sink, forwarded: true, method: msg.method, timeoutMs, deadline: Math.min(now + timeoutMs, ceiling), ceiling, ...(modern && { request: msg }) });
    if (!this.process!.write(line, id, modern ? { method: msg.method, name: mcpName(msg.method, msg.params), params: (msg as WithParamHeaders)[PARAM_HEADERS] } : undefined)) {
      this.settle(id)?.sink.fail(this.unavailable());
      this.hooks.outcome?.(this, false);
    }
    return id;
  }

  /** Awaitable request for the gateway's own use (initialize, lists, setLevel). */
  request(method: string, params?: Record<string, unknown>, timeoutMs = this.config.timeout): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.call(method, params, {
        reply: (msg) => {
          if ('result' in msg) resolve(msg.result);
          else reject(new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${this.name}" answered ${method} with error ${msg.error.code}: ${msg.error.message}`, { server: this.name, detail: { serverError: msg.error } }));
        },
        fail: reject,
      }, timeoutMs);
    });
  }

  /** Abandons a call: the server is told (`notifications/cancelled`) and a late answer is dropped. */
  cancel(id: number, reason: string): void {
    if (this.settle(id) === undefined) return;
    // Over HTTP a modern request is cancelled by closing its stream; over stdio by the notification.
    if (this.era === 'modern' && this.process?.abort !== undefined) return this.process.abort(id);
    this.process?.write(encodeNotification('notifications/cancelled', { requestId: id, reason }));
  }

  notify(method: string, params?: Record<string, unknown>): void {
    // A modern server takes no session-level notifications (initialized, roots/list_changed…).
    if (this.era === 'modern') return;
    this.process?.write(encodeNotification(method, params));
  }

  respond(id: RequestId, result: unknown): void {
    // An answer to one of our synthetic input requests is never the server's to see (late ones: dropped).
    if (typeof id === 'string' && id.startsWith(INPUT_ID)) {
      if (this.inputs.has(id)) this.inputAnswered(id, { result });
      return;
    }
    this.process?.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`);
  }

  respondError(id: RequestId, error: JsonRpcErrorObject): void {
    if (typeof id === 'string' && id.startsWith(INPUT_ID)) {
      if (this.inputs.has(id)) this.inputAnswered(id, { error });
      return;
    }
    this.process?.write(encodeError(id, error));
  }

  /**
   * `resources/subscribe` / `unsubscribe` to a modern server: the revision has neither; the URI joins
   * (or leaves) the listen stream's filter, which is reopened, and the agent gets the empty result.
   */
  private subscribe(method: string, uri: unknown, sink: CallSink): void {
    if (typeof uri !== 'string') return sink.fail(new GatewayError('MCPG_INVALID_PARAMS', `${method}: params.uri must be a string`));
    const had = this.resourceSubscriptions.has(uri);
    if (method === 'resources/subscribe') this.resourceSubscriptions.add(uri);
    else this.resourceSubscriptions.delete(uri);
    if (had !== this.resourceSubscriptions.has(uri)) this.listen();
    sink.reply({ jsonrpc: '2.0', id: 0, result: {} }, '{"jsonrpc":"2.0","id":0,"result":{}}');
  }

  /**
   * A modern server answered an agent's call with an input-required result: its input requests go to
   * the agent as server→client requests related to the call (synthetic string ids, never sent to the
   * server), and the call stays pending until every one is answered, then is retried. True: handled.
   */
  private inputRequired(id: number, result: Record<string, unknown>): boolean {
    const entry = this.pending.get(id);
    if (entry === undefined || entry.request === undefined) return false;
    const read = readInputRequired(result);
    if (read === undefined) return false;
    if (typeof read === 'string') {
      this.settle(id);
      entry.sink.fail(new GatewayError('MCPG_INPUT_FAILED', `server "${this.name}" sent ${read}; the call was ended`, { server: this.name }));
      return true;
    }
    entry.rounds = (entry.rounds ?? 0) + 1;
    if (entry.rounds > MAX_INPUT_ROUNDS) {
      this.settle(id);
      entry.sink.fail(new GatewayError('MCPG_INPUT_ROUNDS_EXCEEDED', `server "${this.name}" still asked for input after ${MAX_INPUT_ROUNDS} rounds of ${entry.method}; the call was ended`, { server: this.name, detail: { rounds: MAX_INPUT_ROUNDS } }));
      return true;
    }
    // Waiting for a person (elicitation) is the agent's time, not the server's: the timeout restarts.
    entry.deadline = Math.min(performance.now() + entry.timeoutMs, entry.ceiling);
    const round: InputRound = { answers: {}, keys: new Map(), requestState: read.requestState };
    entry.input = round;
    if (read.requests.length === 0) {
      this.retry(id, entry, round);
      return true;
    }
    read.requests.forEach(([key], n) => {
      const sid = `${INPUT_ID}${id}-${entry.rounds}-${n}`;
      round.keys.set(sid, key);
      this.inputs.set(sid, { callId: id, round, key });
    });
    let n = 0;
    for (const [, method, params] of read.requests) {
      const sid = `${INPUT_ID}${id}-${entry.rounds}-${n++}`;
      if (this.inputs.has(sid)) this.hooks.request(this, { jsonrpc: '2.0', id: sid, method, params: params ?? {} }, id);
    }
    return true;
  }

  /** The agent answered one input request (or refused it: the call ends, MCPG_INPUT_FAILED). */
  private inputAnswered(sid: string, answer: { result: unknown } | { error: JsonRpcErrorObject }): void {
    const input = this.inputs.get(sid)!;
    this.inputs.delete(sid);
    const entry = this.pending.get(input.callId);
    if (entry === undefined || entry.input !== input.round) return; // the call ended meanwhile
    if ('error' in answer) {
      this.settle(input.callId);
      entry.sink.fail(new GatewayError('MCPG_INPUT_FAILED', `server "${this.name}" needs input the agent did not give (${answer.error.message}); the call was ended`, { server: this.name, detail: { agentError: answer.error } }));
      return;
    }
    input.round.answers[input.key] = answer.result;
    input.round.keys.delete(sid);
    if (input.round.keys.size === 0) this.retry(input.callId, entry, input.round);
  }

  /** The call again, same id (its previous exchange is over), with the answers and the server's state. */
  private retry(id: number, entry: Pending, round: InputRound): void {
    entry.input = undefined;
    const request = entry.request!;
    const { inputResponses: _answers, requestState: _state, ...params } = request.params ?? {};
    request.params = { ...params, inputResponses: round.answers, ...(round.requestState !== undefined && { requestState: round.requestState }) };
    let line: string;
    try {
      line = JSON.stringify(request);
    } catch (err) {
      this.settle(id);
      entry.sink.fail(new GatewayError('MCPG_INPUT_FAILED', `the agent's input for server "${this.name}" could not be encoded: ${err instanceof Error ? err.message : String(err)}`, { server: this.name }));
      return;
    }
    if (!this.process!.write(line, id, { method: request.method, name: mcpName(request.method, request.params), params: (request as WithParamHeaders)[PARAM_HEADERS] })) {
      this.settle(id)?.sink.fail(this.unavailable());
    }
  }

  /** Graceful: refuse new calls, settle the pending ones, stop the process (seed 000). Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.failAll(new GatewayError('MCPG_SHUTTING_DOWN', `the connection to server "${this.name}" is closing`, { server: this.name }));
      this.setState('closed');
      await this.process?.stop(this.options.stopTimings ?? DEFAULT_STOP_TIMINGS);
    })();
    return this.closing;
  }

  /** Immediate: kill the process group now. */
  destroy(): void {
    this.failAll(new GatewayError('MCPG_SHUTTING_DOWN', `the connection to server "${this.name}" was destroyed`, { server: this.name }));
    this.process?.kill();
    this.setState('closed');
  }

  /**
   * One message from the server. Whatever goes wrong while handling it is contained here: logged, the
   * message dropped, and this server's other calls, the other servers and the process go on.
   */
  private onLine(line: string, related?: number): void {
    try {
      this.handleLine(line, related);
    } catch (err) {
      this.log.error('internal error while handling a message from the server; it was dropped', { error: err });
    }
  }

  private handleLine(line: string, related?: number): void {
    const parsed = parseMessage(line);
    switch (parsed.kind) {
      case 'response': {
        const id = parsed.msg.id;
        if (this.era === 'modern' && typeof id === 'number' && 'result' in parsed.msg && parsed.msg.result.resultType === 'input_required' && this.inputRequired(id, parsed.msg.result)) return;
        const entry = typeof id === 'number' ? this.settle(id) : undefined;
        if (entry === undefined) return this.log.debug('dropped an answer to no pending request (late or cancelled)', { id });
        if (entry.forwarded) this.hooks.outcome?.(this, true);
        entry.sink.reply(parsed.msg, line);
        return;
      }
      case 'notification':
        if (parsed.msg.method === 'notifications/progress') return this.onProgress(parsed.msg);
        if (parsed.msg.method === 'notifications/subscriptions/acknowledged') {
          this.listenFailures = 0;
          return;
        }
        this.hooks.notification(this, parsed.msg);
        return;
      case 'request':
        if (parsed.msg.method === 'ping') return this.respond(parsed.msg.id, {});
        this.hooks.request(this, parsed.msg, related);
        return;
      case 'invalid': {
        const entry = typeof parsed.id === 'number' ? this.settle(parsed.id) : undefined;
        const err = new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${this.name}" sent an invalid message: ${parsed.error.message}`, { server: this.name });
        if (entry !== undefined) entry.sink.fail(err);
        else this.log.warn('server sent an invalid message; ignored', { error: parsed.error.message, line: line.slice(0, 200) });
      }
    }
  }

  /** The transport could not get an answer to request `id` (HTTP error status, stream lost). */
  private onFailed(id: number, reason: GatewayError): void {
    const entry = this.settle(id);
    if (entry === undefined) return;
    entry.sink.fail(reason);
    if (entry.forwarded) this.hooks.outcome?.(this, false);
  }

  private onProgress(msg: JsonRpcNotification): void {
    const token = msg.params?.progressToken;
    const entry = typeof token === 'number' ? this.pending.get(token) : undefined;
    if (entry === undefined) return; // a progress for a finished call: spec says ignore
    // Progress proves the server is working: it resets the timeout, but never past the call's ceiling.
    entry.progressAt = performance.now();
    entry.deadline = Math.min(entry.progressAt + entry.timeoutMs, entry.ceiling);
    entry.sink.progress?.(msg.params!);
  }

  private track(id: number, entry: Pending): void {
    this.pending.set(id, entry);
    const period = Math.max(MIN_SWEEP_MS, Math.min(MAX_SWEEP_MS, Math.floor(Math.min(entry.timeoutMs, this.ceilingMs) / 10)));
    if (period >= this.sweepMs) return;
    this.sweepMs = period;
    clearInterval(this.sweepTimer);
    this.sweepTimer = setInterval(() => this.sweep(), period);
    this.sweepTimer.unref(); // the child process keeps the loop alive, not this
  }

  private sweep(): void {
    if (this.pending.size === 0) return;
    const now = performance.now();
    for (const [id, entry] of this.pending) if (entry.deadline <= now) this.onTimeout(id, entry);
  }

  private stopSweep(): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sweepMs = Infinity;
  }

  private onTimeout(id: number, entry: Pending): void {
    const { method, timeoutMs } = entry;
    if (entry.deadline >= entry.ceiling) {
      // The call ran out its total time. A server that reported progress within its timeout is
      // working, just longer than allowed: that is no sign of failure for the breaker. One that went
      // silent (or has a ceiling below its timeout) would have timed out anyway, and counts as such.
      const alive = entry.progressAt !== undefined && performance.now() - entry.progressAt < timeoutMs;
      this.cancel(id, `ran longer than the ceiling of ${this.ceilingMs} ms`);
      if (entry.forwarded && !alive && timeoutMs >= this.config.timeout) this.hooks.outcome?.(this, false);
      entry.sink.fail(new GatewayError('MCPG_SERVER_TIMEOUT', `server "${this.name}" did not finish ${method} within its ceiling of ${this.ceilingMs} ms (limits.maxCallMs; progress does not extend it); the request was cancelled`, { server: this.name, detail: { ceilingMs: this.ceilingMs } }));
      return;
    }
    this.cancel(id, `timed out after ${timeoutMs} ms`);
    // Only the server's own timeout says the server is failing; a shorter one an agent chose (e.g.
    // execute_tool's timeout_ms) must not let one agent open the breaker for everyone.
    if (entry.forwarded && timeoutMs >= this.config.timeout) this.hooks.outcome?.(this, false);
    entry.sink.fail(new GatewayError('MCPG_SERVER_TIMEOUT', `server "${this.name}" did not answer ${method} within ${timeoutMs} ms; the request was cancelled`, { server: this.name, detail: { timeoutMs } }));
  }

  private onExit(reason: GatewayError): void {
    // An agent's call in flight may or may not have run: say so rather than retry it behind its back.
    this.failAll(reason, new GatewayError('MCPG_SERVER_UNAVAILABLE', `${reason.message}; the outcome of the call is unknown (it may have run)`, { server: this.name, detail: { ...reason.detail, outcome: 'unknown' } }));
    if (this.state !== 'closed') {
      this.lastError = reason;
      this.setState('failed', reason);
    }
  }

  private fail(reason: GatewayError): void {
    this.lastError = reason;
    this.failAll(reason);
    if (this.state !== 'closed') this.setState('failed', reason);
    void this.process?.stop(this.options.stopTimings ?? DEFAULT_STOP_TIMINGS);
  }

  private settle(id: number): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    if (entry.input !== undefined) for (const sid of entry.input.keys.keys()) this.inputs.delete(sid);
    return entry;
  }

  /** Terminal: every pending call fails with `err` and the sweep stops (no call is taken after this). */
  private failAll(err: GatewayError, forwardedErr: GatewayError = err): void {
    this.stopSweep();
    clearTimeout(this.listenTimer);
    this.inputs.clear();
    const entries = [...this.pending.values()];
    this.pending.clear();
    for (const entry of entries) {
      try {
        entry.sink.fail(entry.forwarded ? forwardedErr : err);
      } catch (sinkErr) {
        this.log.error('a call sink threw while failing', { error: sinkErr });
      }
    }
  }

  private unavailable(): GatewayError {
    const why = this.lastError !== undefined ? `: ${this.lastError.message}` : '';
    return new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${this.name}" is ${this.state === 'connecting' ? 'still starting' : 'not connected'}${why}`, { server: this.name });
  }

  private setState(state: SessionState, reason?: GatewayError): void {
    if (this.state === state) return;
    this.state = state;
    this.hooks.state(this, state, reason);
  }
}

function toStartError(err: unknown, server: string): GatewayError {
  if (err instanceof GatewayError) {
    if (err.code === 'MCPG_SERVER_START_FAILED' || err.code === 'MCPG_SERVER_NEEDS_LOGIN') return err;
    return new GatewayError('MCPG_SERVER_START_FAILED', `${err.message} (before completing initialize)`, { server, cause: err });
  }
  return new GatewayError('MCPG_SERVER_START_FAILED', `server "${server}" failed to initialize: ${String(err)}`, { server });
}
