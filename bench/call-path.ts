// `npm run bench -- call-path`: which of mcpgate's source files a tools/call over Streamable HTTP to
// a stdio server runs code in — the measure of how far a newcomer must read to follow one call. The
// gateway runs with a probe (call-path-probe.ts) that counts every function's calls; after a warm-up
// the counts are reset, N calls are made, and a function counts as on the path when it ran at least
// N times (once per call or more), which leaves out timers and start-up work.

import { Agent } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ECHO, startGate } from './gate-process.js';
import { callEcho, openSession } from './mcp-post.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PROBE = fileURLToPath(new URL('./call-path-probe.js', import.meta.url));
const WARM_UP = 300;
const CALLS = 50;

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { count: number }[] }[];
}

export interface CallPath {
  /** Source files (src/…ts) with the functions of each that ran at least once per call. */
  files: Map<string, string[]>;
  calls: number;
}

async function taken(path: string): Promise<ScriptCoverage[]> {
  for (let i = 0; i < 200; i++) {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as ScriptCoverage[];
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`the probe wrote no coverage to ${path}`);
}

export async function benchCallPath(): Promise<CallPath> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-call-path-'));
  const config = join(dir, '.mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
  const out = join(dir, 'coverage');
  process.env.MCPGATE_CALL_PATH_OUT = out;
  const gate = await startGate(config, [], ['--import', pathToFileURL(PROBE).href]).finally(() => delete process.env.MCPGATE_CALL_PATH_OUT);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const base = gate.url.origin;
    const session = await openSession(agent, base);
    for (let i = 0; i < WARM_UP; i++) await callEcho(agent, base, session);
    process.kill(gate.pid, 'SIGUSR2');
    await taken(`${out}.0`);
    for (let i = 0; i < CALLS; i++) await callEcho(agent, base, session);
    process.kill(gate.pid, 'SIGUSR2');
    const files = new Map<string, string[]>();
    for (const script of await taken(`${out}.1`)) {
      const ran = script.functions.filter((f) => f.functionName !== '' && (f.ranges[0]?.count ?? 0) >= CALLS).map((f) => f.functionName);
      if (ran.length === 0) continue;
      const js = relative(join(ROOT, 'dist'), fileURLToPath(script.url));
      files.set(js.replace(/\.js$/, '.ts'), [...new Set(ran)]);
    }
    return { files, calls: CALLS };
  } finally {
    agent.destroy();
    await gate.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function printCallPath(path: CallPath): void {
  const rooms = new Set([...path.files.keys()].map((file) => file.split('/').slice(0, -1).join('/')));
  console.log(
    `\nA tools/call over Streamable HTTP to a stdio server (${path.calls} calls after a warm-up): code runs in ${path.files.size} files of src/, in ${rooms.size} folders`,
  );
  for (const [file, functions] of [...path.files].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${file.padEnd(42)} ${functions.join(', ')}`);
  }
}
