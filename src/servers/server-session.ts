// One server session to a server process: one spawn of it, the table of requests in flight (with
// their timeouts), and teardown that settles every one of them. Forwarded calls are relayed as raw
// lines; only the gateway's own requests (initialize, lists) are promises. A session lives once; the
// supervised connection (connection.ts) starts a new one to reconnect. Its start opens the transport
// to the server, then does the handshake in the server's era: `server/discover` for a server of the
// 2026-07-28 revision (era.ts; an "auto" server is probed, and initialized when it does not answer or
// refuses), else initialize, validated with the SDK's schemas. A modern server has every request
// wrapped in the `_meta` envelope here; its change notifications come on a `subscriptions/listen`
// request kept open (no timeout, reopened when it ends, given up after MAX_LISTEN_FAILURES failures
// in a row; `resources/subscribe` to it is answered here and reopens the listen with the new
// filter); its input-required answers to agents' calls keep the call pending: each input request goes
// up to the agent as a server→client request with a synthetic string id (INPUT_ID…) related to the
// call, the answers come back through respond/respondError (never written to the server), and the
// call is re-sent as a new request (a new id: the server answered the last one) with
// `inputResponses` and the server's `requestState`; at most MAX_INPUT_ROUNDS rounds.
// The types it shares with its connection and overdue.ts (`CallSink`, `ServerInfo`, `SessionOptions`,
// a pending call) are in session-types.ts. Timeouts are one sweep per session (a tenth of the
// shortest timeout, 10 ms–1 s), not a timer per call; progress pushes a call's deadline back, but
// never past the call's ceiling (`limits.maxCallMs`), after which it is cancelled like a timeout. What
// an overdue call gets (its cancel's reason, its error, whether the breaker hears of it) is overdue.ts's.

