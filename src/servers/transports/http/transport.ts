// The client side of MCP Streamable HTTP (2025-11-25) for one remote server. Every message is a POST
// to the MCP endpoint; a request's answer comes back as JSON or as an SSE stream whose messages belong
// to that call, and server-initiated messages come on a GET stream. One class, `HttpTransport`, keeps
// the remote session (its id, the negotiated protocol version, the re-initialize after a 404) and the
// GET stream; the URL, the client, the state, the held writes and the endings are the remote core's
// (remote-core.ts). Resumption, the session, a 2026-07-28 request's route and credentials:
// src/servers/README.md, "Streamable HTTP".
// https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http

import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { RemoteServerConfig } from '../../../config/types.js';
import { GatewayError } from '../../../errors.js';
import type { Logger } from '../../../observability/logger.js';
import {
  headerOf,
  httpStatusError,
  mediaType,
  Pauses,
  pipeSse,
  readResponseBody,
  redacted,
  refusal,
  unreachable,
  type Exchange,
} from './request.js';
import { nestedDeeperThan, parseMessage, wireLimits } from '../../../wire/jsonrpc.js';
import { SseParser } from '../../../wire/sse.js';
import type { UpstreamCredentials } from '../../upstream-credentials.js';
import type { StopTimings } from '../transport.js';
import type { ModernRoute, ServerTransport, TransportEvents } from '../transport.js';
import { RemoteCore, type RemoteTransportOptions } from '../remote-core.js';
import { headerValue, MODERN_PROTOCOL_VERSION } from '../../modern-protocol.js';

/** The most of an error answer's body read to find the JSON-RPC error in it. */
const ERROR_BODY_LIMIT = 64 * 1024;

const NOTIFICATION = '{"jsonrpc":"2.0","method":';
const CANCELLED = '{"jsonrpc":"2.0","method":"notifications/cancelled"';
const DELETE_TIMEOUT_MS = 1000;
const POST_ACCEPT = 'application/json, text/event-stream';
/** Refusals of the GET stream in a row (other than 405) before it is given up. */
const MAX_LISTEN_FAILURES = 5;

/** Resumptions of one call's stream in a row that bring nothing before the call is failed. */
const MAX_RESUMES = 3;

/** One request of ours in flight: the exchange carrying its answer now (POST, then resumption GETs). */
interface PendingPost {
  exchange: Exchange;
  cancelled: boolean;
  /** Set while its answer stream waits to be resumed: ends the wait early (`resumeNow`). */
  wake?: () => void;
}

/** What one answer stream delivered, across its resumptions. */
interface StreamState {
  answered: boolean;
  /** The last message that may be the answer, checked when the stream ends unanswered. */
  lastData: string | undefined;
  lastEventId: string;
  retryMs: number | undefined;
  delivered: number;
}

export class HttpTransport implements ServerTransport {
  readonly pid = undefined;
  /** The URL, the client, the state, the writes held while a new session is set up, and the endings. */
  private readonly core: RemoteCore;
  private readonly pauses = new Pauses();
  private readonly reconnectMs: number;
  private readonly calls = new Map<number, PendingPost>();
  private stopping: Promise<void> | undefined;
  private readonly credentials: UpstreamCredentials | undefined;
  /** The `Mcp-Session-Id` the server assigned at initialize. */
  private sessionId: string | undefined;
  private protocolVersion: string | undefined;
  /** The initialize we sent, to replay for a new session. */
  private init: { line: string; id: number } | undefined;
  private initialized: string | undefined;
  /** Set while a new session is being set up (writes are held). */
  private renewing: Promise<boolean> | undefined;
  /** How the server said it lost our session (for the log line of the renewal). */
  private goneBy = 'HTTP 404';
  private listening: Exchange | undefined;
  private listenLoop = false;
  private listenOff = false;
  private listenEventId = '';
  private listen404 = 0;

