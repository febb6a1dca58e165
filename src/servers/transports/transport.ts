// What a server session needs of the way to its server: a framed message out, framed messages in,
// and a stop. Stdio children (transports/stdio/process.ts) and remote servers over Streamable HTTP or SSE
// (transports/http/transport.ts, transports/sse/transport.ts) implement it; the session above does not know which.
// The interface: `write(line, id?)`, messages in (with the id of the call whose answer stream carried
// them, when the transport knows), `stop`, `kill`.

import type { ServerConfig } from '../../config/types.js';
import type { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';

/** How a graceful stop escalates (stdio: close stdin, wait, SIGTERM, wait, SIGKILL). */
export interface StopTimings {
  /** How long to wait for an exit after closing stdin before SIGTERM. */
  stdinGraceMs: number;
  /** How long to wait after SIGTERM before SIGKILL. */
  termGraceMs: number;
}

export interface TransportEvents {
  /**
   * One message from the server. `related` is the id of our request whose response stream carried
   * it (Streamable HTTP says which call a server→client request belongs to; stdio never does).
   */
  line(line: string, related?: number): void;
  /**
   * Our request `id` failed without an answer from the server (an HTTP error status, a dropped
   * stream): it fails the call and counts against the server's circuit breaker.
   */
  fail(id: number, reason: GatewayError): void;
  /**
   * The answer stream of our request `id` ended before the answer with an event id to resume from
   * (SSE polling, SEP-1699): the transport resumes it after `retryMs`, or at once on `resumeNow(id)`.
   */
  paused?(id: number, retryMs: number): void;
  /** A message over the size limit was discarded. */
  overflow(length: number): void;
  /** The transport is gone for good (process exited, remote unreachable); called at most once. */
  exit(reason: GatewayError): void;
}

/**
 * Given with a request to a server of the 2026-07-28 revision: what its HTTP headers repeat from the
 * body (`Mcp-Method`, `Mcp-Name`), sent instead of the session headers. Stdio ignores it.
 */
export interface ModernRoute {
  method: string;
  name: string | undefined;
  /** The `Mcp-Param-*` headers the request goes with (`OutboundRequest.paramHeaders`). */
  params?: Readonly<Record<string, string>> | undefined;
}

export interface ServerTransport {
  /** The child's pid (stdio only). */
  readonly pid: number | undefined;
  /**
   * Sends one message. `id` is set when the message is a request of ours, so a transport that can
   * fail one message (an HTTP POST) can answer that request with an error line. False: not sent.
   */
  write(line: string, id?: number, route?: ModernRoute): boolean;
  /** Resumes the paused answer stream of request `id` now rather than after its `retry:` (see `paused`). */
  resumeNow?(id: number): void;
  /** Cancels request `id` by closing its answer stream (HTTP, the 2026-07-28 way); absent: not possible. */
  abort?(id: number): void;
  /** Graceful close (stdio: close stdin, TERM, KILL; HTTP: end the remote session). */
  stop(timings: StopTimings): Promise<void>;
  /** Immediate close. */
  kill(): void;
}

export type TransportFactory = (config: ServerConfig, log: Logger, events: TransportEvents) => ServerTransport;