import { DEFAULT_LIMITS, type ServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import {
  encodeError,
  encodeNotification,
  encodeRequest,
  parseMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from '../wire/jsonrpc.js';
import type { JsonRpcErrorObject } from '../errors.js';
import { spliceRequest } from '../wire/request-splice.js';
import type { OutboundRequest } from './outbound-request.js';
import { DEFAULT_STOP_TIMINGS, StdioProcess } from './transports/stdio/process.js';
import type { ServerTransport, TransportEvents } from './transports/transport.js';
import { mcpName, withEnvelope, type SessionEra } from './era.js';
import { overdue } from './overdue.js';
import type { CallSink, InputRound, Pending, ServerInfo, SessionOptions, SessionState } from './session-types.js';
import {
  CLIENT_CAPABILITIES,
  listenFilter,
  MAX_INPUT_ROUNDS,
  MODERN_PROTOCOL_VERSION,
  readDiscover,
  readInputRequired,
  wantedEra,
} from './era.js';
import { UNSUPPORTED_PROTOCOL_VERSION } from '../wire/era.js';
import { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } from '../wire/protocol.js';
import { GATEWAY_INFO } from '../version.js';
import { HttpTransport } from './transports/http/transport.js';
import { SseTransport } from './transports/sse/transport.js';
import { serverSchemas } from './sdk-schemas.js';
import { parksUntilNewCredentials } from './credentials.js';

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

/** Timeouts are checked by one sweep per connection, at a tenth of the shortest timeout (10 ms–1 s). */
const MIN_SWEEP_MS = 10;
const MAX_SWEEP_MS = 1000;
/** The share of the startup time an "auto" server's `server/discover` probe may take before initialize is tried. */
const PROBE_SHARE = 0.5;
/** A listen stream that keeps failing is given up after this many tries in a row (logged). */
const MAX_LISTEN_FAILURES = 5;
const LISTEN_RETRY_MS = 1000;

/** The prefix of the ids of input requests relayed to agents (a server's own ids never reach respond with it). */
const INPUT_ID = 'mcpgate-input-';

/**
 * The server's own key of an input request relayed to an agent: a modern agent gets its input
 * requests under the keys the server chose (a 2025-era agent gets ordinary requests, without one).
 */
export const INPUT_KEY: unique symbol = Symbol('mcpgate.inputKey');
export interface WithInputKey {
  [INPUT_KEY]?: string;
}

export class ServerSession {
  readonly name: string;
  state: SessionState = 'connecting';
  info: ServerInfo | undefined;
  lastError: GatewayError | undefined;
  private readonly pending = new Map<number, Pending>();
  /** The ids of retried rounds on the wire → their calls' own ids (Pending.wireId). */
  private readonly wireIds = new Map<number, number>();
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
  /** A modern server's open `subscriptions/listen` request's id, and its failures in a row. */
  private listenId: number | undefined;
  private listenFailures = 0;
  private listenTimer: NodeJS.Timeout | undefined;
  /** The resource URIs agents subscribed to, the listen's filter. */
  private readonly resourceSubscriptions = new Set<string>();
  /** A modern server's input requests relayed to agents (synthetic ids) → the call and the key they answer. */
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
      paused: (id: number, retryMs: number) => {
        const call = this.callOf(id);
        if (call !== undefined) this.pending.get(call)?.sink.paused?.(retryMs, () => this.process?.resumeNow?.(id));
      },
    };
    this.process = openTransport(this.config, this.log, events, this.options);
    await this.handshake();
  }

  // ── the start: the handshake in the server's era ───────────────────────────────────────────────

  /** The handshake in the server's era. Resolves when ready; rejects (and the session is `failed`) otherwise. */
  private async handshake(): Promise<void> {
    const wanted = wantedEra(this.config);
    const started = performance.now();
    let probed: 'answered' | 'silent' | undefined;
    if (wanted === '2026-07-28' || (wanted === 'auto' && this.options.era?.known !== 'legacy')) {
      probed = await this.discover(wanted === 'auto');
      if (probed === undefined) return;
    }
    const params = {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: this.options.clientCapabilities ?? CLIENT_CAPABILITIES,
      clientInfo: GATEWAY_INFO,
    };
    // After a probe that went unanswered, initialize gets what is left of the startup time.
    const timeoutMs =
      probed === 'silent'
        ? Math.max(1, this.options.startupTimeoutMs - Math.round(performance.now() - started))
        : this.options.startupTimeoutMs;
    let raw: Record<string, unknown>;
    // Sent first: the SDK's schemas load (the first time) while the server boots and answers.
    const schemas = serverSchemas();
    schemas.catch(() => {}); // awaited below; a request that fails first must not leave it unhandled
    try {
      raw = await this.request('initialize', params, timeoutMs);
    } catch (err) {
      // An "auto" server remembered as legacy (its probe crashed it) that refuses initialize: probe it next time.
      if (
        wanted === 'auto' &&
        this.options.era !== undefined &&
        this.state === 'connecting' &&
        !(err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT')
      )
        delete this.options.era.known;
      const reason =
        err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT'
          ? new GatewayError(
              'MCPG_SERVER_START_FAILED',
              `server "${this.name}" did not answer ${probed === 'silent' ? 'server/discover or initialize' : 'initialize'} within ${this.options.startupTimeoutMs} ms`,
              { server: this.name },
            )
          : toStartError(err, this.name);
      this.fail(reason);
      throw reason;
    }
    const parsed = (await schemas).initialize.safeParse(raw);
    if (!parsed.success) {
      const reason = new GatewayError(
        'MCPG_SERVER_START_FAILED',
        `server "${this.name}" sent an invalid initialize result: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        { server: this.name },
      );
      this.fail(reason);
      throw reason;
    }
    const result = parsed.data;
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(result.protocolVersion)) {
      const reason = new GatewayError(
        'MCPG_SERVER_START_FAILED',
        `server "${this.name}" speaks protocol ${result.protocolVersion}, which mcpgate does not support (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        { server: this.name },
      );
      this.fail(reason);
      throw reason;
    }
    const info = {
      protocolVersion: result.protocolVersion,
      capabilities: result.capabilities,
      serverInfo: { name: result.serverInfo.name, version: result.serverInfo.version },
      instructions: result.instructions,
    };
    this.notify('notifications/initialized');
    if (this.options.era !== undefined && wanted === 'auto') this.options.era.known = 'legacy';
    this.info = info;
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
      raw = await this.discoverRequest(timeoutMs);
    } catch (err) {
      const alive = this.closing === undefined && this.state === 'connecting';
      const timedOut = err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT';
      if (fallback && alive) {
        this.log.debug(
          timedOut
            ? 'server/discover went unanswered; falling back to initialize'
            : 'server/discover was refused; falling back to initialize',
          { error: err instanceof Error ? err.message : String(err) },
        );
        this.era = 'legacy';
        return timedOut ? 'silent' : 'answered';
      }
      // A stdio server that died of the probe is initialized without it next time; a remote one that
      // could not be reached says nothing about its era.
      const diedOfProbe = fallback && this.config.type === 'stdio';
      if (diedOfProbe && this.options.era !== undefined && this.closing === undefined) this.options.era.known = 'legacy';
      const reason = timedOut
        ? new GatewayError(
            'MCPG_SERVER_START_FAILED',
            `server "${this.name}" did not answer server/discover within ${this.options.startupTimeoutMs} ms`,
            { server: this.name },
          )
        : err instanceof GatewayError && err.code !== 'MCPG_SERVER_START_FAILED' && !parksUntilNewCredentials(err)
          ? new GatewayError(
              'MCPG_SERVER_START_FAILED',
              `${err.message} (before completing server/discover${diedOfProbe ? '; the probe for its era: it is initialized next time' : fallback ? '' : `; the entry's "era" is "${MODERN_PROTOCOL_VERSION}"`})`,
              { server: this.name, cause: err },
            )
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
      const reason = new GatewayError(
        'MCPG_SERVER_START_FAILED',
        `server "${this.name}" cannot be spoken to in the ${MODERN_PROTOCOL_VERSION} era: ${found} (set its "era" to "2025" or "auto")`,
        { server: this.name },
      );
      this.fail(reason);
      throw reason;
    }
    const info = { protocolVersion: MODERN_PROTOCOL_VERSION, ...found };
    if (this.options.era !== undefined) this.options.era.known = 'modern';
    this.info = info;
    this.setState('ready');
    this.openListen();
    return undefined;
  }

  /**
   * `server/discover`, sent once more when the server refuses it as an unsupported protocol version
   * (-32022) yet lists 2026-07-28 among those it supports: the version header or `_meta` it judged may
   * not be the one sent (a proxy between, a server that changed), and the spec has a client retry with
   * a version from that list. Once only, within the same time: a second refusal is the server's answer.
   */
  private async discoverRequest(timeoutMs: number): Promise<Record<string, unknown>> {
    const started = performance.now();
    try {
      return await this.request('server/discover', undefined, timeoutMs);
    } catch (err) {
      const left = Math.floor(timeoutMs - (performance.now() - started));
      if (!offersModern(err) || left < 1 || this.closing !== undefined || this.state !== 'connecting') throw err;
      this.log.debug(
        `server/discover was refused as an unsupported protocol version, though the server lists ${MODERN_PROTOCOL_VERSION}; asking once more`,
        { error: err instanceof Error ? err.message : String(err) },
      );
      return await this.request('server/discover', undefined, left);
    }
  }

  // ── calls ────────────────────────────────────────────────────────────────────────────────────

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
        this.subscribeListen(method, params?.uri, sink);
        return id;
      }
      params = withEnvelope(params, this.options.clientCapabilities);
    }
    if (!this.process!.write(encodeRequest(id, method, params), id, modern ? { method, name: mcpName(method, params) } : undefined)) {
      this.settle(id)?.sink.fail(this.unavailable());
    }
    return id;
  }

  /**
   * Sends an agent's request (built once by its session, read here, never written) under an id of
   * this session's, with this session's progress token and, to a modern server, the envelope (hot
   * path: the agent's own line spliced, else one stringify). Returns the id used on this connection,
   * or 0 when nothing was sent (the sink has been told why): a call refused before it left is never
   * pending and never counts against the breaker.
   */
  forward(req: OutboundRequest, sink: CallSink, timeoutMs: number = this.config.timeout): number {
    if (this.state !== 'ready' || this.closing !== undefined) {
      sink.fail(this.unavailable());
      return 0;
    }
    const id = this.ids.next++;
    const modern = this.era === 'modern';
    let params = req.params;
    const meta = params?._meta;
    if (isObject(meta) && meta.progressToken !== undefined) params = { ...params, _meta: { ...meta, progressToken: id } };
    if (modern) params = withEnvelope(params, this.options.clientCapabilities, req.agentCapabilities);
    else if (params?.inputResponses !== undefined) {
      // A modern agent's answers given without a requestState mean nothing to a 2025-era server.
      const { inputResponses: _answers, ...rest } = params;
      params = rest;
    }
    // The agent's own line with only the id and the name replaced, where its session said that means
    // the same (wire/request-splice.ts); else the request encoded once.
    let line: string | undefined;
    if (req.line !== undefined && !modern && params === req.params && typeof params?.name === 'string')
      line = spliceRequest(req.line, id, params.name);
    // The request as an object only where it is encoded or kept (a modern call, for its retries): a
    // spliced call needs none. Two literal shapes, not a conditional spread.
    let request: JsonRpcRequest | undefined;
    try {
      if (line === undefined || modern) {
        request = params === undefined ? { jsonrpc: '2.0', id, method: req.method } : { jsonrpc: '2.0', id, method: req.method, params };
        line ??= JSON.stringify(request);
      }
    } catch (err) {
      sink.fail(
        new GatewayError(
          'MCPG_INVALID_PARAMS',
          `${req.method}: the request could not be encoded for server "${this.name}": ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
      return 0;
    }
    const now = performance.now();
    const ceiling = now + this.ceilingMs;
    // One shape for every forwarded call (no conditional spread to copy): a legacy call keeps no request.
    this.track(id, {
      sink,
      forwarded: true,
      method: req.method,
      timeoutMs,
      deadline: Math.min(now + timeoutMs, ceiling),
      ceiling,
      request: modern ? request : undefined,
      paramHeaders: modern ? req.paramHeaders : undefined,
    });
    if (
      !this.process!.write(
        line,
        id,
        modern ? { method: req.method, name: mcpName(req.method, params), params: req.paramHeaders } : undefined,
      )
    ) {
      this.settle(id)?.sink.fail(this.unavailable());
      this.hooks.outcome?.(this, false);
    }
    return id;
  }

  /** Awaitable request for the gateway's own use (initialize, lists, setLevel). */
  request(method: string, params?: Record<string, unknown>, timeoutMs = this.config.timeout): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.call(
        method,
        params,
        {
          reply: (msg) => {
            if ('result' in msg) resolve(msg.result);
            else
              reject(
                new GatewayError(
                  'MCPG_SERVER_BAD_RESPONSE',
                  `server "${this.name}" answered ${method} with error ${msg.error.code}: ${msg.error.message}`,
                  { server: this.name, detail: { serverError: msg.error } },
                ),
              );
          },
          fail: reject,
        },
        timeoutMs,
      );
    });
  }

  /** Abandons a call: the server is told (`notifications/cancelled`) and a late answer is dropped. */
  cancel(id: number, reason: string): void {
    const entry = this.settle(id);
    if (entry === undefined) return;
    const wireId = entry.wireId ?? id;
    // Over HTTP a modern request is cancelled by closing its stream; over stdio by the notification.
    if (this.era === 'modern' && this.process?.abort !== undefined) return this.process.abort(wireId);
    this.process?.write(encodeNotification('notifications/cancelled', { requestId: wireId, reason }));
  }

  notify(method: string, params?: Record<string, unknown>): void {
    // A modern server takes no session-level notifications (initialized, roots/list_changed…).
    if (this.era === 'modern') return;
    this.process?.write(encodeNotification(method, params));
  }

  respond(id: RequestId, result: unknown): void {
    // An answer to one of our synthetic input requests is never the server's to see (late ones: dropped).
    if (typeof id === 'string' && id.startsWith(INPUT_ID)) {
      this.inputAnswered(id, { result });
      return;
    }
    this.process?.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`);
  }

  respondError(id: RequestId, error: JsonRpcErrorObject): void {
    if (typeof id === 'string' && id.startsWith(INPUT_ID)) {
      this.inputAnswered(id, { error });
      return;
    }
    this.process?.write(encodeError(id, error));
  }

  /** Graceful: refuse new calls, settle the pending ones, stop the process (stdin EOF, SIGTERM, SIGKILL). Idempotent. */
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

  // ── a modern server's change notifications: the `subscriptions/listen` request ─────────────────

  /**
   * Opens the `subscriptions/listen` request that carries a modern server's change notifications (it
   * stays open; its answer, or its failure, ends it and it is reopened, up to MAX_LISTEN_FAILURES in
   * a row). Reopened with the new filter when the resource subscriptions change.
   */
  private openListen(): void {
    if (this.listenId !== undefined) {
      const old = this.listenId;
      this.listenId = undefined;
      this.cancel(old, 'the subscription filter changed');
    }
    const info = this.info;
    if (this.state !== 'ready' || this.closing !== undefined || info === undefined) return;
    const filter = listenFilter(info.capabilities, this.resourceSubscriptions);
    if (filter === undefined) return;
    // Declared before the call: a write that fails at once ends the listen inside call() itself.
    let id = 0;
    const ended = (why: string): void => {
      if (this.listenId !== id) return;
      this.listenId = undefined;
      if (this.state !== 'ready' || this.closing !== undefined) return;
      this.listenFailures += 1;
      if (this.listenFailures > MAX_LISTEN_FAILURES)
        return this.log.warn('the subscriptions/listen stream keeps ending; change notifications from this server are not followed', {
          why,
        });
      this.listenTimer = setTimeout(() => this.openListen(), LISTEN_RETRY_MS);
      this.listenTimer.unref();
    };
    id = this.call(
      'subscriptions/listen',
      { notifications: filter },
      {
        reply: (msg) => ended('error' in msg ? msg.error.message : 'the server ended the subscription'),
        fail: (err) => ended(err.message),
      },
      Infinity,
    );
    if (this.pending.has(id)) this.listenId = id;
  }

  /** The server acknowledged the stream (`notifications/subscriptions/acknowledged`): it works. */
  private listenAcknowledged(): void {
    this.listenFailures = 0;
  }

  /**
   * `resources/subscribe` / `unsubscribe` to a modern server: the revision has neither; the URI joins
   * (or leaves) the listen stream's filter, which is reopened, and the agent gets the empty result.
   */
  private subscribeListen(method: string, uri: unknown, sink: CallSink): void {
    if (typeof uri !== 'string') return sink.fail(new GatewayError('MCPG_INVALID_PARAMS', `${method}: params.uri must be a string`));
    const had = this.resourceSubscriptions.has(uri);
    if (method === 'resources/subscribe') this.resourceSubscriptions.add(uri);
    else this.resourceSubscriptions.delete(uri);
    if (had !== this.resourceSubscriptions.has(uri)) this.openListen();
    sink.reply({ jsonrpc: '2.0', id: 0, result: {} }, '{"jsonrpc":"2.0","id":0,"result":{}}');
  }

  // ── a modern server's input-required answers: rounds of input requests to the agent ───────────

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
      entry.sink.fail(
        new GatewayError('MCPG_INPUT_FAILED', `server "${this.name}" sent ${read}; the call was ended`, { server: this.name }),
      );
      return true;
    }
    entry.rounds = (entry.rounds ?? 0) + 1;
    if (entry.rounds > MAX_INPUT_ROUNDS) {
      this.settle(id);
      entry.sink.fail(
        new GatewayError(
          'MCPG_INPUT_ROUNDS_EXCEEDED',
          `server "${this.name}" still asked for input after ${MAX_INPUT_ROUNDS} rounds of ${entry.method}; the call was ended`,
          { server: this.name, detail: { rounds: MAX_INPUT_ROUNDS } },
        ),
      );
      return true;
    }
    // Waiting for a person (elicitation) is the agent's time, not the server's: the timeout restarts.
    entry.deadline = Math.min(performance.now() + entry.timeoutMs, entry.ceiling);
    const round: InputRound = { answers: {}, keys: new Map(), requestState: read.requestState };
    entry.input = round;
    if (read.requests.length === 0) {
      this.retryWithInput(id, entry, round);
      return true;
    }
    read.requests.forEach(([key], n) => {
      const sid = `${INPUT_ID}${id}-${entry.rounds}-${n}`;
      round.keys.set(sid, key);
      this.inputs.set(sid, { callId: id, round, key });
    });
    let n = 0;
    for (const [key, method, params] of read.requests) {
      const sid = `${INPUT_ID}${id}-${entry.rounds}-${n++}`;
      const ask: JsonRpcRequest & WithInputKey = { jsonrpc: '2.0', id: sid, method, params: params ?? {}, [INPUT_KEY]: key };
      if (this.inputs.has(sid)) this.hooks.request(this, ask, id);
    }
    return true;
  }

  /**
   * The agent answered one input request (or refused it: the call ends, MCPG_INPUT_FAILED). One that
   * is no longer waited for (late, or its call ended) is dropped.
   */
  private inputAnswered(sid: string, answer: { result: unknown } | { error: JsonRpcErrorObject }): void {
    const input = this.inputs.get(sid);
    if (input === undefined) return;
    this.inputs.delete(sid);
    const entry = this.pending.get(input.callId);
    if (entry === undefined || entry.input !== input.round) return; // the call ended meanwhile
    if ('error' in answer) {
      this.settle(input.callId);
      entry.sink.fail(
        new GatewayError(
          'MCPG_INPUT_FAILED',
          `server "${this.name}" needs input the agent did not give (${answer.error.message}); the call was ended`,
          { server: this.name, detail: { agentError: answer.error } },
        ),
      );
      return;
    }
    input.round.answers[input.key] = answer.result;
    input.round.keys.delete(sid);
    if (input.round.keys.size === 0) this.retryWithInput(input.callId, entry, input.round);
  }

  /**
   * The call again, as a new request under a new id (the server answered the previous one; a server
   * may tell rounds apart by id), with the answers and the server's state.
   */
  private retryWithInput(id: number, entry: Pending, round: InputRound): void {
    entry.input = undefined;
    const request = entry.request!;
    request.id = this.renumber(id);
    const { inputResponses: _answers, requestState: _state, ...params } = request.params ?? {};
    request.params = {
      ...params,
      inputResponses: round.answers,
      ...(round.requestState !== undefined && { requestState: round.requestState }),
    };
    let line: string;
    try {
      line = JSON.stringify(request);
    } catch (err) {
      this.settle(id);
      entry.sink.fail(
        new GatewayError(
          'MCPG_INPUT_FAILED',
          `the agent's input for server "${this.name}" could not be encoded: ${err instanceof Error ? err.message : String(err)}`,
          { server: this.name },
        ),
      );
      return;
    }
    if (
      !this.process!.write(line, request.id, {
        method: request.method,
        name: mcpName(request.method, request.params),
        params: entry.paramHeaders,
      })
    ) {
      this.settle(id)?.sink.fail(this.unavailable());
    }
  }

  // ── messages from the server ─────────────────────────────────────────────────────────────────

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
        const id = typeof parsed.msg.id === 'number' ? this.callOf(parsed.msg.id) : undefined;
        if (
          this.era === 'modern' &&
          id !== undefined &&
          'result' in parsed.msg &&
          parsed.msg.result.resultType === 'input_required' &&
          this.inputRequired(id, parsed.msg.result)
        )
          return;
        const entry = id !== undefined ? this.settle(id) : undefined;
        if (entry === undefined)
          return this.log.debug('dropped an answer to no pending request (late or cancelled)', { id: parsed.msg.id });
        if (entry.forwarded) this.hooks.outcome?.(this, true);
        entry.sink.reply(parsed.msg, line);
        return;
      }
      case 'notification':
        if (parsed.msg.method === 'notifications/progress') return this.onProgress(parsed.msg);
        if (parsed.msg.method === 'notifications/subscriptions/acknowledged') return this.listenAcknowledged();
        this.hooks.notification(this, parsed.msg);
        return;
      case 'request':
        if (parsed.msg.method === 'ping') return this.respond(parsed.msg.id, {});
        this.hooks.request(this, parsed.msg, related === undefined ? undefined : (this.callOf(related) ?? related));
        return;
      case 'invalid': {
        const call = typeof parsed.id === 'number' ? this.callOf(parsed.id) : undefined;
        const entry = call !== undefined ? this.settle(call) : undefined;
        const err = new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${this.name}" sent an invalid message: ${parsed.error.message}`, {
          server: this.name,
        });
        if (entry !== undefined) entry.sink.fail(err);
        else this.log.warn('server sent an invalid message; ignored', { error: parsed.error.message, line: line.slice(0, 200) });
      }
    }
  }

  /** The transport could not get an answer to request `id` (HTTP error status, stream lost). */
  private onFailed(id: number, reason: GatewayError): void {
    const call = this.callOf(id);
    const entry = call === undefined ? undefined : this.settle(call);
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
    const { reason, error, counts } = overdue(this.name, entry, this.config.timeout, this.ceilingMs, performance.now());
    this.cancel(id, reason);
    if (counts) this.hooks.outcome?.(this, false);
    entry.sink.fail(error);
  }

  private onExit(reason: GatewayError): void {
    // An agent's call in flight may or may not have run: say so rather than retry it behind its back.
    this.failAll(
      reason,
      new GatewayError('MCPG_SERVER_UNAVAILABLE', `${reason.message}; the outcome of the call is unknown (it may have run)`, {
        server: this.name,
        detail: { ...reason.detail, outcome: 'unknown' },
      }),
    );
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

  /**
   * The pending call an id on the wire belongs to: a retried round's id maps to its call's; the id a
   * call was first sent under is no longer its own once a round was sent under another (a late
   * answer to it is dropped). Undefined: no such call.
   */
  private callOf(wireId: number): number | undefined {
    const call = this.wireIds.get(wireId);
    if (call !== undefined) return call;
    return this.pending.get(wireId)?.wireId === undefined ? wireId : undefined;
  }

  /** A new id on the wire for the next round of call `callId`. */
  private renumber(callId: number): number {
    const entry = this.pending.get(callId)!;
    if (entry.wireId !== undefined) this.wireIds.delete(entry.wireId);
    entry.wireId = this.ids.next++;
    this.wireIds.set(entry.wireId, callId);
    return entry.wireId;
  }

  private settle(id: number): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    if (entry.wireId !== undefined) this.wireIds.delete(entry.wireId);
    // A call with a round waiting ended: its input requests are no longer waited for.
    if (entry.input !== undefined) for (const sid of entry.input.keys.keys()) this.inputs.delete(sid);
    return entry;
  }

  /** Terminal: every pending call fails with `err` and the sweep stops (no call is taken after this). */
  private failAll(err: GatewayError, forwardedErr: GatewayError = err): void {
    this.stopSweep();
    clearTimeout(this.listenTimer); // no reopening
    this.inputs.clear(); // nothing is waited for
    const entries = [...this.pending.values()];
    this.pending.clear();
    this.wireIds.clear();
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
    return new GatewayError(
      'MCPG_SERVER_UNAVAILABLE',
      `server "${this.name}" is ${this.state === 'connecting' ? 'still starting' : 'not connected'}${why}`,
      { server: this.name },
    );
  }

  private setState(state: SessionState, reason?: GatewayError): void {
    if (this.state === state) return;
    this.state = state;
    this.hooks.state(this, state, reason);
  }
}

