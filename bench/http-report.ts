// Prints the HTTP benchmark's tables and checks the throughput targets, each figure beside its floor:
// at 64 calls in flight mcpgate's throughput at least 5× the best Streamable HTTP peer's and at least
// 0.95× the zero-work http→stdio relay's; one call at a time, a median within 1.2× of the relay's.
// Every ratio comes from one run, so both sides share the machine's noise.

import { CONCURRENCY, type HttpResult, type HttpRow, type Sessions } from './http-throughput.js';
import { FLOOR_NAME, MCPGATE_NAME, RELAY_NAME, STREAMABLE_PEERS } from './http-targets.js';

/** mcpgate ÷ the best Streamable HTTP peer, calls/s at `THROUGHPUT_AT` in flight. */
export const PEER_TARGET = 5;
/** mcpgate ÷ the http→stdio relay, calls/s at `THROUGHPUT_AT` in flight. */
export const RELAY_THROUGHPUT_TARGET = 0.95;
/** mcpgate's median ÷ the relay's with one call in flight. */
export const RELAY_MEDIAN_TARGET = 1.2;
export const THROUGHPUT_AT = 64;

const ms = (v: number): string => (v < 10 ? v.toFixed(2) : v.toFixed(1));
const rate = (v: number): string => v.toFixed(0);
const verdict = (ok: boolean): string => (ok ? 'met' : 'not met');

function row(result: HttpResult, target: string, c: number, sessions: Sessions): HttpRow | undefined {
  return result.rows.find((r) => r.target === target && r.concurrency === c && r.sessions === sessions);
}

export interface Verdict {
  concurrency: number;
  sessions: Sessions;
  /** The best Streamable HTTP peer at this C (mcp-hub speaks the older HTTP+SSE transport: not a peer here). */
  peer?: HttpRow;
  /** mcpgate calls/s ÷ the best Streamable HTTP peer's. */
  peerRatio?: number;
  /** mcpgate calls/s ÷ the relay's. */
  relayThroughputRatio?: number;
  /** mcpgate median ÷ the relay's. */
  relayMedianRatio?: number;
}

export function verdicts(result: HttpResult, sessions: Sessions): Verdict[] {
  const peers = result.targets.filter((t) => STREAMABLE_PEERS.has(t));
  return CONCURRENCY.flatMap((c) => {
    const gate = row(result, MCPGATE_NAME, c, sessions);
    if (gate === undefined) return [];
    const v: Verdict = { concurrency: c, sessions };
    const peer = peers
      .map((t) => row(result, t, c, sessions))
      .filter((r) => r !== undefined)
      .sort((a, b) => b.throughput - a.throughput)[0];
    if (peer !== undefined) {
      v.peer = peer;
      v.peerRatio = gate.throughput / peer.throughput;
    }
    const relay = row(result, RELAY_NAME, c, sessions);
    if (relay !== undefined) {
      v.relayThroughputRatio = gate.throughput / relay.throughput;
      v.relayMedianRatio = gate.median / relay.median;
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
  console.log(
    `  ${'target'.padEnd(20)}${levels.map((c) => `   ${`C=${c}`.padEnd(5)}${'median'.padStart(7)}${'p99'.padStart(7)}${'calls/s'.padStart(8)}${'cpu'.padStart(6)}`).join('')}`,
  );
  for (const target of result.targets) {
    const cells = levels.map((c) => {
      const r = row(result, target, c, sessions);
      const cpu = r?.targetCpu === undefined ? '-' : r.targetCpu.toFixed(0);
      return r === undefined
        ? ' '.repeat(36)
        : `   ${' '.repeat(5)}${ms(r.median).padStart(7)}${ms(r.p99).padStart(7)}${rate(r.throughput).padStart(8)}${cpu.padStart(6)}`;
    });
    console.log(`  ${target.padEnd(20)}${cells.join('')}`);
  }
  const client = result.rows.filter((r) => r.sessions === sessions);
  const perCall = client.map((r) => r.clientCpu).sort((a, b) => a - b);
  console.log(`  the load client itself used ${perCall[0]!.toFixed(0)}–${perCall[perCall.length - 1]!.toFixed(0)} µs of CPU per call`);
  for (const v of verdicts(result, sessions)) {
    const gate = row(result, MCPGATE_NAME, v.concurrency, sessions)!;
    const relay = row(result, RELAY_NAME, v.concurrency, sessions);
    const floor = row(result, FLOOR_NAME, v.concurrency, sessions);
    const parts: string[] = [`${rate(gate.throughput)} calls/s, median ${ms(gate.median)} ms`];
    const at = v.concurrency === THROUGHPUT_AT;
    if (v.peerRatio !== undefined && v.peer !== undefined) {
      parts.push(
        `${v.peerRatio.toFixed(1)}× the best Streamable HTTP peer (${v.peer.target}, ${rate(v.peer.throughput)} calls/s)` +
          (at ? ` (target ≥ ${PEER_TARGET}×: ${verdict(v.peerRatio >= PEER_TARGET)})` : ''),
      );
    } else if (at) {
      parts.push(`no Streamable HTTP peer ran (target ≥ ${PEER_TARGET}× the best: not measured)`);
    }
    if (relay !== undefined && v.relayThroughputRatio !== undefined && v.relayMedianRatio !== undefined) {
      parts.push(
        `${v.relayThroughputRatio.toFixed(2)}× the relay's ${rate(relay.throughput)} calls/s` +
          (at ? ` (target ≥ ${RELAY_THROUGHPUT_TARGET}×: ${verdict(v.relayThroughputRatio >= RELAY_THROUGHPUT_TARGET)})` : ''),
      );
      parts.push(
        `median ${v.relayMedianRatio.toFixed(2)}× the relay's ${ms(relay.median)} ms` +
          (v.concurrency === 1 ? ` (target ≤ ${RELAY_MEDIAN_TARGET}×: ${verdict(v.relayMedianRatio <= RELAY_MEDIAN_TARGET)})` : ''),
      );
    }
    if (floor !== undefined) parts.push(`the node:http floor: ${rate(floor.throughput)} calls/s, median ${ms(floor.median)} ms`);
    console.log(`  C=${v.concurrency}: mcpgate ${parts.join('; ')}`);
  }
}

export function printHttp(result: HttpResult): void {
  table(result, 'shared');
  table(result, 'per-worker');
  if (!result.targets.includes(MCPGATE_NAME))
    console.log(`\n  mcpgate's HTTP front did not start: ${result.skipped.find((s) => s.target === MCPGATE_NAME)?.reason ?? 'unknown'}`);
  for (const s of result.skipped) if (s.target !== MCPGATE_NAME) console.log(`  ${s.target} did not start: ${s.reason}`);
}
