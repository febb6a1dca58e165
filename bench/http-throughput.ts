// Benchmark: latency and throughput of an echo `tools/call` over HTTP at 1, 16 and 64 calls in
// flight, through mcpgate and through other npm gateways fronting the same stdio echo server, next
// to a bare `node:http` round trip (the floor). One load client (bench/http-client.ts) drives every
// target with a keep-alive Agent of C sockets. Rounds alternate between the targets so they share
// the machine's noise; only ratios measured in one run mean anything on a shared machine.

import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession, type McpSession } from './http-client.js';
import { treeCpuMs } from './proc.js';
import { extraMcpgates, floor, mcpgate, OTHER_GATEWAYS, relay, type RunningTarget, type TargetSpec } from './http-targets.js';

export const CONCURRENCY: readonly number[] = [1, 16, 64];
/** `shared`: one MCP session carries all C workers' calls; `per-worker`: each worker has its own. */
export type Sessions = 'shared' | 'per-worker';

export interface HttpStats {
  median: number;
  p99: number;
  /** Calls per second over the measured rounds. */
  throughput: number;
  calls: number;
  /** CPU (user + system) of the target and every process it started, per call, µs; undefined without /proc. */
  targetCpu?: number;
  /** CPU of the load client (this process) per call, µs. */
  clientCpu: number;
}

export interface HttpRow extends HttpStats {
  target: string;
  concurrency: number;
  sessions: Sessions;
}

export interface HttpResult {
  rows: HttpRow[];
  /** Targets in start order: the floor, the relay, mcpgate (if it started), then the other gateways. */
  targets: string[];
  /** Targets that did not start, with the reason. */
  skipped: { target: string; reason: string }[];
}

export interface HttpOptions {
  rounds?: number;
  /** Calls per round at concurrency C: max(minCalls, C × callsPerWorker). */
  minCalls?: number;
  callsPerWorker?: number;
  perWorkerSessions?: boolean;
  /** The levels of calls in flight (default CONCURRENCY). */
  concurrency?: readonly number[];
  /** Only these targets, by name (default: every one). */
  targets?: readonly string[];
}

const ARGS = { name: '', arguments: { text: 'ping' } };

function stats(load: Load): HttpStats {
  const sorted = [...load.samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const calls = sorted.length;
  const result: HttpStats = {
    median: at(0.5),
    p99: at(0.99),
    throughput: calls / load.seconds,
    calls,
    clientCpu: (load.clientCpuMs * 1000) / calls,
  };
  if (load.targetCpuMs !== undefined) result.targetCpu = (load.targetCpuMs * 1000) / calls;
  return result;
}

/** Runs `calls` echo calls with `workers` in flight; pushes each call's ms into `out`; returns seconds. */
async function drive(target: RunningTarget, sessions: McpSession[], workers: number, calls: number, out?: number[]): Promise<number> {
  const args = { ...ARGS, name: target.tool };
  let issued = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const session = sessions[w % sessions.length]!;
      while (issued < calls) {
        issued++;
        const t0 = process.hrtime.bigint();
        const result = (await session.call('tools/call', args)) as { content?: { text?: string }[] };
        if (result.content?.[0]?.text !== 'ping') throw new Error(`${target.name}: unexpected echo result ${JSON.stringify(result)}`);
        out?.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return Number(process.hrtime.bigint() - start) / 1e9;
}

interface Load {
  target: RunningTarget;
  agent: Agent;
  sessions: McpSession[];
  samples: number[];
  seconds: number;
  clientCpuMs: number;
  targetCpuMs: number | undefined;
}

async function openLoad(target: RunningTarget, workers: number, mode: Sessions): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: workers });
  const sessions: McpSession[] = [];
  try {
    // Opened a few at a time: some gateways spawn a server per session.
    const count = mode === 'shared' ? 1 : workers;
    for (let i = 0; i < count; i += 8) {
      const batch = Array.from({ length: Math.min(8, count - i) }, () => openSession(target.transport, target.url, agent, target.token));
      const settled = await Promise.allSettled(batch);
      for (const s of settled) if (s.status === 'fulfilled') sessions.push(s.value);
      const failed = settled.find((s) => s.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    }
  } catch (err) {
    await Promise.allSettled(sessions.map((s) => s.close()));
    agent.destroy();
    throw err;
  }
  return { target, agent, sessions, samples: [], seconds: 0, clientCpuMs: 0, targetCpuMs: 0 };
}

