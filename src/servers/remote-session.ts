// The session half of the Streamable HTTP client (http-transport.ts carries the messages): the
// `Mcp-Session-Id` the server assigned and the negotiated `MCP-Protocol-Version` (both read from the
// initialize passing through), a new session when the server forgets ours (404: the recorded initialize
// and notifications/initialized are replayed; the session above never notices), and the GET stream
// for server-initiated messages, reopened with Last-Event-ID while the session lives.
// https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management

import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { parseMessage } from '../wire/jsonrpc.js';
import { SseParser } from '../wire/sse.js';
import {
  headerOf, mediaType, pipeSse, readResponseBody, refusal, unreachable, type Exchange, type HttpClient, type Pauses,
} from './http-request.js';

/** What the session needs of its transport. */
export interface SessionHost {
  readonly name: string;
  readonly url: URL;
  readonly http: HttpClient;
  readonly pauses: Pauses;
  readonly log: Logger;
  readonly maxLength: number;
  readonly reconnectMs: number;
  isOpen(): boolean;
  /** A message from the server, to the session above. */
  emit(line: string, related: number | undefined): void;
  overflow(length: number): void;
  /** The server cannot be used any more: end the transport. */
  lost(reason: GatewayError): void;
  /** A new session is ready: send what was held meanwhile. */
  resumeWrites(): void;
}

export const POST_ACCEPT = 'application/json, text/event-stream';
/** Refusals of the GET stream in a row (other than 405) before it is given up. */
const MAX_LISTEN_FAILURES = 5;

export class RemoteSession {
  id: string | undefined;
  protocolVersion: string | undefined;
  /** The initialize we sent, to replay for a new session. */
  init: { line: string; id: number } | undefined;
  initialized: string | undefined;
  /** Set while a new session is being set up (writes are held). */
  renewing: Promise<boolean> | undefined;
  private listening: Exchange | undefined;
  private listenLoop = false;
  private listenOff = false;
  private listenEventId = '';
  private listen404 = 0;

  constructor(private readonly host: SessionHost) {}

  /** Spots the handshake among the messages going out (only until seen: the check is not on the hot path after). */
  record(line: string, id: number | undefined): void {
    if (id !== undefined) {
      if (this.init === undefined && line.includes('"method":"initialize"')) this.init = { line, id };
    } else if (this.initialized === undefined && line.includes('"method":"notifications/initialized"')) this.initialized = line;
  }

  /** Whether a POST is the first initialize (its answer carries the session id). */
  isInitialize(id: number | undefined): boolean {
    return id !== undefined && id === this.init?.id && this.id === undefined;
  }

  /** A message coming in: the answer to initialize says which protocol version to announce from now on. */
  inspect(line: string, related: number | undefined): void {
    if (this.protocolVersion === undefined && related !== undefined && related === this.init?.id) this.protocolVersion = versionOf(line);
  }

  headers(session = this.id): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    if (session !== undefined) headers['mcp-session-id'] = session;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  /** Ends the GET stream (stop, or the session it belonged to is gone). */
  quiet(): void {
    this.listening?.abort();
  }

  /** The server answered 404 to session `stale`: start a new one (once, however many requests saw it). */
  renew(stale: string): Promise<boolean> {
    if (this.renewing !== undefined) return this.renewing;
    if (this.id !== stale) return Promise.resolve(this.host.isOpen()); // already replaced
    this.id = undefined;
    this.renewing = this.replay().then((ok) => {
      this.renewing = undefined;
      this.host.resumeWrites();
      if (ok) this.listen();
      return ok;
    });
    return this.renewing;
  }