/** The way to the server: the factory the options give, else by the entry's type. */
function openTransport(config: ServerConfig, log: Logger, events: TransportEvents, options: SessionOptions): ServerTransport {
  const open = options.transport;
  if (open !== undefined) return open(config, log, events);
  if (config.type === 'stdio') return new StdioProcess(config, log, events, { secretEnv: options.secretEnv });
  if (config.type === 'http')
    return new HttpTransport(config, log, events, options.credentials === undefined ? {} : { credentials: options.credentials });
  return new SseTransport(config, log, events);
}

/** Whether a server's refusal is -32022 "unsupported protocol version" naming 2026-07-28 as supported. */
function offersModern(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return false;
  const refusal = err.detail?.serverError as { code?: unknown; data?: { supported?: unknown } } | undefined;
  if (refusal?.code !== UNSUPPORTED_PROTOCOL_VERSION) return false;
  const supported = refusal.data?.supported;
  return Array.isArray(supported) && supported.includes(MODERN_PROTOCOL_VERSION);
}

function toStartError(err: unknown, server: string): GatewayError {
  if (err instanceof GatewayError) {
    if (err.code === 'MCPG_SERVER_START_FAILED' || parksUntilNewCredentials(err)) return err;
    return new GatewayError('MCPG_SERVER_START_FAILED', `${err.message} (before completing initialize)`, { server, cause: err });
  }
  return new GatewayError('MCPG_SERVER_START_FAILED', `server "${server}" failed to initialize: ${String(err)}`, { server });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
