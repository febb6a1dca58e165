// Benchmark: latency of one tools/call to an echo server over stdio, straight to the server and
// through mcpgate, measured with the official SDK v2 client in one run. Two references run in the
// same rounds: a byte-for-byte pipe relay (the floor of any Node relay: one more process hop) and a
// proxy wired naively from the SDK's Client and Server. Rounds alternate between all of them so they
// share the machine's noise; only ratios measured this way mean anything on a shared machine.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const CLI = process.env.MCPGATE_BENCH_CLI ?? join(ROOT, 'dist/src/cli/main.js');
const PIPE = join(ROOT, 'dist/bench/pipe-relay.js');
const NAIVE = join(ROOT, 'dist/bench/naive-proxy.js');

export interface LatencyStats {
  median: number;
  p99: number;
  calls: number;
}

export type Target = 'direct' | 'pipe relay (floor)' | 'mcpgate' | 'naive SDK proxy';
export const TARGETS: readonly Target[] = ['direct', 'pipe relay (floor)', 'mcpgate', 'naive SDK proxy'];

export type StdioResult = Record<Target, LatencyStats>;

function stats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p99: at(0.99), calls: samples.length };
}

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'mcpgate-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  return client;
}

async function round(client: Client, name: string, calls: number, out: number[]): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name, arguments: { text: 'ping' } });
    out.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
}

/** `sdk` picks the echo server's SDK line: the v2 server is leaner, so it is the harder baseline. */
export async function benchStdio(sdk: 'v1' | 'v2', options: { rounds?: number; callsPerRound?: number; warmup?: number } = {}): Promise<StdioResult> {
  const rounds = options.rounds ?? 15;
  const callsPerRound = options.callsPerRound ?? 200;
  const warmup = options.warmup ?? 300;
  const server = sdk === 'v1' ? [ECHO, '--v1'] : [ECHO];
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-'));
  const config = join(dir, '.mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: server } } }));
  const clients: [Target, Client, string][] = [
    ['direct', await connect(server), 'echo'],
    ['pipe relay (floor)', await connect([PIPE, process.execPath, ...server]), 'echo'],
    ['mcpgate', await connect([CLI, 'serve', '--config', config, '--agent', 'bench', '--log-level', 'warn']), 'echo__echo'],
    ['naive SDK proxy', await connect([NAIVE, process.execPath, ...server]), 'echo'],
  ];
  try {
    const samples = new Map<Target, number[]>(TARGETS.map((t) => [t, []]));
    for (const [, client, tool] of clients) await round(client, tool, warmup, []);
    for (let r = 0; r < rounds; r++) {
      for (const [target, client, tool] of clients) await round(client, tool, callsPerRound, samples.get(target)!);
    }
    return Object.fromEntries(TARGETS.map((t) => [t, stats(samples.get(t)!)])) as StdioResult;
  } finally {
    await Promise.allSettled(clients.map(([, client]) => client.close()));
    await rm(dir, { recursive: true, force: true });
  }
}