  constructor(
    private readonly config: RemoteServerConfig,
    private readonly log: Logger,
    private readonly events: TransportEvents,
    options: RemoteTransportOptions = {},
  ) {
    this.credentials = options.credentials;
    this.core = new RemoteCore(config, events, options, () => {
      this.pauses.end();
      this.calls.clear();
    });
    this.reconnectMs = options.reconnectDelayMs ?? 500;
  }

  write(line: string, id?: number, route?: ModernRoute): boolean {
    if (this.core.state !== 'open') return false;
    if (route !== undefined) {
      void this.send(line, id, false, route);
      return true;
    }
    this.record(line, id);
    if (this.renewing !== undefined) return this.core.hold(line, id);
    void this.send(line, id, false);
    if (id === undefined && line.startsWith(CANCELLED)) this.abandon(line);
    return true;
  }

  /** Closes request `id`'s stream: the 2026-07-28 revision's cancellation. */
  abort(id: number): void {
    const call = this.calls.get(id);
    if (call === undefined) return;
    call.cancelled = true;
    call.exchange.abort();
  }

  stop(timings: StopTimings): Promise<void> {
    this.stopping ??= this.runStop(timings);
    return this.stopping;
  }

  kill(): void {
    this.core.teardown();
  }

  private async runStop(timings: StopTimings): Promise<void> {
    if (this.core.state !== 'open') return this.core.teardown();
    this.core.state = 'stopping';
    this.quiet();
    this.pauses.end();
    if (this.sessionId !== undefined) {
      // Ending the session is a courtesy: a server that does not answer quickly is not waited for.
      const timeout = Math.max(1, Math.min(DELETE_TIMEOUT_MS, timings.stdinGraceMs));
      const exchange = this.core.http.send(this.core.url, 'DELETE', this.sessionHeaders(), undefined, timeout);
      try {
        (await exchange.response).resume();
      } catch {
        // unreachable or slow: the server expires the session on its own
      }
    }
    this.core.teardown();
  }

  // ── sending ───────────────────────────────────────────────────────────────────────────────────

