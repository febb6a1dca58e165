// `npm run bench -- cluster` (issue #12): mcpgate workers sharing a real redis-server, on this
// machine. (1) The added latency of a forwarded tools/call (sent to a worker that does not own the
// session) against a local one (sent to the owner), sequential, in alternating rounds. (2)
// Throughput at 64 calls in flight: 1 worker; 2 separate `serve` processes with each call sent to
// its session's owner (a sticky balancer) or alternately to either (round robin: half the calls
// forwarded); and `serve --workers 2`, one port, node:cluster handing each connection to the next
// worker (the client's 64 keep-alive connections split between the workers, the sessions too, so
// about half the calls are forwarded, as with round robin). (3) What caps it: the CPU each process
// used per call in each shape — the load client (this process), each worker, each echo server, the
// primary, Redis — from /proc (bench/proc.ts), since the client and every server share the cores.
// With MCPGATE_BENCH_BASELINE=/path/to/an/older/dist/src/cli/main.js, a second pair of workers runs
// that build, and the forwarded latency and the round-robin throughput of both builds are measured
// in alternating rounds of this one run (a change's before and after on one shared machine).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callEcho, openSession } from './mcp-post.js';
import { RedisServer } from '../test/helpers/redis.js';
import { treeCpu } from './proc.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const INFLIGHT = 64;
const SESSIONS = 16;
/** Per shape, in ROUNDS turns. */
const MEASURE_MS = 5000;
const ROUNDS = 5;

interface Gate {
  child: ChildProcess;
  base: string;
}

/** `mcpgate serve` (extra args: e.g. --workers 2); resolves once `ready` lines say every worker's servers are up. */
async function startGate(config: string, redis: string, extra: string[] = [], ready = 1, cli = CLI): Promise<Gate> {
  const child = spawn(process.execPath, [cli, 'serve', '--config', config, '--http', '127.0.0.1:0', '--no-auth', '--agent', 'bench', '--pins', 'off', '--redis', redis, '--log-level', 'info', ...extra], { stdio: ['pipe', 'ignore', 'pipe'] });
  const base = await new Promise<string>((resolve, reject) => {
    let text = '';
    let seen = 0;
    let url: string | undefined;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      text = (text + chunk).slice(-20_000);
      for (const line of chunk.split('\n')) {
        // One worker: "mcpgate ready on URL"; --workers N: the primary's "mcpgate listening on URL (N workers)", then each worker's ready.
        const listening = /"msg":"mcpgate listening on (http:\/\/[^/]+)\/mcp \(\d+ workers\)/.exec(line);
        if (listening !== null) url = listening[1];
        const m = /"msg":"mcpgate ready on (http:\/\/[^/]+)\/mcp/.exec(line);
        if (m !== null && ++seen >= ready) url ??= m[1];
      }
      if (url !== undefined && seen >= ready) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`mcpgate exited (${code}): ${text.slice(-2000)}`)));
  });
  child.stderr.resume();
  return { child, base };
}

async function stopGate(g: Gate): Promise<void> {
  if (g.child.exitCode !== null || g.child.signalCode !== null) return;
  const gone = new Promise((resolve) => g.child.once('exit', resolve));
  g.child.kill('SIGTERM');
  await gone;
}

const open = openSession;
const call = callEcho;

