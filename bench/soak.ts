// Benchmark (not part of `npm test`): a long run of mixed load on one mcpgate.
//   node dist/bench/soak.js [--minutes 30] [--agents 8]
// Four stdio servers (the echo fixture and three bench/many-tools-server.ts), `--agents` HTTP agent
// sessions (bench/http-client.ts's lean client) calling their tools in a loop, and meanwhile: every
// 10 s one many-tools server drops a tool (`bump`: list_changed, a refresh, a catalog change), every
// 20 s the config is rewritten with a spare server added or removed (a hot reload), every minute one
// server (in turn) is SIGKILLed. Checks: no error but the calls to a server killed in the last 15 s
// (their outcome is unknown; calls made while it restarts are counted apart); RSS flat (slope after
// the first minute); no fd growth (/proc/PID/fd). Exit code 1 if a check fails.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamableSession } from './http-client.js';
import { ECHO, MANY_TOOLS, option, percentile, startGate } from './gate-process.js';
import { ProcessSamples } from './process-samples.js';
import { tree } from './proc.js';

const args = process.argv.slice(2);
const MINUTES = option(args, 'minutes', 30);
const AGENTS = option(args, 'agents', 8);
const KILL_GRACE_MS = 15_000;

/** The servers: name → the arguments that start it (and find its process). */
const SERVERS: Record<string, string[]> = { echo: [ECHO], m1: [MANY_TOOLS, '20'], m2: [MANY_TOOLS, '21'], m3: [MANY_TOOLS, '22'] };
const CALLS: { server: string; name: string; arguments: Record<string, unknown> }[] = [
  { server: 'echo', name: 'echo__echo', arguments: { text: 'soak' } },
  { server: 'm1', name: 'm1__tool_01', arguments: { id: '1' } },
  { server: 'm2', name: 'm2__tool_01', arguments: { id: '2' } },
  { server: 'm3', name: 'm3__tool_01', arguments: { id: '3' } },
];

