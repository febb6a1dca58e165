// The client side of the legacy HTTP+SSE transport (MCP 2024-11-05) for one remote server: a GET opens
// the event stream, whose first `endpoint` event names where to POST (resolved against the configured
// URL, and refused on another origin: the configured headers must not be sent elsewhere); every
// message then goes out as a POST there, and every message from the server arrives as a `message`
// event on the stream. Writes made before the endpoint is known wait for it. The stream ending is the
// server going away: `exit`, and the supervised connection reconnects.
// https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse

import type { IncomingMessage } from 'node:http';
import type { RemoteServerConfig } from '../../../config/types.js';
import { GatewayError } from '../../../errors.js';
import type { Logger } from '../../../observability/logger.js';
import { DEFAULT_MAX_LINE_LENGTH } from '../../../wire/jsonrpc.js';
import { SseParser, type SseEvent } from '../../../wire/sse.js';
import { displayUrl, HttpClient, mediaType, pipeSse, refusal, unreachable } from '../http/request.js';
import type { RemoteTransportOptions } from '../http/transport.js';
import type { ServerTransport, TransportEvents } from '../transport.js';

/** Writes held until the endpoint is known. */
const MAX_QUEUED = 10_000;

export class SseTransport implements ServerTransport {
  readonly pid = undefined;
  private readonly url: URL;
  private readonly http: HttpClient;
  private readonly maxLength: number;
  private state: 'open' | 'closed' = 'open';
  private endpoint: URL | undefined;
  private queue: { line: string; id: number | undefined }[] = [];
  /** The first request sent (initialize): its refusal ends the transport rather than answering it. */
  private firstId: number | undefined;

  constructor(
    private readonly config: RemoteServerConfig,
    private readonly log: Logger,
    private readonly events: TransportEvents,
    options: RemoteTransportOptions = {},
  ) {
    this.url = new URL(config.url);
    this.http = new HttpClient(this.url.protocol === 'https:', config.headers);
    this.maxLength = options.maxMessageLength ?? DEFAULT_MAX_LINE_LENGTH;
    void this.connect();
  }

  write(line: string, id?: number): boolean {
    if (this.state !== 'open') return false;
    this.firstId ??= id;
    if (this.endpoint === undefined) {
      if (this.queue.length >= MAX_QUEUED) return false;
      this.queue.push({ line, id });
      return true;
    }
    void this.post(this.endpoint, line, id);
    return true;
  }

  /** The legacy transport has no session to end: closing the stream is the goodbye. */
  stop(): Promise<void> {
    this.teardown();
    return Promise.resolve();
  }

  kill(): void {
    this.teardown();
  }

  private async connect(): Promise<void> {
    let res: IncomingMessage;
    try {
      res = await this.http.send(this.url, 'GET', { accept: 'text/event-stream' }).response;
    } catch (err) {
      return this.lost(unreachable(this.config.name, this.url, err));
    }
    if (this.state !== 'open') return void res.resume();
    if (res.statusCode !== 200) return this.lost(await refusal(this.config.name, res, this.log));
    const type = mediaType(res);
    if (type !== 'text/event-stream') {
      res.resume();
      return this.lost(
        this.badResponse(
          `answered the GET of ${displayUrl(this.url)} with content type "${type}", not an event stream (is it a Streamable HTTP server? use "type": "http")`,
        ),
      );
    }
    const parser = new SseParser({ event: (e) => this.onEvent(e), overflow: (length) => this.events.overflow(length) }, this.maxLength);
    const complete = await pipeSse(res, parser);
    this.lost(
      new GatewayError(
        'MCPG_SERVER_UNAVAILABLE',
        `server "${this.config.name}" at ${displayUrl(this.url)} closed its event stream${complete ? '' : ' (connection lost)'}`,
        { server: this.config.name },
      ),
    );
  }

  private onEvent(e: SseEvent): void {
    if (this.state !== 'open') return;
    if (e.event === 'message') {
      if (e.data !== '') this.events.line(e.data);
      return;
    }
    if (e.event !== 'endpoint') return;
    if (this.endpoint !== undefined) return this.log.warn('server sent a second endpoint event; ignored');
    let endpoint: URL;
    try {
      endpoint = new URL(e.data.trim(), this.url);
    } catch {
      return this.lost(this.badResponse(`sent an endpoint that is not a URL: ${e.data.slice(0, 200)}`));
    }
    if (endpoint.origin !== this.url.origin) {
      return this.lost(
        this.badResponse(
          `sent an endpoint on another origin (${endpoint.origin}); mcpgate posts only to ${this.url.origin}, where its headers are meant to go`,
        ),
      );
    }
    this.endpoint = endpoint;
    const queued = this.queue;
    this.queue = [];
    for (const { line, id } of queued) void this.post(endpoint, line, id);
  }

  private async post(endpoint: URL, line: string, id: number | undefined): Promise<void> {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(line) };
    let res: IncomingMessage;
    try {
      res = await this.http.send(endpoint, 'POST', headers, line).response;
    } catch (err) {
      if (this.state !== 'open') return;
      const reason = unreachable(this.config.name, endpoint, err);
      if (id !== undefined && id !== this.firstId) this.failCall(id, reason);
      return this.lost(reason);
    }
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return void res.resume();
    const reason = await refusal(this.config.name, res, this.log);
    if (this.state !== 'open') return;
    if (id === this.firstId && id !== undefined) return this.lost(reason);
    if (id !== undefined) return this.failCall(id, reason);
    this.log.warn('server refused a message', { error: reason.message });
  }

  private failCall(id: number, err: GatewayError): void {
    if (this.state === 'open') this.events.fail(id, err);
  }

  private lost(reason: GatewayError): void {
    if (this.state !== 'open') return;
    this.teardown();
    this.events.exit(reason);
  }

  private teardown(): void {
    this.state = 'closed';
    this.queue = [];
    this.http.destroy();
  }

  private badResponse(what: string): GatewayError {
    return new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${this.config.name}" ${what}`, { server: this.config.name });
  }
}
