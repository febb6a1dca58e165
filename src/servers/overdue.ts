// A call past its deadline (server-session.ts's sweep finds it): the reason its cancel carries, the
// error its sink gets, and whether it counts against the server's breaker. Off the hot path: only an
// overdue call comes here.

import { GatewayError } from '../errors.js';
import type { SentRequest } from './session-types.js';

interface Overdue {
  /** Sent to the server with notifications/cancelled. */
  reason: string;
  error: GatewayError;
  /** A sign the server is failing (the breaker hears of it), or only that the call ran too long. */
  counts: boolean;
}

/** `serverTimeoutMs`: the entry's own `timeout`; `ceilingMs`: its `limits.maxCallMs`. */
export function overdue(server: string, entry: SentRequest, serverTimeoutMs: number, ceilingMs: number, now: number): Overdue {
  const { method, timeoutMs } = entry;
  if (entry.deadline >= entry.ceiling) {
    // The call ran out its total time. A server that reported progress within its timeout is
    // working, just longer than allowed: that is no sign of failure for the breaker. One that went
    // silent (or has a ceiling below its timeout) would have timed out anyway, and counts as such.
    const alive = entry.progressAt !== undefined && now - entry.progressAt < timeoutMs;
    return {
      reason: `ran longer than the ceiling of ${ceilingMs} ms`,
      counts: entry.forwarded && !alive && timeoutMs >= serverTimeoutMs,
      error: new GatewayError(
        'MCPG_SERVER_TIMEOUT',
        `server "${server}" did not finish ${method} within its ceiling of ${ceilingMs} ms (limits.maxCallMs; progress does not extend it); the request was cancelled`,
        { server, detail: { ceilingMs } },
      ),
    };
  }
  // Only the server's own timeout says the server is failing; a shorter one an agent chose (e.g.
  // execute_tool's timeout_ms) must not let one agent open the breaker for everyone.
  return {
    reason: `timed out after ${timeoutMs} ms`,
    counts: entry.forwarded && timeoutMs >= serverTimeoutMs,
    error: new GatewayError(
      'MCPG_SERVER_TIMEOUT',
      `server "${server}" did not answer ${method} within ${timeoutMs} ms; the request was cancelled`,
      { server, detail: { timeoutMs } },
    ),
  };
}
