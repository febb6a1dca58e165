// Servers that misbehave at the process level, with real processes:
// huge or endless stderr costs the gateway bounded memory and log and never reaches agents; a server
// that exits leaving a child behind has its group stopped at once (no leak per respawn); a server that
// closes stdout ends its session at once instead of holding every call until its timeout.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  alive,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  waitGone,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

/** Peak resident memory of `pid` in MiB (VmHWM: catches a spike that is already freed). */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]);
  return kb / 1024;
}

const readPid = (file: string): number => Number.parseInt(readFileSync(file, 'utf8'), 10);
const stray: number[] = [];

interface Rig {
  dir: TempDir;
  gw: GatewayProcess;
}

async function rig(extra: Record<string, unknown> = {}, args: string[] = []): Promise<Rig> {
  const dir = await tempDir();
  const config = await writeConfig(dir, {
    bad: fixtureServer('hostile-server', ['--pidfile', dir.file('bad.pid')], { timeout: 60_000, ...extra }),
  });
  const gw = await startGateway({ config, args: ['--log-level', 'info', ...args] });
  return { dir, gw };
}

async function done(r: Rig | undefined): Promise<void> {
  if (r === undefined) return;
  await r.gw.stop();
  await r.dir.remove();
}

describe('hostile servers: stderr, leaked children, closed stdout', { timeout: 120_000 }, () => {
  after(() => {
    for (const pid of stray) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  it(
    'four 20 MiB stderr lines with a key in them: bounded memory, and the agent sees only a short reason',
    { timeout: 60_000 },
    async () => {
      const r = await rig();
      try {
        const err = await rpcError(
          r.gw.client.callTool({ name: 'bad__shout', arguments: { count: 4, mb: 20, exit: true } }, { timeout: 50_000 }),
        );
        assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE');
        assert.match(err.message, /exited with code 1/);
        assert.ok(err.message.length < 400, `short reason, got ${err.message.length} chars`);
        assert.doesNotMatch(JSON.stringify(err), /sk-FIXTURE-SECRET|xxxxxxxx/, 'nothing the server printed reaches the agent');
        // A burst of lines is one record (its lines joined by newlines): each line is still cut.
        const logged = r.gw.logs.filter((l) => l.msg === 'server stderr').flatMap((l) => String(l.stderr).split('\n'));
        assert.ok(logged.length >= 4, 'the operator still sees the lines');
        for (const line of logged) assert.ok(Buffer.byteLength(line) < 2200, `a logged line is cut to ~2 KiB, got ${line.length}`);
        assert.match(logged[0]!, /^Error: request failed with key sk-FIXTURE-SECRET-0 x+ …\[\d+ more bytes cut\]$/);
        const peak = peakRssMiB(r.gw.pid);
        assert.ok(peak < 250, `gateway peak RSS ${peak.toFixed(0)} MiB (was 1.5 GiB before the fix)`);
      } finally {
        await done(r);
      }
    },
  );

  it('a flood of 1 KiB stderr lines is rate-limited in the log, with a count of what was suppressed', { timeout: 60_000 }, async () => {
    const r = await rig();
    try {
      const started = Date.now();
      const result = await r.gw.client.callTool({ name: 'bad__flood', arguments: { lines: 100_000 } }, { timeout: 50_000 });
      assert.equal(textOf(result), 'flooded');
      const seconds = (Date.now() - started) / 1000;
      // The bucket counts lines, however many records they were gathered into.
      const logged = r.gw.logs.filter((l) => l.server === 'bad' && l.msg === 'server stderr').reduce((n, l) => n + Number(l.lines), 0);
      assert.ok(logged <= 200 + 20 * (seconds + 1), `${logged} stderr lines logged in ${seconds.toFixed(1)} s (burst 200, then 20/s)`);
      const suppressed = await r.gw.waitForLog((l) => l.server === 'bad' && l.msg === 'server stderr lines suppressed (rate limit)');
      assert.ok(Number(suppressed.suppressed) > 0);
      const bytes = r.gw.logs.filter((l) => l.server === 'bad').reduce((n, l) => n + JSON.stringify(l).length, 0);
      assert.ok(bytes < 4 * 1024 * 1024, `${bytes} bytes of log for 100 MB of stderr`);
      assert.equal(textOf(await r.gw.client.callTool({ name: 'bad__echo', arguments: { text: 'still here' } })), 'still here');
      const peak = peakRssMiB(r.gw.pid);
      assert.ok(peak < 250, `gateway peak RSS ${peak.toFixed(0)} MiB (was 667 MiB before the fix)`);
    } finally {
      await done(r);
    }
  });

  it(
    'a server that exits leaving a child on its pipes: the child is stopped with the group, and the server respawns',
    { timeout: 30_000 },
    async () => {
      const r = await rig();
      try {
        const first = readPid(r.dir.file('bad.pid'));
        const err = await rpcError(r.gw.client.callTool({ name: 'bad__orphan', arguments: {} }));
        assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE');
        const child = readPid(r.dir.file('bad.pid.child'));
        stray.push(child);
        assert.ok(await waitGone(child, 5000), `the forked child ${child} of the exited server is still running`);
        await r.gw.waitForLog((l) => l.server === 'bad' && /is back/.test(String(l.msg)));
        assert.notEqual(readPid(r.dir.file('bad.pid')), first, 'respawned');
        assert.equal(textOf(await r.gw.client.callTool({ name: 'bad__echo', arguments: { text: 'again' } })), 'again');
      } finally {
        await done(r);
      }
    },
  );

  it(
    'a server that closes stdout but keeps running: pending calls fail at once, it is stopped and respawned',
    { timeout: 30_000 },
    async () => {
      const r = await rig();
      try {
        const pid = readPid(r.dir.file('bad.pid'));
        stray.push(pid);
        const started = Date.now();
        const err = await rpcError(r.gw.client.callTool({ name: 'bad__close_stdout', arguments: {} }, { timeout: 50_000 }));
        assert.ok(Date.now() - started < 3000, `the call failed after ${Date.now() - started} ms, not at once`);
        assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE');
        assert.match(err.message, /closed its stdout/);
        assert.ok(await waitGone(pid, 8000), 'the server that closed stdout (ignoring SIGTERM) was not stopped');
        await r.gw.waitForLog((l) => l.server === 'bad' && /is back/.test(String(l.msg)));
        assert.equal(textOf(await r.gw.client.callTool({ name: 'bad__echo', arguments: { text: 'fresh' } })), 'fresh');
      } finally {
        await done(r);
      }
    },
  );
});

/** Processes whose command line mentions `marker` (a temp dir path), as pid → args. */
export function processesMentioning(marker: string): number[] {
  const out: number[] = [];
  for (const row of execFileSync('ps', ['-A', '-o', 'pid=,stat=,args='], { encoding: 'utf8' }).trim().split('\n')) {
    const [pid, stat, ...args] = row.trim().split(/\s+/);
    if (stat?.startsWith('Z') !== true && args.join(' ').includes(marker)) out.push(Number(pid));
  }
  return out;
}

export { until };
