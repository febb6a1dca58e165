// Time, injectable: the supervisor and the breaker take a Clock so unit tests drive every
// transition with a fake one instead of waiting on real timers.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  now(): number;
  /** Runs `fn` after `ms`; the returned handle cancels it. Timers do not keep the process alive. */
  after(ms: number, fn: () => void): TimerHandle;
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
  random: () => Math.random(),
};

/** Full jitter (AWS architecture blog): a uniform delay in [0, min(cap, base · 2^attempt)). */
export function fullJitter(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