  private async send(line: string, id: number | undefined, resent: boolean, route?: ModernRoute, reauthorized = false): Promise<void> {
    const isInit = route === undefined && this.isInitialize(id);
    const credentials = this.credentials;
    if (credentials?.stale === true) {
      try {
        await credentials.ready();
      } catch (err) {
        return this.authFailed(err, id, isInit);
      }
      if (this.core.state !== 'open') return;
    }
    const used = credentials?.header();
    const session = route === undefined ? this.sessionId : undefined;
    const era = route === undefined ? this.sessionHeaders(session) : modernHeaders(route);
    const exchange = this.core.http.send(
      this.core.url,
      'POST',
      { ...era, accept: POST_ACCEPT, 'content-type': 'application/json', 'content-length': Buffer.byteLength(line) },
      line,
    );
    const call: PendingPost = { exchange, cancelled: false };
    if (id !== undefined) this.calls.set(id, call);
    try {
      let res: IncomingMessage;
      try {
        res = await exchange.response;
      } catch (err) {
        if (this.core.state !== 'open' || call.cancelled) return;
        const reason = unreachable(this.config.name, this.core.url, err);
        if (id !== undefined && !isInit) this.core.failCall(id, reason);
        return this.core.lost(reason);
      }
      if (this.core.state === 'closed' || call.cancelled) return void res.resume();
      const status = res.statusCode ?? 0;
      if (status === 404 && session !== undefined) {
        res.resume();
        this.goneBy = 'HTTP 404';
        return await this.sessionGone(session, line, id, resent);
      }
      if (status === 400 && session !== undefined) {
        // Many servers (the SDK v1 example's pattern) answer a session they no longer know with 400
        // rather than 404: a 400 whose error names the session is the same loss, and is redone the same way.
        const body = await readResponseBody(res, ERROR_BODY_LIMIT).catch(() => undefined);
        const text = body?.kind === 'body' ? body.text.trim() : '';
        if (namesLostSession(text)) {
          this.goneBy = 'HTTP 400 naming the session';
          return await this.sessionGone(session, line, id, resent);
        }
        const reason = httpStatusError(this.config.name, res);
        if (text !== '')
          this.log.warn(`${reason.message}; its body (for the operator only): ${redacted(text.replace(/\s+/g, ' ')).slice(0, 200)}`, {
            server: this.config.name,
            httpStatus: status,
          });
        if (isInit) return this.core.lost(legacyHint(reason));
        if (id !== undefined) return this.core.failCall(id, reason);
        return this.log.warn('server refused a message', { error: reason.message });
      }
      const challenge = status === 401 || status === 403 ? headerOf(res, 'www-authenticate') : undefined;
      // Refused before it ran: a 401 is answered by a refresh; a 403 `insufficient_scope` is a step-up
      // (the token lacks a scope this request needs: a machine grant widens it at once). Either way it
      // is sent again once. Where a person is needed (a login, or a login for the wider scope), the
      // request fails with "needs login" and the connection parks until the login is stored.
      const reauthorize =
        credentials === undefined
          ? undefined
          : status === 401 && credentials.concerns(challenge)
            ? () => credentials.unauthorized(used, challenge)
            : status === 403 && challenge !== undefined && /\binsufficient_scope\b/.test(challenge)
              ? () => credentials.insufficientScope(used, challenge)
              : undefined;
      if (reauthorize !== undefined) {
        const failed = (err: unknown): void => this.authFailed(err, id, isInit);
        res.resume();
        if (reauthorized) return failed(this.refusedAgain());
        try {
          await reauthorize();
        } catch (err) {
          return failed(err);
        }
        if (this.core.state !== 'open' || call.cancelled) return;
        if (id !== undefined && this.calls.get(id) === call) this.calls.delete(id);
        return await this.send(line, id, resent, route, true);
      }
      if (status < 200 || status >= 300) {
        // A modern server gives some refusals an HTTP status with the JSON-RPC error in the body (a
        // missing client capability: 400, a method it does not have: 404): that error is its answer.
        if (route !== undefined && id !== undefined && mediaType(res) === 'application/json') {
          const body = await readResponseBody(res, ERROR_BODY_LIMIT).catch(() => undefined);
          const text = body?.kind === 'body' ? body.text.trim() : '';
          const parsed = text.startsWith('{') ? parseMessage(text) : undefined;
          if (parsed?.kind === 'response' && 'error' in parsed.msg && parsed.msg.id === id) return this.emit(text, id);
          // Any other body may echo what mcpgate sent (the shared Authorization): the operator's log only.
          const reason = httpStatusError(this.config.name, res);
          if (text !== '')
            this.log.warn(`${reason.message}; its body (for the operator only): ${redacted(text.replace(/\s+/g, ' ')).slice(0, 200)}`, {
              server: this.config.name,
              httpStatus: status,
            });
          return this.core.failCall(id, reason);
        }
        const reason = await refusal(this.config.name, res, this.log);
        if (isInit) return this.core.lost(status === 400 || status === 404 || status === 405 ? legacyHint(reason) : reason);
        if (id !== undefined) return this.core.failCall(id, reason);
        return this.log.warn('server refused a message', { error: reason.message });
      }
      if (isInit) this.sessionId = headerOf(res, 'mcp-session-id');
      else if (route === undefined && line === this.initialized) this.listen();
      if (status === 202 || status === 204) {
        res.resume();
        if (id !== undefined) this.core.failCall(id, this.core.badResponse(`accepted a request (HTTP ${status}) without answering it`));
        return;
      }
      await this.readAnswer(res, id, call);
    } finally {
      if (id !== undefined && this.calls.get(id) === call) this.calls.delete(id);
    }
  }

  // ── reading answers ─────────────────────────────────────────────────────────────────────────

