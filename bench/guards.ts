// `npm run bench -- guards`: what the built-in guards cost one tool call, in process, A/B: the same
// call's arguments and answer passed through the gate with the default guards (on, nothing found),
// with a cap set, with a secret found, and with `"guards": false`. The gate's own code only — the
// part of a call the guards add — timed over many iterations after a warm-up, median of rounds.

import { performance } from 'node:perf_hooks';
import { CallGate } from '../src/policy/call-gate.js';
import { GuardChecks } from '../src/policy/guard-checks.js';
import { ApprovalDesk } from '../src/policy/approval-desk.js';
import { Quotas } from '../src/policy/quotas.js';
import { GatewayMetrics } from '../src/observability/metrics.js';
import { silentLogger } from '../src/observability/logger.js';
import { OPEN_RULES, parseRules, type Rules } from '../src/rules/load.js';

const ITERATIONS = 50_000;
const ROUNDS = 7;

function gateFor(rules: Rules): CallGate {
  const metrics = new GatewayMetrics({ version: 'bench' });
  return new CallGate({
    rules: () => rules,
    quotas: new Quotas({ rules: () => rules, metrics, log: silentLogger }),
    approvals: new ApprovalDesk({ audit: undefined, log: silentLogger }),
    guards: new GuardChecks({ inForce: { rules }, audit: undefined, log: silentLogger }),
    inputSchema: () => undefined,
  });
}

const SUBJECT = { agent: 'bench', session: '1', server: 'echo', tool: 'echo', name: 'echo__echo', method: 'tools/call' };

/** µs per call: arguments screened, then the answer (a fresh result each time, as a server's parsed line is). */
function time(gate: CallGate, args: Record<string, unknown>, answer: () => Record<string, unknown>): number {
  const run = (n: number): number => {
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      gate.guards.arguments(SUBJECT, args);
      gate.answer(SUBJECT, answer());
    }
    return ((performance.now() - start) * 1000) / n;
  };
  run(ITERATIONS / 5);
  const rounds = Array.from({ length: ROUNDS }, () => run(ITERATIONS)).sort((a, b) => a - b);
  return rounds[Math.floor(ROUNDS / 2)]!;
}

/** The bare loop (building the result object): subtracted from every figure. */
function loop(answer: () => Record<string, unknown>): number {
  let sink = 0;
  const run = (n: number): number => {
    const start = performance.now();
    for (let i = 0; i < n; i++) sink += Object.keys(answer()).length;
    return ((performance.now() - start) * 1000) / n;
  };
  run(ITERATIONS / 5);
  const rounds = Array.from({ length: ROUNDS }, () => run(ITERATIONS)).sort((a, b) => a - b);
  return sink < 0 ? 0 : rounds[Math.floor(ROUNDS / 2)]!;
}

export function benchGuards(print: (line: string) => void): void {
  const off = gateFor(parseRules(JSON.stringify({ agents: {}, guards: false }), '/bench/rules.json', ['echo']));
  const on = gateFor(OPEN_RULES);
  const capped = gateFor(parseRules(JSON.stringify({ agents: {}, guards: { maxResultBytes: 100_000 } }), '/bench/rules.json', ['echo']));
  const small = { text: 'hello world, how is the weather in Paris today?' };
  const smallAnswer = (): Record<string, unknown> => ({
    content: [{ type: 'text', text: 'hello world, how is the weather in Paris today?' }],
  });
  const code = 'export function add(a: number, b: number): number {\n  return a + b; // the sum\n}\n'.repeat(120);
  const codeAnswer = (): Record<string, unknown> => ({ content: [{ type: 'text', text: code }] });
  const leak = ['gh', 'p_'].join('') + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
  const leakAnswer = (): Record<string, unknown> => ({ content: [{ type: 'text', text: `your token is ${leak}` }] });
  const base = loop(smallAnswer);
  const baseCode = loop(codeAnswer);
  const rows: [string, number][] = [
    ['guards off ("guards": false), small call', time(off, small, smallAnswer) - base],
    ['guards on (defaults), small call, nothing found', time(on, small, smallAnswer) - base],
    ['guards on + maxResultBytes, small call', time(capped, small, smallAnswer) - base],
    [`guards on, ${(code.length / 1024).toFixed(0)} KiB code result, nothing found`, time(on, small, codeAnswer) - baseCode],
    ['guards on, a token found and redacted', time(on, small, leakAnswer) - base],
  ];
  print(`\nguards: the gate's guard work per tools/call, in process (median of ${ROUNDS} rounds of ${ITERATIONS} calls)`);
  for (const [name, us] of rows) print(`  ${name.padEnd(52)} ${Math.max(0, us).toFixed(2).padStart(7)} µs`);
}
