// How a stdio server is given a process group of its own (src/servers/transports/stdio/group-launch.ts): the
// command is found as the spawn would find it, and whenever that is in doubt the launch falls back to
// Node's `detached` (setsid), so errors such as "command not found" stay exactly what they were.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownGroupLaunch, resolveCommand } from '../../../src/servers/transports/stdio/group-launch.js';

describe('group-launch: resolving and launching a stdio server', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcpgate-own-group-'));
    await mkdir(join(dir, 'a'));
    await mkdir(join(dir, 'b'));
    await writeFile(join(dir, 'a', 'plain'), 'not executable');
    await writeFile(join(dir, 'b', 'plain'), '#!/bin/sh\n');
    await chmod(join(dir, 'b', 'plain'), 0o755);
    await mkdir(join(dir, 'b', 'adir'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds a bare name in the first PATH entry holding an executable file of that name', () => {
    const PATH = `${join(dir, 'a')}:${join(dir, 'b')}`;
    assert.equal(resolveCommand('plain', { PATH }, '/'), join(dir, 'b', 'plain'));
    assert.equal(resolveCommand('adir', { PATH }, '/'), undefined, 'a directory is not a command');
    assert.equal(resolveCommand('missing', { PATH }, '/'), undefined);
  });

  it("resolves a name with a slash against the server's cwd, not mcpgate's", () => {
    assert.equal(resolveCommand('./plain', {}, join(dir, 'b')), join(dir, 'b', 'plain'));
    assert.equal(resolveCommand('./plain', {}, join(dir, 'a')), undefined, 'not executable');
    assert.equal(resolveCommand(join(dir, 'b', 'plain'), {}, '/'), join(dir, 'b', 'plain'));
  });

  it("gives up (undefined) where the spawn's own search could differ: no PATH, a relative or empty PATH entry", () => {
    assert.equal(resolveCommand('plain', {}, '/'), undefined);
    assert.equal(resolveCommand('plain', { PATH: `relative:${join(dir, 'b')}` }, dir), undefined);
    assert.equal(resolveCommand('plain', { PATH: `:${join(dir, 'b')}` }, dir), undefined);
    assert.equal(resolveCommand('', { PATH: join(dir, 'b') }, dir), undefined);
  });

  it('falls back to detached (setsid) for a command it cannot find, so the spawn reports ENOENT as before', () => {
    assert.deepEqual(ownGroupLaunch('/nonexistent/cmd', ['x'], { PATH: '/usr/bin' }, '/'), {
      command: '/nonexistent/cmd',
      args: ['x'],
      detached: true,
    });
  });

  it('falls back to detached when PERL* variables would change the launcher', () => {
    const env = { PATH: join(dir, 'b'), PERL5OPT: '-Mstrict' };
    assert.deepEqual(ownGroupLaunch('plain', ['--flag'], env, '/'), { command: 'plain', args: ['--flag'], detached: true });
  });

  it('on Linux with /usr/bin/perl: the launcher, the resolved path, then argv as configured; elsewhere detached', () => {
    const launch = ownGroupLaunch('plain', ['--flag', '-e'], { PATH: join(dir, 'b') }, '/');
    if (process.platform !== 'linux' || !existsSync('/usr/bin/perl')) {
      assert.deepEqual(launch, { command: 'plain', args: ['--flag', '-e'], detached: true });
      return;
    }
    assert.equal(launch.command, '/usr/bin/perl');
    assert.equal(launch.detached, false);
    assert.equal(launch.args[0], '-e');
    assert.match(launch.args[1]!, /setpgrp\(0, 0\).*exec \{ \$path \} @ARGV/);
    assert.deepEqual(launch.args.slice(2), ['--', join(dir, 'b', 'plain'), 'plain', '--flag', '-e']);
  });
});
