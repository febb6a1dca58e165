// Counters of the rules' limits (quotas.ts asks them): what one check asks, what it is answered,
// the contract of the cluster's shared counters (`SharedQuotaCounters`, implemented on Redis by
// cluster/redis-quota-counters.ts and given by the composition root), and this worker's own
// counters (`LocalQuotaCounters`), used without --redis and while Redis cannot be asked.
//
// A check is all or nothing: every limit of the call is looked at first, and only if all pass is
// each counted, so a call refused by its tool's limit does not use up its agent's window.

import { untilWindowEnds, windowStart } from './quota-window.js';

export interface WindowAsk {
  readonly key: string;
  readonly limit: number;
  readonly windowMs: number;
}

export interface FlightAsk {
  readonly key: string;
  readonly limit: number;
}

/** One call's limits: calls per window and calls in flight, each on its counter. */
export interface CounterAsk {
  readonly windows: readonly WindowAsk[];
  readonly inFlight: readonly FlightAsk[];
}

/** Passed (every counter counted), or the first limit over: `windows[index]` or `inFlight[index]`. */
export type CounterAnswer =
  { readonly ok: true } | { readonly ok: false; readonly window: boolean; readonly index: number; readonly retryAfterMs: number };

const PASSED: CounterAnswer = Object.freeze({ ok: true });

/** What the counters hold now, for status and the console. */
export interface CounterReading {
  /** Calls counted in the current window of each `windows` key (0 when its window has passed). */
  readonly windows: readonly number[];
  /** Calls in flight on each `inFlight` key (every worker's, when shared). */
  readonly inFlight: readonly number[];
}

/** The cluster's counters (with --redis). A rejected promise means Redis could not be asked. */
export interface SharedQuotaCounters {
  /** False while Redis is down: checks go to the local counters without trying. */
  readonly up: boolean;
  take(ask: CounterAsk): Promise<CounterAnswer>;
  /** What `take` would answer now, counting nothing (a call that must wait for a person first). */
  peek(ask: CounterAsk): Promise<CounterAnswer>;
  /** Ends calls in flight counted by `take` (one per key). Never throws; Redis down is made good on reconnect. */
  release(keys: readonly string[]): void;
  read(windows: readonly Omit<WindowAsk, 'limit'>[], inFlight: readonly string[]): Promise<CounterReading>;
}

/** A counter a status reads: its key and, for a window, its length. */
export type ReadWindow = Omit<WindowAsk, 'limit'>;

/** Counters this worker keeps past which the oldest is forgotten (that key's count starts again). */
const MAX_KEYS = 100_000;
/** Expired windows are swept once the map holds this many. */
const SWEEP_AT = 4096;

export class LocalQuotaCounters {
  private readonly windows = new Map<string, { start: number; count: number; windowMs: number }>();
  private readonly flights = new Map<string, number>();
  private sweepAt = SWEEP_AT;

  constructor(private readonly now: () => number = Date.now) {}

  take(ask: CounterAsk): CounterAnswer {
    const now = this.now();
    const over = this.over(ask, now);
    if (over !== undefined) return over;
    for (const w of ask.windows) {
      const start = windowStart(now, w.windowMs);
      const entry = this.windows.get(w.key);
      if (entry !== undefined && entry.start === start) entry.count += 1;
      else if (entry !== undefined) {
        entry.start = start;
        entry.count = 1;
        entry.windowMs = w.windowMs;
      } else this.addWindow(w.key, { start, count: 1, windowMs: w.windowMs }, now);
    }
    for (const f of ask.inFlight) {
      if (!this.flights.has(f.key) && this.flights.size >= MAX_KEYS) this.flights.delete(this.flights.keys().next().value!);
      this.flights.set(f.key, (this.flights.get(f.key) ?? 0) + 1);
    }
    return PASSED;
  }

  /** What `take` would answer now, counting nothing. */
  peek(ask: CounterAsk): CounterAnswer {
    return this.over(ask, this.now()) ?? PASSED;
  }

  /** The first limit of `ask` one more call would pass, or undefined when every one has room. */
  private over(ask: CounterAsk, now: number): CounterAnswer | undefined {
    for (let i = 0; i < ask.windows.length; i++) {
      const w = ask.windows[i]!;
      if (this.used(w.key, w.windowMs, now) + 1 > w.limit)
        return { ok: false, window: true, index: i, retryAfterMs: untilWindowEnds(now, w.windowMs) };
    }
    for (let i = 0; i < ask.inFlight.length; i++) {
      const f = ask.inFlight[i]!;
      if ((this.flights.get(f.key) ?? 0) + 1 > f.limit) return { ok: false, window: false, index: i, retryAfterMs: 0 };
    }
    return undefined;
  }

  release(keys: readonly string[]): void {
    for (const key of keys) {
      const n = this.flights.get(key);
      if (n === undefined) continue;
      if (n <= 1) this.flights.delete(key);
      else this.flights.set(key, n - 1);
    }
  }

  read(windows: readonly Omit<WindowAsk, 'limit'>[], inFlight: readonly string[]): CounterReading {
    const now = this.now();
    return { windows: windows.map((w) => this.used(w.key, w.windowMs, now)), inFlight: inFlight.map((key) => this.flights.get(key) ?? 0) };
  }

  /** Calls counted in `key`'s window that holds `now`. */
  private used(key: string, windowMs: number, now: number): number {
    const entry = this.windows.get(key);
    return entry !== undefined && entry.start === windowStart(now, windowMs) ? entry.count : 0;
  }

  private addWindow(key: string, entry: { start: number; count: number; windowMs: number }, now: number): void {
    if (this.windows.size >= this.sweepAt) {
      for (const [k, e] of this.windows) if (e.start + e.windowMs <= now) this.windows.delete(k);
      // Still full of live windows: sweep again only after as many more keys.
      this.sweepAt = this.windows.size + SWEEP_AT;
      if (this.windows.size >= MAX_KEYS) this.windows.delete(this.windows.keys().next().value!);
    }
    this.windows.set(key, entry);
  }
}
