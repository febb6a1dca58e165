// `npm run bench -- eras`: a tools/call through mcpgate over Streamable HTTP for each pair
// of eras — a 2025-era agent (the SDK v2 client, default negotiation) and a 2026-07-28 agent (the same
// client pinned to 2026-07-28), each in front of a 2025-era server (the echo fixture) and a
// 2026-07-28 server (the strict modern fixture) — sequential calls, in alternating rounds of one
// run, so the four figures share the machine's state. Ratios are against legacy agent → legacy server.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const fixture = (name: string): string => join(ROOT, `dist/test/fixtures/${name}.js`);
const MODERN = '2026-07-28';
const ROUNDS = 10;
const CALLS = 200;
const WARMUP = 100;

export interface ErasPair {
  agent: '2025' | typeof MODERN;
  server: '2025' | typeof MODERN;
  median: number;
  p99: number;
  calls: number;
}

async function startGateway(config: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      '--config',
      config,
      '--http',
      '127.0.0.1:0',
      '--no-auth',
      '--agent',
      'bench',
      '--pins',
      'off',
      '--log-format',
      'json',
      '--log-level',
      'info',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      text = (text + chunk).slice(-20_000);
      const m = /"msg":"mcpgate ready on (http:\/\/[^"\s]+\/mcp)/.exec(text);
      if (m !== null) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`mcpgate exited (${code}): ${text.slice(-2000)}`)));
  });
  child.stderr.resume();
  return { child, url };
}

async function connect(url: string, era: '2025' | typeof MODERN): Promise<Client> {
  const client = new Client(
    { name: `bench-${era}`, version: '1.0.0' },
    era === MODERN ? { versionNegotiation: { mode: { pin: MODERN } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

export async function benchEras(): Promise<ErasPair[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-eras-'));
  const config = join(dir, '.mcp.json');
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: {
        legacy: { command: process.execPath, args: [fixture('echo-server')], era: '2025' },
        modern: { command: process.execPath, args: [fixture('modern-server')], era: MODERN },
      },
    }),
  );
  const gate = await startGateway(config);
  const clients = { '2025': await connect(gate.url, '2025'), [MODERN]: await connect(gate.url, MODERN) } as Record<
    '2025' | typeof MODERN,
    Client
  >;
  const pairs: { agent: '2025' | typeof MODERN; server: '2025' | typeof MODERN; times: number[] }[] = [];
  for (const agent of ['2025', MODERN] as const) for (const server of ['2025', MODERN] as const) pairs.push({ agent, server, times: [] });
  const call = async (pair: (typeof pairs)[number]): Promise<void> => {
    const result = await clients[pair.agent].callTool({
      name: pair.server === MODERN ? 'modern__echo' : 'legacy__echo',
      arguments: { text: 'hi' },
    });
    const content = (result as { content?: { text?: string }[] }).content;
    if (content?.[0]?.text !== 'hi')
      throw new Error(`unexpected answer for ${pair.agent} → ${pair.server}: ${JSON.stringify(result).slice(0, 300)}`);
  };
  try {
    for (const pair of pairs) for (let i = 0; i < WARMUP; i++) await call(pair);
    for (let round = 0; round < ROUNDS; round++) {
      for (const pair of pairs) {
        for (let i = 0; i < CALLS / ROUNDS; i++) {
          const t0 = performance.now();
          await call(pair);
          pair.times.push(performance.now() - t0);
        }
      }
    }
  } finally {
    for (const client of Object.values(clients)) await client.close().catch(() => undefined);
    gate.child.kill('SIGTERM');
    await new Promise((resolve) => gate.child.once('exit', resolve));
    await rm(dir, { recursive: true, force: true });
  }
  return pairs.map(({ agent, server, times }) => {
    const sorted = [...times].sort((a, b) => a - b);
    return { agent, server, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), calls: sorted.length };
  });
}

export function printEras(pairs: ErasPair[], print: (line: string) => void): void {
  const base = pairs.find((p) => p.agent === '2025' && p.server === '2025')!.median;
  const us = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;
  print(
    '\neras: tools/call through mcpgate over Streamable HTTP, each pair of agent and server eras (sequential, SDK v2 client, alternating rounds)',
  );
  for (const p of pairs) {
    print(
      `  ${`${p.agent} agent → ${p.server} server`.padEnd(40)} median ${us(p.median).padStart(8)}  p99 ${us(p.p99).padStart(9)}  ${(p.median / base).toFixed(2)}× legacy→legacy  (${p.calls} calls)`,
    );
  }
}
