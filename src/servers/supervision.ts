// The supervision rules a connection follows, as values: its settings (the retry budget, full-jitter
// backoff between a base and a cap, the parked probe's period, how long a session stays up to prove
// itself, the circuit breaker's) with their defaults, and what a lost session leads to — park until
// new credentials (retrying cannot help), back off while the budget lasts, or park with a slow probe
// — worded for the log and status. The connection (connection.ts) keeps the state, the timers and the
// transitions; this file decides which and says why.

import type { GatewayError } from '../errors.js';
import { DEFAULT_BREAKER, type BreakerOptions } from './breaker.js';
import { fullJitter } from './clock.js';
import { parksUntilNewCredentials } from './upstream-credentials.js';

export interface SupervisionOptions {
  /** Reconnect attempts before parking (default 5). */
  readonly retries: number;
  readonly backoffBaseMs: number;
  readonly backoffCapMs: number;
  /** A parked connection tries again on its own this often. */
  readonly parkProbeMs: number;
  /** A session that stays up this long has proven itself (the budget resets). */
  readonly stableMs: number;
  readonly breaker: BreakerOptions;
}

/** What callers may override: any field, the breaker's fields one by one. */
export type SupervisionSettings = Partial<Omit<SupervisionOptions, 'breaker'>> & { breaker?: Partial<BreakerOptions> };

const DEFAULT_SUPERVISION: SupervisionOptions = {
  retries: 5,
  backoffBaseMs: 250,
  backoffCapMs: 30_000,
  parkProbeMs: 60_000,
  stableMs: 30_000,
  breaker: DEFAULT_BREAKER,
};

/** The settings in force: the defaults with the caller's fields over them. */
export function supervisionOf(settings: SupervisionSettings | undefined): SupervisionOptions {
  return { ...DEFAULT_SUPERVISION, ...settings, breaker: { ...DEFAULT_BREAKER, ...settings?.breaker } };
}

/** What a lost (or never started) session leads to, with the transition's words. */
type AfterLoss =
  /** Parked until a login is stored or the credentials change (their watch, or SIGHUP, revives it). */
  | { readonly next: 'login'; readonly detail: string }
  /** Another attempt after `delayMs`; the server stays listed meanwhile. */
  | { readonly next: 'backoff'; readonly delayMs: number; readonly detail: string }
  /** The budget is spent: withdrawn, with one probe every `probeMs`. */
  | { readonly next: 'park'; readonly probeMs: number; readonly detail: string };

/**
 * What follows a session lost for `reason` after `attempts` attempts since the last that proved
 * itself; `listed`: the server is still listed (its tools stay so while it backs off).
 */
export function afterLoss(
  reason: GatewayError,
  at: { readonly attempts: number; readonly listed: boolean },
  opts: SupervisionOptions,
  random: () => number,
): AfterLoss {
  if (parksUntilNewCredentials(reason)) {
    const until = reason.code === 'MCPG_SERVER_NEEDS_LOGIN' ? 'a login is stored' : 'its credentials change or its next scheduled try';
    return { next: 'login', detail: `${reason.message}; parked until ${until} (or SIGHUP)` };
  }
  if (at.attempts < opts.retries) {
    const delayMs = fullJitter(at.attempts, opts.backoffBaseMs, opts.backoffCapMs, random);
    const listed = at.listed ? '; its tools stay listed meanwhile' : '';
    return {
      next: 'backoff',
      delayMs,
      detail: `${reason.message}; retrying in ${delayMs} ms (attempt ${at.attempts + 1} of ${opts.retries})${listed}`,
    };
  }
  return {
    next: 'park',
    probeMs: opts.parkProbeMs,
    detail: `${reason.message}; ${at.attempts} attempts failed, parked: its tools are withdrawn; it tries again every ${opts.parkProbeMs} ms, or on SIGHUP`,
  };
}