  /** The answer to one POST: one JSON message (or a batch), or an SSE stream of them. */
  private async readAnswer(res: IncomingMessage, id: number | undefined, call: PendingPost): Promise<void> {
    const type = mediaType(res);
    if (type === 'text/event-stream') return this.readStream(res, id, call);
    if (type !== 'application/json') {
      res.resume();
      if (id !== undefined)
        this.core.failCall(id, this.core.badResponse(`answered with content type "${type}", not JSON or an event stream`));
      return;
    }
    let body;
    try {
      body = await readResponseBody(res, this.core.maxLength);
    } catch {
      if (this.core.state === 'open' && !call.cancelled && id !== undefined) this.core.failCall(id, this.dropped());
      return;
    }
    if (body.kind === 'overflow') {
      this.events.overflow(body.length);
      if (id !== undefined) this.core.failCall(id, this.tooLarge(body.length));
      return;
    }
    const text = body.text.trim();
    if (text.startsWith('{')) {
      // Some servers write several messages in one JSON body, one a line (progress, then the answer).
      if (!text.includes('\n') || isOneMessage(text)) return this.emit(text, id);
      for (const line of text.split('\n')) if (line.trim() !== '') this.emit(line.trim(), id);
      return;
    }
    if (text.startsWith('[')) {
      let batch: unknown;
      try {
        batch = JSON.parse(text);
      } catch {
        batch = undefined;
      }
      // Each member is re-encoded below: one nested past the limit must never reach JSON.stringify.
      if (Array.isArray(batch) && !nestedDeeperThan(batch, wireLimits.maxDepth + 1)) {
        for (const msg of batch) this.emit(JSON.stringify(msg), id);
        return;
      }
    }
    if (id !== undefined)
      this.core.failCall(
        id,
        this.core.badResponse(text === '' ? 'answered with an empty body' : 'answered with a body that is not a JSON-RPC message'),
      );
  }

  /** An SSE answer; if it ends before the answer, resume it (GET + Last-Event-ID) or fail the call. */
  private async readStream(res: IncomingMessage, id: number | undefined, call: PendingPost): Promise<void> {
    const stream: StreamState = { answered: false, lastData: undefined, lastEventId: '', retryMs: undefined, delivered: 0 };
    await this.consume(res, id, stream);
    if (id === undefined) return;
    for (let fruitless = 0; ;) {
      if (this.core.state !== 'open' || call.cancelled || isAnswered(stream, id)) return;
      if (stream.lastEventId === '' || fruitless >= MAX_RESUMES) return this.core.failCall(id, this.dropped());
      const delay = stream.retryMs ?? this.reconnectMs;
      const woken = new Promise<boolean>((resolve) => (call.wake = () => resolve(this.core.state === 'open')));
      this.events.paused?.(id, delay);
      const waited = await Promise.race([this.pauses.wait(delay), woken]);
      call.wake = undefined;
      if (!waited || call.cancelled) return;
      this.log.debug('resuming an answer stream that ended before the answer', { id, lastEventId: stream.lastEventId });
      const headers = { ...this.sessionHeaders(), accept: 'text/event-stream', 'last-event-id': stream.lastEventId };
      call.exchange = this.core.http.send(this.core.url, 'GET', headers);
      let resumed: IncomingMessage;
      try {
        resumed = await call.exchange.response;
      } catch (err) {
        if (this.core.state !== 'open' || call.cancelled) return;
        const reason = unreachable(this.config.name, this.core.url, err);
        this.core.failCall(id, reason);
        return this.core.lost(reason);
      }
      if (resumed.statusCode !== 200 || mediaType(resumed) !== 'text/event-stream') {
        resumed.resume();
        return this.core.failCall(id, this.dropped());
      }
      const before = stream.delivered;
      await this.consume(resumed, id, stream);
      fruitless = stream.delivered > before ? 0 : fruitless + 1;
    }
  }

  private async consume(res: IncomingMessage, id: number | undefined, stream: StreamState): Promise<void> {
    const parser = new SseParser(
      {
        event: (e) => {
          if (e.event !== 'message' || e.data === '') return; // '' primes the client with an event id
          stream.delivered += 1;
          // Requests and notifications always carry "method"; a message without it is the answer.
          if (!e.data.includes('"method"')) stream.answered = true;
          else stream.lastData = e.data;
          this.emit(e.data, id);
        },
        retry: (ms) => (stream.retryMs = ms),
        overflow: (length) => {
          this.events.overflow(length);
          if (id === undefined || stream.answered) return;
          stream.answered = true; // the dropped message may have been the answer: do not wait for it
          this.core.failCall(id, this.tooLarge(length));
        },
      },
      this.core.maxLength,
    );
    await pipeSse(res, parser);
    if (parser.lastEventId !== '') stream.lastEventId = parser.lastEventId;
  }

