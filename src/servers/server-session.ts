// One server session to a server: one transport to it (a stdio child, a remote session), what each
// message from the server does to the requests it has sent (sent-requests.ts keeps them, with their
// deadlines), and teardown that settles every one of them. Forwarded calls are relayed as raw lines;
// only the gateway's own requests (initialize, lists) are promises. A session lives once; the
// supervised connection (connection.ts) starts a new one to reconnect. Its start opens the transport,
// then does the handshake in the server's era (handshake.ts). A modern server has every request
// wrapped in the `_meta` envelope here; its change notifications come on its listen stream
// (listen-stream.ts), and its input-required answers to agents' calls keep the call sent here while
// the agent is asked (input-rounds.ts words each step), then the call is re-sent under a new id.
// Progress pushes a call's deadline back, but never past its ceiling (`limits.maxCallMs`), after which
// it is cancelled like a timeout (overdue.ts says what an overdue call gets). Shared types are in
// session-types.ts.

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
import { mcpName, withEnvelope, type SessionEra } from './modern-protocol.js';
import { AbandonedCalls } from './abandoned-calls.js';
import { overdue } from './overdue.js';
import { handshake } from './handshake.js';
import { ListenStream } from './listen-stream.js';
import { InputRounds } from './input-rounds.js';
import type { CallSink, SentRequest, ServerInfo, SessionOptions, SessionState } from './session-types.js';
import { SentRequests } from './sent-requests.js';
import { HttpTransport } from './transports/http/transport.js';
import { SseTransport } from './transports/sse/transport.js';

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

export class ServerSession {
  readonly name: string;
  state: SessionState = 'connecting';
  info: ServerInfo | undefined;
  lastError: GatewayError | undefined;
  /** The requests sent and not yet answered, by the call's own id (sent-requests.ts). */
  private readonly sent: SentRequests;
  private readonly ids: { next: number };
  /** The server's `limits.maxCallMs`: a call's total ceiling. */
  private readonly ceilingMs: number;
  private process: ServerTransport | undefined;
  private closing: Promise<void> | undefined;
  /** `modern`: the server speaks 2026-07-28 (no session; the envelope on every request). */
  era: SessionEra = 'legacy';
  /** A modern server's change notifications: its `subscriptions/listen` request (listen-stream.ts). */
  private readonly listen: ListenStream;
  /** A modern server's input-required rounds: the input requests relayed to agents (input-rounds.ts). */
  private readonly inputs: InputRounds;
  /** Cancelled calls the server may still be working on (abandoned-calls.ts). */
  private readonly abandoned = new AbandonedCalls();