async function closeLoad(load: Load): Promise<void> {
  await Promise.allSettled(load.sessions.map((s) => s.close()));
  load.agent.destroy();
}

async function round(load: Load, workers: number, calls: number): Promise<void> {
  const cpuBefore = await treeCpuMs(load.target.pid);
  const clientBefore = process.cpuUsage();
  load.seconds += await drive(load.target, load.sessions, workers, calls, load.samples);
  const client = process.cpuUsage(clientBefore);
  const cpuAfter = await treeCpuMs(load.target.pid);
  load.clientCpuMs += (client.user + client.system) / 1000;
  load.targetCpuMs =
    cpuBefore === undefined || cpuAfter === undefined || load.targetCpuMs === undefined
      ? undefined
      : load.targetCpuMs + cpuAfter - cpuBefore;
}

/** One concurrency level in one session mode: warm up every target, then alternate measured rounds. */
async function measure(targets: RunningTarget[], workers: number, mode: Sessions, options: Required<HttpOptions>): Promise<HttpRow[]> {
  const calls = Math.max(options.minCalls, workers * options.callsPerWorker);
  const loads: Load[] = [];
  try {
    for (const target of targets) loads.push(await openLoad(target, workers, mode));
    for (const load of loads) await drive(load.target, load.sessions, workers, Math.max(200, calls / 2));
    // Every other round runs the targets in reverse: a target measured right after another's round
    // was seen to read lower at 16 in flight (whichever build it was), so no target always goes first.
    for (let r = 0; r < options.rounds; r++) {
      for (const load of r % 2 === 0 ? loads : [...loads].reverse()) await round(load, workers, calls);
    }
    return loads.map((l) => ({ target: l.target.name, concurrency: workers, sessions: mode, ...stats(l) }));
  } finally {
    await Promise.allSettled(loads.map(closeLoad));
  }
}

export async function benchHttp(options: HttpOptions = {}, log: (line: string) => void = () => undefined): Promise<HttpResult> {
  const opts: Required<HttpOptions> = {
    rounds: 5,
    minCalls: 400,
    callsPerWorker: 25,
    perWorkerSessions: true,
    concurrency: CONCURRENCY,
    targets: [],
    ...options,
  };
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-http-'));
  // Interrupted (the targets are killed on exit first: their hook was registered at import).
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  const running: RunningTarget[] = [];
  const skipped: HttpResult['skipped'] = [];
  const rows: HttpRow[] = [];
  try {
    // MCPGATE_BENCH_NO_PEERS=1 leaves the other npm gateways out (an A/B of mcpgate builds only).
    const peers = process.env.MCPGATE_BENCH_NO_PEERS === '1' ? [] : OTHER_GATEWAYS;
    const specs: TargetSpec[] = [floor, relay, mcpgate, ...extraMcpgates(), ...peers].filter(
      (spec) => opts.targets.length === 0 || opts.targets.includes(spec.name),
    );
    for (const spec of specs) {
      try {
        running.push(await spec.start(dir));
      } catch (err) {
        if (spec === floor) throw err;
        // The first line says what failed; the last line of the target's output usually says why.
        const lines = (err instanceof Error ? err.message : String(err)).split('\n').filter((l) => l.trim() !== '');
        const reason = lines.length > 1 ? `${lines[0]} … ${lines[lines.length - 1]!.slice(0, 300)}` : (lines[0] ?? 'unknown');
        skipped.push({ target: spec.name, reason });
        log(`  (skipped ${spec.name}: ${reason})`);
      }
    }
    const modes: Sessions[] = opts.perWorkerSessions ? ['shared', 'per-worker'] : ['shared'];
    for (const mode of modes) {
      for (const workers of opts.concurrency) {
        if (mode === 'per-worker' && workers === 1) continue;
        rows.push(...(await measure(running, workers, mode, opts)));
      }
    }
    return { rows, targets: running.map((t) => t.name), skipped };
  } finally {
    await Promise.allSettled(running.map((t) => t.stop()));
    await rm(dir, { recursive: true, force: true });
    process.removeListener('exit', removeDir);
  }
}
