// Prints the HTTP benchmark's tables and checks its targets (issue: "`npm run bench` adds HTTP"):
// mcpgate's throughput at least 4× the best other gateway's, with a median under 2× the bare
// `node:http` round trip. Both ratios come from one run, so they share the machine's noise.

import { CONCURRENCY, type HttpResult, type HttpRow, type Sessions } from './http-throughput.js';
import { FLOOR_NAME, MCPGATE_NAME, RELAY_NAME } from './http-targets.js';

export const THROUGHPUT_TARGET = 4;
export const MEDIAN_TARGET = 2;

const ms = (v: number): string => (v < 10 ? v.toFixed(2) : v.toFixed(1));
const rate = (v: number): string => v.toFixed(0);

function row(result: HttpResult, target: string, c: number, sessions: Sessions): HttpRow | undefined {
  return result.rows.find((r) => r.target === target && r.concurrency === c && r.sessions === sessions);
}

export interface Verdict {
  concurrency: number;
  sessions: Sessions;
  /** mcpgate calls/s ÷ the best other gateway's; undefined when either is missing. */
  throughputRatio?: number;
  best?: HttpRow;
  /** mcpgate median ÷ floor median. */
  medianRatio?: number;
}

export function verdicts(result: HttpResult, sessions: Sessions): Verdict[] {
  const others = result.targets.filter((t) => t !== FLOOR_NAME && t !== RELAY_NAME && t !== MCPGATE_NAME);
  return CONCURRENCY.flatMap((c) => {
    const gate = row(result, MCPGATE_NAME, c, sessions);
    const base = row(result, FLOOR_NAME, c, sessions);
    if (base === undefined) return [];
    const best = others.map((t) => row(result, t, c, sessions)).filter((r) => r !== undefined).sort((a, b) => b.throughput - a.throughput)[0];
    const v: Verdict = { concurrency: c, sessions };
    if (best !== undefined) v.best = best;
    if (gate !== undefined) {
      v.medianRatio = gate.median / base.median;
      if (best !== undefined) v.throughputRatio = gate.throughput / best.throughput;
    }
    return [v];
  });
}

function table(result: HttpResult, sessions: Sessions): void {
  const levels = CONCURRENCY.filter((c) => result.rows.some((r) => r.concurrency === c && r.sessions === sessions));
  if (levels.length === 0) return;
  const what = sessions === 'shared' ? 'one MCP session shared by the C workers' : 'one MCP session per worker';
  console.log(`\nHTTP: echo tools/call with C calls in flight, ${what} (keep-alive Agent, C sockets)`);
  console.log('  median and p99 in ms; cpu: µs of CPU per call used by the target and every process it started');
  console.log(`  ${'target'.padEnd(20)}${levels.map((c) => `   ${`C=${c}`.padEnd(5)}${'median'.padStart(7)}${'p99'.padStart(7)}${'calls/s'.padStart(8)}${'cpu'.padStart(6)}`).join('')}`);
  for (const target of result.targets) {
    const cells = levels.map((c) => {
      const r = row(result, target, c, sessions);
      const cpu = r?.targetCpu === undefined ? '-' : r.targetCpu.toFixed(0);
      return r === undefined ? ' '.repeat(36) : `   ${' '.repeat(5)}${ms(r.median).padStart(7)}${ms(r.p99).padStart(7)}${rate(r.throughput).padStart(8)}${cpu.padStart(6)}`;
    });
    console.log(`  ${target.padEnd(20)}${cells.join('')}`);
  }
  const client = result.rows.filter((r) => r.sessions === sessions);
  const perCall = client.map((r) => r.clientCpu).sort((a, b) => a - b);
  console.log(`  the load client itself used ${perCall[0]!.toFixed(0)}–${perCall[perCall.length - 1]!.toFixed(0)} µs of CPU per call`);
  const floorName = FLOOR_NAME;
  for (const v of verdicts(result, sessions)) {
    const gate = row(result, MCPGATE_NAME, v.concurrency, sessions);
    const base = row(result, floorName, v.concurrency, sessions)!;
    if (gate === undefined) continue;
    const tput = v.throughputRatio === undefined || v.best === undefined
      ? 'no other gateway ran'
      : `${rate(gate.throughput)} calls/s = ${v.throughputRatio.toFixed(1)}× the best other gateway (${v.best.target}, ${rate(v.best.throughput)}) ` +
        `(target ≥ ${THROUGHPUT_TARGET}×: ${v.throughputRatio >= THROUGHPUT_TARGET ? 'met' : 'not met'})`;
    const med = `median ${ms(gate.median)} ms = ${v.medianRatio!.toFixed(2)}× the floor's ${ms(base.median)} ms (target < ${MEDIAN_TARGET}×: ${v.medianRatio! < MEDIAN_TARGET ? 'met' : 'not met'})`;
    const relay = row(result, RELAY_NAME, v.concurrency, sessions);
    const hop = relay === undefined ? '' : `; the http→stdio relay: ${rate(relay.throughput)} calls/s, median ${(relay.median / base.median).toFixed(2)}× the floor`;
    console.log(`  C=${v.concurrency}: mcpgate ${tput}; ${med}${hop}`);
  }
}

export function printHttp(result: HttpResult): void {
  table(result, 'shared');
  table(result, 'per-worker');
  if (!result.targets.includes(MCPGATE_NAME)) console.log(`\n  mcpgate's HTTP front did not start: ${result.skipped.find((s) => s.target === MCPGATE_NAME)?.reason ?? 'unknown'}`);
  for (const s of result.skipped) if (s.target !== MCPGATE_NAME) console.log(`  ${s.target} did not start: ${s.reason}`);
}
