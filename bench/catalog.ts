// Benchmark: a big catalog. 100 stdio servers × 50 tools = 5,000 tools behind one
// gateway, run in this process (the composition root, with real child processes) so that the
// gateway's own cost can be measured without the agent's transport: start-up to ready, `tools/list`
// time (the synchronous span of handling it) and bytes allocated per list (growth of the V8 heap and of Buffers' memory, from a forced collection), the same after
// one server's list_changed, and the gateway's RSS. Targets: list median ≤ 5 ms, ≤ 1 MB allocated per
// list, and a change of one server re-encoding only that server's part.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Mcpgate } from '../src/mcpgate.js';
import { silentLogger } from '../src/observability/logger.js';
import { Catalog } from '../src/catalog/catalog.js';
import { benchTool } from './bench-tool.js';
import { partsToText, type EncodedParts } from '../src/wire/encoded.js';
import { agentIdentity } from '../src/gateway/session/agent-identity.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVER = join(ROOT, 'dist/bench/many-tools-server.js');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface CatalogResult {
  servers: number;
  tools: number;
  startupMs: number;
  /** The first list: every server's part encoded. */
  firstListMs: number;
  list: ListFigures & { bytes: number };
  /** The first list after one server's list_changed. */
  afterChange: ListFigures;
  rssMiB: number;
}

type Waiter = (line: string) => void;

