// Why a connection cannot take a call now, worded for the agent: restarting (retryable, with when),
// parked, waiting for a login, its breaker open, closed, or an on-demand start that failed; and its
// next step as status and the console show it. The connection (connection.ts) keeps the states and
// hands a reading of itself here. Off the hot path: only a call that cannot go comes here.

import { GatewayError } from '../errors.js';
import { parksUntilNewCredentials } from './upstream-credentials.js';

/** What the words read of a connection at the moment a call could not go. */
export interface ConnectionReading {
  readonly server: string;
  /** Its state (connection.ts `ConnectionState`). */
  readonly state: string;
  readonly lastError: GatewayError | undefined;
  /** When it tries again (backing off, or parked with a scheduled probe). */
  readonly nextAttemptAt: number | undefined;
  /** Its server is listed: serving now, or kept listed through a restart. */
  readonly listed: boolean;
  /** The connection's clock now (ms). */
  readonly now: number;
}

/** What the next step reads of the connection's supervision. */
interface Budget {
  readonly attempts: number;
  readonly retries: number;
  readonly parkProbeMs: number;
  /** The command that stores a login for a remote server (its credentials say; default `mcpgate login NAME`). */
  readonly loginCommand: string | undefined;
}

/**
 * Why a call cannot go now. A server restarting after serving (backing off, or connecting again;
 * its tools are still listed) is retryable: `data.retryable` and, while it backs off,
 * `data.retryAt` say when it is worth trying again. A server parked until a login is stored, or until
 * its credentials change, answers with that reason itself: it says what to do.
 */
export function unavailable(at: ConnectionReading): GatewayError {
  const { server, state, lastError } = at;
  if (lastError !== undefined && parksUntilNewCredentials(lastError) && state !== 'ready') return lastError;
  const why = lastError !== undefined ? `: ${lastError.message}` : '';
  const retryAt = at.nextAttemptAt;
  const seconds = retryAt === undefined ? undefined : Math.max(0, Math.ceil((retryAt - at.now) / 1000));
  if ((state === 'backoff' || state === 'connecting') && at.listed) {
    const when = seconds !== undefined ? `it restarts in ${seconds} s` : 'it is starting again now';
    return new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${server}" is restarting${why}; ${when}, retry the call then`, {
      server,
      detail: { state, retryable: true, ...(retryAt !== undefined && { retryAt: new Date(retryAt).toISOString() }) },
    });
  }
  const when = seconds !== undefined ? `; next attempt in ${seconds} s` : '';
  return new GatewayError(
    'MCPG_SERVER_UNAVAILABLE',
    `server "${server}" is ${state === 'connecting' ? 'connecting' : state === 'parked' ? 'parked' : 'not connected'}${why}${when}`,
    { server, detail: { state } },
  );
}

/** The circuit breaker is open: the call fails fast and says when the server is tried again. */
export function breakerOpen(
  server: string,
  breaker: { readonly failures: number; readonly state: string },
  retryAt: number,
  now: number,
): GatewayError {
  const seconds = Math.max(0, Math.ceil((retryAt - now) / 1000));
  return new GatewayError(
    'MCPG_SERVER_UNAVAILABLE',
    `server "${server}" is unreachable (${breaker.failures} consecutive failures); it will be tried again in ${seconds} s`,
    { server, detail: { breaker: breaker.state, retryable: true, retryAt: new Date(retryAt).toISOString() } },
  );
}

/** The connection was closed (shutdown, or its entry removed by a reload). */
export function connectionClosed(server: string): GatewayError {
  return new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${server}" was closed`, { server });
}

/**
 * Why the start an on-demand server's calls waited for failed: the reason, the next step and, while
 * the connection backs off, when it is tried again. A login it needs is that error itself.
 */
export function startFailed(reason: GatewayError, at: ConnectionReading, next: string | undefined): GatewayError {
  if (parksUntilNewCredentials(reason)) return reason;
  const retryAt = at.state === 'backoff' ? at.nextAttemptAt : undefined;
  return new GatewayError(
    'MCPG_SERVER_UNAVAILABLE',
    `server "${at.server}" could not be started on demand: ${reason.message}${next !== undefined ? `; ${next}` : ''}`,
    {
      server: at.server,
      detail: {
        state: at.state,
        reason: reason.code,
        retryable: at.state === 'backoff',
        ...(retryAt !== undefined && { retryAt: new Date(retryAt).toISOString() }),
      },
    },
  );
}

/** What happens next, for messages and status: "retrying in 240 ms (attempt 2 of 5)" or why it is parked. */
export function nextStep(at: ConnectionReading, budget: Budget): string | undefined {
  const { server, state, lastError } = at;
  if (state === 'backoff')
    return `retrying in ${Math.max(0, (at.nextAttemptAt ?? 0) - at.now)} ms (attempt ${budget.attempts + 1} of ${budget.retries})`;
  if (state === 'parked' && lastError?.code === 'MCPG_SERVER_NEEDS_LOGIN')
    return `parked until a login is stored: run \`${budget.loginCommand ?? `mcpgate login ${server}`}\``;
  if (state === 'parked' && lastError?.code === 'MCPG_SERVER_AUTH_REFUSED')
    return 'parked: its authorization server refused its credentials; it tries again when they change, on its retry schedule, or on SIGHUP';
  if (state === 'parked')
    return `parked after ${budget.attempts} attempt(s): it tries again every ${budget.parkProbeMs / 1000} s, or at once on SIGHUP`;
  return undefined;
}
