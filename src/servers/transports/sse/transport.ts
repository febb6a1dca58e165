// The client side of the legacy HTTP+SSE transport (MCP 2024-11-05) for one remote server: a GET opens
// the event stream, whose first `endpoint` event names where to POST (resolved against the configured
// URL, and refused on another origin: the configured headers must not be sent elsewhere); every
// message then goes out as a POST there, and every message from the server arrives as a `message`
// event on the stream. Writes made before the endpoint is known wait for it. The stream ending is the
// server going away: `exit`, and the supervised connection reconnects. The URL, the client, the state, the
// held writes and the endings are the remote core's (remote-core.ts).
// https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse

import type { IncomingMessage } from 'node:http';
import type { RemoteServerConfig } from '../../../config/types.js';
import { GatewayError } from '../../../errors.js';
import type { Logger } from '../../../observability/logger.js';
import { SseParser, type SseEvent } from '../../../wire/sse.js';
import { displayUrl, mediaType, pipeSse, refusal, unreachable } from '../http/request.js';
import { RemoteCore, type RemoteTransportOptions } from '../remote-core.js';
import type { ServerTransport, TransportEvents } from '../transport.js';

export class SseTransport implements ServerTransport {
  readonly pid = undefined;
  /** The URL, the client, the state, the writes held until the endpoint is known, and the endings. */
  private readonly core: RemoteCore;
  private endpoint: URL | undefined;
  /** The first request sent (initialize): its refusal ends the transport rather than answering it. */
  private firstId: number | undefined;

  constructor(
    private readonly config: RemoteServerConfig,
    private readonly log: Logger,
    private readonly events: TransportEvents,
    options: RemoteTransportOptions = {},
  ) {
    // The legacy transport sends no credentials: only the configured headers.
    this.core = new RemoteCore(config, events, { ...options, credentials: undefined });
    void this.connect();
  }

  write(line: string, id?: number): boolean {
    if (this.core.state !== 'open') return false;
    this.firstId ??= id;
    if (this.endpoint === undefined) return this.core.hold(line, id);
    void this.post(this.endpoint, line, id);
    return true;
  }

  /** The legacy transport has no session to end: closing the stream is the goodbye. */
  stop(): Promise<void> {
    this.core.teardown();
    return Promise.resolve();
  }

  kill(): void {
    this.core.teardown();
  }

  private async connect(): Promise<void> {
    let res: IncomingMessage;
    try {
      res = await this.core.http.send(this.core.url, 'GET', { accept: 'text/event-stream' }).response;
    } catch (err) {
      return this.core.lost(unreachable(this.config.name, this.core.url, err));
    }
    if (this.core.state !== 'open') return void res.resume();
    if (res.statusCode !== 200) return this.core.lost(await refusal(this.config.name, res, this.log));
    const type = mediaType(res);
    if (type !== 'text/event-stream') {
      res.resume();
      return this.core.lost(
        this.core.badResponse(
          `answered the GET of ${displayUrl(this.core.url)} with content type "${type}", not an event stream (is it a Streamable HTTP server? use "type": "http")`,
        ),
      );
    }
    const parser = new SseParser(
      { event: (e) => this.onEvent(e), overflow: (length) => this.events.overflow(length) },
      this.core.maxLength,
    );
    const complete = await pipeSse(res, parser);
    this.core.lost(
      new GatewayError(
        'MCPG_SERVER_UNAVAILABLE',
        `server "${this.config.name}" at ${displayUrl(this.core.url)} closed its event stream${complete ? '' : ' (connection lost)'}`,
        { server: this.config.name },
      ),
    );
  }

  private onEvent(e: SseEvent): void {
    if (this.core.state !== 'open') return;
    if (e.event === 'message') {
      if (e.data !== '') this.events.line(e.data);
      return;
    }
    if (e.event !== 'endpoint') return;
    if (this.endpoint !== undefined) return this.log.warn('server sent a second endpoint event; ignored');
    let endpoint: URL;
    try {
      endpoint = new URL(e.data.trim(), this.core.url);
    } catch {
      return this.core.lost(this.core.badResponse(`sent an endpoint that is not a URL: ${e.data.slice(0, 200)}`));
    }
    if (endpoint.origin !== this.core.url.origin) {
      return this.core.lost(
        this.core.badResponse(
          `sent an endpoint on another origin (${endpoint.origin}); mcpgate posts only to ${this.core.url.origin}, where its headers are meant to go`,
        ),
      );
    }
    this.endpoint = endpoint;
    for (const { line, id } of this.core.takeHeld()) void this.post(endpoint, line, id);
  }

  private async post(endpoint: URL, line: string, id: number | undefined): Promise<void> {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(line) };
    let res: IncomingMessage;
    try {
      res = await this.core.http.send(endpoint, 'POST', headers, line).response;
    } catch (err) {
      if (this.core.state !== 'open') return;
      const reason = unreachable(this.config.name, endpoint, err);
      if (id !== undefined && id !== this.firstId) this.core.failCall(id, reason);
      return this.core.lost(reason);
    }
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return void res.resume();
    const reason = await refusal(this.config.name, res, this.log);
    if (this.core.state !== 'open') return;
    if (id === this.firstId && id !== undefined) return this.core.lost(reason);
    if (id !== undefined) return this.core.failCall(id, reason);
    this.log.warn('server refused a message', { error: reason.message });
  }
}
