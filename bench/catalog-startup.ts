// Benchmark: how soon a big catalog is available, directly and through mcpgate, in the same run.
// N stdio servers × M tools as real servers list them (many-tools-server.ts `realistic`, ~1.3 KB a
// tool). Direct: each server spawned and listed by its own lean client, all in parallel, in this
// process — the time until every list has arrived and been parsed. Through mcpgate: `mcpgate serve`
// (stdio, a child process as agents run it) with the same servers; an agent initializes, lists, and
// lists again on each `tools/list_changed` until it sees every tool — the time from spawning the
// gateway to that list. Also the gateway's RSS once the full catalog is served (its own process, the
// servers not counted). Direct and gateway runs alternate, so the machine's load weighs on both alike.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVER = join(ROOT, 'dist/bench/many-tools-server.js');
/** The installed executable (bin.ts, the package's `mcpgate`), as users start it. */
const MCPGATE = join(ROOT, 'dist/src/cli/bin.js');
const FLOOR = join(ROOT, 'dist/bench/catalog-floor.js');
/** A run that takes longer than this has failed (a server or the gateway hung). */
const RUN_TIMEOUT_MS = 300_000;

export interface StartupRun {
  directMs: number;
  /** The same through the floor aggregator (catalog-floor.ts: spawn, list, rename, one merged list; nothing else). */
  floorMs: number;
  /** The same through another build of mcpgate (MCPGATE_BENCH_BASELINE: its checkout, built), to compare in one run. */
  baseline?: Omit<StartupRun, 'directMs' | 'floorMs' | 'baseline'>;
  gatewayMs: number;
  /** How many lists the agent made before it saw every tool (1: the first list was complete). */
  lists: number;
  /** The first list's tools and when it came, ms from spawning the gateway. */
  firstList: { tools: number; ms: number };
  rssMiB: number;
}

export interface StartupResult {
  servers: number;
  toolsEach: number;
  /** The first round starts on an empty state directory (every pin written); the rest restart on it. */
  runs: StartupRun[];
  load: [number, number];
}

/**
 * Newline-delimited JSON-RPC over a child's stdio: requests by id, notifications to a callback. Each
 * chunk is searched for a newline once and a line's chunks are joined once, so an 8 MB list costs
 * its parse and not a rescan of everything buffered on each of its ~130 chunks (as `buffered += chunk`
 * with `indexOf` from the start did: ~240 ms of the agent's CPU on 10 × 500 tools, counted against the gateway).
 */
class LineClient {
  private pending: Buffer[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (msg: { result?: unknown; error?: { message: string } }) => void>();

  constructor(
    readonly child: ChildProcess,
    private readonly onNotification: (method: string) => void = () => {},
  ) {
    child.stdout!.on('data', (chunk: Buffer) => {
      let nl = chunk.indexOf(10);
      while (nl >= 0) {
        this.pending.push(chunk.subarray(0, nl));
        const line = Buffer.concat(this.pending).toString('utf8');
        this.pending = [];
        chunk = chunk.subarray(nl + 1);
        nl = chunk.indexOf(10);
        if (line.trim() !== '')
          this.message(JSON.parse(line) as { id?: number; method?: string; result?: unknown; error?: { message: string } });
      }
      if (chunk.length > 0) this.pending.push(chunk);
    });
  }

  private message(msg: { id?: number; method?: string; result?: unknown; error?: { message: string } }): void {
    if (msg.method !== undefined && msg.id === undefined) return this.onNotification(msg.method);
    if (msg.method !== undefined) return; // a server's request: none expected here
    const waiter = this.waiting.get(msg.id!);
    this.waiting.delete(msg.id!);
    waiter?.(msg);
  }

  request(method: string, params: unknown = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (msg) => (msg.error !== undefined ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result)));
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string): void {
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }

  async initialize(): Promise<void> {
    await this.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    this.notify('notifications/initialized');
  }
}