/** The relayed forwards of every worker behind `base`, from one scrape of its /metrics. */
async function relayed(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith('mcpgate_cluster_forwarded_total{') && line.includes('outcome="relayed"')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Calls made with `INFLIGHT` loops for `ms`; each loop's target is chosen by `pick`. */
async function drive(agent: Agent, ms: number, pick: (loop: number, n: number) => [string, string]): Promise<number> {
  const end = performance.now() + ms;
  let done = 0;
  await Promise.all(Array.from({ length: INFLIGHT }, async (_, loop) => {
    let n = 0;
    while (performance.now() < end) {
      const [base, session] = pick(loop, n++);
      await call(agent, base, session);
      done++;
    }
  }));
  return done;
}

/** What a process is, from its command line. */
function role(cmdline: string, roots: ReadonlyMap<number, string>, pid: number, ppid: number): string {
  const root = roots.get(pid);
  if (root !== undefined) return root;
  if (cmdline.includes('echo-server')) return `echo server of ${roots.get(ppid) ?? `pid ${ppid}`}`;
  if (cmdline.includes('watchdog')) return `watchdog of ${roots.get(ppid) ?? `pid ${ppid}`}`;
  if (cmdline.includes('main.js')) return `worker ${pid}`;
  return cmdline.slice(0, 40);
}

interface Shape {
  name: string;
  /** Role → CPU ms used during the measurement. */
  cpu: Map<string, number>;
  calls: number;
  seconds: number;
}

/** One shape of the throughput comparison: where each loop's calls go, and what it has measured so far. */
interface Turn {
  name: string;
  roots: ReadonlyMap<number, string>;
  agent: Agent;
  pick: (loop: number, n: number) => [string, string];
  shape: Shape;
}

function turn(name: string, roots: ReadonlyMap<number, string>, agent: Agent, pick: Turn['pick']): Turn {
  return { name, roots, agent, pick, shape: { name, cpu: new Map(), calls: 0, seconds: 0 } };
}

/** CPU of every process of the trees under `roots` (plus Redis), keyed by role. */
async function snapshot(roots: ReadonlyMap<number, string>, redisPid: number | undefined): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const named = new Map(roots);
  for (const root of roots.keys()) {
    const procs = (await treeCpu(root)) ?? [];
    // node:cluster workers (children of a primary running the CLI) are named after their pid.
    for (const p of procs) if (!named.has(p.pid) && p.cmdline.includes('main.js') && p.ppid === root) named.set(p.pid, `worker ${p.pid}`);
    for (const p of procs) out.set(role(p.cmdline, named, p.pid, p.ppid), p.cpuMs);
  }
  if (redisPid !== undefined) for (const p of (await treeCpu(redisPid)) ?? []) out.set('redis-server', p.cpuMs);
  return out;
}

async function measure(name: string, roots: ReadonlyMap<number, string>, redisPid: number | undefined, run: () => Promise<number>): Promise<Shape> {
  const before = await snapshot(roots, redisPid);
  const client = process.cpuUsage();
  const t = performance.now();
  const calls = await run();
  const seconds = (performance.now() - t) / 1000;
  const used = process.cpuUsage(client);
  const after = await snapshot(roots, redisPid);
  const cpu = new Map<string, number>([['load client (this process)', (used.user + used.system) / 1000]]);
  for (const [key, ms] of after) cpu.set(key, ms - (before.get(key) ?? 0));
  return { name, cpu, calls, seconds };
}

function printShape(s: Shape, one: number, print: (line: string) => void): void {
  const total = [...s.cpu.values()].reduce((a, b) => a + b, 0);
  const rate = s.calls / s.seconds;
  const wallMs = s.seconds * 1000;
  print(`  ${s.name.padEnd(44)} ${rate.toFixed(0).padStart(6)} calls/s  ${(rate / one).toFixed(2)}×  ${(total / wallMs).toFixed(2)} cores busy, ${((total * 1000) / s.calls).toFixed(0)} µs CPU per call:`);
  const rows = [...s.cpu].filter(([, ms]) => (ms * 1000) / s.calls >= 1).sort((a, b) => b[1] - a[1]);
  for (const [who, ms] of rows) print(`      ${who.padEnd(44)} ${((ms * 1000) / s.calls).toFixed(0).padStart(5)} µs/call  ${(ms / wallMs).toFixed(2)} cores`);
}

