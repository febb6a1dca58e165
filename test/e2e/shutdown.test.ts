// Seed 000 (graceful shutdown) with real processes: whatever ends the gateway (stdin EOF, SIGTERM,
// SIGINT), every server it started is gone afterwards — polite ones by stdin EOF, stubborn ones by
// SIGTERM → SIGKILL to the whole process group (grandchildren of wrappers included) — and one server
// that cannot be closed normally (already dead, still initializing, ignoring signals) never holds up
// the others or the exit code.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  alive,
  fixtureServer,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayOptions,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

type Servers = Record<string, Record<string, unknown>>;

/** Every process we caused to exist (pid → its command line), killed in `after` if a test failed half-way. */
const started = new Map<number, string>();

function commandOf(pid: number): string | undefined {
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function track(pid: number): void {
  const command = commandOf(pid);
  if (command !== undefined) started.set(pid, command);
}

/** SIGKILLs `pid` if it still runs what we started (never a stranger that reused the pid). */
function killIfOurs(pid: number): void {
  if (!gone(pid) && started.has(pid) && commandOf(pid) === started.get(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * Dead for our purposes: no such process, or a zombie. (Orphans are reparented to init, and the init
 * of some containers never reaps them; a zombie runs no code and holds no pipe.)
 */
function gone(pid: number): boolean {
  if (!alive(pid)) return true;
  try {
    return execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' })
      .trim()
      .startsWith('Z');
  } catch {
    return true; // ps exits 1 when the pid vanished in between
  }
}

/** The pids of those of `pids` still running after up to `ms` (an empty array is the success case). */
async function survivors(pids: readonly number[], ms = 3000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let left = pids.filter((p) => !gone(p));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    left = left.filter((p) => !gone(p));
  }
  return left;
}

/** All live descendants of `root` (children, grandchildren…) but the watchdog, from one `ps` snapshot. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const row of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' }).trim().split('\n')) {
    const [pid, ppid, stat, ...args] = row.trim().split(/\s+/);
    if (stat?.startsWith('Z') === true) continue;
    if (args.some((a) => a.endsWith('watchdog-main.js'))) continue; // mcpgate's own helper, not a server
    const list = children.get(Number(ppid)) ?? [];
    list.push(Number(pid));
    children.set(Number(ppid), list);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

const readPid = (file: string): number => Number.parseInt(readFileSync(file, 'utf8'), 10);

interface Rig {
  dir: TempDir;
  gw: GatewayProcess;
  /** Every process under the gateway once its servers are up (not counting servers that never spawned). */
  pids: number[];
}

/** Starts a gateway over `servers(dir)`; with `readyLog`, waits for that server's ready line instead of an SDK client. */
async function rig(servers: (dir: TempDir) => Servers, options: Partial<GatewayOptions> & { readyLog?: string } = {}): Promise<Rig> {
  const dir = await tempDir();
  const config = await writeConfig(dir, servers(dir));
  const gw = await startGateway({ config, ...options, noClient: options.readyLog !== undefined });
  track(gw.pid);
  if (options.readyLog !== undefined)
    await gw.waitForLog((l) => l.msg === `server "${options.readyLog}" ready: 1 tools, 0 resources, 0 prompts`);
  const pids = descendants(gw.pid);
  for (const pid of pids) track(pid);
  return { dir, gw, pids };
}

async function teardown(r: Rig | undefined): Promise<void> {
  if (r === undefined) return;
  if (r.gw.child.exitCode === null && r.gw.child.signalCode === null) r.gw.child.kill('SIGKILL');
  for (const pid of r.pids) killIfOurs(pid);
  await r.dir.remove();
}

const logFor = (gw: GatewayProcess, server: string, msg: string): boolean => gw.logs.some((l) => l.server === server && l.msg === msg);
const dyn = (dir: TempDir, name: string): Record<string, unknown> =>
  fixtureServer('dynamic-server', ['--pidfile', dir.file(`${name}.pid`)]);

// The suite's budget is the sum of its tests' own (8 × 30 s) plus slack, not less: under load nearly all
// of a test's time is starting a gateway and its servers (3–7 s each at load 12, measured; 10–13 s in
// a full `npm test` at load 17, where two tests passed their former 15 s), and since
// the servers share mcpgate's scheduler autogroup (servers/transports/stdio/group-launch.ts) that start-up gets less of a busy CPU;
// the stops themselves took the same time with and without it (bench/RESULTS.md).
describe('graceful shutdown closes every server', { timeout: 270_000 }, () => {
  after(() => {
    for (const pid of started.keys()) killIfOurs(pid);
  });

  it('stdin EOF → exit 0 and every server gone, polite servers by stdin EOF alone', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await rig((dir) => ({ dyn: dyn(dir, 'dyn'), sink: fixtureServer('kitchen-sink-server'), echo: fixtureServer('echo-server') }));
      const { gw, dir, pids } = r;
      const sinkPid = Number(textOf(await gw.client.callTool({ name: 'sink__pid', arguments: {} })));
      assert.equal(pids.length, 3, `one process per server, got ${pids.join(',')}`);
      assert.ok(pids.includes(readPid(dir.file('dyn.pid'))) && pids.includes(sinkPid), pids.join(','));
      const t0 = Date.now();
      assert.deepEqual(await gw.stop(), { code: 0, signal: null });
      // Each of these exits at stdin EOF, so the 2 s grace before SIGTERM is never used up.
      assert.ok(Date.now() - t0 < 1900, `took ${Date.now() - t0} ms`);
      assert.deepEqual(await survivors(pids), []);
      assert.ok(
        !gw.logs.some((l) => l.msg === 'server did not exit after stdin closed; sending SIGTERM'),
        'no polite server was signalled',
      );
      assert.ok(gw.logs.some((l) => l.msg === 'shut down cleanly'));
    } finally {
      await teardown(r);
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the gateway → exit 0 and every server gone`, { timeout: 30_000 }, async () => {
      let r: Rig | undefined;
      try {
        r = await rig((dir) => ({ dyn: dyn(dir, 'dyn'), sink: fixtureServer('kitchen-sink-server') }));
        const { gw, pids } = r;
        assert.equal(pids.length, 2);
        gw.child.kill(signal);
        assert.deepEqual(await gw.exited, { code: 0, signal: null });
        assert.deepEqual(await survivors(pids), []);
        assert.ok(gw.logs.some((l) => l.msg === `shutting down (${signal})`));
        assert.ok(gw.logs.some((l) => l.msg === 'shut down cleanly'));
      } finally {
        await teardown(r);
      }
    });
  }

  it('a server ignoring stdin EOF and SIGTERM is SIGKILLed, others close at once, exit 0 in < 8 s', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await rig((dir) => ({ stubborn: fixtureServer('stubborn-server', ['--pidfile', dir.file('s.pid')]), dyn: dyn(dir, 'dyn') }));
      const { gw, dir } = r;
      const stubborn = readPid(dir.file('s.pid'));
      const polite = readPid(dir.file('dyn.pid'));
      const t0 = Date.now();
      const exit = gw.stop();
      // Connections close in parallel: the polite server is gone while the stubborn one still holds out.
      assert.deepEqual(await survivors([polite], 1500), []);
      assert.ok(!gone(stubborn), 'the stubborn server is still in its grace periods');
      assert.deepEqual(await exit, { code: 0, signal: null });
      const took = Date.now() - t0;
      assert.ok(took >= 3500 && took < 8000, `escalation took ${took} ms (expected ~4 s: 2 s after EOF, 2 s after SIGTERM)`);
      assert.deepEqual(await survivors([stubborn]), []);
      const steps = gw.logs
        .filter((l) => l.server === 'stubborn' && typeof l.msg === 'string' && l.msg.startsWith('server '))
        .map((l) => l.msg);
      assert.deepEqual(
        steps.filter((m) => /SIGTERM|SIGKILL/.test(m as string)),
        ['server did not exit after stdin closed; sending SIGTERM', 'server ignored SIGTERM; sending SIGKILL'],
      );
      assert.ok(!logFor(gw, 'dyn', 'server did not exit after stdin closed; sending SIGTERM'));
    } finally {
      await teardown(r);
    }
  });

  it('the grandchild of a wrapper (like npx → node) does not outlive the gateway', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await rig((dir) => ({ wrapped: fixtureServer('wrapper', ['--pidfile', dir.file('w.pid')]) }));
      const { gw, dir, pids } = r;
      const wrapper = readPid(dir.file('w.pid'));
      const grandchild = readPid(dir.file('w.pid.child'));
      assert.deepEqual(descendants(wrapper), [grandchild], "the server runs as the wrapper's child");
      assert.ok(pids.includes(grandchild));
      const t0 = Date.now();
      assert.deepEqual(await gw.stop(), { code: 0, signal: null });
      assert.ok(Date.now() - t0 < 8000, `took ${Date.now() - t0} ms`);
      assert.deepEqual(await survivors([wrapper, grandchild]), []);
      assert.ok(logFor(gw, 'wrapped', 'server ignored SIGTERM; sending SIGKILL'));
    } finally {
      await teardown(r);
    }
  });

  it('a server that already died does not stop the others from closing', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      // --retries 0: the dead server parks instead of being respawned, so it is still dead at shutdown.
      r = await rig((dir) => ({ dyn: dyn(dir, 'dyn'), crashy: dyn(dir, 'crashy'), sink: fixtureServer('kitchen-sink-server') }), {
        args: ['--retries', '0'],
      });
      const { gw, dir, pids } = r;
      const crashy = readPid(dir.file('crashy.pid'));
      process.kill(crashy, 'SIGKILL');
      await gw.waitForLog(
        (l) => l.server === 'crashy' && l.level === 'warn' && /^server "crashy": ready → parked: .*SIGKILL/.test(l.msg as string),
      );
      const { tools } = await gw.client.listTools();
      assert.ok(!tools.some((t) => t.name.startsWith('crashy__')), "a dead server's tools are withdrawn");
      assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'still here' } })), 'still here');
      assert.deepEqual(await gw.stop(), { code: 0, signal: null });
      assert.deepEqual(await survivors(pids), []);
      assert.ok(!gw.logs.some((l) => l.msg === 'a connection failed to close; continuing'));
      assert.ok(gw.logs.some((l) => l.msg === 'shut down cleanly'));
    } finally {
      await teardown(r);
    }
  });

  it('shutdown while a server is still initializing exits 0 at once, not after the startup timeout', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await rig((dir) => ({ dyn: dyn(dir, 'dyn'), hung: fixtureServer('hang-at-init') }), {
        args: ['--startup-timeout', '60000'],
        readyLog: 'dyn',
      });
      const { gw, pids } = r;
      assert.equal(pids.length, 2, 'the hung server was spawned too');
      assert.ok(!gw.logs.some((l) => l.server === 'hung' && l.level === 'warn'), 'still initializing when we stop');
      const t0 = Date.now();
      assert.deepEqual(await gw.stop(), { code: 0, signal: null });
      assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
      assert.deepEqual(await survivors(pids), []);
      assert.ok(gw.logs.some((l) => l.msg === 'shut down cleanly'));
    } finally {
      await teardown(r);
    }
  });

  it('a call in flight at SIGTERM gets an error answer instead of hanging', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await rig(() => ({ sink: fixtureServer('kitchen-sink-server') }));
      const { gw, pids } = r;
      const slow = gw.client.callTool({ name: 'sink__slow', arguments: { ms: 60_000 } }).then(
        () => assert.fail('the slow call should not succeed'),
        (err: unknown) => err as { code?: unknown; data?: { code?: unknown; server?: unknown } },
      );
      // Same pipe, same order: once this answer is back, the server is already working on the slow call.
      assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'x' } })), 'x');
      gw.child.kill('SIGTERM');
      const err = await slow;
      assert.equal(err.data?.code, 'MCPG_SHUTTING_DOWN', JSON.stringify(err));
      assert.deepEqual(await gw.exited, { code: 0, signal: null });
      assert.deepEqual(await survivors(pids), []);
    } finally {
      await teardown(r);
    }
  });
});
