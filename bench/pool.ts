// `npm run bench -- pool`: what a per-agent server costs (reuse must be far cheaper than creation).
// (1) Latency of a tools/call that hits the agent's pooled session against one that misses (the
// agent's first call: a new stdio server is spawned, initialized and listed before the call goes
// on). (2) RSS of the gateway and every process it started, and how many there are, with 50 agents
// each holding a session and having made one call, on a per-agent stdio server and on a shared one:
// the difference is the memory cost of a pooled session. Agents are named by X-Mcpgate-Agent
// (--no-auth, loopback).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callEcho, openSession } from './mcp-post.js';
import { tree } from './proc.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const AGENTS = 50;
const MISSES = 20;
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

interface Gateway {
  child: ChildProcess;
  base: string;
}

async function startGateway(config: string): Promise<Gateway> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--config', config, '--http', '127.0.0.1:0', '--no-auth', '--pins', 'off', '--log-level', 'info'],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  const base = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      text = (text + chunk).slice(-20_000);
      const m = /"msg":"mcpgate (?:listening|ready) on (http:\/\/[^/ ]+)\/mcp/.exec(text);
      // Measured once the server (the catalog connection of a per-agent one) is up.
      if (m !== null && text.includes('"msg":"server \\"echo\\" ready')) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`mcpgate exited (${code}): ${text.slice(-2000)}`)));
  });
  child.stderr.resume();
  return { child, base };
}

async function stopGateway(gw: Gateway): Promise<void> {
  const gone = new Promise((resolve) => gw.child.once('exit', resolve));
  gw.child.kill('SIGTERM');
  await gone;
}

const open = (base: string, who: string): Promise<string> => openSession(agent, base, { 'x-mcpgate-agent': who });
const call = (base: string, who: string, session: string): Promise<number> => callEcho(agent, base, session, { 'x-mcpgate-agent': who });

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function rssKiB(pid: number): Promise<number> {
  try {
    return Number(/^VmRSS:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0; // exited meanwhile
  }
}

/** RSS (MiB) of the gateway and every process it started, and how many there are (the lowest of a few readings). */
async function footprint(pid: number): Promise<{ mib: number; processes: number }> {
  let best = { mib: Infinity, processes: 0 };
  for (let i = 0; i < 5; i++) {
    const procs = (await tree(pid)) ?? [];
    const kib = (await Promise.all(procs.map((p) => rssKiB(p.pid)))).reduce((a, b) => a + b, 0);
    if (kib / 1024 < best.mib) best = { mib: kib / 1024, processes: procs.length };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return best;
}

/** 50 agents, each with a session and one call made; the footprint while they are held. */
async function fiftyAgents(
  dir: string,
  name: string,
  entry: Record<string, unknown>,
): Promise<{ idle: { mib: number; processes: number }; held: { mib: number; processes: number } }> {
  const config = join(dir, `${name}.json`);
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO], ...entry } } }));
  const gw = await startGateway(config);
  try {
    const idle = await footprint(gw.child.pid!);
    for (let i = 0; i < AGENTS; i++) {
      const who = `agent-${i}`;
      await call(gw.base, who, await open(gw.base, who));
    }
    return { idle, held: await footprint(gw.child.pid!) };
  } finally {
    await stopGateway(gw);
  }
}

export async function benchPool(print: (line: string) => void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-pool-'));
  try {
    const config = join(dir, 'latency.json');
    await writeFile(
      config,
      JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO], sessions: 'per-agent', pool: { max: 64 } } } }),
    );
    const gw = await startGateway(config);
    const misses: number[] = [];
    const hits: number[] = [];
    try {
      for (let i = 0; i < MISSES; i++) {
        const who = `latency-${i}`;
        const session = await open(gw.base, who);
        misses.push(await call(gw.base, who, session));
        for (let n = 0; n < 50; n++) hits.push(await call(gw.base, who, session));
      }
    } finally {
      await stopGateway(gw);
    }
    misses.sort((a, b) => a - b);
    hits.sort((a, b) => a - b);
    const ms = (v: number): string => `${v.toFixed(2)} ms`;
    print('\npool: tools/call latency on a "per-agent" stdio server (echo, Node SDK), sequential');
    print(
      `  hit  (the agent's session is live)               median ${ms(quantile(hits, 0.5)).padStart(10)}  p99 ${ms(quantile(hits, 0.99)).padStart(10)}  (${hits.length} calls)`,
    );
    print(
      `  miss (its first call: spawn, initialize, list)  median ${ms(quantile(misses, 0.5)).padStart(10)}  p99 ${ms(quantile(misses, 0.99)).padStart(10)}  (${misses.length} calls)`,
    );
    print(`  a miss costs ${(quantile(misses, 0.5) / quantile(hits, 0.5)).toFixed(0)}× a hit at the median`);

    const pooled = await fiftyAgents(dir, 'per-agent', { sessions: 'per-agent', pool: { max: 64 } });
    const shared = await fiftyAgents(dir, 'shared', {});
    const perSession = (pooled.held.mib - shared.held.mib) / AGENTS;
    print(`\npool: RSS of mcpgate and every process it started, ${AGENTS} agents each holding a session after one call`);
    print(
      `  "per-agent" stdio server   ${pooled.held.mib.toFixed(0).padStart(6)} MiB in ${pooled.held.processes} processes  (idle, no agent: ${pooled.idle.mib.toFixed(0)} MiB in ${pooled.idle.processes})`,
    );
    print(
      `  "shared" stdio server      ${shared.held.mib.toFixed(0).padStart(6)} MiB in ${shared.held.processes} processes  (idle, no agent: ${shared.idle.mib.toFixed(0)} MiB in ${shared.idle.processes})`,
    );
    print(`  each per-agent session costs ~${perSession.toFixed(1)} MiB (its own server process; mcpgate's part is small next to it)`);
  } finally {
    agent.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}
