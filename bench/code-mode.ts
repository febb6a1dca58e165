// Benchmark: code mode against the full catalog and search mode (`npm run bench -- code-mode`), no
// LLM: fixed tasks, each done three ways through the real gateway, over stdio and over Streamable
// HTTP, by the official SDK client, behind two catalogs:
//   - lab: two servers of the bench's own (bench/code-mode-server.ts, `lab` and `crm`, 12 tools), so
//     small that code mode embeds their declarations in run_code's description;
//   - reference: the same two beside the three official reference servers (memory, filesystem,
//     everything: 51 tools), the size of catalog an agent behind a gateway sees, where code mode
//     lists its three tools alone and the agent asks describe_tools for what it will call; one more
//     task runs on the memory server itself.
// The agents:
//   - full: the agent is listed the whole catalog (aggregate mode) and makes the calls one by one,
//     reading every result, as a model calling tools turn by turn would;
//   - search: the agent is listed search_tools, searches for the tools a task needs, reads the
//     definitions found, and makes the same calls;
//   - code: the agent is listed code mode's tools; where the declarations are not embedded it searches
//     as the search agent does and describes the tools the task uses; then it sends one program,
//     reading only what it returns.
// Per task and agent: tokens read (the tools/list, search answers, found definitions or declarations,
// every result's content; characters ÷ 4, as every figure of bench/RESULTS.md), tokens written (each
// call's name and arguments, or the program), round trips (one per call, search or describe, one per
// program; those before the task's first call are discovery), the task's tool wall time (p50/p95
// over its runs) and the gateway process's CPU per run (all its threads: the sandbox workers
// included; the servers are separate processes). Every way must reach the same answer.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { processCpu } from './proc.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const SERVER = join(ROOT, 'dist/bench/code-mode-server.js');
const RUNS = 5;
const SLOW_RUNS = 3;

type Print = (line: string) => void;
type Agent = 'full' | 'search' | 'code';
type Transport = 'stdio' | 'http';
type CatalogName = 'lab' | 'reference';
type Call = (name: string, args: Record<string, unknown>) => Promise<ToolResult>;

