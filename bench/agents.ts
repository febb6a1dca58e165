// Benchmark (not part of `npm test`): many HTTP agent sessions on one mcpgate.
//   node dist/bench/agents.js [--sessions 1000] [--seconds 30] [--minutes 10] [--batch 50]
// Phase 1: `--sessions` Streamable HTTP sessions opened and held, each calling `echo__echo` in a loop
// for `--seconds`: throughput, latency p50/p99, RSS idle and per session, errors (must be none).
// Phase 2: for `--minutes`, sessions opened (`--batch` at a time), one call each, and closed, over and
// over, RSS and open fds sampled every 5 s: the slope of RSS over time says whether sessions leak.
// The agents are bench/http-client.ts's lean client (node:http with a keep-alive pool of 256
// sockets, MCP spoken directly), not the SDK's: 1,000 SDK clients would measure the client.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamableSession } from './http-client.js';
import { ECHO, option, percentile, startGate } from './gate-process.js';
import { ProcessSamples, fdCount, rssMiB } from './process-samples.js';

const args = process.argv.slice(2);
const SESSIONS = option(args, 'sessions', 1000);
const SECONDS = option(args, 'seconds', 30);
const MINUTES = option(args, 'minutes', 10);
const BATCH = option(args, 'batch', 50);

async function settled(pid: number): Promise<number> {
  let low = Infinity;
  for (let i = 0; i < 5; i++) {
    low = Math.min(low, await rssMiB(pid));
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return low;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-agents-'));
  const config = join(dir, '.mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
  const limit = String(SESSIONS + 2 * BATCH + 10);
  const gate = await startGate(config, ['--max-sessions', limit, '--max-sessions-per-agent', limit]);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const errors = new Map<string, number>();
  const failed = (err: unknown): void => {
    const key = (err instanceof Error ? err.message : String(err)).replace(/\d+/g, 'N').slice(0, 160);
    errors.set(key, (errors.get(key) ?? 0) + 1);
  };
  const call = async (session: StreamableSession, latencies?: number[]): Promise<void> => {
    const start = performance.now();
    const result = (await session.call('tools/call', { name: 'echo__echo', arguments: { text: 'hi' } })) as {
      content?: { text?: string }[];
    };
    if (result.content?.[0]?.text !== 'hi') throw new Error(`a wrong echo: ${JSON.stringify(result).slice(0, 100)}`);
    latencies?.push(performance.now() - start);
  };
  try {
    console.log(
      `agents: mcpgate pid ${gate.pid}, ${SESSIONS} sessions, ${SECONDS} s of calls, then ${MINUTES} min of open/call/close in batches of ${BATCH}; load ${loadavg()[0]!.toFixed(1)}`,
    );
    const idle = await settled(gate.pid);
    const sessions: StreamableSession[] = [];
    const openStart = performance.now();
    while (sessions.length < SESSIONS) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(BATCH, SESSIONS - sessions.length) }, () => StreamableSession.open(gate.url, agent)),
      );
      sessions.push(...batch);
    }
    const openMs = performance.now() - openStart;
    const opened = await settled(gate.pid);
    console.log(
      `  opened ${SESSIONS} sessions in ${(openMs / 1000).toFixed(1)} s; RSS ${idle.toFixed(1)} MiB idle → ${opened.toFixed(1)} MiB: ${(((opened - idle) * 1024) / SESSIONS).toFixed(1)} KiB per session`,
    );

    // Phase 1: every session calls in a loop (at most 256 requests on the wire, the pool's sockets).
    const latencies: number[] = [];
    const until = performance.now() + SECONDS * 1000;
    const callStart = performance.now();
    await Promise.all(
      sessions.map(async (session) => {
        while (performance.now() < until) await call(session, latencies).catch(failed);
      }),
    );
    const callSeconds = (performance.now() - callStart) / 1000;
    const busy = await rssMiB(gate.pid);
    latencies.sort((a, b) => a - b);
    console.log(
      `  steady calls: ${latencies.length} in ${callSeconds.toFixed(1)} s = ${(latencies.length / callSeconds).toFixed(0)} calls/s; p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms; RSS ${busy.toFixed(1)} MiB; errors ${[...errors.values()].reduce((a, b) => a + b, 0)}`,
    );
    await Promise.all(sessions.map((session) => session.close()));
    const closed = await settled(gate.pid);
    console.log(`  all ${SESSIONS} closed: RSS ${closed.toFixed(1)} MiB, ${await fdCount(gate.pid)} fds`);

    // Phase 2: sessions opened and closed in a loop.
    const rss = new ProcessSamples(gate.pid);
    await rss.take();
    rss.every(5000);
    const loopUntil = performance.now() + MINUTES * 60_000;
    let cycles = 0;
    while (performance.now() < loopUntil) {
      const batch = await Promise.all(
        Array.from({ length: BATCH }, () => StreamableSession.open(gate.url, agent).catch((err: unknown) => void failed(err))),
      );
      const open = batch.filter((session) => session !== undefined);
      await Promise.all(open.map((session) => call(session).catch(failed)));
      await Promise.all(open.map((session) => session.close()));
      cycles += 1;
    }
    rss.stop();
    const after = await settled(gate.pid);
    const trend = rss.trend(MINUTES);
    console.log(
      `  open/call/close loop: ${cycles * BATCH} sessions in ${MINUTES} min; RSS ${rss.samples[0]?.y.toFixed(1)} → ${after.toFixed(1)} MiB, slope after warm-up ${trend.slope.toFixed(2)} MiB/min ` +
        `(min ${trend.min.toFixed(1)}, max ${trend.max.toFixed(1)}); fds ${trend.fds[0]} → ${trend.fds[trend.fds.length - 1]}`,
    );
    const total = [...errors.values()].reduce((a, b) => a + b, 0);
    console.log(
      `  errors: ${total}${total === 0 ? '' : ` ${JSON.stringify(Object.fromEntries(errors))}`}; gateway warnings/errors logged: ${gate.problems.length}`,
    );
    for (const line of gate.problems.slice(0, 5)) console.log(`    ${line}`);
    if (total > 0) process.exitCode = 1;
  } finally {
    agent.destroy();
    await gate.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
