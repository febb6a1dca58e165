// `npm run bench -- cluster`: mcpgate workers sharing a real redis-server, on this
// machine. (1) The added latency of a forwarded tools/call (sent to a worker that does not own the
// session) against a local one (sent to the owner), sequential, in alternating rounds. (2)
// Throughput at 64 calls in flight from a load generator of K processes (MCPGATE_BENCH_CLIENTS,
// default 4; bench/load-client.ts: each its own keep-alive agent, its own sessions, 64/K loops), so
// the client is not one process capped at a core: 1 worker (`serve`), then `serve --workers 2` and
// `--workers 4` on one port (the primary hands each connection to the worker its session names),
// with the share of calls forwarded between workers and the scaling, N workers ÷ (N × 1 worker).
// (3) What caps it: the CPU each process used per call in each shape — the load clients, each
// worker, each echo server, the primary, Redis — from /proc (bench/proc.ts), since the clients and
// every server share the cores. With MCPGATE_BENCH_BASELINE=/path/to/an/older/dist/src/cli/main.js,
// a second pair of workers runs that build, and the forwarded latency and `--workers 2` of both builds
// are measured in alternating rounds of this one run (a change's before and after on one shared machine).

import { fork, spawn, type ChildProcess } from 'node:child_process';
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
const LOAD_CLIENT = join(ROOT, 'dist/bench/load-client.js');
/** Processes of the load generator (MCPGATE_BENCH_CLIENTS). */
const CLIENTS = Math.max(1, Math.min(64, Number(process.env.MCPGATE_BENCH_CLIENTS ?? 4) || 4));
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
  const child = spawn(
    process.execPath,
    [
      cli,
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
      '--redis',
      redis,
      '--log-level',
      'info',
      ...extra,
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
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
  for (const line of text.split('\n'))
    if (line.startsWith('mcpgate_cluster_forwarded_total{') && line.includes('outcome="relayed"'))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** The load generator: CLIENTS processes (load-client.ts), each with its own agent and sessions. */
class LoadClients {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: { calls: number; cpuMs: number }) => void; reject: (e: Error) => void }>();

  private constructor(private readonly children: ChildProcess[]) {
    for (const child of children) {
      child.on('message', (m: { id: number; calls?: number; cpuMs?: number; error?: string }) => {
        const w = this.waiting.get(m.id);
        if (w === undefined) return;
        this.waiting.delete(m.id);
        if (m.error !== undefined) w.reject(new Error(m.error));
        else w.resolve({ calls: m.calls ?? 0, cpuMs: m.cpuMs ?? 0 });
      });
      child.once('exit', (code) => {
        for (const w of this.waiting.values()) w.reject(new Error(`a load client exited (${code})`));
        this.waiting.clear();
      });
    }
  }

  static start(): LoadClients {
    return new LoadClients(
      Array.from({ length: CLIENTS }, () => fork(LOAD_CLIENT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })),
    );
  }

  private ask(child: ChildProcess, order: Record<string, unknown>): Promise<{ calls: number; cpuMs: number }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      child.send({ ...order, id });
    });
  }

  /** SESSIONS sessions on `base`, split over the clients (at least one each). */
  async open(base: string): Promise<void> {
    const each = Math.max(1, Math.round(SESSIONS / CLIENTS));
    await Promise.all(this.children.map((c) => this.ask(c, { op: 'open', base, sessions: each })));
  }

  /** INFLIGHT calls in flight on `base` for `ms`, split over the clients; the calls made and the clients' CPU. */
  async drive(base: string, ms: number): Promise<{ calls: number; cpuMs: number }> {
    const inflight = Math.max(1, Math.round(INFLIGHT / CLIENTS));
    const all = await Promise.all(this.children.map((c) => this.ask(c, { op: 'drive', base, inflight, ms })));
    return { calls: all.reduce((a, r) => a + r.calls, 0), cpuMs: all.reduce((a, r) => a + r.cpuMs, 0) };
  }

  close(): void {
    for (const child of this.children) if (child.connected) child.send({ op: 'close' });
  }
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

/** One shape of the throughput comparison: the gateway it drives, and what it has measured so far. */
interface Turn {
  name: string;
  roots: ReadonlyMap<number, string>;
  base: string;
  /** Workers behind `base` (for the scaling); 0: not part of it. */
  workers: number;
  shape: Shape;
}

