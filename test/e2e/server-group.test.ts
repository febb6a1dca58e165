// A stdio server runs as the leader of its own process group (so a stop reaches a wrapper's
// children), and on Linux with the system Perl it stays in mcpgate's session: a session of its own
// would also be a scheduler autogroup of its own, which made every call to it slower
// (src/servers/transports/stdio/group-launch.ts). Its argv is the configured one, and the stop still reaches the group.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeRig,
  fixtureServer,
  gone,
  ROOT,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

/** pgrp and session of a live process, from /proc/PID/stat (fields 5 and 6). */
function groupOf(pid: number): { pgrp: number; session: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pgrp: Number(f[2]), session: Number(f[3]) };
}

describe("a stdio server's process group and session", { skip: process.platform !== 'linux' && 'reads /proc', timeout: 30_000 }, () => {
  it(
    "leads its own group, in mcpgate's session when /usr/bin/perl exists (else a session of its own); argv as configured",
    { timeout: 20_000 },
    async () => {
      let r: { gw: GatewayProcess; dir: TempDir } | undefined;
      try {
        const dir = await tempDir();
        const server = fixtureServer('kitchen-sink-server');
        const gw = await startGateway({ config: await writeConfig(dir, { sink: server }) });
        r = { gw, dir };
        const pid = Number(textOf(await gw.client.callTool({ name: 'sink__pid', arguments: {} })));
        const own = groupOf(pid);
        const gateway = groupOf(gw.pid);
        assert.equal(own.pgrp, pid, 'the server leads a group of its own');
        assert.notEqual(own.pgrp, gateway.pgrp);
        if (existsSync('/usr/bin/perl')) assert.equal(own.session, gateway.session, 'same session as mcpgate (no autogroup of its own)');
        else assert.equal(own.session, pid, 'no Perl: detached, a session of its own');
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
          .split('\0')
          .filter((a) => a !== '');
        assert.deepEqual(argv, [server.command, ...(server.args as string[])], 'exec kept the configured argv (argv[0] included)');
        assert.deepEqual(await gw.stop(), { code: 0, signal: null });
        assert.ok(await until(() => gone(pid), 5000), 'the server is gone after the gateway stopped');
      } finally {
        await closeRig(r);
      }
    },
  );

  it(
    "the watchdog stops a launcher that has not made its group yet (still in mcpgate's group) by its pid",
    { timeout: 20_000 },
    async () => {
      // Stands in for mcpgate: this test process starts the watchdog and registers a child of its own
      // group (not detached), as a server is between its spawn and the launcher's setpgrp.
      const dir = await tempDir();
      const server = fixtureServer('stubborn-server', ['--pidfile', dir.file('s.pid')]);
      const child = spawn(server.command as string, server.args as string[], { stdio: ['pipe', 'ignore', 'ignore'] });
      const watchdog = spawn(process.execPath, [join(ROOT, 'dist/src/servers/watchdog-main.js')], {
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      try {
        assert.ok(
          await until(() => existsSync(dir.file('s.pid')) && readFileSync(dir.file('s.pid'), 'utf8').endsWith('\n'), 10_000),
          'the stubborn server started',
        );
        assert.equal(
          groupOf(child.pid!).pgrp,
          groupOf(process.pid).pgrp,
          'the child is in our group: there is no group ' + String(child.pid),
        );
        const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal)));
        watchdog.stdin.end(`+${child.pid!}\n`); // registered, then the pipe closes: "mcpgate" is gone
        // The watchdog SIGKILLs 500 ms after its SIGTERM; 5 s is ample even on a loaded machine.
        const still = new Promise((resolve) => setTimeout(resolve, 5000, 'still running').unref());
        assert.equal(await Promise.race([exited, still]), 'SIGKILL', 'ignores SIGTERM, so the SIGKILL pass ended it');
      } finally {
        child.kill('SIGKILL');
        watchdog.kill('SIGKILL');
        await dir.remove();
      }
    },
  );
});