interface ToolResult {
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

interface Task {
  name: string;
  /** What the agent searches for in search mode, one query per tool it needs. */
  queries: string[];
  /** The tools the task calls, by public name: what the code agent describes when they are not embedded. */
  tools: string[];
  /** Only behind the reference catalog (its server is one of the reference servers). */
  reference?: true;
  /** The task as separate calls, each result read by the agent; answers what the program returns. */
  direct(call: Call): Promise<unknown>;
  /** The same task as one program. */
  program: string;
  slow?: boolean;
}

const sc = <T>(r: ToolResult): T => r.structuredContent as T;
const textOf = (r: ToolResult): string => r.content?.[0]?.text ?? '';
const path = (i: number): string => `docs/module-${String(i).padStart(3, '0')}.md`;

/** The memory task's graph: 30 people, who reports to whom (25) and who works with whom (29), as the program builds it. */
function people(): {
  entities: { name: string; entityType: string; observations: string[] }[];
  relations: { from: string; to: string; relationType: string }[];
} {
  const name = (i: number): string => `person-${String(i).padStart(2, '0')}`;
  const entities = Array.from({ length: 30 }, (_, k) => ({
    name: name(k + 1),
    entityType: 'person',
    observations: [`works in team ${(k + 1) % 4}`, `joined in ${2015 + ((k + 1) % 9)}`],
  }));
  const relations = [];
  for (let i = 6; i <= 30; i += 1) relations.push({ from: name(i), to: name(((i * 7) % 5) + 1), relationType: 'reports_to' });
  for (let i = 1; i < 30; i += 1) relations.push({ from: name(i), to: name(i + 1), relationType: 'works_with' });
  return { entities, relations };
}

const TASKS: Task[] = [
  {
    name: 'report over 120 files',
    queries: ['list files in the repository', 'read a file'],
    tools: ['lab__list_files', 'lab__read_file'],
    async direct(call) {
      const { files } = sc<{ files: { path: string }[] }>(await call('lab__list_files', {}));
      const counts = [];
      for (const f of files) {
        const text = textOf(await call('lab__read_file', { path: f.path }));
        counts.push({ path: f.path, todos: text.split('\n').filter((l) => l.includes('TODO')).length });
      }
      counts.sort((a, b) => b.todos - a.todos || (a.path < b.path ? -1 : 1));
      return counts.slice(0, 5);
    },
    program: `const { files } = (await tools.lab.list_files({})).structuredContent;
const texts = await Promise.all(files.map((f) => tools.lab.read_file({ path: f.path })));
const counts = files.map((f, i) => ({ path: f.path, todos: texts[i].content[0].text.split('\\n').filter((l) => l.includes('TODO')).length }));
counts.sort((a, b) => b.todos - a.todos || (a.path < b.path ? -1 : 1));
return counts.slice(0, 5);`,
  },
  {
    name: 'build and query a graph (80 nodes)',
    queries: ['dependency graph nodes', 'dependencies of a node'],
    tools: ['lab__graph_nodes', 'lab__graph_edges'],
    async direct(call) {
      const { nodes } = sc<{ nodes: number[] }>(await call('lab__graph_nodes', {}));
      const inDegree = new Map<number, number>();
      for (const n of nodes)
        for (const m of sc<{ dependsOn: number[] }>(await call('lab__graph_edges', { node: n })).dependsOn)
          inDegree.set(m, (inDegree.get(m) ?? 0) + 1);
      return [...inDegree].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 3);
    },
    program: `const { nodes } = (await tools.lab.graph_nodes({})).structuredContent;
const edges = await Promise.all(nodes.map((node) => tools.lab.graph_edges({ node })));
const inDegree = new Map();
for (const e of edges) for (const m of e.structuredContent.dependsOn) inDegree.set(m, (inDegree.get(m) ?? 0) + 1);
return [...inDegree].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 3);`,
  },
  {
    name: 'five independent 1 s calls',
    queries: ['run a build step'],
    tools: ['lab__wait_build'],
    slow: true,
    async direct(call) {
      let ok = 0;
      for (let i = 0; i < 5; i += 1) if (sc<{ ok: boolean }>(await call('lab__wait_build', { step: `s${i}`, ms: 1000 })).ok) ok += 1;
      return ok;
    },
    program: `const done = await Promise.all([0, 1, 2, 3, 4].map((i) => tools.lab.wait_build({ step: 's' + i, ms: 1000 })));
return done.filter((r) => r.structuredContent.ok).length;`,
  },
  {
    name: 'CSV pipeline over 400 orders',
    queries: ['orders with region amount and status'],
    tools: ['crm__query_orders'],
    async direct(call) {
      const { orders } = sc<{ orders: { region: string; amount: number; status: string }[] }>(await call('crm__query_orders', {}));
      const sums: Record<string, number> = {};
      for (const o of orders) if (o.status === 'paid') sums[o.region] = (sums[o.region] ?? 0) + o.amount;
      return Object.fromEntries(Object.entries(sums).sort());
    },
    program: `const { orders } = (await tools.crm.query_orders({})).structuredContent;
const sums = {};
for (const o of orders) if (o.status === 'paid') sums[o.region] = (sums[o.region] ?? 0) + o.amount;
return Object.fromEntries(Object.entries(sums).sort());`,
  },
  {
    name: 'pagination over 500 items',
    queries: ['list catalog items'],
    tools: ['crm__list_items'],
    async direct(call) {
      let urgent = 0;
      let cursor: string | undefined;
      do {
        const page = sc<{ items: { tags: string[] }[]; nextCursor?: string }>(
          await call('crm__list_items', cursor === undefined ? {} : { cursor }),
        );
        urgent += page.items.filter((i) => i.tags.includes('urgent')).length;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return urgent;
    },
    program: `let urgent = 0, cursor;
do {
  const page = (await tools.crm.list_items(cursor === undefined ? {} : { cursor })).structuredContent;
  urgent += page.items.filter((i) => i.tags.includes('urgent')).length;
  cursor = page.nextCursor;
} while (cursor !== undefined);
return urgent;`,
  },
  {
    name: 'fan-out/fan-in over 20 accounts',
    queries: ['read a customer account'],
    tools: ['crm__get_account'],
    async direct(call) {
      let gold = 0;
      for (let id = 1; id <= 20; id += 1) {
        const a = sc<{ tier: string; balance: number }>(await call('crm__get_account', { id }));
        if (a.tier === 'gold') gold += a.balance;
      }
      return gold;
    },
    program: `const accounts = await Promise.all(Array.from({ length: 20 }, (_, i) => tools.crm.get_account({ id: i + 1 })));
return accounts.map((a) => a.structuredContent).filter((a) => a.tier === 'gold').reduce((n, a) => n + a.balance, 0);`,
  },
  {
    name: 'a branch on a result',
    queries: ['feature flag enabled', 'read a customer account'],
    tools: ['crm__check_flag', 'crm__get_account'],
    async direct(call) {
      const { enabled } = sc<{ enabled: boolean }>(await call('crm__check_flag', { name: 'new_pricing' }));
      return sc<{ balance: number }>(await call('crm__get_account', { id: enabled ? 7 : 8 })).balance;
    },
    program: `const { enabled } = (await tools.crm.check_flag({ name: 'new_pricing' })).structuredContent;
return (await tools.crm.get_account({ id: enabled ? 7 : 8 })).structuredContent.balance;`,
  },
  {
    name: 'an error mid-way, handled',
    queries: ['monthly report totals'],
    tools: ['crm__fetch_report'],
    async direct(call) {
      const failed: number[] = [];
      let revenue = 0;
      for (let month = 1; month <= 5; month += 1) {
        const r = await call('crm__fetch_report', { month });
        if (r.isError === true) failed.push(month);
        else revenue += sc<{ revenue: number }>(r).revenue;
      }
      return { revenue, failed };
    },
    program: `const failed = []; let revenue = 0;
for (let month = 1; month <= 5; month++) {
  try { revenue += (await tools.crm.fetch_report({ month })).structuredContent.revenue; }
  catch (e) { if (e.code === 'TOOL_ERROR') failed.push(month); else throw e; }
}
return { revenue, failed };`,
  },
  {
    name: 'a 300 KB image that must not enter context',
    queries: ['render the chart as an image'],
    tools: ['lab__render_chart'],
    async direct(call) {
      const image = (await call('lab__render_chart', {})).content![0]!;
      return { mimeType: image.mimeType, bytes: Buffer.from(image.data ?? '', 'base64').length };
    },
    program: `const image = (await tools.lab.render_chart({})).content[0];
return { mimeType: image.mimeType, bytes: image.bytes };`,
  },
  {
    name: 'a copy from one server to another',
    queries: ['read a file', 'save a record'],
    tools: ['lab__read_file', 'crm__save_record'],
    async direct(call) {
      const text = textOf(await call('lab__read_file', { path: path(4) }));
      return sc<{ bytes: number }>(await call('crm__save_record', { key: 'module-004', value: text })).bytes;
    },
    program: `const text = (await tools.lab.read_file({ path: '${path(4)}' })).content[0].text;
return (await tools.crm.save_record({ key: 'module-004', value: text })).structuredContent.bytes;`,
  },
  {
    name: 'a knowledge graph on the reference memory server (30 people)',
    reference: true,
    queries: [
      'create entities in the knowledge graph',
      'create relations between entities',
      'read the whole knowledge graph',
      'delete entities',
    ],
    tools: ['memory__create_entities', 'memory__create_relations', 'memory__read_graph', 'memory__delete_entities'],
    async direct(call) {
      const { entities, relations } = people();
      await call('memory__create_entities', { entities });
      await call('memory__create_relations', { relations });
      const graph = sc<{ relations: { to: string; relationType: string }[] }>(await call('memory__read_graph', {}));
      const reports = new Map<string, number>();
      for (const r of graph.relations) if (r.relationType === 'reports_to') reports.set(r.to, (reports.get(r.to) ?? 0) + 1);
      await call('memory__delete_entities', { entityNames: entities.map((e) => e.name) });
      return [...reports].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3);
    },
    program: `const name = (i) => 'person-' + String(i).padStart(2, '0');
const entities = Array.from({ length: 30 }, (_, k) => ({ name: name(k + 1), entityType: 'person', observations: ['works in team ' + ((k + 1) % 4), 'joined in ' + (2015 + ((k + 1) % 9))] }));
const relations = [];
for (let i = 6; i <= 30; i++) relations.push({ from: name(i), to: name(((i * 7) % 5) + 1), relationType: 'reports_to' });
for (let i = 1; i < 30; i++) relations.push({ from: name(i), to: name(i + 1), relationType: 'works_with' });
await tools.memory.create_entities({ entities });
await tools.memory.create_relations({ relations });
const graph = (await tools.memory.read_graph({})).structuredContent;
const reports = new Map();
for (const r of graph.relations) if (r.relationType === 'reports_to') reports.set(r.to, (reports.get(r.to) ?? 0) + 1);
await tools.memory.delete_entities({ entityNames: entities.map((e) => e.name) });
return [...reports].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3);`,
  },
];

