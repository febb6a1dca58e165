// Benchmark: latency of one tools/call to an echo server over stdio, straight to the server and
// through mcpgate, measured with the official SDK v2 client in one run. Three references run in the
// same rounds: a byte-for-byte pipe relay (the floor of any Node relay: one more process hop), a
// relay that parses and re-encodes every message (the floor of a gateway that routes by tool name)
// and a proxy wired naively from the SDK's Client and Server. Rounds alternate between all of them so
// they share the machine's noise; only ratios measured this way mean anything on a shared machine.
// Each target's own process is measured too (CPU per call: all its threads, and its main thread's
// user and system time), so a gap in latency can be told apart into work and waiting.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { processCpu, type ProcessCpu } from './proc.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const CLI = process.env.MCPGATE_BENCH_CLI ?? join(ROOT, 'dist/src/cli/main.js');
const PIPE = join(ROOT, 'dist/bench/pipe-relay.js');
const PARSE = join(ROOT, 'dist/bench/parse-relay.js');
const NAIVE = join(ROOT, 'dist/bench/naive-proxy.js');

/** CPU of the target's own process per call, µs (undefined without /proc). */
export interface CallCpu {
  /** All its threads. */
  run: number;
  /** Its main thread, in user space and in the kernel (tick-grained: meaningful over thousands of calls). */
  user: number;
  system: number;
}

export interface LatencyStats {
  median: number;
  p99: number;
  calls: number;
  cpu?: CallCpu;
}

export type Target = 'direct' | 'pipe relay (floor)' | 'parse relay' | 'mcpgate' | 'naive SDK proxy';
export const TARGETS: readonly Target[] = ['direct', 'pipe relay (floor)', 'parse relay', 'mcpgate', 'naive SDK proxy'];
/** Opt-in targets (MCPGATE_BENCH_BASELINE, MCPGATE_BENCH_LIMITS=1), in the same rounds; see http-targets.ts `extraMcpgates`. */
export type ExtraTarget = 'mcpgate (baseline)' | 'mcpgate (limits)';

export type StdioResult = Record<Target, LatencyStats> & Partial<Record<ExtraTarget, LatencyStats>>;

/** Rules whose limits the bench never reaches: what a limit check costs a call. */
const UNREACHED_LIMITS = {
  agents: { bench: { allow: { servers: ['*'] }, limits: { calls: 1_000_000_000, per: '1d', inFlight: 1_000_000 } } },
};

function stats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p99: at(0.99), calls: samples.length };
}

interface Connected {
  target: Target | ExtraTarget;
  client: Client;
  pid: number | null;
  tool: string;
  samples: number[];
  /** CPU of the target's process over the measured rounds, ms. */
  cpu: ProcessCpu;
}

async function connect(target: Target | ExtraTarget, args: string[], tool: string): Promise<Connected> {
  const client = new Client({ name: 'mcpgate-bench', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' });
  await client.connect(transport);
  return { target, client, pid: transport.pid, tool, samples: [], cpu: { runMs: 0, mainUserMs: 0, mainSystemMs: 0 } };
}

/** Adds `pid`'s CPU between `before` and now to `into`; false when it cannot be read. */
async function addCpu(into: ProcessCpu, pid: number | null, before: ProcessCpu | undefined): Promise<boolean> {
  const after = pid === null ? undefined : await processCpu(pid);
  if (before === undefined || after === undefined) return false;
  into.runMs += after.runMs - before.runMs;
  into.mainUserMs += after.mainUserMs - before.mainUserMs;
  into.mainSystemMs += after.mainSystemMs - before.mainSystemMs;
  return true;
}

async function round(client: Client, name: string, calls: number, out: number[]): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name, arguments: { text: 'ping' } });
    out.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
}

/** `sdk` picks the echo server's SDK line: the v2 server is leaner, so it is the harder baseline. */
export async function benchStdio(
  sdk: 'v1' | 'v2',
  options: { rounds?: number; callsPerRound?: number; warmup?: number } = {},
): Promise<StdioResult> {
  const rounds = options.rounds ?? 15;
  const callsPerRound = options.callsPerRound ?? 200;
  const warmup = options.warmup ?? 300;
  const server = sdk === 'v1' ? [ECHO, '--v1'] : [ECHO];
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-'));
  const config = join(dir, '.mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: server } } }));
  const targets: Connected[] = [];
  try {
    targets.push(await connect('direct', server, 'echo'));
    targets.push(await connect('pipe relay (floor)', [PIPE, process.execPath, ...server], 'echo'));
    targets.push(await connect('parse relay', [PARSE, process.execPath, ...server], 'echo__echo'));
    targets.push(await connect('mcpgate', [CLI, 'serve', '--config', config, '--agent', 'bench', '--log-level', 'warn'], 'echo__echo'));
    targets.push(await connect('naive SDK proxy', [NAIVE, process.execPath, ...server], 'echo'));
    const baseline = process.env.MCPGATE_BENCH_BASELINE;
    if (baseline !== undefined && baseline !== '')
      targets.push(
        await connect(
          'mcpgate (baseline)',
          [baseline, 'serve', '--config', config, '--agent', 'bench', '--log-level', 'warn'],
          'echo__echo',
        ),
      );
    if (process.env.MCPGATE_BENCH_LIMITS === '1') {
      const rules = join(dir, 'limits.rules.json');
      await writeFile(rules, JSON.stringify(UNREACHED_LIMITS));
      targets.push(
        await connect(
          'mcpgate (limits)',
          [CLI, 'serve', '--config', config, '--rules', rules, '--agent', 'bench', '--log-level', 'warn'],
          'echo__echo',
        ),
      );
    }
    for (const t of targets) await round(t.client, t.tool, warmup, []);
    let cpuKnown = true;
    for (let r = 0; r < rounds; r++) {
      for (const t of targets) {
        const before = t.pid === null ? undefined : await processCpu(t.pid);
        await round(t.client, t.tool, callsPerRound, t.samples);
        cpuKnown = (await addCpu(t.cpu, t.pid, before)) && cpuKnown;
      }
    }
    return Object.fromEntries(
      targets.map((t) => {
        const calls = t.samples.length;
        const cpu = cpuKnown
          ? { run: (t.cpu.runMs * 1000) / calls, user: (t.cpu.mainUserMs * 1000) / calls, system: (t.cpu.mainSystemMs * 1000) / calls }
          : undefined;
        return [t.target, { ...stats(t.samples), ...(cpu !== undefined && { cpu }) }];
      }),
    ) as StdioResult;
  } finally {
    await Promise.allSettled(targets.map((t) => t.client.close()));
    await rm(dir, { recursive: true, force: true });
  }
}
