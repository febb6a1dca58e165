// Benchmark: mcpgate's memory over HTTP — RSS idle (servers up, no agent), then per agent session
// (initialized, one call made, session kept open), measured from /proc while N sessions are held.
// docs/architecture.md ("Performance") asks for "memory (RSS idle, per agent session)".

import { readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession, type McpSession } from './http-client.js';
import { mcpgate } from './http-targets.js';

export interface MemoryResult {
  idleMiB: number;
  sessions: number;
  withSessionsMiB: number;
  perSessionKiB: number;
}

/** Under the default cap of 100 sessions per agent (the bench's sessions are all agent "bench"). */
const SESSIONS = 90;

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kib) * 1024;
}

/** RSS once the heap has settled: the lowest of a few readings a short while apart. */
async function settledRss(pid: number): Promise<number> {
  let low = Infinity;
  for (let i = 0; i < 5; i++) {
    low = Math.min(low, await rssBytes(pid));
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return low;
}

export async function benchMemory(log: (line: string) => void = () => {}): Promise<MemoryResult> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-memory-'));
  const target = await mcpgate.start(dir);
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const sessions: McpSession[] = [];
  try {
    const idle = await settledRss(target.pid);
    for (let i = 0; i < SESSIONS; i++) {
      const session = await openSession(target.transport, target.url, agent, target.token);
      await session.call('tools/call', { name: target.tool, arguments: { text: 'hi' } });
      sessions.push(session);
    }
    const held = await settledRss(target.pid);
    const result = {
      idleMiB: idle / 2 ** 20,
      sessions: SESSIONS,
      withSessionsMiB: held / 2 ** 20,
      perSessionKiB: (held - idle) / SESSIONS / 1024,
    };
    log(
      `memory: mcpgate RSS ${result.idleMiB.toFixed(1)} MiB idle (one echo server), ${result.withSessionsMiB.toFixed(1)} MiB with ${SESSIONS} HTTP sessions open: ~${result.perSessionKiB.toFixed(1)} KiB per agent session`,
    );
    return result;
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    agent.destroy();
    await target.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
