// Hot reload of `.mcp.json` under the three ways a file changes on disk: an editor's
// save (temp file renamed over it), a write in place, and a Kubernetes ConfigMap volume, where kubelet
// writes a new timestamped directory and renames a `..data_tmp` symlink over `..data` — no event names
// the file then. Also a bad `"pool"` of a per-agent server is refused by
// `check`, by `serve`, and by a reload, which keeps the previous configuration.

import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cli, closeRig, fixtureServer, startGateway, tempDir, type GatewayProcess, type TempDir } from '../helpers/gateway.js';

type Json = Record<string, unknown>;
const message = (line: Json): string => (typeof line.msg === 'string' ? line.msg : '');
const toolNames = async (gw: GatewayProcess): Promise<string[]> => (await gw.client.listTools()).tools.map((t) => t.name).sort();
const servers = (...names: string[]): Json => ({ mcpServers: Object.fromEntries(names.map((n) => [n, fixtureServer('echo-server')])) });

/** Counts reload log lines (successes and failures), so a test waits for the next one it causes. */
function reloads(gw: GatewayProcess): { next(): Promise<Json> } {
  let seen = 0;
  const lines: Json[] = [];
  let waiter: { n: number; resolve: (line: Json) => void } | undefined;
  void gw.waitForLog((line) => {
    const m = message(line);
    if (m.startsWith('configuration reloaded (') || m.startsWith('reload failed;')) {
      lines.push(line);
      if (waiter !== undefined && lines.length >= waiter.n) waiter.resolve(lines[waiter.n - 1]!);
    }
    return false;
  });
  return {
    next() {
      seen += 1;
      const n = seen;
      if (lines.length >= n) return Promise.resolve(lines[n - 1]!);
      return new Promise((resolve) => (waiter = { n, resolve }));
    },
  };
}

describe('the config watcher reacts to every way a file changes', { timeout: 60_000 }, () => {
  let dir: TempDir;
  before(async () => {
    dir = await tempDir();
  });
  after(() => dir.remove());

  it('an editor save (rename over) and a write in place each reload', { timeout: 30_000 }, async () => {
    const config = dir.file('.mcp.json');
    await writeFile(config, JSON.stringify(servers('a')));
    const gw = await startGateway({ config, args: ['--pins', 'off'] });
    try {
      const r = reloads(gw);
      assert.deepEqual(await toolNames(gw), ['a__echo']);
      await writeFile(`${config}.tmp`, JSON.stringify(servers('a', 'b')));
      await rename(`${config}.tmp`, config);
      assert.match(message(await r.next()), /^configuration reloaded/);
      assert.deepEqual(await toolNames(gw), ['a__echo', 'b__echo']);
      await writeFile(config, JSON.stringify(servers('c')));
      assert.match(message(await r.next()), /^configuration reloaded/);
      assert.deepEqual(await toolNames(gw), ['c__echo']);
    } finally {
      await gw.stop();
    }
  });

  it('a ConfigMap update (kubelet swaps the ..data symlink) reloads', { timeout: 30_000 }, async () => {
    // The layout kubelet makes: config.json -> ..data/config.json, ..data -> ..2026_01_01_00_00_00.1
    const mount = dir.file('configmap');
    await mkdir(mount);
    const version = async (stamp: string, value: Json): Promise<void> => {
      await mkdir(`${mount}/${stamp}`);
      await writeFile(`${mount}/${stamp}/config.json`, JSON.stringify(value));
    };
    await version('..2026_01_01_00_00_00.1', servers('a'));
    await symlink('..2026_01_01_00_00_00.1', `${mount}/..data`);
    await symlink('..data/config.json', `${mount}/config.json`);
    const gw = await startGateway({ config: `${mount}/config.json`, args: ['--pins', 'off'] });
    try {
      const r = reloads(gw);
      assert.deepEqual(await toolNames(gw), ['a__echo']);
      // An update: a new directory, a temporary symlink to it, renamed over ..data in one step.
      await version('..2026_01_01_00_05_00.2', servers('a', 'k8s'));
      await symlink('..2026_01_01_00_05_00.2', `${mount}/..data_tmp`);
      await rename(`${mount}/..data_tmp`, `${mount}/..data`);
      assert.match(message(await r.next()), /^configuration reloaded/);
      assert.deepEqual(await toolNames(gw), ['a__echo', 'k8s__echo']);
    } finally {
      await gw.stop();
    }
  });
});

describe('a per-agent server\'s "pool" is validated', { timeout: 60_000 }, () => {
  let dir: TempDir;
  const perAgent = {
    mcpServers: {
      shared: fixtureServer('echo-server'),
      notes: fixtureServer('echo-server', [], { sessions: 'per-agent', pool: { max: 0 } }),
    },
  };
  const expected = 'expected a whole number of connections from 1 to 10000, got 0';
  before(async () => {
    dir = await tempDir();
  });
  after(() => dir.remove());

  it('check refuses it, naming the server and the path', { timeout: 30_000 }, async () => {
    const config = dir.file('check.json');
    await writeFile(config, JSON.stringify(perAgent));
    const r = await cli(['check', '--config', config]);
    assert.equal(r.code, 2);
    assert.ok(r.err.includes(`error: ${config}: $.mcpServers.notes.pool.max: ${expected}`), r.err);
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: { notes: fixtureServer('echo-server', [], { sessions: 'per-agent', pool: { max: 4, idleMs: 60_000 } }) },
      }),
    );
    assert.equal((await cli(['check', '--config', config])).code, 0, 'valid pool settings are accepted');
  });

  it('serve refuses to start with it', { timeout: 30_000 }, async () => {
    const config = dir.file('serve.json');
    await writeFile(
      config,
      JSON.stringify({ mcpServers: { notes: fixtureServer('echo-server', [], { sessions: 'per-session', pool: { idleMs: 'soon' } }) } }),
    );
    const gw = await startGateway({ config, noClient: true });
    const exit = await gw.exited;
    assert.notEqual(exit.code, 0);
    assert.ok(
      gw.logs.some((l) => JSON.stringify(l).includes('$.mcpServers.notes.pool.idleMs')),
      JSON.stringify(gw.logs),
    );
  });

  it('a reload with it keeps the previous configuration', { timeout: 20_000 }, async () => {
    const config = dir.file('.mcp.json');
    await writeFile(config, JSON.stringify(servers('shared')));
    const gw = await startGateway({ config, args: ['--pins', 'off'] });
    const rig = { gw, dir: { ...dir, remove: () => Promise.resolve() } };
    try {
      const r = reloads(gw);
      await writeFile(config, JSON.stringify(perAgent));
      const failed = await r.next();
      assert.equal(failed.level, 'error');
      assert.ok(message(failed).includes(expected), message(failed));
      assert.deepEqual(await toolNames(gw), ['shared__echo'], 'the previous configuration stays in force');
    } finally {
      await closeRig(rig);
    }
  });
});
