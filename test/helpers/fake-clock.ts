// A fake Clock for unit tests (src/servers/clock.ts): time moves only when a test calls `advance`,
// which runs the timers that fall due in order of their due time (then of scheduling), including
// timers that those timers schedule, and `random()` returns a value the test sets.

import type { Clock, TimerHandle } from '../../src/servers/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class FakeClock implements Clock {
  /** What random() returns; 0.5 unless a test sets it. */
  randomValue = 0.5;
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 1_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): TimerHandle {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
        this.timers = this.timers.filter((t) => t !== timer);
      },
    };
  }

  random(): number {
    return this.randomValue;
  }

  /** Timers scheduled and not yet run or cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running every timer due by then, each at its own due time. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: Timer | undefined;
      for (const timer of this.timers) {
        if (timer.at > end) continue;
        if (next === undefined || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq)) next = timer;
      }
      if (next === undefined) break;
      const due = next;
      this.timers = this.timers.filter((t) => t !== due);
      this.t = Math.max(this.t, due.at);
      if (!due.cancelled) due.fn();
    }
    this.t = end;
  }
}

/** Lets pending promise callbacks run (everything queued before the next turn of the event loop). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
