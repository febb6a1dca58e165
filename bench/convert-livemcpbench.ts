// Converts LiveMCPBench (github.com/icip-cas/LiveMCPBench, Apache-2.0) into the retrieval set format of
// bench/data: its tool set (tools/LiveMCPTool/tools.json: the tools/list of 70 MCP servers) and its
// 95 tasks (annotated_data/all_annotations.json), each labelled by its annotators with the tools it
// needs. Run on a git snapshot of that repository:
//   node dist/bench/convert-livemcpbench.js /path/to/LiveMCPBench.git [commit]
// It writes bench/data/livemcpbench/{mcp-tools.json,queries.json}. The split into tuning and held-out
// halves is made here, once, by position in the published file, before any ranker reads the set.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const OUT = fileURLToPath(new URL('../../bench/data/livemcpbench/', import.meta.url));

interface SourceTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
}
interface SourceServer {
  name: string;
  web?: string;
  category?: string;
  tools: Record<string, { server_name?: string; version?: string; tools: SourceTool[] }>;
}
interface SourceTask {
  task_id: string;
  Question: string;
  category: string;
  'Annotator Metadata': { Steps: string; Tools: string };
}

const [repo, commit = 'HEAD'] = process.argv.slice(2);
if (repo === undefined) throw new Error('usage: convert-livemcpbench.js <LiveMCPBench git dir> [commit]');
const show = (path: string): string =>
  execFileSync('git', ['--git-dir', repo, 'show', `${commit}:${path}`], { encoding: 'utf8', maxBuffer: 64 << 20 });
const resolved = execFileSync('git', ['--git-dir', repo, 'rev-parse', commit], { encoding: 'utf8' }).trim();

const source = JSON.parse(show('tools/LiveMCPTool/tools.json')) as SourceServer[];
const servers: { server: string; package: string; category?: string; tools: SourceTool[] }[] = [];
const byName = new Map<string, string[]>();
for (const s of source) {
  for (const [key, listed] of Object.entries(s.tools)) {
    const tools = listed.tools.map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema }));
    servers.push({ server: key, package: s.web ?? s.name, category: s.category, tools });
    for (const t of tools) byName.set(t.name, [...(byName.get(t.name) ?? []), `${key}/${t.name}`]);
  }
}

// The annotators name tools without their server ("1. get-weread-rank\n2. …"); a name that several
// servers list labels every one of them (the same action offered twice); a name no server lists is
// dropped (five of the 256, misspelt or of a server left out of the published tool set).
const tasks = JSON.parse(show('annotated_data/all_annotations.json')) as SourceTask[];
const queries: { id: string; split: 'tune' | 'test'; category: string; query: string; relevant: string[]; steps: string }[] = [];
const unknown: string[] = [];
tasks.forEach((task, i) => {
  const names = task['Annotator Metadata'].Tools.split('\n')
    .map((line) => line.replace(/^\s*\d+[.)]\s*/, '').trim())
    .filter((line) => line.length > 0);
  const relevant = new Set<string>();
  for (const name of names) {
    const keys = byName.get(name);
    if (keys === undefined) unknown.push(`${task.task_id}: ${name}`);
    else for (const key of keys) relevant.add(key);
  }
  if (relevant.size === 0) return;
  queries.push({
    id: task.task_id,
    // Alternating by position in the published file: tune the 1st, 3rd, …; hold out the 2nd, 4th, ….
    split: i % 2 === 0 ? 'tune' : 'test',
    category: task.category,
    query: task.Question,
    relevant: [...relevant],
    steps: task['Annotator Metadata'].Steps,
  });
});

writeFileSync(
  `${OUT}mcp-tools.json`,
  `${JSON.stringify(
    {
      about: `LiveMCPBench's tool set (LiveMCPTool), converted by bench/convert-livemcpbench.ts from github.com/icip-cas/LiveMCPBench at ${resolved}, tools/LiveMCPTool/tools.json. Apache-2.0 (LICENSE beside this file).`,
      servers: servers.map((s) => ({ ...s, version: '', license: 'see README' })),
    },
    null,
    1,
  )}\n`,
);
writeFileSync(
  `${OUT}queries.json`,
  `${JSON.stringify(
    {
      about: `LiveMCPBench's tasks, converted by bench/convert-livemcpbench.ts from github.com/icip-cas/LiveMCPBench at ${resolved}, annotated_data/all_annotations.json: the task's Question as the query, the annotators' tools as the relevant set. split: alternating by position, tune (1st, 3rd, …), test (2nd, 4th, …), made before any ranker read the set.`,
      unknown,
      queries,
    },
    null,
    1,
  )}\n`,
);
console.log(
  `${servers.length} servers, ${[...byName.values()].flat().length} tools, ${queries.length} queries; labels naming no tool: ${unknown.length}`,
);
