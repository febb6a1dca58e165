// One process of the cluster bench's load generator (bench/cluster.ts forks K of them): one load
// client in one process uses a whole core at ~14k calls/s and cannot show what N workers give. Each
// has its own sessions, each session its own keep-alive agent (as an agent process with one MCP
// session has its own connections: a connection pool shared by sessions that live on different
// workers would make the workers forward the calls that ride another session's connection), and
// takes orders over IPC:
//   {op: 'open', id, base, sessions}             → opens that many sessions on `base` (kept per base)
//   {op: 'drive', id, base, inflight, ms}         → calls with `inflight` loops over its sessions for `ms`
//   {op: 'close'}                                 → exits
// and answers {id, calls, cpuMs} (cpuMs: this process's CPU during a drive) or {id, error}.

import { Agent } from 'node:http';
import { callEcho, openSession } from './mcp-post.js';

interface Order {
  op: 'open' | 'drive' | 'close';
  id: number;
  base: string;
  sessions: number;
  inflight: number;
  ms: number;
}

interface Session {
  agent: Agent;
  id: string;
}
const sessions = new Map<string, Session[]>();

async function drive(base: string, inflight: number, ms: number): Promise<number> {
  const mine = sessions.get(base) ?? [];
  if (mine.length === 0) throw new Error(`no sessions open on ${base}`);
  const end = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: inflight }, async (_, loop) => {
      while (performance.now() < end) {
        const session = mine[loop % mine.length]!;
        await callEcho(session.agent, base, session.id);
        done++;
      }
    }),
  );
  return done;
}

process.on('message', (m: Order) => {
  if (m.op === 'close') {
    for (const list of sessions.values()) for (const s of list) s.agent.destroy();
    process.disconnect();
    return;
  }
  void (async () => {
    try {
      if (m.op === 'open') {
        const opened = await Promise.all(
          Array.from({ length: m.sessions }, async () => {
            const agent = new Agent({ keepAlive: true, maxSockets: 64 });
            return { agent, id: await openSession(agent, m.base) };
          }),
        );
        sessions.set(m.base, [...(sessions.get(m.base) ?? []), ...opened]);
        process.send!({ id: m.id, calls: 0, cpuMs: 0 });
        return;
      }
      const before = process.cpuUsage();
      const calls = await drive(m.base, m.inflight, m.ms);
      const used = process.cpuUsage(before);
      process.send!({ id: m.id, calls, cpuMs: (used.user + used.system) / 1000 });
    } catch (err) {
      process.send!({ id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  })();
});