const tokens = (chars: number): number => Math.ceil(chars / 4);
const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]!;

interface Measured {
  task: string;
  agent: Agent;
  read: number;
  written: number;
  roundTrips: number;
  /** Of the round trips, those before the task's first call: searches and describe_tools. */
  discovery: number;
  /** Tool wall time per run, ms, sorted. */
  wall: number[];
  /** The gateway's CPU per run, ms (median). */
  cpuMs: number | undefined;
  /** What the results of the task's calls (or the program's answer) cost the agent, tokens. */
  results: number;
}

export interface CodeModeBench {
  transport: Transport;
  catalog: CatalogName;
  /** Tools in the whole catalog (what the full agent is listed). */
  catalogTools: number;
  /** Whether code mode embedded the declarations in run_code's description. */
  embedded: boolean;
  rows: Measured[];
  /** code mode's tools/list without the embedded declarations, and as sent. */
  interfaceBare: number;
  interfaceSent: number;
  /** describe_tools' answer for one tool, tokens, per tool. */
  describe: number[];
}

interface Gateway {
  client: Client;
  pid: number;
  close(): Promise<void>;
}

const MEMORY = join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

async function files(catalog: CatalogName): Promise<{ dir: string; config: string; rules: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-code-'));
  const config = join(dir, '.mcp.json');
  const rules = join(dir, 'gateway-rules.json');
  const lab = {
    lab: { command: process.execPath, args: [SERVER, 'lab'] },
    crm: { command: process.execPath, args: [SERVER, 'crm'] },
  };
  const reference = {
    // The memory server keeps its graph in this file; every run of the memory task deletes what it made.
    memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } },
    files: { command: process.execPath, args: [FILESYSTEM, dir] },
    everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
  };
  const servers = catalog === 'lab' ? lab : { ...lab, ...reference };
  await writeFile(config, JSON.stringify({ mcpServers: servers }));
  await writeFile(
    rules,
    JSON.stringify({
      agents: {
        bench: {
          allow: { servers: Object.keys(servers) },
          code: {
            allow: {
              crm: ['save_record'],
              ...(catalog === 'reference' && { memory: ['create_entities', 'create_relations', 'delete_entities'] }),
            },
            limits: { innerCalls: 1000, callsInFlight: 16 },
          },
        },
      },
    }),
  );
  return { dir, config, rules };
}

