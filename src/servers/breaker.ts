// The circuit breaker: one server's `closed → open → half-open` state, which fails calls fast while
// the server keeps failing them. Open after `threshold` consecutive failures (timeouts and transport
// errors; a tool's own isError result is a success here). After `cooldownMs` exactly one call goes
// through as a half-open probe: success closes the breaker, failure re-opens it for another cooldown;
// calls made while the probe runs fail fast. A probe whose outcome never comes (the agent cancelled
// it, its session died under it) is given up a cooldown after it began and the next call is a new
// probe, so a lost outcome cannot wedge the breaker half-open. A connection has one for its calls,
// a pool one for making pooled connections. Its state is plain fields: a caller reads `state` (and
// `failures`) before calling in, so a call to a healthy server runs no code of this file.

import type { Clock } from './clock.js';

type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  threshold: number;
  cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = { threshold: 3, cooldownMs: 30_000 };

export type Admission = { ok: true; probe: boolean } | { ok: false; retryAt: number };

export class CircuitBreaker {
  state: BreakerState = 'closed';
  failures = 0;
  openedAt = 0;
  /** When the current half-open probe was admitted. */
  probeAt = 0;
  trips = 0;

  constructor(
    private readonly options: BreakerOptions,
    private readonly clock: Clock,
  ) {}

  /** Open: when the next probe is admitted. Half-open: when the probe in flight is given up if it has not ended. */
  get retryAt(): number {
    return (this.state === 'half-open' ? this.probeAt : this.openedAt) + this.options.cooldownMs;
  }

  /** Asks to send one call. A probe admission must be followed by success() or failure(). */
  admit(): Admission {
    if (this.state === 'closed') return { ok: true, probe: false };
    const now = this.clock.now();
    if (now >= this.retryAt) {
      this.state = 'half-open';
      this.probeAt = now;
      return { ok: true, probe: true };
    }
    return { ok: false, retryAt: this.retryAt };
  }

  success(): void {
    this.failures = 0;
    this.state = 'closed';
  }

  failure(): void {
    this.failures += 1;
    if (this.state === 'half-open' || (this.state === 'closed' && this.failures >= this.options.threshold)) {
      if (this.state === 'closed') this.trips += 1;
      this.state = 'open';
      this.openedAt = this.clock.now();
    }
  }

  /** A probe that could not be sent (no live session): back to open, cooldown re-armed. */
  probeAborted(): void {
    if (this.state !== 'half-open') return;
    this.state = 'open';
    this.openedAt = this.clock.now();
  }

  /** A successful (re)connect: the server is reachable again. */
  reset(): void {
    this.failures = 0;
    this.state = 'closed';
  }
}
