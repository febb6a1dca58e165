// `npm run bench -- cluster` (issue #12): mcpgate workers sharing a real redis-server, on this
// machine. (1) The added latency of a forwarded tools/call (sent to a worker that does not own the
// session) against a local one (sent to the owner), sequential, in alternating rounds. (2)
// Throughput at 64 calls in flight with 1 worker and with 2 (sessions split between them, each call
// sent to its owner as a sticky balancer would), and with 2 behind a non-sticky balancer
// (round robin: half the calls forwarded).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RedisServer } from '../test/helpers/redis.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Worker {
  child: ChildProcess;
  base: string;
}

async function startWorker(config: string, redis: string): Promise<Worker> {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config, '--http', '127.0.0.1:0', '--no-auth', '--agent', 'bench', '--pins', 'off', '--redis', redis, '--log-level', 'info'], { stdio: ['pipe', 'ignore', 'pipe'] });
  const base = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      text = (text + chunk).slice(-20_000);
      const m = /"msg":"mcpgate ready on (http:\/\/[^/]+)\/mcp/.exec(text);
      if (m !== null) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${text.slice(-2000)}`)));
  });
  child.stderr.resume();
  return { child, base };
}

function post(base: string, body: string, session?: string): Promise<{ status: number; session: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...HEADERS, 'content-length': String(Buffer.byteLength(body)) };
    if (session !== undefined) headers['mcp-session-id'] = session;
    const req = request(`${base}/mcp`, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, session: res.headers['mcp-session-id'] as string | undefined, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function open(base: string): Promise<string> {
  const init = await post(base, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }));
  if (init.session === undefined) throw new Error(`initialize failed: ${init.status} ${init.body}`);
  await post(base, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), init.session);
  return init.session;
}

let nextId = 1;
async function call(base: string, session: string): Promise<void> {
  const r = await post(base, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'hi' } } }), session);
  if (r.status !== 200 || !r.body.includes('"hi"')) throw new Error(`call failed: ${r.status} ${r.body.slice(0, 300)}`);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Calls per second with `inflight` loops for `ms`; each loop's target is chosen by `pick`. */
async function throughput(inflight: number, ms: number, pick: (loop: number, n: number) => [string, string]): Promise<number> {
  const end = performance.now() + ms;
  let done = 0;
  await Promise.all(Array.from({ length: inflight }, async (_, loop) => {
    let n = 0;
    while (performance.now() < end) {
      const [base, session] = pick(loop, n++);
      await call(base, session);
      done++;
    }
  }));
  return done / (ms / 1000);
}

export async function benchCluster(print: (line: string) => void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-cluster-'));
  const redis = await RedisServer.start();
  const workers: Worker[] = [];
  try {
    const config = join(dir, '.mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
    workers.push(await startWorker(config, redis.url), await startWorker(config, redis.url));
    const [a, b] = workers as [Worker, Worker];
    const owned = await open(a.base);
    for (let i = 0; i < 200; i++) await call(i % 2 === 0 ? a.base : b.base, owned); // warm up both paths
    const local: number[] = [];
    const forwarded: number[] = [];
    for (let round = 0; round < 10; round++) {
      for (const [base, into] of [[a.base, local], [b.base, forwarded]] as const) {
        for (let i = 0; i < 100; i++) {
          const t = performance.now();
          await call(base, owned);
          into.push(performance.now() - t);
        }
      }
    }
    local.sort((x, y) => x - y);
    forwarded.sort((x, y) => x - y);
    const us = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;
    print('\ncluster: tools/call latency, sequential, one session owned by worker A (2 workers, one Redis)');
    print(`  local (sent to A)        median ${us(quantile(local, 0.5)).padStart(8)}  p99 ${us(quantile(local, 0.99)).padStart(9)}  (${local.length} calls)`);
    print(`  forwarded (sent to B)    median ${us(quantile(forwarded, 0.5)).padStart(8)}  p99 ${us(quantile(forwarded, 0.99)).padStart(9)}  (${forwarded.length} calls)`);
    print(`  forwarding adds ${us(quantile(forwarded, 0.5) - quantile(local, 0.5))} at the median`);

    const sessionsA = await Promise.all(Array.from({ length: 8 }, () => open(a.base)));
    const sessionsB = await Promise.all(Array.from({ length: 8 }, () => open(b.base)));
    const ms = 5000;
    const one = await throughput(64, ms, (loop) => [a.base, sessionsA[loop % 8]!]);
    const sticky = await throughput(64, ms, (loop) => (loop % 2 === 0 ? [a.base, sessionsA[(loop >> 1) % 8]!] : [b.base, sessionsB[(loop >> 1) % 8]!]));
    const roundRobin = await throughput(64, ms, (loop, n) => [(loop + n) % 2 === 0 ? a.base : b.base, loop % 2 === 0 ? sessionsA[(loop >> 1) % 8]! : sessionsB[(loop >> 1) % 8]!]);
    print('\ncluster: tools/call throughput at 64 in flight (16 sessions), 5 s each');
    print(`  1 worker                         ${one.toFixed(0).padStart(6)} calls/s`);
    print(`  2 workers, sticky balancer       ${sticky.toFixed(0).padStart(6)} calls/s  (${(sticky / one).toFixed(2)}× one worker)`);
    print(`  2 workers, round robin           ${roundRobin.toFixed(0).padStart(6)} calls/s  (${(roundRobin / one).toFixed(2)}× one worker; half the calls forwarded)`);
  } finally {
    for (const w of workers) {
      const gone = new Promise((resolve) => w.child.once('exit', resolve));
      w.child.kill('SIGTERM');
      await gone;
    }
    agent.destroy();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