  private dropped(): GatewayError {
    return new GatewayError(
      'MCPG_SERVER_UNAVAILABLE',
      `server "${this.config.name}" closed the connection before answering; the outcome of the call is unknown (it may have run)`,
      { server: this.config.name, detail: { outcome: 'unknown' } },
    );
  }

  private tooLarge(length: number): GatewayError {
    return this.core.badResponse(
      `sent a message over the size limit (${length} of at most ${this.core.maxLength} bytes); it was discarded`,
    );
  }

  /** A message from the server, to the session above. */
  private emit(line: string, related: number | undefined): void {
    if (this.core.state === 'closed') return;
    this.inspect(line, related);
    this.events.line(line, related);
  }

  /**
   * The agent resumed its own stream of this call (mcpgate passed the server's polling on to it):
   * resume ours now, as that agent chose to, rather than after the server's `retry:`.
   */
  resumeNow(id: number): void {
    this.calls.get(id)?.wake?.();
  }

  /** Our `notifications/cancelled` went out: stop reading that call's answer. */
  private abandon(line: string): void {
    let requestId: unknown;
    try {
      requestId = (JSON.parse(line) as { params?: { requestId?: unknown } }).params?.requestId;
    } catch {
      return;
    }
    const call = typeof requestId === 'number' ? this.calls.get(requestId) : undefined;
    if (call === undefined) return;
    call.cancelled = true;
    call.exchange.abort();
  }

  /** A 404 (or a 400 naming the session) for our session id: the server ended it. Start a new one, then re-send (never an answer to the old session). */
  private async sessionGone(stale: string, line: string, id: number | undefined, resent: boolean): Promise<void> {
    if (resent) {
      if (id !== undefined) this.core.failCall(id, this.core.badResponse(`forgot the new session at once (${this.goneBy} again)`));
      return;
    }
    if (!(await this.renew(stale)) || this.core.state !== 'open') return;
    if (id === undefined && !line.startsWith(NOTIFICATION)) return this.log.debug('dropped an answer meant for the ended session');
    if (line === this.initialized) return; // the new handshake sent it
    await this.send(line, id, true);
  }

  // ── the remote session ──────────────────────────────────────────────────────────────────────

  /** Spots the handshake among the messages going out (only until seen: the check is not on the hot path after). */
  private record(line: string, id: number | undefined): void {
    if (id !== undefined) {
      if (this.init === undefined && line.includes('"method":"initialize"')) this.init = { line, id };
    } else if (this.initialized === undefined && line.includes('"method":"notifications/initialized"')) this.initialized = line;
  }

  /** Whether a POST is the first initialize (its answer carries the session id). */
  private isInitialize(id: number | undefined): boolean {
    return id !== undefined && id === this.init?.id && this.sessionId === undefined;
  }

  /** A message coming in: the answer to initialize says which protocol version to announce from now on. */
  private inspect(line: string, related: number | undefined): void {
    if (this.protocolVersion === undefined && related !== undefined && related === this.init?.id) this.protocolVersion = versionOf(line);
  }

  private sessionHeaders(session = this.sessionId): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    if (session !== undefined) headers['mcp-session-id'] = session;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  /** Ends the GET stream (stop, or the session it belonged to is gone). */
  private quiet(): void {
    this.listening?.abort();
  }

  /** The server answered 404 (or 400 naming it) to session `stale`: start a new one (once, however many requests saw it). */
  private renew(stale: string): Promise<boolean> {
    if (this.renewing !== undefined) return this.renewing;
    if (this.sessionId !== stale) return Promise.resolve(this.isOpen()); // already replaced
    this.sessionId = undefined;
    this.renewing = this.replay().then((ok) => {
      this.renewing = undefined;
      this.resumeWrites();
      if (ok) this.listen();
      return ok;
    });
    return this.renewing;
  }

