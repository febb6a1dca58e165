// Benchmark: the code engine alone (`npm run bench -- code-engine`), in process, no gateway: what a
// fresh sandbox plus an empty run costs (a new WebAssembly instance with its own memory, a QuickJS
// runtime and context, the prelude, the program), and what one inner call adds over calling the same
// host function directly (the deferred promise, the JSON copies both ways, the engine's jobs).

import { DEFAULT_CODE_LIMITS, type CodeLimits, type InnerCallOptions, type InnerOutcome, type ProgramHost } from '../src/code/program.js';
import { runProgram } from '../src/code/run-program.js';

export interface CodeEngineResult {
  /** Milliseconds per fresh sandbox + `return 0`, sorted. */
  empty: number[];
  /** Milliseconds per inner call added by the engine over a direct call, one figure per round, sorted. */
  perCall: number[];
  calls: number;
  /** The process's CPU milliseconds per fresh sandbox + empty run (steadier than wall time on a shared machine). */
  emptyCpu: number;
  /** The process's CPU milliseconds per inner call in a run, less a direct call's. */
  perCallCpu: number;
}

const ANSWER: InnerOutcome = { ok: true, result: { content: [{ type: 'text', text: 'ok' }], structuredContent: { n: 1 } } };

const host: ProgramHost = {
  tools: [{ name: 'b__echo', server: 'b', tool: 'echo' }],
  call: () => Promise.resolve(ANSWER),
};

/** The defaults, with room for the per-call loop. */
const LIMITS: CodeLimits = { ...DEFAULT_CODE_LIMITS, innerCalls: 10_000 };

async function timed(code: string): Promise<number> {
  const started = performance.now();
  const outcome = await runProgram({
    code,
    host,
    limits: LIMITS,
    signal: new AbortController().signal,
  });
  const ms = performance.now() - started;
  if (!outcome.ok) throw new Error(`bench program failed: ${outcome.code} ${outcome.message}`);
  return ms;
}

async function direct(calls: number): Promise<number> {
  const options: InnerCallOptions = { signal: new AbortController().signal, waiting: () => undefined };
  const started = performance.now();
  for (let i = 0; i < calls; i += 1) await host.call('b__echo', { i }, options);
  return performance.now() - started;
}

export async function benchCodeEngine(rounds = 200, calls = 200): Promise<CodeEngineResult> {
  for (let i = 0; i < 20; i += 1) await timed('return 0;');
  const empty: number[] = [];
  let cpu = process.cpuUsage();
  for (let i = 0; i < rounds; i += 1) empty.push(await timed('return 0;'));
  const emptyCpu = cpuMs(cpu) / rounds;
  const loop = `for (let i = 0; i < ${calls}; i++) await tools.b.echo({ i }); return 0;`;
  await timed(loop);
  const perCall: number[] = [];
  const perRounds = Math.max(10, rounds / 10);
  let inRuns = 0;
  let inDirect = 0;
  for (let i = 0; i < perRounds; i += 1) {
    cpu = process.cpuUsage();
    const withCalls = await timed(loop);
    inRuns += cpuMs(cpu);
    const without = await timed('return 0;');
    cpu = process.cpuUsage();
    const directMs = await direct(calls);
    inDirect += cpuMs(cpu);
    perCall.push((withCalls - without - directMs) / calls);
  }
  const perCallCpu = (inRuns / perRounds - emptyCpu - inDirect / perRounds) / calls;
  return { empty: empty.sort((a, b) => a - b), perCall: perCall.sort((a, b) => a - b), calls, emptyCpu, perCallCpu };
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

const at = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

export function printCodeEngine(result: CodeEngineResult, print: (line: string) => void): void {
  const emptyP50 = at(result.empty, 0.5);
  const callP50 = at(result.perCall, 0.5);
  print('\ncode engine: a fresh QuickJS sandbox per run, in process');
  print(
    `  fresh sandbox + empty run: p50 ${emptyP50.toFixed(2)} ms, p95 ${at(result.empty, 0.95).toFixed(2)} ms over ${result.empty.length} runs, CPU ${result.emptyCpu.toFixed(2)} ms per run (target p50 ≤ 5 ms: ${emptyP50 <= 5 ? 'met' : 'not met'})`,
  );
  print(
    `  added per inner call over a direct call: p50 ${(callP50 * 1000).toFixed(0)} µs, p95 ${(at(result.perCall, 0.95) * 1000).toFixed(0)} µs, CPU ${(result.perCallCpu * 1000).toFixed(0)} µs (${result.calls} sequential calls per run, ${result.perCall.length} runs; target p50 ≤ 300 µs: ${callP50 <= 0.3 ? 'met' : 'not met'})`,
  );
}
