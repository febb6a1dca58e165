// What operators see of code mode: the runs since start (how many, how they ended, how many inner
// calls they made and how those ended), the runs going on now, and the last few runs with their
// durations, for the status (`code` field), `mcpgate status`'s line and /metrics. One board per
// gateway; every session's runs report here. Bounded: the recent list keeps the last 20.

import type { GatewayMetrics } from '../../observability/metrics.js';

const RECENT_RUNS = 20;

/** One finished run as status shows it. */
interface RunRecord {
  readonly run: string;
  readonly agent: string;
  readonly session: string;
  /** `ok`, or the MCPG_* code the run failed with. */
  readonly outcome: string;
  readonly durationMs: number;
  readonly calls: { readonly ok: number; readonly error: number; readonly refused: number };
  readonly endedAt: string;
}

export class CodeBoard {
  private runsTotal = 0;
  private running = 0;
  private readonly outcomes = new Map<string, number>();
  private readonly inner = { ok: 0, error: 0, refused: 0 };
  private readonly recent: RunRecord[] = [];

  constructor(private readonly metrics: GatewayMetrics) {}

  /** A run started; the function returned ends it with its record. */
  started(): (record: Omit<RunRecord, 'endedAt'>) => void {
    this.running += 1;
    let ended = false;
    return (record) => {
      if (ended) return;
      ended = true;
      this.running -= 1;
      this.runsTotal += 1;
      this.outcomes.set(record.outcome, (this.outcomes.get(record.outcome) ?? 0) + 1);
      this.inner.ok += record.calls.ok;
      this.inner.error += record.calls.error;
      this.inner.refused += record.calls.refused;
      this.recent.push({ ...record, endedAt: new Date().toISOString() });
      if (this.recent.length > RECENT_RUNS) this.recent.shift();
      this.metrics.codeRun(record.outcome, record.durationMs / 1000, record.calls);
    };
  }

  /** Whether any run has started (the status shows the board only then, or while an agent is in code mode). */
  get used(): boolean {
    return this.runsTotal > 0 || this.running > 0;
  }

  /** The status' `code` field. */
  status(): Record<string, unknown> {
    return {
      runs: this.runsTotal,
      running: this.running,
      outcomes: Object.fromEntries(this.outcomes),
      inner_calls: { ...this.inner },
      recent: [...this.recent].reverse(),
    };
  }
}
