// Sampling one process over a long benchmark run (bench/agents.ts, bench/soak.ts): its RSS and open
// file descriptors read from /proc, taken at intervals, and the trend after warm-up — the
// least-squares slope of RSS over time, which says whether something leaks. Linux only.

import { readdir, readFile } from 'node:fs/promises';

export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}

export async function fdCount(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

/** Least-squares slope of y over x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** One sample: minutes since the sampling started, RSS in MiB, open fds. */
export interface Sample {
  x: number;
  y: number;
  fds: number;
}

/** RSS over the samples after warm-up: its slope (MiB/min) and range; the fds of those samples in order. */
export interface Trend {
  slope: number;
  min: number;
  max: number;
  fds: number[];
}

export class ProcessSamples {
  readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly start = performance.now();

  constructor(private readonly pid: number) {}

  /** Takes one sample now. */
  async take(): Promise<void> {
    this.samples.push({ x: (performance.now() - this.start) / 60_000, y: await rssMiB(this.pid), fds: await fdCount(this.pid) });
  }

  /** Takes a sample every `ms` until `stop` (the timer does not keep the process alive). */
  every(ms: number): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.take(), ms);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * The trend of a run of `minutes`. The first minute (a third of a shorter run) is warm-up (the
   * heap growing to its working size); the trend is over the rest.
   */
  trend(minutes: number): Trend {
    const steady = this.samples.filter((s) => s.x >= Math.min(1, minutes / 3));
    const rss = steady.map((s) => s.y);
    return { slope: slope(steady), min: Math.min(...rss), max: Math.max(...rss), fds: steady.map((s) => s.fds) };
  }
}