async function startGateway(transport: Transport, mode: string, config: string, rules: string): Promise<Gateway> {
  const args = [CLI, 'serve', '--config', config, '--rules', rules, '--agent', 'bench', '--pins', 'off', '--mode', mode];
  const client = new Client({ name: 'bench-code-mode', version: '1.0.0' });
  if (transport === 'stdio') {
    const t = new StdioClientTransport({ command: process.execPath, args: [...args, '--log-level', 'warn'], stderr: 'ignore' });
    await client.connect(t);
    return { client, pid: t.pid!, close: () => client.close() };
  }
  const child: ChildProcess = spawn(process.execPath, [...args, '--http', '127.0.0.1:0', '--no-auth', '--log-level', 'info'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      text = (text + chunk).slice(-20_000);
      const m = /"msg":"mcpgate ready on (http:\/\/[^"\s]+\/mcp)/.exec(text);
      if (m !== null) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`mcpgate exited (${code}): ${text.slice(-2000)}`)));
  });
  child.stderr!.resume();
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    client,
    pid: child.pid!,
    close: async () => {
      await client.close();
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

const contentChars = (r: ToolResult): number => JSON.stringify(r.content ?? []).length;

/** One run of `task` by `agent`: what it read and wrote, its round trips and its answer. */
async function once(
  gw: Gateway,
  agent: Agent,
  task: Task,
  listChars: number,
  embedded: boolean,
): Promise<{
  read: number;
  written: number;
  roundTrips: number;
  discovery: number;
  ms: number;
  cpuMs: number | undefined;
  answer: unknown;
  results: number;
}> {
  const { client } = gw;
  let read = listChars;
  let written = 0;
  let roundTrips = 0;
  let results = 0;
  let discovery = 0;
  /** One search per query of the task, each answer read; the names found. */
  const searchFor = async (task: Task): Promise<Set<string>> => {
    const found = new Set<string>();
    for (const query of task.queries) {
      const hits = (await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })) as ToolResult;
      written += JSON.stringify({ name: 'search_tools', arguments: { query, limit: 3 } }).length;
      roundTrips += 1;
      discovery += 1;
      read += contentChars(hits);
      for (const t of (hits.structuredContent?.tools ?? []) as { name: string }[]) found.add(t.name);
    }
    return found;
  };
  const before = await processCpu(gw.pid);
  const started = performance.now();
  let answer: unknown;
  if (agent === 'code') {
    if (!embedded) {
      // The declarations are not in run_code's description: found and described first, as an agent would.
      await searchFor(task);
      const names = task.tools;
      const described = (await client.callTool({ name: 'describe_tools', arguments: { names } })) as ToolResult;
      if (described.isError === true) throw new Error(`${task.name}: describe_tools failed: ${textOf(described)}`);
      written += JSON.stringify({ name: 'describe_tools', arguments: { names } }).length;
      roundTrips += 1;
      discovery += 1;
      read += contentChars(described);
    }
    const result = (await client.callTool({ name: 'run_code', arguments: { code: task.program } }, { timeout: 120_000 })) as ToolResult;
    written += JSON.stringify({ name: 'run_code', arguments: { code: task.program } }).length;
    roundTrips += 1;
    read += contentChars(result);
    results += contentChars(result);
    if (result.isError === true) throw new Error(`${task.name}: the program failed: ${textOf(result)}`);
    answer = result.structuredContent?.value;
  } else {
    if (agent === 'search') {
      const found = await searchFor(task);
      // The definitions the searches added to the agent's list.
      const { tools } = await client.listTools();
      read += tools.filter((t) => found.has(t.name)).reduce((n, t) => n + JSON.stringify(t).length, 0);
    }
    answer = await task.direct(async (name, args) => {
      const result = (await client.callTool({ name, arguments: args }, { timeout: 120_000 })) as ToolResult;
      written += JSON.stringify({ name, arguments: args }).length;
      roundTrips += 1;
      const chars = contentChars(result);
      read += chars;
      results += chars;
      return result;
    });
  }
  const ms = performance.now() - started;
  const after = await processCpu(gw.pid);
  const cpuMs = before === undefined || after === undefined ? undefined : after.runMs - before.runMs;
  return { read: tokens(read), written: tokens(written), roundTrips, discovery, ms, cpuMs, answer, results: tokens(results) };
}

