// The channel an agent session writes to: how one agent is reached (stdio's line writer, an HTTP
// channel's streams, a modern request's sink). The session says what goes to the agent and which of
// its requests it is about; the channel decides how it travels.

import type { RequestId } from '../../wire/jsonrpc.js';
import type { EncodedParts } from '../../wire/encoded.js';

/** What a rate-limited refusal carries (the specification draft's `error.data`, SEP-3304). */
export interface RateLimitedData {
  readonly retryAfterMs: number;
  readonly limit?: number;
  readonly remaining?: number;
}

export interface AgentChannel {
  /** `modern`: the agent speaks 2026-07-28 (a dual-era server then takes its calls on its modern session). */
  readonly era?: 'modern';
  /**
   * Sends one framed message to the agent. `about` is the agent's request the message belongs to:
   * its response when `final`, otherwise something sent while it runs (progress, a server's
   * sampling or elicitation request). Streamable HTTP routes by it; stdio ignores it. Returns
   * false when the message could not be sent (an HTTP agent with no stream open for it).
   */
  send(line: string, about?: RequestId, final?: boolean): boolean | void;
  /**
   * Sends one message given as pieces (wire/encoded.ts: a cached list's bytes between its head and
   * tail), written as bytes without joining them. A channel without it gets the joined text by `send`.
   */
  sendParts?(parts: EncodedParts, about?: RequestId, final?: boolean): boolean | void;
  /**
   * The server ended the answer stream of the agent's request `about` to be polled (SEP-1699):
   * a channel that can (Streamable HTTP) ends the agent's stream the same way, with `retryMs`, and
   * calls `resume` when the agent resumes it, so the server is polled when the agent polls.
   */
  pause?(about: RequestId, retryMs: number, resume: () => void): void;
  /**
   * The agent's request `about` is about to be refused as rate limited (`MCPG_RATE_LIMITED`) before any work: a
   * channel that can (Streamable HTTP) answers it with status 429 and `Retry-After`.
   */
  rateLimited?(about: RequestId, data: RateLimitedData): void;
  /**
   * False while the agent cannot take a request outside its calls (an HTTP agent with no GET stream
   * open); absent means it always can (stdio). A channel that has it calls the session's
   * `canBeAsked` when that becomes true.
   */
  readonly canBeAsked?: boolean;
  /** The session ended (after it answered what was open); a modern listen stream ends its request here. */
  closed?(): void;
}
