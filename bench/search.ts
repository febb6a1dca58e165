// Benchmark: tool search (`npm run bench -- search`). What an agent's context pays for tools/list of
// the 10 × 500 catalog (many-tools-server.ts `realistic`, through the real gateway) in aggregate mode
// and in search mode; search latency over 5,000 tools; what the index costs in memory; and retrieval
// quality on the set in bench/data (real MCP tools, hand-written tasks): the baseline (plain BM25 over
// name + description) against the tool index, lexical, and fused with embeddings where an endpoint
// is configured (MCPGATE_EMBEDDINGS_URL, …/v1, as the gateway reads it); what one search answer costs
// in tokens, full format against compact (search-tokens.ts). tools/list tokens are characters / 4.

import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Mcpgate, type McpgateOptions } from '../src/mcpgate.js';
import { silentLogger } from '../src/observability/logger.js';
import { partsToText } from '../src/wire/encoded.js';
import {
  ToolIndex,
  DEFAULT_WEIGHTS,
  DEFAULT_K1,
  DEFAULT_B,
  DEFAULT_SYNONYM_WEIGHT,
  DEFAULT_COORD,
  DEFAULT_ACTION_BONUS,
  type SearchHit,
} from '../src/search/tool-index.js';
import { fuse } from '../src/search/fuse.js';
import { realDocs, realisticDocs } from './search-docs.js';
import {
  indexOf,
  loadSet,
  measure,
  objective,
  PlainBm25,
  SETS,
  tune,
  type Quality,
  type Query,
  type RetrievalSet,
} from './search-quality.js';
import { MAX_TASK_CHARS, searchTask } from '../src/search/task-search.js';
import { agentIdentity } from '../src/gateway/session/agent-identity.js';
import { benchAnswerTokens } from './search-tokens.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVER = join(ROOT, 'dist/bench/many-tools-server.js');

type Print = (line: string) => void;
const tokens = (text: string): number => Math.ceil(text.length / 4);