/** stdin's end (how an agent leaves; the gateway stops its servers), then SIGTERM, then SIGKILL. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const term = setTimeout(() => child.kill('SIGTERM'), 5000);
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(term);
      clearTimeout(kill);
      resolve();
    });
    child.stdin?.end();
  });
}

function serverArgs(toolsEach: number): string[] {
  return [SERVER, String(toolsEach), 'realistic'];
}

/** Every server spawned and listed by its own client, in parallel: ms until the last list is parsed. */
async function direct(servers: number, toolsEach: number): Promise<number> {
  const start = performance.now();
  const children: ChildProcess[] = [];
  try {
    const counts = await Promise.all(
      Array.from({ length: servers }, async () => {
        const child = spawn(process.execPath, serverArgs(toolsEach), { stdio: ['pipe', 'pipe', 'ignore'] });
        children.push(child);
        const client = new LineClient(child);
        await client.initialize();
        const result = (await client.request('tools/list')) as { tools: unknown[] };
        return result.tools.length;
      }),
    );
    const ms = performance.now() - start;
    const total = counts.reduce((a, b) => a + b, 0);
    if (total !== servers * toolsEach) throw new Error(`direct: listed ${total} tools, expected ${servers * toolsEach}`);
    return ms;
  } finally {
    await Promise.all(children.map(stop));
  }
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

/** `mcpgate serve` with the servers; an agent lists (again on each list_changed) until it sees every tool. */
function throughGateway(
  configFile: string,
  state: string,
  total: number,
  mcpgate = MCPGATE,
): Promise<Omit<StartupRun, 'directMs' | 'floorMs' | 'baseline'>> {
  // MCPGATE_BENCH_NODE_ARGS: options for the gateway's node (e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile it).
  const nodeArgs = (process.env.MCPGATE_BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const args = [
    'serve',
    '--config',
    configFile,
    '--state',
    state,
    '--agent',
    'bench',
    '--log-level',
    'warn',
    '--startup-timeout',
    '120000',
  ];
  return throughAggregator([...nodeArgs, mcpgate, ...args], total);
}

/** The floor aggregator with the same servers, listed the same way. */
async function throughFloor(servers: number, toolsEach: number): Promise<number> {
  return (await throughAggregator([FLOOR, String(servers), String(toolsEach)], servers * toolsEach)).gatewayMs;
}

/** An aggregator (`node ARGS…`) as a child; an agent lists (again on each list_changed) until it sees every tool. */
async function throughAggregator(nodeArgs: string[], total: number): Promise<Omit<StartupRun, 'directMs' | 'floorMs' | 'baseline'>> {
  const start = performance.now();
  const child = spawn(process.execPath, nodeArgs, { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    let changed: (() => void) | undefined;
    let pendingChange = false;
    const client = new LineClient(child, (method) => {
      if (method !== 'notifications/tools/list_changed') return;
      pendingChange = true;
      changed?.();
    });
    await client.initialize();
    let lists = 0;
    let firstList: { tools: number; ms: number } | undefined;
    for (;;) {
      pendingChange = false;
      const result = (await client.request('tools/list')) as { tools: unknown[] };
      lists += 1;
      firstList ??= { tools: result.tools.length, ms: performance.now() - start };
      if (result.tools.length >= total) break;
      if (!pendingChange) await new Promise<void>((resolve) => (changed = resolve));
      changed = undefined;
    }
    const gatewayMs = performance.now() - start;
    return { gatewayMs, lists, firstList, rssMiB: await rssMiB(child.pid!) };
  } finally {
    await stop(child);
  }
}

async function withTimeout<T>(what: string, run: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${RUN_TIMEOUT_MS} ms`)), RUN_TIMEOUT_MS)),
  );
  try {
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function benchCatalogStartup(servers: number, toolsEach: number, rounds = 3): Promise<StartupResult> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-startup-'));
  const configFile = join(dir, '.mcp.json');
  const mcpServers: Record<string, unknown> = {};
  for (let i = 0; i < servers; i++)
    mcpServers[`s${String(i).padStart(3, '0')}`] = { command: process.execPath, args: serverArgs(toolsEach) };
  await writeFile(configFile, JSON.stringify({ mcpServers }));
  const load0 = loadavg()[0]!;
  const runs: StartupRun[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so a burst of load from elsewhere weighs on both alike.
      const directFirst = r % 2 === 0;
      const d1 = directFirst ? await withTimeout('direct', direct(servers, toolsEach)) : undefined;
      const g = await withTimeout('through mcpgate', throughGateway(configFile, join(dir, 'state'), servers * toolsEach));
      const d2 = directFirst ? d1! : await withTimeout('direct', direct(servers, toolsEach));
      const floorMs = await withTimeout('through the floor', throughFloor(servers, toolsEach));
      const base = process.env.MCPGATE_BENCH_BASELINE;
      const baseline =
        base === undefined
          ? undefined
          : await withTimeout(
              'through the baseline',
              throughGateway(configFile, join(dir, 'baseline-state'), servers * toolsEach, join(base, 'dist/src/cli/main.js')),
            );
      runs.push({ directMs: d2, floorMs, ...g, ...(baseline !== undefined && { baseline }) });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { servers, toolsEach, runs, load: [load0, loadavg()[0]!] };
}

export function printCatalogStartup(r: StartupResult, target: number, log: (line: string) => void): void {
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  log(
    `\ncatalog start-up: ${r.servers} stdio servers × ${r.toolsEach} realistic tools = ${r.servers * r.toolsEach} tools, direct vs through mcpgate (load ${r.load[0].toFixed(1)} → ${r.load[1].toFixed(1)})`,
  );
  r.runs.forEach((run, i) => {
    log(
      `  round ${i + 1}${i === 0 ? ' (empty state: pins written)' : ' (restart: pins on disk)'}: direct ${run.directMs.toFixed(0)} ms, mcpgate ${run.gatewayMs.toFixed(0)} ms ` +
        `(${(run.gatewayMs / run.directMs).toFixed(2)}×, ${(run.gatewayMs / run.floorMs).toFixed(2)}× the floor's ${run.floorMs.toFixed(0)} ms (${(run.floorMs / run.directMs).toFixed(2)}× direct); first list ${run.firstList.tools} tools at ${run.firstList.ms.toFixed(0)} ms, full after ${run.lists} list${run.lists === 1 ? '' : 's'}), gateway RSS ${run.rssMiB.toFixed(0)} MiB` +
        (run.baseline === undefined
          ? ''
          : `; baseline ${run.baseline.gatewayMs.toFixed(0)} ms (${(run.baseline.gatewayMs / run.directMs).toFixed(2)}×), RSS ${run.baseline.rssMiB.toFixed(0)} MiB`),
    );
  });
  const ratio = median(r.runs.map((run) => run.gatewayMs / run.directMs));
  const floor = median(r.runs.map((run) => run.floorMs / run.directMs));
  const rss = Math.max(...r.runs.map((run) => run.rssMiB));
  log(
    `  median ratio ${ratio.toFixed(2)}× direct (target ≤ ${target}×: ${ratio <= target ? 'met' : 'NOT met'}; the floor aggregator ${floor.toFixed(2)}× direct); gateway RSS at most ${rss.toFixed(0)} MiB (target ≤ 120 MiB: ${rss <= 120 ? 'met' : 'NOT met'})`,
  );
}
