// The core both remote transports share (Streamable HTTP, transports/http/transport.ts, and
// legacy HTTP+SSE, transports/sse/transport.ts): the configured URL and the HTTP client that reaches
// it, the transport's state (`open`, `stopping`, `closed`), the writes held until the transport can
// send them (bounded), and the endings — a call answered with an error in the server's place
// (`failCall`), the server gone (`lost`: everything ends and it is reported once, so the supervised
// connection reconnects), and `teardown`, which also runs the transport's own release given at
// construction. Each transport keeps how it speaks to the server; what ends it is written once, here.

import type { RemoteServerConfig } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { DEFAULT_MAX_LINE_LENGTH } from '../../wire/jsonrpc.js';
import type { UpstreamCredentials } from '../upstream-credentials.js';
import { HttpClient } from './http/request.js';
import type { TransportEvents } from './transport.js';

export interface RemoteTransportOptions {
  /** Largest message accepted from the server, in bytes (default: the stdio line limit). */
  maxMessageLength?: number;
  /** Wait before reopening a dropped stream when the server gave no `retry:` (ms). */
  reconnectDelayMs?: number;
  /** OAuth: the `Authorization` this server gets, refreshed before expiry and after a 401. */
  credentials?: UpstreamCredentials;
}

/** Writes held until the transport can send them (the endpoint is known, a new session is set up). */
const MAX_HELD = 10_000;

export class RemoteCore {
  state: 'open' | 'stopping' | 'closed' = 'open';
  readonly server: string;
  readonly url: URL;
  readonly http: HttpClient;
  /** Largest message accepted from the server, in bytes. */
  readonly maxLength: number;
  private held: { line: string; id: number | undefined }[] = [];

  /** `release`: what the transport frees of its own when it ends (run once, by `teardown`). */
  constructor(
    config: RemoteServerConfig,
    private readonly events: TransportEvents,
    options: RemoteTransportOptions,
    private readonly release: () => void = () => {},
  ) {
    this.server = config.name;
    this.url = new URL(config.url);
    this.http = new HttpClient(this.url.protocol === 'https:', config.headers, options.credentials);
    this.maxLength = options.maxMessageLength ?? DEFAULT_MAX_LINE_LENGTH;
  }

  /** Holds a write until `takeHeld`; false when too many are held already (the write is refused). */
  hold(line: string, id: number | undefined): boolean {
    if (this.held.length >= MAX_HELD) return false;
    this.held.push({ line, id });
    return true;
  }

  /** The held writes, oldest first; none is held after this. */
  takeHeld(): { line: string; id: number | undefined }[] {
    const held = this.held;
    this.held = [];
    return held;
  }

  /** Answers our request `id` with an error in the server's place. */
  failCall(id: number, err: GatewayError): void {
    if (this.state === 'open') this.events.fail(id, err);
  }

  /** The server is gone: end everything and report it once. */
  lost(reason: GatewayError): void {
    if (this.state !== 'open') return;
    this.teardown();
    this.events.exit(reason);
  }

  /** Ends the transport now: nothing held is sent, every request in flight is abandoned. */
  teardown(): void {
    this.state = 'closed';
    this.held = [];
    this.release();
    this.http.destroy();
  }

  /** The server answered in a way mcpgate cannot use. */
  badResponse(what: string): GatewayError {
    return new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${this.server}" ${what}`, { server: this.server });
  }
}