/** tools/list as an agent of the given mode gets it from the real gateway over 10 × 500 realistic tools. */
async function listThroughGateway(
  mode: string,
  servers: number,
  toolsEach: number,
): Promise<{ text: string; tools: string[]; searchResult?: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-search-'));
  const configFile = join(dir, '.mcp.json');
  const mcpServers: Record<string, unknown> = {};
  for (let i = 0; i < servers; i++)
    mcpServers[`s${String(i).padStart(2, '0')}`] = { command: process.execPath, args: [SERVER, String(toolsEach), 'realistic'] };
  await writeFile(configFile, JSON.stringify({ mcpServers }));
  // The mode is passed as data: a build whose gateway has no search mode ignores it, and the list
  // then shows no search_tools (reported as such below).
  const gate = await Mcpgate.create({
    configFile,
    log: silentLogger,
    agent: 'bench',
    startupTimeoutMs: 120_000,
    pins: { mode: 'tofu', dir: join(dir, 'pins') },
    mode: mode as unknown as McpgateOptions['mode'],
  });
  try {
    await gate.gateway.start();
    const waiting = new Map<number, (line: string) => void>();
    const session = gate.gateway.openSession(
      {
        sendParts(parts) {
          this.send(partsToText(parts));
          return true;
        },
        send(line) {
          const id = /^\{"jsonrpc":"2\.0","id":(\d+)/.exec(line.slice(0, 40))?.[1];
          if (id !== undefined) {
            waiting.get(Number(id))?.(line);
            waiting.delete(Number(id));
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
    const line = await request('tools/list');
    const result = (JSON.parse(line) as { result: { tools: { name: string }[] } }).result;
    const text = JSON.stringify(result);
    let searchResult: string | undefined;
    if (result.tools.some((t) => t.name === 'search_tools')) {
      const answer = await request('tools/call', { name: 'search_tools', arguments: { query: 'close a pull request', limit: 5 } });
      searchResult = JSON.stringify((JSON.parse(answer) as { result: unknown }).result);
    }
    session.close();
    return { text, tools: result.tools.map((t) => t.name), searchResult };
  } finally {
    await gate.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function benchTokens(print: Print): Promise<void> {
  print('\nsearch: tools/list of 10 servers × 500 realistic tools through the gateway (tokens = characters / 4)');
  const aggregate = await listThroughGateway('aggregate', 10, 500);
  print(
    `  aggregate mode: ${aggregate.tools.length} tools, ${(aggregate.text.length / 1e6).toFixed(2)} MB, ≈ ${tokens(aggregate.text).toLocaleString('en')} tokens`,
  );
  const search = await listThroughGateway('search', 10, 500);
  if (!search.tools.includes('search_tools')) {
    print(
      `  search mode: not measured — this build's gateway has no search mode (its list had ${search.tools.length} tools and no search_tools)`,
    );
    return;
  }
  print(
    `  search mode:    ${search.tools.length} tool(s) (${search.tools.join(', ')}), ${search.text.length.toLocaleString('en')} bytes, ≈ ${tokens(search.text).toLocaleString('en')} tokens ` +
      `(${(tokens(aggregate.text) / tokens(search.text)).toFixed(0)}× fewer); one search_tools result (limit 5, compact): ≈ ${tokens(search.searchResult ?? '').toLocaleString('en')} tokens`,
  );
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

/** The index's memory, measured in a child process (search-index-memory.ts). */
function indexMemory(kind: 'realistic' | 'real'): { tools: number; heapMiB: number; rssMiB: number } {
  const out = execFileSync(process.execPath, ['--expose-gc', join(ROOT, 'dist/bench/search-index-memory.js'), kind], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return JSON.parse(out) as { tools: number; heapMiB: number; rssMiB: number };
}

/** Wall and CPU milliseconds of each call of `run` over `inputs`, `rounds` times, after a warm-up. */
function timed(inputs: readonly string[], rounds: number, run: (input: string) => unknown): { wall: number[]; cpu: number[] } {
  for (let i = 0; i < 200; i++) run(inputs[i % inputs.length]!);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const input of inputs) {
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      run(input);
      wall.push(performance.now() - start);
      const used = process.cpuUsage(cpuStart);
      cpu.push((used.user + used.system) / 1000);
    }
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { wall, cpu };
}

const us = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;
function latencyLine(what: string, { wall, cpu }: { wall: number[]; cpu: number[] }): string {
  const p99 = percentile(wall, 0.99);
  return (
    `    ${what} (${wall.length} calls): median ${us(percentile(wall, 0.5))}, p95 ${us(percentile(wall, 0.95))}, p99 ${us(p99)} ` +
    `(target p99 ≤ 2 ms: ${p99 <= 2 ? 'met' : 'not met'}); CPU median ${us(percentile(cpu, 0.5))}, p99 ${us(percentile(cpu, 0.99))}`
  );
}

/**
 * The longest task the search reads (MAX_TASK_CHARS characters): published tasks and their
 * annotated steps one after another, as an agent pasting a page of context writes, cut to the bound.
 */
function longestTask(published: RetrievalSet): string {
  let text = '';
  for (let i = 0; text.length < MAX_TASK_CHARS; i++) {
    const q = published.queries[i % published.queries.length]! as Query & { steps?: string };
    text += `${q.query}\n${q.steps ?? ''}\n`;
  }
  return text.slice(0, MAX_TASK_CHARS);
}

function benchLatency(set: RetrievalSet, published: RetrievalSet, print: Print): void {
  const queries = set.queries.map((q) => q.query);
  const tasks = published.queries.map((q) => q.query);
  const longest = longestTask(published);
  for (const [label, docs, kind] of [
    ['10 × 500 realistic tools', realisticDocs(10, 500), 'realistic'],
    ['the real set repeated to 5,000 tools', realDocs(set, 5000), 'real'],
  ] as const) {
    const memory = indexMemory(kind);
    const built = performance.now();
    const index = new ToolIndex();
    for (const doc of docs) index.upsert(doc);
    const buildMs = performance.now() - built;
    const upsertStart = performance.now();
    for (let i = 0; i < 500; i++) index.upsert(docs[i]!);
    const upsertUs = ((performance.now() - upsertStart) / 500) * 1000;
    print(
      `  ${label}: index built in ${buildMs.toFixed(0)} ms, re-upsert ${upsertUs.toFixed(0)} µs a tool; in a process of its own the index of ${memory.tools} tools costs ` +
        `${memory.heapMiB.toFixed(1)} MiB of heap and ${memory.rssMiB.toFixed(1)} MiB of RSS (the tools' definitions, which the gateway holds anyway, not counted); limit 5:`,
    );
    print(
      latencyLine(
        `search, the own set's ${queries.length} queries × 10`,
        timed(queries, 10, (q) => index.search(q, 5)),
      ),
    );
    print(
      latencyLine(
        `searchTask, the own set's ${queries.length} queries × 10`,
        timed(queries, 10, (q) => searchTask(index, q, 5)),
      ),
    );
    print(
      latencyLine(
        `searchTask, LiveMCPBench's ${tasks.length} tasks × 10`,
        timed(tasks, 10, (q) => searchTask(index, q, 5)),
      ),
    );
    print(
      latencyLine(
        `searchTask, the longest task read (${longest.length.toLocaleString('en')} characters) × 200`,
        timed([longest], 200, (q) => searchTask(index, q, 5)),
      ),
    );
    print(
      latencyLine(
        `search, the same ${longest.length.toLocaleString('en')} characters × 200`,
        timed([longest], 200, (q) => index.search(q, 5)),
      ),
    );
  }
}

const pct = (x: number): string => x.toFixed(3);
function row(label: string, q: Quality): string {
  return `  ${label.padEnd(34)} R@1 ${pct(q.recall1)}  R@5 ${pct(q.recall5)}  R@10 ${pct(q.recall10)}  nDCG@5 ${pct(q.ndcg5)}  MRR ${pct(q.mrr)}`;
}

/** An OpenAI-compatible /v1/embeddings endpoint: texts → unit vectors, in batches. */
async function embed(base: string, model: string, texts: readonly string[]): Promise<Float64Array[]> {
  // As the gateway reads MCPGATE_EMBEDDINGS_URL: a base (…/v1) gets /embeddings appended.
  const url = new URL(base);
  if (!url.pathname.endsWith('/embeddings')) url.pathname = `${url.pathname.replace(/\/$/, '')}/embeddings`;
  const out: Float64Array[] = [];
  for (let i = 0; i < texts.length; i += 64) {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(process.env.MCPGATE_EMBEDDINGS_API_KEY ? { authorization: `Bearer ${process.env.MCPGATE_EMBEDDINGS_API_KEY}` } : {}),
      },
      body: JSON.stringify({ model, input: texts.slice(i, i + 64) }),
      signal: AbortSignal.timeout(60_000),
    });
    if (!response.ok) throw new Error(`embeddings endpoint answered ${response.status}`);
    const body = (await response.json()) as { data: { embedding: number[]; index: number }[] };
    for (const item of [...body.data].sort((a, b) => a.index - b.index)) {
      const v = Float64Array.from(item.embedding);
      const norm = Math.hypot(...v) || 1;
      out.push(v.map((x) => x / norm));
    }
  }
  return out;
}

async function hybrid(set: RetrievalSet, test: readonly Query[], lexical: ToolIndex, print: Print): Promise<void> {
  const url = process.env.MCPGATE_EMBEDDINGS_URL;
  if (url === undefined || url === '') {
    print(
      '  hybrid (lexical + embeddings):   not measured — no embedding model is reachable here (set MCPGATE_EMBEDDINGS_URL to an OpenAI-compatible endpoint (its …/v1), MCPGATE_EMBEDDINGS_MODEL, MCPGATE_EMBEDDINGS_API_KEY)',
    );
    return;
  }
  const model = process.env.MCPGATE_EMBEDDINGS_MODEL ?? 'text-embedding-3-small';
  let toolVectors: Float64Array[];
  let queryVectors: Float64Array[];
  try {
    toolVectors = await embed(
      url,
      model,
      set.docs.map((d) => `${d.name}\n${d.title ?? ''}\n${d.description ?? ''}`.slice(0, 4000)),
    );
    queryVectors = await embed(
      url,
      model,
      test.map((q) => q.query),
    );
  } catch (error) {
    print(
      `  hybrid (lexical + embeddings):   not measured — the embeddings endpoint failed: ${error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error)}`,
    );
    return;
  }
  const vectorRank = (qi: number): SearchHit[] => {
    const q = queryVectors[qi]!;
    return set.docs
      .map((d, i) => ({ key: d.key, score: toolVectors[i]!.reduce((s, x, j) => s + x * q[j]!, 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 50);
  };
  const byQuery = new Map(test.map((q, i) => [q.query, i]));
  print(
    row(
      `vector only (${model})`,
      measure(test, (query) => vectorRank(byQuery.get(query)!)),
    ),
  );
  print(
    row(
      'hybrid (RRF of lexical + vector)',
      measure(test, (query) => fuse(lexical.search(query, 50), vectorRank(byQuery.get(query)!), { limit: 10 })),
    ),
  );
}

/** The measures of the queries that need more than one tool (a multi-step task, or one action offered twice). */
const several = (queries: readonly Query[]): Query[] => queries.filter((q) => q.relevant.length > 1);

async function benchQuality(name: string, set: RetrievalSet, print: Print): Promise<void> {
  const tuneSet = set.queries.filter((q) => q.split === 'tune');
  const test = set.queries.filter((q) => q.split === 'test');
  print(
    `\nsearch: retrieval quality on ${name} — ${set.docs.length} tools of ${set.servers.length} MCP servers, ${set.queries.length} queries (bench/data${name === 'own' ? '' : `/${name}`}/README.md)`,
  );
  const baseline = new PlainBm25(set.docs);
  const baselineAll = new PlainBm25(set.docs, 'all');
  const lexical = indexOf(set.docs);
  for (const [label, queries] of [
    [`held-out test split (${test.length} queries)`, test],
    [`held-out, needing more than one tool (${several(test).length} queries)`, several(test)],
    [`tuning split (${tuneSet.length} queries)`, tuneSet],
  ] as const) {
    if (queries.length === 0) continue;
    print(` ${label}:`);
    const base = measure(queries, (query) => baseline.search(query, 10));
    const baseAll = measure(queries, (query) => baselineAll.search(query, 10));
    const ours = measure(queries, (query) => lexical.search(query, 10));
    const task = measure(queries, (query) => searchTask(lexical, query, 10));
    print(row('baseline: BM25, name + desc.', base));
    print(row('baseline: BM25, every field', baseAll));
    print(row('tool index, one search', ours));
    print(row('tool index, searchTask', task));
    const strongest = Math.max(base.recall5, baseAll.recall5);
    print(
      `  searchTask ÷ the stronger baseline: Recall@5 ${(task.recall5 / strongest).toFixed(2)}× (target ≥ 1.25×: ${task.recall5 / strongest >= 1.25 ? 'met' : 'not met'}), ` +
        `MRR ${(task.mrr / Math.max(base.mrr, baseAll.mrr)).toFixed(2)}×, nDCG@5 ${(task.ndcg5 / Math.max(base.ndcg5, baseAll.ndcg5)).toFixed(2)}×`,
    );
    if (queries === test && name === 'own') await hybrid(set, test, lexical, print);
  }
  // What each part adds, on the tuning split: its weight set to 0, the rest at the defaults.
  const tuneQuality = (options: ConstructorParameters<typeof ToolIndex>[0]): Quality => {
    const index = indexOf(set.docs, options);
    return measure(tuneSet, (query) => searchTask(index, query, 10));
  };
  const full = objective(tuneQuality({}));
  const parts = Object.keys(DEFAULT_WEIGHTS).map(
    (field) => `${field} ${(objective(tuneQuality({ weights: { [field]: 0 } })) - full).toFixed(3)}`,
  );
  parts.push(`synonyms ${(objective(tuneQuality({ synonymWeight: 0 })) - full).toFixed(3)}`);
  parts.push(`action bonus ${(objective(tuneQuality({ actionBonus: 0 })) - full).toFixed(3)}`);
  print(
    ` tuning split, the objective (mean of R@5, nDCG@5, MRR) ${full.toFixed(3)} with the defaults; without each part: ${parts.join(', ')}`,
  );
}

function benchTuning(sets: readonly RetrievalSet[], print: Print): void {
  const tuned = tune(sets, {
    weights: { ...DEFAULT_WEIGHTS },
    k1: DEFAULT_K1,
    b: DEFAULT_B,
    synonymWeight: DEFAULT_SYNONYM_WEIGHT,
    coord: DEFAULT_COORD,
    actionBonus: DEFAULT_ACTION_BONUS,
  });
  print(
    tuned.steps.length === 0
      ? `\nsearch: coordinate ascent from the defaults on both sets' tuning splits finds no better setting (objective ${tuned.objective.toFixed(3)}): the defaults are its optimum`
      : `\nsearch: coordinate ascent from the defaults on both sets' tuning splits moves: ${tuned.steps.join('; ')} (objective ${tuned.objective.toFixed(3)})`,
  );
}

export async function benchSearch(print: Print): Promise<void> {
  const set = loadSet(SETS.own);
  const published = loadSet(SETS.livemcpbench);
  await benchQuality('own', set, print);
  await benchQuality('livemcpbench', published, print);
  if (process.env.MCPGATE_BENCH_TUNE !== '0') benchTuning([set, published], print);
  await benchAnswerTokens(
    [
      ['own', set],
      ['livemcpbench', published],
    ],
    print,
  );
  print('\nsearch: latency and memory of the tool index over 5,000 tools');
  benchLatency(set, published, print);
  await benchTokens(print);
}
