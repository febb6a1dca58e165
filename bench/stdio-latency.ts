// Benchmark: latency of one tools/call to an echo server over stdio, straight to the server and
// through mcpgate, measured with the official SDK v2 client in one run. Rounds alternate between the
// two so both see the same machine noise; the ratio of medians is the gateway's cost.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const CLI = join(ROOT, 'dist/src/cli/main.js');

export interface LatencyStats {
  median: number;
  p99: number;
  mean: number;
  calls: number;
}

export interface StdioResult {
  direct: LatencyStats;
  gateway: LatencyStats;
  ratio: number;
}

function stats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p99: at(0.99), mean: samples.reduce((a, b) => a + b, 0) / samples.length, calls: samples.length };
}

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'mcpgate-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  return client;
}

async function round(client: Client, name: string, calls: number, out: number[]): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name, arguments: { text: 'ping' } });
    out.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
}

export async function benchStdio(options: { rounds?: number; callsPerRound?: number; warmup?: number } = {}): Promise<StdioResult> {
  const rounds = options.rounds ?? 10;
  const callsPerRound = options.callsPerRound ?? 300;
  const warmup = options.warmup ?? 500;
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-'));
  const config = join(dir, '.mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
  const direct = await connect(process.execPath, [ECHO]);
  const gateway = await connect(process.execPath, [CLI, 'serve', '--config', config, '--agent', 'bench', '--log-level', 'warn']);
  try {
    const sink: number[] = [];
    await round(direct, 'echo', warmup, sink);
    await round(gateway, 'echo__echo', warmup, sink);
    const d: number[] = [];
    const g: number[] = [];
    for (let r = 0; r < rounds; r++) {
      await round(direct, 'echo', callsPerRound, d);
      await round(gateway, 'echo__echo', callsPerRound, g);
    }
    const ds = stats(d);
    const gs = stats(g);
    return { direct: ds, gateway: gs, ratio: gs.median / ds.median };
  } finally {
    await Promise.allSettled([direct.close(), gateway.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}