  private async replay(): Promise<boolean> {
    this.quiet();
    this.log.info(`server "${this.config.name}" ended our session (${this.goneBy}); starting a new one`);
    try {
      const init = this.init;
      if (init === undefined) throw new Error('no initialize to replay');
      const res = await this.post(init.line, {});
      if (res.statusCode !== 200) throw await refusal(this.config.name, res, this.log);
      const session = headerOf(res, 'mcp-session-id');
      const answer = await this.answerTo(res, init.id);
      const parsed = answer === undefined ? undefined : parseMessage(answer);
      if (parsed?.kind !== 'response' || !('result' in parsed.msg))
        throw new Error(`no initialize result (${answer?.slice(0, 200) ?? 'no answer'})`);
      this.protocolVersion = versionOf(answer!) ?? this.protocolVersion;
      this.sessionId = session;
      if (this.initialized !== undefined) {
        const done = await this.post(this.initialized, this.sessionHeaders(session));
        done.resume();
        if ((done.statusCode ?? 0) >= 300) throw new Error(`notifications/initialized was refused with HTTP ${done.statusCode}`);
      }
    } catch (err) {
      if (!this.isOpen()) return false;
      const why = err instanceof Error ? err.message : String(err);
      this.core.lost(
        new GatewayError(
          'MCPG_SERVER_UNAVAILABLE',
          `server "${this.config.name}" ended our session and starting a new one failed: ${why}`,
          { server: this.config.name, cause: err },
        ),
      );
      return false;
    }
    this.log.info(`server "${this.config.name}": new session started`);
    return this.isOpen();
  }

  private post(line: string, headers: OutgoingHttpHeaders): Promise<IncomingMessage> {
    const all = { ...headers, accept: POST_ACCEPT, 'content-type': 'application/json', 'content-length': Buffer.byteLength(line) };
    return this.core.http.send(this.core.url, 'POST', all, line).response;
  }

  /** Reads a replayed initialize's answer, keeping it from the session above (which had its answer long ago). */
  private async answerTo(res: IncomingMessage, id: number): Promise<string | undefined> {
    let answer: string | undefined;
    const take = (line: string): void => {
      const parsed = parseMessage(line);
      if (parsed.kind === 'response' && parsed.msg.id === id) answer = line;
      else this.emit(line, undefined);
    };
    if (mediaType(res) === 'text/event-stream') {
      await pipeSse(res, new SseParser({ event: (e) => e.event === 'message' && e.data !== '' && take(e.data) }, this.core.maxLength));
    } else {
      const body = await readResponseBody(res, this.core.maxLength);
      if (body.kind === 'body') take(body.text.trim());
    }
    return answer;
  }

  /** Opens the GET stream for server-initiated messages (after initialize; again after a new session). */
  private listen(): void {
    if (this.listenLoop || this.listenOff || !this.isOpen()) return;
    this.listenLoop = true;
    void this.runListen().finally(() => (this.listenLoop = false));
  }