/** The V8 heap plus the memory of Buffers (outside the heap), so a list's bytes count either way. */
function allocatedNow(): number {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

interface ListSample {
  gateway: number;
  transport: number;
  allocated: number;
  bytes: number;
}

interface ListFigures {
  /** Median ms inside the gateway (handleLine until the answer is handed to the channel). */
  medianMs: number;
  /** Median ms to turn the answer into bytes (what a front's write adds). */
  transportMs: number;
  allocatedKiB: number;
}

export async function benchCatalog(
  options: { servers?: number; toolsEach?: number; lists?: number; changes?: number } = {},
): Promise<CatalogResult> {
  const servers = options.servers ?? 100;
  const toolsEach = options.toolsEach ?? 50;
  const lists = options.lists ?? 30;
  const changes = options.changes ?? 10;
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-catalog-'));
  const configFile = join(dir, '.mcp.json');
  const mcpServers: Record<string, unknown> = {};
  for (let i = 0; i < servers; i++)
    mcpServers[`s${String(i).padStart(3, '0')}`] = { command: process.execPath, args: [SERVER, String(toolsEach)] };
  await writeFile(configFile, JSON.stringify({ mcpServers }));

  gc();
  const rssBefore = process.memoryUsage().rss;
  const gate = await Mcpgate.create({
    configFile,
    log: silentLogger,
    agent: 'bench',
    startupTimeoutMs: 120_000,
    pins: { mode: 'tofu', dir: join(dir, 'pins') },
  });
  try {
    const started = performance.now();
    await gate.gateway.start();
    const startupMs = performance.now() - started;

    const waiting = new Map<number, Waiter>();
    let onListChanged: (() => void) | undefined;
    /** While a timed list runs, its answer is only kept here: reading it would flatten it (timed apart). */
    let capture: { message?: string | EncodedParts } | undefined;
    const session = gate.gateway.openSession(
      {
        // As the fronts do: an answer in pieces (a cached list) is written as its bytes.
        sendParts(parts) {
          if (capture !== undefined) capture.message = parts;
          else this.send(partsToText(parts));
          return true;
        },
        send(line) {
          if (capture !== undefined) {
            capture.message = line;
            return true;
          }
          const id = /^\{"jsonrpc":"2\.0","id":(\d+)/.exec(line.slice(0, 40))?.[1];
          if (id !== undefined) {
            const waiter = waiting.get(Number(id));
            waiting.delete(Number(id));
            waiter?.(line);
          } else if (line.includes('"notifications/tools/list_changed"')) {
            onListChanged?.();
          }
          return true;
        },
      },
      agentIdentity('bench'),
    );
    let nextId = 1;
    const request = (method: string, params: unknown = {}): Promise<string> =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        session.handleLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    session.handleLine('{"jsonrpc":"2.0","method":"notifications/initialized"}');

    /**
     * One tools/list, answered synchronously inside handleLine once the catalog has settled: the
     * gateway's span is that call (no event-loop turn in it, so another process's load shows less);
     * the transport's is turning the answer into bytes, as a front's write does. Allocation is the
     * heap left behind by both before any collection (gc on both sides).
     */
    const oneList = (): ListSample => {
      gc();
      const heapBefore = allocatedNow();
      capture = {};
      const start = performance.now();
      session.handleLine(`{"jsonrpc":"2.0","id":${nextId++},"method":"tools/list"}`);
      const gateway = performance.now() - start;
      const message = capture.message;
      capture = undefined;
      if (message === undefined) throw new Error('tools/list was not answered at once: the catalog has not settled');
      // The bytes a front hands to write()/writev(): a string is encoded, a Buffer goes as it is.
      const chunks =
        typeof message === 'string'
          ? [Buffer.from(message + '\n')]
          : [...message, '\n'].map((part) => (typeof part === 'string' ? Buffer.from(part) : part));
      const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      const transport = performance.now() - start - gateway;
      const allocated = allocatedNow() - heapBefore;
      const head = chunks.length === 1 ? chunks[0]!.subarray(0, 200).toString() : chunks[1]!.subarray(0, 200).toString();
      if (!head.startsWith('{"tools":[') && !head.includes('"result":{"tools":[')) throw new Error(`tools/list failed: ${head}`);
      return { gateway, transport, allocated, bytes };
    };

    const first = oneList();
    const steady: ListSample[] = [];
    for (let i = 0; i < lists; i++) steady.push(oneList());
    const afterChange: ListSample[] = [];
    for (let i = 0; i < changes; i++) {
      const changed = new Promise<void>((resolve) => (onListChanged = resolve));
      await request('tools/call', { name: 's000__bump', arguments: {} });
      await changed;
      afterChange.push(oneList());
    }
    gc();
    const rssMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    session.close();
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const figures = (samples: ListSample[]): ListFigures => ({
      medianMs: median(samples.map((s) => s.gateway)),
      transportMs: median(samples.map((s) => s.transport)),
      allocatedKiB: median(samples.map((s) => s.allocated)) / 1024,
    });
    return {
      servers,
      tools: servers * toolsEach,
      startupMs,
      firstListMs: first.gateway,
      list: { ...figures(steady), bytes: steady[0]!.bytes },
      afterChange: figures(afterChange),
      rssMiB,
    };
  } finally {
    await gate.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A tool as many-tools-server.ts makes it (the same shape and size). */
const tool = (i: number, generation = 0): unknown =>
  benchTool(`tool_${i}`, `Tool ${i} of a benchmark server (generation ${generation}): looks a record up by id and returns its fields.`);

export interface ChangeResult {
  /** Median ms to rebuild every server's part and encode the whole tools list (what any change cost before). */
  fullMs: number;
  /** Median ms for one server's new tools (Catalog.set) and the list encoded again. */
  oneServerMs: number;
}

/**
 * What one server's list_changed costs the catalog itself, without processes: the catalog (room
 * `catalog`, pure) holding `servers` × `toolsEach` tools, one server's tools replaced, the list
 * encoded again. If only that server's part were re-encoded, `oneServerMs` would be about
 * `fullMs / servers`.
 */
export function benchCatalogChange(servers = 100, toolsEach = 50, rounds = 20): ChangeResult {
  const names = Array.from({ length: servers }, (_, i) => `s${String(i).padStart(3, '0')}`);
  const partOf = (generation: number): { tools: unknown[] } => ({
    tools: Array.from({ length: toolsEach }, (_, i) => tool(i, generation)),
  });
  const full: number[] = [];
  const one: number[] = [];
  const catalog = new Catalog(names);
  for (const name of names) catalog.set(name, partOf(0) as never);
  catalog.encodedList('tools');
  for (let r = 0; r < rounds; r++) {
    let start = performance.now();
    catalog.setServers(names);
    catalog.encodedList('tools');
    full.push(performance.now() - start);
    start = performance.now();
    catalog.set(names[0]!, partOf(r + 1) as never);
    catalog.encodedList('tools');
    one.push(performance.now() - start);
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { fullMs: median(full), oneServerMs: median(one) };
}

export function printCatalog(r: CatalogResult, log: (line: string) => void): void {
  const ok = (met: boolean): string => (met ? 'met' : 'NOT met');
  const ms = (x: number): string => `${x.toFixed(2)} ms`;
  log(
    `\ncatalog: ${r.servers} stdio servers × ${r.tools / r.servers} tools = ${r.tools} tools, in-process gateway (medians; the machine's load inflates every span)`,
  );
  log(`  start-up to ready           ${r.startupMs.toFixed(0)} ms (${r.servers} child processes spawned, initialized and listed)`);
  log(
    `  first tools/list            ${ms(r.firstListMs)} in the gateway (${(r.list.bytes / 2 ** 20).toFixed(2)} MiB answer; every part encoded)`,
  );
  log(
    `  tools/list, unchanged       ${ms(r.list.medianMs)} in the gateway + ${ms(r.list.transportMs)} into bytes; ${r.list.allocatedKiB.toFixed(0)} KiB allocated ` +
      `(target ≤ 5 ms: ${ok(r.list.medianMs + r.list.transportMs <= 5)}; ≤ 1 MiB: ${ok(r.list.allocatedKiB <= 1024)}; floor: writing a cached buffer, ~0)`,
  );
  log(
    `  tools/list after 1 change   ${ms(r.afterChange.medianMs)} in the gateway + ${ms(r.afterChange.transportMs)} into bytes; ${r.afterChange.allocatedKiB.toFixed(0)} KiB allocated ` +
      `(target: only the changed server's part re-encoded; compare with the first list)`,
  );
  const change = benchCatalogChange(r.servers, r.tools / r.servers);
  log(
    `  one server's change         ${ms(change.oneServerMs)} to replace its part and encode the list again; every part rebuilt and encoded: ${ms(change.fullMs)} ` +
      `(target: only that server's part re-encoded, ~${ms(change.fullMs / r.servers)}: ${ok(change.oneServerMs <= 3 * (change.fullMs / r.servers))})`,
  );
  log(`  gateway RSS growth          ${r.rssMiB.toFixed(0)} MiB for the catalog and its ${r.servers} connections (children not counted)`);
}