  constructor(
    readonly config: ServerConfig,
    private readonly hooks: SessionHooks,
    private readonly log: Logger,
    private readonly options: SessionOptions,
  ) {
    this.name = config.name;
    this.ids = options.ids ?? { next: 1 };
    this.ceilingMs = config.limits?.maxCallMs ?? DEFAULT_LIMITS.maxCallMs;
    this.sent = new SentRequests(this.ceilingMs, (id, entry) => this.onTimeout(id, entry));
    this.listen = new ListenStream(this, log);
    this.inputs = new InputRounds(config.name);
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
        const call = this.sent.callOf(id);
        if (call !== undefined) this.sent.get(call)?.sink.paused?.(retryMs, () => this.process?.resumeNow?.(id));
      },
    };
    this.process = openTransport(this.config, this.log, events, this.options);
    let info: ServerInfo;
    try {
      info = await handshake(this, this.options, this.log);
    } catch (err) {
      if (err instanceof GatewayError) this.fail(err);
      throw err;
    }
    this.info = info;
    this.setState('ready');
    if (this.era === 'modern') this.listen.open();
  }

  /** Closing or closed: no call is taken any more. */
  get stopping(): boolean {
    return this.closing !== undefined;
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
    this.sent.track(id, { sink, forwarded: false, method, timeoutMs, deadline: Math.min(now + timeoutMs, ceiling), ceiling });
    const modern = this.era === 'modern';
    if (modern) {
      if (method === 'resources/subscribe' || method === 'resources/unsubscribe') {
        this.settle(id);
        this.listen.subscribe(method, params?.uri, sink);
        return id;
      }
      if (method === 'logging/setLevel') {
        // The modern revision has none: each agent's level goes in its own requests' envelope.
        this.settle(id);
        sink.reply({ jsonrpc: '2.0', id, result: {} }, `{"jsonrpc":"2.0","id":${id},"result":{}}`);
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
   * sent and never counts against the breaker.
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
    if (modern) params = withEnvelope(params, this.options.clientCapabilities, req.agentCapabilities, req.logLevel);
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
    this.sent.track(id, {
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

  /**
   * Abandons a call: the server is told (`notifications/cancelled`) and a late answer is dropped.
   * With `done`, that runs once the server is through with it (abandoned-calls.ts). False when
   * this session has no such call.
   */
  cancel(id: number, reason: string, done?: () => void): boolean {
    const entry = this.settle(id);
    if (entry === undefined) return false;
    const wireId = entry.wireId ?? id;
    if (done !== undefined) this.abandoned.hold(wireId, entry.deadline - performance.now(), done);
    // Over HTTP a modern request is cancelled by closing its stream; over stdio by the notification.
    if (this.era === 'modern' && this.process?.abort !== undefined) this.process.abort(wireId);
    else this.process?.write(encodeNotification('notifications/cancelled', { requestId: wireId, reason }));
    return true;
  }

  notify(method: string, params?: Record<string, unknown>): void {
    // A modern server takes no session-level notifications (initialized, roots/list_changed…).
    if (this.era === 'modern') return;
    this.process?.write(encodeNotification(method, params));
  }

  respond(id: RequestId, result: unknown): void {
    // An answer to one of our synthetic input requests is never the server's to see (late ones: dropped).
    if (InputRounds.owns(id)) {
      this.inputAnswered(id, { result });
      return;
    }
    this.process?.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`);
  }

  respondError(id: RequestId, error: JsonRpcErrorObject): void {
    if (InputRounds.owns(id)) {
      this.inputAnswered(id, { error });
      return;
    }
    this.process?.write(encodeError(id, error));
  }

  /** Graceful: refuse new calls, settle the sent ones, stop the process (stdin EOF, SIGTERM, SIGKILL). Idempotent. */
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

  // ── a modern server's input-required answers (input-rounds.ts words each step) ─────────────────

  /** A modern server answered an agent's call `id` with `result`: true when it asked for input (handled here). */
  private inputRequired(id: number, result: Record<string, unknown>): boolean {
    const entry = this.sent.get(id);
    if (entry === undefined || entry.request === undefined) return false;
    const step = this.inputs.begin(id, entry, result);
    if (step === undefined) return false;
    if ('end' in step) {
      this.settle(id);
      entry.sink.fail(step.end);
    } else if (step.ask.length === 0) {
      this.retryWithInput(id, entry);
    } else {
      // An agent's answer may end the call at once: the requests after it are then not asked.
      for (const ask of step.ask) if (this.inputs.waits(ask.id)) this.hooks.request(this, ask, id);
    }
    return true;
  }

  /** The agent answered an input request `sid`: the call ends, waits for more answers, or is sent again. */
  private inputAnswered(sid: string, answer: { result: unknown } | { error: JsonRpcErrorObject }): void {
    const next = this.inputs.answer(sid, answer, this.sent);
    if (next === undefined) return;
    if ('end' in next) {
      this.settle(next.callId);
      next.entry.sink.fail(next.end);
    } else if (next.retry) {
      this.retryWithInput(next.callId, next.entry);
    }
  }

  /** The call again, as a new request under a new id, with the round's answers. */
  private retryWithInput(id: number, entry: SentRequest): void {
    const wireId = this.ids.next++;
    this.sent.renumber(id, wireId);
    const next = this.inputs.retry(entry, wireId);
    if ('end' in next) {
      this.settle(id);
      entry.sink.fail(next.end);
      return;
    }
    const { line, request } = next;
    if (
      !this.process!.write(line, wireId, {
        method: request.method,
        name: mcpName(request.method, request.params),
        params: entry.paramHeaders,
      })
    )
      this.settle(id)?.sink.fail(this.unavailable());
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
        const id = typeof parsed.msg.id === 'number' ? this.sent.callOf(parsed.msg.id) : undefined;
        if (
          this.era === 'modern' &&
          id !== undefined &&
          'result' in parsed.msg &&
          parsed.msg.result.resultType === 'input_required' &&
          this.inputRequired(id, parsed.msg.result)
        )
          return;
        const entry = id !== undefined ? this.settle(id) : undefined;
        if (entry === undefined && this.abandoned.answered(parsed.msg.id)) return;
        if (entry === undefined)
          return this.log.debug('dropped an answer to no request in flight (late or cancelled)', { id: parsed.msg.id });
        if (entry.forwarded) this.hooks.outcome?.(this, true);
        entry.sink.reply(parsed.msg, line);
        return;
      }
      case 'notification':
        if (parsed.msg.method === 'notifications/progress') return this.onProgress(parsed.msg);
        if (parsed.msg.method === 'notifications/subscriptions/acknowledged') return this.listen.acknowledged();
        this.hooks.notification(this, parsed.msg);
        return;
      case 'request':
        if (parsed.msg.method === 'ping') return this.respond(parsed.msg.id, {});
        this.hooks.request(this, parsed.msg, related === undefined ? undefined : (this.sent.callOf(related) ?? related));
        return;
      case 'invalid': {
        const call = typeof parsed.id === 'number' ? this.sent.callOf(parsed.id) : undefined;
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
    const call = this.sent.callOf(id);
    const entry = call === undefined ? undefined : this.settle(call);
    if (entry === undefined) return;
    entry.sink.fail(reason);
    if (entry.forwarded) this.hooks.outcome?.(this, false);
  }

  private onProgress(msg: JsonRpcNotification): void {
    const token = msg.params?.progressToken;
    // Progress proves the server is working: it resets the timeout, but never past the call's ceiling.
    const entry = typeof token === 'number' ? this.sent.progressed(token) : undefined;
    if (entry === undefined) return; // a progress for a finished call: spec says ignore
    entry.sink.progress?.(msg.params!);
  }

  private onTimeout(id: number, entry: SentRequest): void {
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

  private settle(id: number): SentRequest | undefined {
    const entry = this.sent.settle(id);
    if (entry === undefined) return undefined;
    // A call with a round waiting ended: its input requests are no longer waited for.
    if (entry.input !== undefined) this.inputs.forget(entry);
    return entry;
  }

  /** Terminal: every sent request fails with `err` and the sweep stops (no call is taken after this). */
  private failAll(err: GatewayError, forwardedErr: GatewayError = err): void {
    const entries = this.sent.takeAll(); // the sweep stops with it
    this.listen.stop(); // no reopening
    this.inputs.clear(); // nothing is waited for
    this.abandoned.clear(); // the server works on nothing of this session any more
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