  private async runListen(): Promise<void> {
    for (let failures = 0; this.isOpen() && this.renewing === undefined;) {
      const session = this.sessionId;
      const headers: OutgoingHttpHeaders = { ...this.sessionHeaders(session), accept: 'text/event-stream' };
      if (this.listenEventId !== '') headers['last-event-id'] = this.listenEventId;
      const exchange = (this.listening = this.core.http.send(this.core.url, 'GET', headers));
      let res: IncomingMessage;
      try {
        res = await exchange.response;
      } catch (err) {
        if (this.isOpen() && !exchange.aborted) this.core.lost(unreachable(this.config.name, this.core.url, err));
        return;
      }
      if (!this.isOpen() || exchange.aborted) return void res.resume();
      const status = res.statusCode ?? 0;
      if (status === 405) {
        res.resume();
        this.listenOff = true;
        return this.log.debug('server offers no GET stream (405)');
      }
      if (status === 404 && session !== undefined && ++this.listen404 < 2) {
        res.resume();
        void this.renew(session);
        return;
      }
      let retryMs: number | undefined;
      if (status !== 200 || mediaType(res) !== 'text/event-stream') {
        const reason = await refusal(this.config.name, res, this.log);
        if (++failures >= MAX_LISTEN_FAILURES || status === 404) {
          this.listenOff = true;
          return this.log.warn('gave up the GET stream for server-initiated messages', { error: reason.message });
        }
        this.log.debug('the GET stream was refused; retrying', { error: reason.message });
        retryMs = this.reconnectMs * 2 ** failures;
      } else {
        failures = 0;
        this.listen404 = 0;
        const parser = new SseParser(
          {
            event: (e) => e.event === 'message' && e.data !== '' && this.emit(e.data, undefined),
            retry: (ms) => (retryMs = ms),
            overflow: (length) => this.events.overflow(length),
          },
          this.core.maxLength,
        );
        const complete = await pipeSse(res, parser);
        if (parser.lastEventId !== '') this.listenEventId = parser.lastEventId;
        if (!this.isOpen() || exchange.aborted) return;
        this.log.debug('the GET stream ended; reopening it', { complete });
      }
      if (!(await this.pauses.wait(retryMs ?? this.reconnectMs))) return;
    }
  }

  private isOpen(): boolean {
    return this.core.state === 'open';
  }

  /** A new session is ready: send what was held meanwhile. */
  private resumeWrites(): void {
    for (const { line, id } of this.core.takeHeld()) this.write(line, id);
  }

  // ── endings ───────────────────────────────────────────────────────────────────────────────────

  /** No usable token for this message: it was never sent, so its call fails plainly; the session ends (a login revives it). */
  private authFailed(err: unknown, id: number | undefined, isInit: boolean): void {
    const reason =
      err instanceof GatewayError
        ? err
        : new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${this.config.name}": ${String(err)}`, { server: this.config.name });
    if (id !== undefined && !isInit) this.core.failCall(id, reason);
    this.core.lost(reason);
  }

  private refusedAgain(): GatewayError {
    const name = this.config.name;
    return new GatewayError(
      'MCPG_SERVER_NEEDS_LOGIN',
      `server "${name}" needs login: run \`${this.credentials?.loginCommand ?? `mcpgate login ${name}`}\` (it refused a freshly obtained access token too)`,
      { server: name },
    );
  }
}

function modernHeaders(route: ModernRoute): Record<string, string> {
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION, 'mcp-method': route.method };
  if (route.name !== undefined) headers['mcp-name'] = headerValue(route.name);
  if (route.params !== undefined) for (const [name, value] of Object.entries(route.params)) headers[name] ??= value;
  return headers;
}

/** The statuses a legacy HTTP+SSE server gives a POST of initialize (the spec's fallback signal): say what to change. */
function legacyHint(err: GatewayError): GatewayError {
  return new GatewayError(err.code, `${err.message} (if it is a legacy HTTP+SSE server, set "type": "sse")`, {
    server: err.server,
    detail: err.detail,
  });
}

function isAnswered(stream: StreamState, id: number): boolean {
  if (stream.answered || stream.lastData === undefined) return stream.answered;
  const parsed = parseMessage(stream.lastData);
  return parsed.kind === 'response' && parsed.msg.id === id;
}

/** Whether a body with line breaks is still one JSON message (pretty-printed), not one message a line. */
function isOneMessage(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The protocolVersion of an initialize result line, if it is one. */
function versionOf(line: string): string | undefined {
  try {
    const version = (JSON.parse(line) as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a 400's body says the session is unknown: a JSON-RPC error with no id (it answers no
 * request) whose message names the session, or a plain-text body that does.
 */
function namesLostSession(text: string): boolean {
  if (!/session/i.test(text)) return false;
  if (!text.startsWith('{')) return true;
  const parsed = parseMessage(text);
  return parsed?.kind === 'response' && 'error' in parsed.msg && parsed.msg.id === null;
}
