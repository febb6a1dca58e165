// The window math of calls-per-window limits, shared by this worker's counters (quota-counters.ts)
// and, in Lua, by the cluster's (cluster/redis-quota-counters.ts): fixed windows aligned to the epoch.
//
// Fixed rather than sliding: every worker agrees on a window's bounds from the clock alone (no
// coordination, no per-call timestamps kept), a window is one counter (one small Redis hash, one
// INCR-like write per call), the n+1th call of a window is refused exactly, and `retryAfterMs` is
// exact: the window's end. The price is the boundary: up to twice `calls` may pass within one
// window's length when they straddle two windows (the last moments of one, the first of the next).
// A sliding log would remove that at the cost of one entry per call; a sliding-window estimate
// (two windows weighted) would make the n+1th call's refusal approximate. Operators who need the
// burst bounded pair a window with `inFlight`, or use a shorter window.

/** The start (ms since the epoch) of the window of length `windowMs` that holds `now`. */
export function windowStart(now: number, windowMs: number): number {
  return now - (now % windowMs);
}

/** Milliseconds from `now` to the end of its window (at least 1: a refusal always says to wait). */
export function untilWindowEnds(now: number, windowMs: number): number {
  return Math.max(1, windowStart(now, windowMs) + windowMs - now);
}
