// Children never outlive mcpgate, with real processes: kill -9 of mcpgate, and a
// kill of its whole process group, leave no process of any server group 2 s later — servers behind
// `sh -c` and npx-like wrappers included — because a detached watchdog holding a pipe from mcpgate
// kills the registered groups when the pipe closes; the watchdog leaves when mcpgate exits normally;
// and an SDK client's close (stdin EOF, 2 s, SIGTERM, 2 s, SIGKILL) ends a server that ignores stdin
// EOF and SIGTERM even with the watchdog off, because the SIGTERM cuts mcpgate's own stop short.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CLI,
  fixture,
  fixtureServer,
  gone,
  startGateway,
  survivors,
  tempDir,
  until,
  writeConfig,
  type TempDir,
} from '../helpers/gateway.js';

const killed: number[] = [];
const readPid = (file: string): number => Number.parseInt(readFileSync(file, 'utf8'), 10);

/** The watchdog child of `parent`, if any. */
function watchdogOf(parent: number): number | undefined {
  for (const row of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' }).trim().split('\n')) {
    const [pid, ppid, ...args] = row.trim().split(/\s+/);
    if (Number(ppid) === parent && args.some((a) => a.endsWith('watchdog-main.js'))) return Number(pid);
  }
  return undefined;
}

/** A stubborn server (ignores stdin EOF and SIGTERM) directly, behind `sh -c`, and behind an npx-like node wrapper. */
function servers(dir: TempDir): Record<string, unknown> {
  const stubborn = fixture('stubborn-server');
  return {
    plain: fixtureServer('stubborn-server', ['--pidfile', dir.file('plain.pid')]),
    shell: { command: 'sh', args: ['-c', `"${process.execPath}" "${stubborn}" --pidfile "${dir.file('shell.pid')}"; echo after`] },
    wrapped: fixtureServer('wrapper', ['--pidfile', dir.file('wrapped.pid')]),
  };
}

/** Every server process: the pidfiles, plus the shells (the parents of the shell's child). */
function serverPids(dir: TempDir): number[] {
  const pids = [
    readPid(dir.file('plain.pid')),
    readPid(dir.file('shell.pid')),
    readPid(dir.file('wrapped.pid')),
    readPid(dir.file('wrapped.pid.child')),
  ];
  const shellChild = pids[1]!;
  const ppid = Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(shellChild)], { encoding: 'utf8' }).trim());
  pids.push(ppid);
  killed.push(...pids);
  return pids;
}

const pidfilesWritten = (dir: TempDir): Promise<boolean> =>
  until(
    () =>
      ['plain.pid', 'shell.pid', 'wrapped.pid', 'wrapped.pid.child'].every(
        (f) => existsSync(dir.file(f)) && readFileSync(dir.file(f), 'utf8').endsWith('\n'),
      ),
    10_000,
  );

describe('no server outlives mcpgate', { timeout: 90_000 }, () => {
  after(() => {
    for (const pid of killed) if (!gone(pid)) process.kill(pid, 'SIGKILL');
  });

  it('kill -9 of mcpgate: no process of any server group (sh -c, npx-like wrapper) remains 2 s later', { timeout: 20_000 }, async () => {
    const dir = await tempDir();
    try {
      const gw = await startGateway({ config: await writeConfig(dir, servers(dir)) });
      assert.ok(await pidfilesWritten(dir));
      await gw.client.listTools();
      const pids = serverPids(dir);
      const watchdog = watchdogOf(gw.pid);
      assert.ok(watchdog !== undefined, 'one watchdog per mcpgate');
      process.kill(gw.pid, 'SIGKILL');
      await gw.exited;
      assert.deepEqual(await survivors(pids, 2000), [], 'server processes alive 2 s after kill -9');
      assert.ok(await until(() => gone(watchdog), 2000), 'the watchdog leaves once its work is done');
    } finally {
      await dir.remove();
    }
  });

  it("a kill of mcpgate's whole process group: the detached watchdog survives it and stops the servers", { timeout: 20_000 }, async () => {
    const dir = await tempDir();
    try {
      const config = await writeConfig(dir, servers(dir));
      const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
      killed.push(child.pid!);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      assert.ok(await pidfilesWritten(dir));
      const pids = serverPids(dir);
      assert.ok(await until(() => watchdogOf(child.pid!) !== undefined, 5000));
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
      assert.deepEqual(await survivors(pids, 2000), [], 'server processes alive 2 s after the group kill');
    } finally {
      await dir.remove();
    }
  });

  it('a normal exit: the servers are stopped by mcpgate and the watchdog exits too', { timeout: 20_000 }, async () => {
    const dir = await tempDir();
    try {
      const gw = await startGateway({
        config: await writeConfig(dir, { plain: fixtureServer('dynamic-server', ['--pidfile', dir.file('dyn.pid')]) }),
      });
      await gw.client.listTools();
      const watchdog = watchdogOf(gw.pid);
      assert.ok(watchdog !== undefined);
      killed.push(watchdog);
      assert.equal((await gw.stop()).code, 0);
      assert.ok(await until(() => gone(watchdog), 3000), 'the watchdog outlived a clean exit');
    } finally {
      await dir.remove();
    }
  });

  it(
    'SDK client close (EOF, 2 s, SIGTERM, 2 s, SIGKILL) ends a server ignoring EOF and SIGTERM, watchdog off',
    { timeout: 20_000 },
    async () => {
      const dir = await tempDir();
      try {
        const config = await writeConfig(dir, { stubborn: fixtureServer('stubborn-server', ['--pidfile', dir.file('stubborn.pid')]) });
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'serve', '--config', config, '--agent', 'tester'],
          env: { ...process.env, MCPGATE_WATCHDOG: 'off' },
          stderr: 'ignore',
        });
        const client = new Client({ name: 'sdk-close', version: '1.0.0' });
        await client.connect(transport);
        await client.listTools();
        const server = readPid(dir.file('stubborn.pid'));
        killed.push(server, transport.pid!);
        const started = Date.now();
        await client.close();
        const took = Date.now() - started;
        assert.ok(await until(() => gone(server), 300), `the stubborn server outlived the client's close (${took} ms)`);
        assert.ok(took < 3900, `mcpgate exited within the client's grace, before its SIGKILL (${took} ms)`);
      } finally {
        await dir.remove();
      }
    },
  );
});