  private async replay(): Promise<boolean> {
    const { host } = this;
    this.quiet();
    host.log.info(`server "${host.name}" ended our session (HTTP 404); starting a new one`);
    try {
      const init = this.init;
      if (init === undefined) throw new Error('no initialize to replay');
      const res = await this.post(init.line, {});
      if (res.statusCode !== 200) throw await refusal(host.name, res, host.log);
      const session = headerOf(res, 'mcp-session-id');
      const answer = await this.answerTo(res, init.id);
      const parsed = answer === undefined ? undefined : parseMessage(answer);
      if (parsed?.kind !== 'response' || !('result' in parsed.msg)) throw new Error(`no initialize result (${answer?.slice(0, 200) ?? 'no answer'})`);
      this.protocolVersion = versionOf(answer!) ?? this.protocolVersion;
      this.id = session;
      if (this.initialized !== undefined) {
        const done = await this.post(this.initialized, this.headers(session));
        done.resume();
        if ((done.statusCode ?? 0) >= 300) throw new Error(`notifications/initialized was refused with HTTP ${done.statusCode}`);
      }
    } catch (err) {
      if (!host.isOpen()) return false;
      const why = err instanceof Error ? err.message : String(err);
      host.lost(new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${host.name}" ended our session and starting a new one failed: ${why}`, { server: host.name, cause: err }));
      return false;
    }
    host.log.info(`server "${host.name}": new session started`);
    return host.isOpen();
  }

  private post(line: string, headers: OutgoingHttpHeaders): Promise<IncomingMessage> {
    const all = { ...headers, accept: POST_ACCEPT, 'content-type': 'application/json', 'content-length': Buffer.byteLength(line) };
    return this.host.http.send(this.host.url, 'POST', all, line).response;
  }

  /** Reads a replayed initialize's answer, keeping it from the session above (which had its answer long ago). */
  private async answerTo(res: IncomingMessage, id: number): Promise<string | undefined> {
    let answer: string | undefined;
    const take = (line: string): void => {
      const parsed = parseMessage(line);
      if (parsed.kind === 'response' && parsed.msg.id === id) answer = line;
      else this.host.emit(line, undefined);
    };
    if (mediaType(res) === 'text/event-stream') {
      await pipeSse(res, new SseParser({ event: (e) => e.event === 'message' && e.data !== '' && take(e.data) }, this.host.maxLength));
    } else {
      const body = await readResponseBody(res, this.host.maxLength);
      if (body.kind === 'body') take(body.text.trim());
    }
    return answer;
  }

  /** Opens the GET stream for server-initiated messages (after initialize; again after a new session). */
  listen(): void {
    if (this.listenLoop || this.listenOff || !this.host.isOpen()) return;
    this.listenLoop = true;
    void this.runListen().finally(() => (this.listenLoop = false));
  }

  private async runListen(): Promise<void> {
    const { host } = this;
    for (let failures = 0; host.isOpen() && this.renewing === undefined; ) {
      const session = this.id;
      const headers: OutgoingHttpHeaders = { ...this.headers(session), accept: 'text/event-stream' };
      if (this.listenEventId !== '') headers['last-event-id'] = this.listenEventId;
      const exchange = this.listening = host.http.send(host.url, 'GET', headers);
      let res: IncomingMessage;
      try {
        res = await exchange.response;
      } catch (err) {
        if (host.isOpen() && !exchange.aborted) host.lost(unreachable(host.name, host.url, err));
        return;
      }
      if (!host.isOpen() || exchange.aborted) return void res.resume();
      const status = res.statusCode ?? 0;
      if (status === 405) {
        res.resume();
        this.listenOff = true;
        return host.log.debug('server offers no GET stream (405)');
      }
      if (status === 404 && session !== undefined && ++this.listen404 < 2) {
        res.resume();
        void this.renew(session);
        return;
      }
      let retryMs: number | undefined;
      if (status !== 200 || mediaType(res) !== 'text/event-stream') {
        const reason = await refusal(host.name, res, host.log);
        if (++failures >= MAX_LISTEN_FAILURES || status === 404) {
          this.listenOff = true;
          return host.log.warn('gave up the GET stream for server-initiated messages', { error: reason.message });
        }
        host.log.debug('the GET stream was refused; retrying', { error: reason.message });
        retryMs = host.reconnectMs * 2 ** failures;
      } else {
        failures = 0;
        this.listen404 = 0;
        const parser = new SseParser({
          event: (e) => e.event === 'message' && e.data !== '' && host.emit(e.data, undefined),
          retry: (ms) => (retryMs = ms),
          overflow: (length) => host.overflow(length),
        }, host.maxLength);
        const complete = await pipeSse(res, parser);
        if (parser.lastEventId !== '') this.listenEventId = parser.lastEventId;
        if (!host.isOpen() || exchange.aborted) return;
        host.log.debug('the GET stream ended; reopening it', { complete });
      }
      if (!(await host.pauses.wait(retryMs ?? host.reconnectMs))) return;
    }
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