async function serverPid(gatePid: number, server: string): Promise<number | undefined> {
  const wanted = SERVERS[server]!.join('\u0000');
  for (const proc of (await tree(gatePid)) ?? []) {
    if (proc.pid === gatePid) continue;
    const cmdline = await readFile(`/proc/${proc.pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(wanted)) return proc.pid;
  }
  return undefined;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-soak-'));
  const config = join(dir, '.mcp.json');
  const writeConfig = (spare: boolean): Promise<void> => {
    const mcpServers: Record<string, unknown> = {};
    for (const [name, serverArgs] of Object.entries(SERVERS)) mcpServers[name] = { command: process.execPath, args: serverArgs };
    if (spare) mcpServers.spare = { command: process.execPath, args: [ECHO] };
    return writeFile(config, JSON.stringify({ mcpServers }));
  };
  await writeConfig(false);
  const gate = await startGate(config, ['--state', join(dir, 'state')]);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const killedAt = new Map<string, number>();
  const unknownOutcome = new Map<string, number>();
  const restarting = new Map<string, number>();
  const unexpected = new Map<string, number>();
  const count = (map: Map<string, number>, err: unknown): void => {
    const key = (err instanceof Error ? err.message : String(err)).replace(/\d+/g, 'N').slice(0, 200);
    map.set(key, (map.get(key) ?? 0) + 1);
  };
  const stats = { calls: 0, bumps: 0, reloads: 0, kills: 0, killMisses: 0 };
  const latencies: number[] = [];
  const rss = new ProcessSamples(gate.pid);
  const until = performance.now() + MINUTES * 60_000;
  const timers: NodeJS.Timeout[] = [];
  try {
    console.log(`soak: mcpgate pid ${gate.pid}, ${MINUTES} min, ${AGENTS} agents; load ${loadavg()[0]!.toFixed(1)}`);
    const sessions = await Promise.all(Array.from({ length: AGENTS }, () => StreamableSession.open(gate.url, agent)));
    const inGrace = (server: string): boolean => performance.now() - (killedAt.get(server) ?? -Infinity) < KILL_GRACE_MS;
    const callOnce = async (session: StreamableSession, index: number): Promise<void> => {
      const target = CALLS[index % CALLS.length]!;
      const t0 = performance.now();
      try {
        const result = (await session.call('tools/call', { name: target.name, arguments: target.arguments })) as {
          isError?: boolean;
          content?: { text?: string }[];
        };
        if (result.isError === true) throw new Error(`tool error: ${result.content?.[0]?.text ?? ''}`);
        stats.calls += 1;
        latencies.push(performance.now() - t0);
      } catch (err) {
        // A call to a server killed in the last moments: its outcome is unknown or the server is
        // restarting; anything else is a failure of the gateway.
        const message = err instanceof Error ? err.message : String(err);
        if (!inGrace(target.server) && (killedAt.get(target.server) ?? -Infinity) < t0) count(unexpected, err);
        else count(message.includes('outcome of the call is unknown') ? unknownOutcome : restarting, err);
      }
    };
    let bumpTurn = 0;
    let killTurn = 0;
    let spare = false;
    timers.push(
      setInterval(() => {
        const server = `m${(bumpTurn++ % 3) + 1}`;
        stats.bumps += 1;
        void sessions[0]!
          .call('tools/call', { name: `${server}__bump`, arguments: {} })
          .catch((err: unknown) => count(inGrace(server) ? restarting : unexpected, err));
      }, 10_000),
    );
    timers.push(
      setInterval(() => {
        spare = !spare;
        stats.reloads += 1;
        void writeConfig(spare);
      }, 20_000),
    );
    timers.push(
      setInterval(() => {
        const server = Object.keys(SERVERS)[killTurn++ % Object.keys(SERVERS).length]!;
        void serverPid(gate.pid, server).then((pid) => {
          if (pid === undefined) return void (stats.killMisses += 1);
          killedAt.set(server, performance.now());
          stats.kills += 1;
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            stats.killMisses += 1;
          }
        });
      }, 60_000),
    );
    await rss.take();
    rss.every(10_000);
    await Promise.all(
      sessions.map(async (session, i) => {
        for (let n = i; performance.now() < until; n++) await callOnce(session, n);
      }),
    );
    for (const timer of timers) clearInterval(timer);
    rss.stop();
    await rss.take();
    await Promise.all(sessions.map((session) => session.close()));

    const trend = rss.trend(MINUTES);
    const fds = trend.fds;
    latencies.sort((a, b) => a - b);
    const sum = (map: Map<string, number>): number => [...map.values()].reduce((a, b) => a + b, 0);
    const nUnexpected = sum(unexpected);
    console.log(
      `  ${stats.calls} calls ok (p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms), ${stats.bumps} list changes, ${stats.reloads} reloads, ${stats.kills} kills (${stats.killMisses} found no process)`,
    );
    console.log(
      `  calls in flight to a killed server (outcome unknown, allowed): ${sum(unknownOutcome)} ${JSON.stringify(Object.fromEntries(unknownOutcome))}`,
    );
    console.log(
      `  calls to a killed server while it restarts (within ${KILL_GRACE_MS / 1000} s): ${sum(restarting)} ${JSON.stringify(Object.fromEntries(restarting))}`,
    );
    console.log(`  other errors: ${nUnexpected} ${JSON.stringify(Object.fromEntries(unexpected))}`);
    console.log(
      `  RSS ${rss.samples[0]!.y.toFixed(1)} → ${rss.samples[rss.samples.length - 1]!.y.toFixed(1)} MiB, slope after the first minute ${trend.slope.toFixed(2)} MiB/min (min ${trend.min.toFixed(1)}, max ${trend.max.toFixed(1)})`,
    );
    console.log(
      `  fds ${fds[0]} → ${fds[fds.length - 1]} (min ${Math.min(...fds)}, max ${Math.max(...fds)}); load ${loadavg()[0]!.toFixed(1)}`,
    );
    console.log(`  gateway warnings/errors logged: ${gate.problems.length}`);
    for (const line of gate.problems.slice(0, 8)) console.log(`    ${line}`);
    if (nUnexpected > 0 || (fds.length > 0 && fds[fds.length - 1]! > fds[0]! + 4)) process.exitCode = 1;
  } finally {
    for (const timer of timers) clearInterval(timer);
    rss.stop();
    agent.destroy();
    await gate.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