async function benchTransport(transport: Transport, catalog: CatalogName, print: Print): Promise<CodeModeBench> {
  const { dir, config, rules } = await files(catalog);
  const gateways = {} as Record<Agent, Gateway>;
  try {
    for (const [agent, mode] of [
      ['full', 'aggregate'],
      ['search', 'search'],
      ['code', 'code'],
    ] as const)
      gateways[agent] = await startGateway(transport, mode, config, rules);
    const lists = {} as Record<Agent, number>;
    for (const agent of ['full', 'search', 'code'] as const)
      lists[agent] = JSON.stringify((await gateways[agent].client.listTools()).tools).length;
    const codeTools = (await gateways.code.client.listTools()).tools;
    const bare = codeTools.map((t) => (t.name === 'run_code' ? { ...t, description: (t.description ?? '').split('\nTools:\n')[0] } : t));
    const embedded = codeTools.some((t) => t.name === 'run_code' && (t.description ?? '').includes('\nTools:\n'));
    const names = (await gateways.full.client.listTools()).tools.map((t) => t.name);
    const describe: number[] = [];
    for (const name of names) {
      const answer = (await gateways.code.client.callTool({ name: 'describe_tools', arguments: { names: [name] } })) as ToolResult;
      describe.push(tokens(contentChars(answer)));
    }
    const rows: Measured[] = [];
    for (const task of TASKS.filter((t) => t.reference !== true || catalog === 'reference')) {
      const runs = task.slow === true ? SLOW_RUNS : RUNS;
      const answers = new Map<Agent, string>();
      for (const agent of ['full', 'search', 'code'] as const) {
        // One unmeasured run first: the servers' and the sandbox's first-use costs are not the task's.
        await once(gateways[agent], agent, task, lists[agent], embedded);
        const wall: number[] = [];
        const cpu: number[] = [];
        let last: Awaited<ReturnType<typeof once>> | undefined;
        for (let i = 0; i < runs; i += 1) {
          last = await once(gateways[agent], agent, task, lists[agent], embedded);
          wall.push(last.ms);
          if (last.cpuMs !== undefined) cpu.push(last.cpuMs);
          answers.set(agent, JSON.stringify(last.answer));
        }
        wall.sort((a, b) => a - b);
        cpu.sort((a, b) => a - b);
        rows.push({
          task: task.name,
          agent,
          read: last!.read,
          written: last!.written,
          roundTrips: last!.roundTrips,
          discovery: last!.discovery,
          wall,
          cpuMs: cpu.length === 0 ? undefined : quantile(cpu, 0.5),
          results: last!.results,
        });
      }
      const distinct = new Set(answers.values());
      if (distinct.size !== 1)
        throw new Error(`${task.name}: the agents disagree: ${[...answers].map(([a, v]) => `${a} ${v}`).join('; ')}`);
      print(`  ${catalog} · ${transport} · ${task.name}: answer ${[...distinct][0]!.slice(0, 100)}`);
    }
    return {
      transport,
      catalog,
      catalogTools: names.length,
      embedded,
      rows,
      interfaceBare: tokens(JSON.stringify(bare).length),
      interfaceSent: tokens(lists.code),
      describe,
    };
  } finally {
    for (const gw of Object.values(gateways)) await gw.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchCodeMode(print: Print): Promise<CodeModeBench[]> {
  const results: CodeModeBench[] = [];
  for (const catalog of ['lab', 'reference'] as const)
    for (const transport of ['stdio', 'http'] as const) results.push(await benchTransport(transport, catalog, print));
  return results;
}

const pct = (part: number, whole: number): string => `${(100 * (1 - part / whole)).toFixed(0)} %`;
const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

export function printCodeMode(results: CodeModeBench[], print: Print): void {
  for (const r of results) {
    const declarations = r.embedded ? 'declarations embedded in run_code' : 'declarations from describe_tools';
    print(
      `\ncode mode over ${r.transport}, the ${r.catalog} catalog (${r.catalogTools} tools; ${declarations}; tokens = characters ÷ 4; wall = the task's tool time, p50/p95 over its runs)`,
    );
    print('| task | agent | tokens read | tokens written | round trips (discovery) | wall p50 / p95 ms | gateway CPU ms/run |');
    print('|---|---|---|---|---|---|---|');
    for (const row of r.rows)
      print(
        `| ${row.task} | ${row.agent} | ${row.read} | ${row.written} | ${row.roundTrips} (${row.discovery}) | ${ms(quantile(row.wall, 0.5))} / ${ms(quantile(row.wall, 0.95))} | ${row.cpuMs === undefined ? '–' : ms(row.cpuMs)} |`,
      );
    const sortedDescribe = [...r.describe].sort((a, b) => a - b);
    const describeMedian = quantile(sortedDescribe, 0.5);
    print(`\n  targets over ${r.transport}, the ${r.catalog} catalog:`);
    print(
      `  - interface ≤ 400 tokens: ${r.interfaceBare} tokens without the embedded declarations (${r.interfaceBare <= 400 ? 'met' : 'NOT met'}); ${r.interfaceSent} as sent with this ${r.catalogTools}-tool catalog${r.embedded ? "'s declarations" : ''}`,
    );
    print(
      `  - describe ≤ 100 tokens per tool (median): ${describeMedian} (${describeMedian <= 100 ? 'met' : 'NOT met'}; max ${sortedDescribe.at(-1)})`,
    );
    for (const task of TASKS.filter((t) => r.rows.some((row) => row.task === t.name))) {
      const of = (agent: Agent): Measured => r.rows.find((row) => row.task === task.name && row.agent === agent)!;
      const [full, search, code] = [of('full'), of('search'), of('code')];
      const big = full.results > 1000;
      const vsFull = 1 - code.read / full.read;
      const vsSearch = 1 - code.read / search.read;
      const met = !big || (vsFull >= 0.9 && vsSearch >= 0.5);
      print(
        `  - ${task.name}: code reads ${pct(code.read, full.read)} less than full, ${pct(code.read, search.read)} less than search` +
          ` (the results alone: ${code.results} tokens against ${full.results}, ${pct(code.results, full.results)} less)` +
          `${big ? ` (results ${full.results} tokens > 1k: ≥ 90 % / ≥ 50 % ${met ? 'met' : 'NOT met'})` : ` (results ${full.results} tokens ≤ 1k: no target)`}` +
          `; round trips after discovery ${full.roundTrips - full.discovery} → ${code.roundTrips - code.discovery}${code.roundTrips - code.discovery === 1 ? ' (met)' : ' (NOT met)'}` +
          `${task.slow === true ? `; five 1 s calls: code p50 ${ms(quantile(code.wall, 0.5))} ms vs full ${ms(quantile(full.wall, 0.5))} ms (≤ 1100 ms: ${quantile(code.wall, 0.5) <= 1100 ? 'met' : 'NOT met'})` : ''}`,
      );
    }
  }
}