export async function benchCluster(print: (line: string) => void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-cluster-'));
  const redis = await RedisServer.start();
  const gates: Gate[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  try {
    print(`\ncluster: load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')} (a shared machine: only ratios within this run mean much)`);
    const config = join(dir, '.mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
    // The build under test, and (MCPGATE_BENCH_BASELINE) an older one, each a pair A (owner) and B.
    interface Pair { name: string; a: Gate; b: Gate; owned: string; local: number[]; forwarded: number[] }
    const pairs: Pair[] = [];
    const baseline = process.env.MCPGATE_BENCH_BASELINE;
    for (const [name, cli] of [['this build', CLI], ...(baseline === undefined ? [] : [['baseline', baseline]])] as const) {
      const pa = await startGate(config, redis.url, [], 1, cli);
      gates.push(pa);
      const pb = await startGate(config, redis.url, [], 1, cli);
      gates.push(pb);
      pairs.push({ name, a: pa, b: pb, owned: await open(agent, pa.base), local: [], forwarded: [] });
    }
    for (const p of pairs) for (let i = 0; i < 200; i++) await call(agent, i % 2 === 0 ? p.a.base : p.b.base, p.owned); // warm up both paths
    for (let round = 0; round < 10; round++) {
      for (const p of pairs) {
        for (const [base, into] of [[p.a.base, p.local], [p.b.base, p.forwarded]] as const) {
          for (let i = 0; i < 100; i++) {
            const t = performance.now();
            await call(agent, base, p.owned);
            into.push(performance.now() - t);
          }
        }
      }
    }
    const us = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;
    print('\ncluster: tools/call latency, sequential, one session owned by worker A (2 workers, one Redis)');
    for (const p of pairs) {
      p.local.sort((x, y) => x - y);
      p.forwarded.sort((x, y) => x - y);
      if (pairs.length > 1) print(`  ${p.name}:`);
      print(`  local (sent to A)        median ${us(quantile(p.local, 0.5)).padStart(8)}  p99 ${us(quantile(p.local, 0.99)).padStart(9)}  (${p.local.length} calls)`);
      print(`  forwarded (sent to B)    median ${us(quantile(p.forwarded, 0.5)).padStart(8)}  p99 ${us(quantile(p.forwarded, 0.99)).padStart(9)}  (${p.forwarded.length} calls)`);
      print(`  forwarding adds ${us(quantile(p.forwarded, 0.5) - quantile(p.local, 0.5))} at the median`);
    }
    // Throughput: every shape's processes run at once and the shapes take turns in 1 s rounds, so
    // the other engineers' load on this shared machine falls on all of them alike.
    const shared = await startGate(config, redis.url, ['--workers', '2'], 2);
    gates.push(shared);
    const onePort = new Agent({ keepAlive: true, maxSockets: INFLIGHT });
    try {
      const half = SESSIONS / 2;
      const shapes: Turn[] = [];
      for (const p of pairs) {
        const sa = await Promise.all(Array.from({ length: half }, () => open(agent, p.a.base)));
        const sb = await Promise.all(Array.from({ length: half }, () => open(agent, p.b.base)));
        const roots = new Map([[p.a.child.pid!, 'worker A'], [p.b.child.pid!, 'worker B']]);
        const suffix = pairs.length > 1 ? ` (${p.name})` : '';
        if (p === pairs[0]) {
          shapes.push(turn(`1 worker${suffix}`, roots, agent, (loop) => [p.a.base, sa[loop % half]!]));
          shapes.push(turn(`2 serve processes, sticky balancer${suffix}`, roots, agent, (loop) => (loop % 2 === 0 ? [p.a.base, sa[(loop >> 1) % half]!] : [p.b.base, sb[(loop >> 1) % half]!])));
        }
        shapes.push(turn(`2 serve processes, round robin${suffix}`, roots, agent, (loop, n) => [(loop + n) % 2 === 0 ? p.a.base : p.b.base, loop % 2 === 0 ? sa[(loop >> 1) % half]! : sb[(loop >> 1) % half]!]));
      }
      // serve --workers 2: one port; the client's connections (and the sessions opened on them) are split by node:cluster.
      const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => open(onePort, shared.base)));
      shapes.push(turn('serve --workers 2 (one port, node:cluster)', new Map([[shared.child.pid!, 'primary']]), onePort, (loop) => [shared.base, sessions[loop % SESSIONS]!]));
      for (const t of shapes) await drive(t.agent, 500, t.pick); // warm up
      // How many of the one-port shape's calls were forwarded: its own /metrics, one scrape for both workers.
      const relayedBefore = await relayed(shared.base);
      const redisPid = redis.pid;
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of shapes) {
          const r = await measure(t.name, t.roots, redisPid, () => drive(t.agent, MEASURE_MS / ROUNDS, t.pick));
          t.shape.calls += r.calls;
          t.shape.seconds += r.seconds;
          for (const [who, ms] of r.cpu) t.shape.cpu.set(who, (t.shape.cpu.get(who) ?? 0) + ms);
        }
      }
      print(`\ncluster: tools/call throughput at ${INFLIGHT} in flight (${SESSIONS} sessions), ${ROUNDS} alternating rounds of ${MEASURE_MS / ROUNDS / 1000} s each; CPU per call of each process (/proc)`);
      const one = shapes[0]!.shape.calls / shapes[0]!.shape.seconds;
      for (const t of shapes) printShape(t.shape, one, print);
      const onePortShape = shapes[shapes.length - 1]!.shape;
      print(`  serve --workers 2: ${(((await relayed(shared.base)) - relayedBefore) * 100 / onePortShape.calls).toFixed(0)}% of its calls were forwarded to the other worker (mcpgate_cluster_forwarded_total of one /metrics scrape)`);
      print(`  load average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    } finally {
      onePort.destroy();
    }
  } finally {
    for (const g of gates) await stopGate(g);
    agent.destroy();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