function turn(name: string, roots: ReadonlyMap<number, string>, base: string, workers: number): Turn {
  return { name, roots, base, workers, shape: { name, cpu: new Map(), calls: 0, seconds: 0 } };
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

async function measure(
  name: string,
  roots: ReadonlyMap<number, string>,
  redisPid: number | undefined,
  run: () => Promise<{ calls: number; cpuMs: number }>,
): Promise<Shape> {
  const before = await snapshot(roots, redisPid);
  const t = performance.now();
  const { calls, cpuMs } = await run();
  const seconds = (performance.now() - t) / 1000;
  const after = await snapshot(roots, redisPid);
  const cpu = new Map<string, number>([[`load clients (${CLIENTS} processes)`, cpuMs]]);
  for (const [key, ms] of after) cpu.set(key, ms - (before.get(key) ?? 0));
  return { name, cpu, calls, seconds };
}

function printShape(s: Shape, one: number, print: (line: string) => void): void {
  const total = [...s.cpu.values()].reduce((a, b) => a + b, 0);
  const rate = s.calls / s.seconds;
  const wallMs = s.seconds * 1000;
  print(
    `  ${s.name.padEnd(44)} ${rate.toFixed(0).padStart(6)} calls/s  ${(rate / one).toFixed(2)}×  ${(total / wallMs).toFixed(2)} cores busy, ${((total * 1000) / s.calls).toFixed(0)} µs CPU per call:`,
  );
  const rows = [...s.cpu].filter(([, ms]) => (ms * 1000) / s.calls >= 1).sort((a, b) => b[1] - a[1]);
  for (const [who, ms] of rows)
    print(`      ${who.padEnd(44)} ${((ms * 1000) / s.calls).toFixed(0).padStart(5)} µs/call  ${(ms / wallMs).toFixed(2)} cores`);
}

export async function benchCluster(print: (line: string) => void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-cluster-'));
  const redis = await RedisServer.start();
  const gates: Gate[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  try {
    print(
      `\ncluster: load average at start ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (a shared machine: only ratios within this run mean much)`,
    );
    const config = join(dir, '.mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
    // The build under test, and (MCPGATE_BENCH_BASELINE) an older one, each a pair A (owner) and B.
    interface Pair {
      name: string;
      a: Gate;
      b: Gate;
      owned: string;
      local: number[];
      forwarded: number[];
    }
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
        for (const [base, into] of [
          [p.a.base, p.local],
          [p.b.base, p.forwarded],
        ] as const) {
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
      print(
        `  local (sent to A)        median ${us(quantile(p.local, 0.5)).padStart(8)}  p99 ${us(quantile(p.local, 0.99)).padStart(9)}  (${p.local.length} calls)`,
      );
      print(
        `  forwarded (sent to B)    median ${us(quantile(p.forwarded, 0.5)).padStart(8)}  p99 ${us(quantile(p.forwarded, 0.99)).padStart(9)}  (${p.forwarded.length} calls)`,
      );
      print(`  forwarding adds ${us(quantile(p.forwarded, 0.5) - quantile(p.local, 0.5))} at the median`);
    }
    // Throughput: every shape's processes run at once and the shapes take turns in 1 s rounds, so
    // the other engineers' load on this shared machine falls on all of them alike.
    const clients = LoadClients.start();
    try {
      const shapes: Turn[] = [];
      const one = pairs[0]!.a;
      shapes.push(turn('1 worker (serve)', new Map([[one.child.pid!, 'worker']]), one.base, 1));
      for (const n of [2, 4]) {
        const g = await startGate(config, redis.url, ['--workers', String(n)], n);
        gates.push(g);
        shapes.push(turn(`serve --workers ${n} (one port)`, new Map([[g.child.pid!, 'primary']]), g.base, n));
      }
      if (baseline !== undefined) {
        const g = await startGate(config, redis.url, ['--workers', '2'], 2, baseline);
        gates.push(g);
        shapes.push(turn('serve --workers 2 (baseline build)', new Map([[g.child.pid!, 'primary']]), g.base, 0));
      }
      for (const t of shapes) await clients.open(t.base);
      for (const t of shapes) await clients.drive(t.base, 500); // warm up
      // How many of each one-port shape's calls were forwarded: its own /metrics, one scrape for every worker.
      const relayedBefore = await Promise.all(shapes.map((t) => relayed(t.base)));
      const redisPid = redis.pid;
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of shapes) {
          const r = await measure(t.name, t.roots, redisPid, () => clients.drive(t.base, MEASURE_MS / ROUNDS));
          t.shape.calls += r.calls;
          t.shape.seconds += r.seconds;
          for (const [who, ms] of r.cpu) t.shape.cpu.set(who, (t.shape.cpu.get(who) ?? 0) + ms);
        }
      }
      const relayedAfter = await Promise.all(shapes.map((t) => relayed(t.base)));
      print(
        `\ncluster: tools/call throughput at ${INFLIGHT} in flight (${SESSIONS} sessions) from ${CLIENTS} load-client processes, ${ROUNDS} alternating rounds of ${MEASURE_MS / ROUNDS / 1000} s each; CPU per call of each process (/proc)`,
      );
      const oneRate = shapes[0]!.shape.calls / shapes[0]!.shape.seconds;
      for (const t of shapes) printShape(t.shape, oneRate, print);
      for (const [i, t] of shapes.entries()) {
        if (i === 0) continue;
        const rate = t.shape.calls / t.shape.seconds;
        const share = ((relayedAfter[i]! - relayedBefore[i]!) * 100) / t.shape.calls;
        const scaling =
          t.workers > 0
            ? `; scaling ${(rate / (t.workers * oneRate)).toFixed(2)} of ${t.workers} × 1 worker (target ≥ 0.85, given ≥ ${2 * t.workers + CLIENTS} cores)`
            : '';
        print(`  ${t.name}: ${share.toFixed(1)}% of its calls forwarded between workers (mcpgate_cluster_forwarded_total)${scaling}`);
      }
      print(
        `  load average at end ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
    } finally {
      clients.close();
    }
  } finally {
    for (const g of gates) await stopGate(g);
    agent.destroy();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
