// Resilience with real processes: a server killed with -9 under 40 concurrent calls
// settles every call at once and is respawned, its tools listed all along (while it restarts
// a call gets a retryable MCPG_SERVER_UNAVAILABLE, no list change is sent; parking withdraws them); a server that cannot start parks and is revived by
// SIGHUP once its command works; a hung call is cut at the timeout while other calls on the same server
// succeed; consecutive timeouts open the circuit breaker (calls fail fast) and a half-open probe closes
// it; a flapping server parks instead of respawning forever; shutdown leaves no child behind.

import { copyFile, rm, writeFile } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  alive,
  fixture,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

const pidOf = async (gw: GatewayProcess, server: string): Promise<number> =>
  Number(textOf(await gw.client.callTool({ name: `${server}__pid`, arguments: {} })));
const toolNames = async (gw: GatewayProcess): Promise<string[]> => (await gw.client.listTools()).tools.map((t) => t.name);

/**
 * A stdio server script whose restarts a test controls: while the file `hold` exists it waits
 * before speaking (the connection stays `connecting`), then runs the fixture named in the file
 * `target` (default the kitchen sink) with the arguments in the file `args` (JSON).
 */
async function gatedServer(dir: TempDir): Promise<Record<string, unknown>> {
  const script = `import { existsSync, readFileSync } from 'node:fs';
const file = (name) => ${JSON.stringify(dir.path)} + '/' + name;
while (existsSync(file('hold'))) await new Promise((resolve) => setTimeout(resolve, 20));
if (existsSync(file('args'))) process.argv.push(...JSON.parse(readFileSync(file('args'), 'utf8')));
const target = existsSync(file('target')) ? readFileSync(file('target'), 'utf8') : ${JSON.stringify(fixture('kitchen-sink-server'))};
await import(new URL('file://' + target).href);
`;
  await writeFile(dir.file('server.mjs'), script);
  return { sink: { command: process.execPath, args: [dir.file('server.mjs')] } };
}

describe('resilience: servers that crash, hang, never start or flap', { timeout: 120_000 }, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  async function rig(
    servers: (dir: TempDir) => Record<string, unknown> | Promise<Record<string, unknown>>,
    args: string[] = [],
  ): Promise<{ dir: TempDir; gw: GatewayProcess; changed: () => number }> {
    const dir = await tempDir();
    cleanups.push(() => dir.remove());
    const gw = await startGateway({ config: await writeConfig(dir, await servers(dir)), args: ['--pins', 'off', ...args] });
    cleanups.push(() => gw.stop());
    let changed = 0;
    gw.client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    return { dir, gw, changed: () => changed };
  }

  it(
    'kill -9 under 40 concurrent calls: every call settles at once, the server is respawned and serves again',
    { timeout: 30_000 },
    async () => {
      const { gw, changed } = await rig(() => ({
        sink: fixtureServer('kitchen-sink-server'),
        other: fixtureServer('kitchen-sink-server'),
      }));
      const before = await pidOf(gw, 'sink');
      const calls = Array.from({ length: 40 }, (_, i) =>
        rpcError(gw.client.callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag: `k${i}` } })),
      );
      await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'in flight now' } });
      const killedAt = Date.now();
      process.kill(before, 'SIGKILL');
      const errors = await Promise.all(calls);
      const settledIn = Date.now() - killedAt;
      assert.ok(settledIn < 3000, `calls took ${settledIn} ms to settle`);
      for (const err of errors) {
        assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE');
        assert.equal(err.data.server, 'sink');
        assert.match(err.message, /outcome of the call is unknown/);
      }
      assert.equal(textOf(await gw.client.callTool({ name: 'other__echo', arguments: { text: 'unaffected' } })), 'unaffected');
      // Listed all along: the new process answers, and the agent was told of no change.
      assert.ok((await toolNames(gw)).includes('sink__echo'));
      await gw.waitForLog((l) => l.server === 'sink' && /is back/.test(String(l.msg)));
      const after_ = await pidOf(gw, 'sink');
      assert.notEqual(after_, before);
      assert.equal(changed(), 0, 'a restart is no list change');
      assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'back' } })), 'back');
      assert.ok(gw.logs.some((l) => l.server === 'sink' && /ready → backoff: .*SIGKILL/.test(String(l.msg))));
      assert.ok(gw.logs.some((l) => l.server === 'sink' && /is back/.test(String(l.msg))));
      assert.deepEqual(await gw.stop(), { code: 0, signal: null });
      assert.ok(await until(() => !alive(after_), 5000), 'the respawned server outlived the gateway');
    },
  );

  it(
    'a killed server stays listed while it restarts: a call gets the retryable error, no list change is sent, then it serves again',
    { timeout: 40_000 },
    async () => {
      const { dir, gw, changed } = await rig(gatedServer, ['--pins', 'tofu']);
      const listed = await toolNames(gw);
      assert.ok(listed.includes('sink__echo'));
      // The restarted server will offer one more tool (--evil adds `ansi`): new since the pins, so held.
      await writeFile(dir.file('hold'), '');
      await writeFile(dir.file('args'), JSON.stringify(['--evil']));
      const pid = await pidOf(gw, 'sink');
      process.kill(pid, 'SIGKILL');
      await gw.waitForLog((l) => l.server === 'sink' && /backoff → connecting/.test(String(l.msg)));
      assert.deepEqual(await toolNames(gw), listed, 'its tools stay listed while it restarts');
      const err = await rpcError(gw.client.callTool({ name: 'sink__echo', arguments: { text: 'x' } }));
      assert.equal(err.code, -31011);
      assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE', 'not MCPG_TOOL_NOT_FOUND');
      assert.equal(err.data.server, 'sink');
      assert.equal(err.data.retryable, true);
      assert.equal(err.data.state, 'connecting');
      assert.match(err.message, /^server "sink" is restarting: .*SIGKILL.*; it is starting again now, retry the call then$/);
      await rm(dir.file('hold'));
      await gw.waitForLog((l) => l.server === 'sink' && /is back/.test(String(l.msg)));
      assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'back' } })), 'back');
      assert.notEqual(await pidOf(gw, 'sink'), pid);
      // Pins keep working across the restart: the new tool is held (hidden, refused), the rest unchanged.
      assert.deepEqual(await toolNames(gw), listed);
      assert.equal((await rpcError(gw.client.callTool({ name: 'sink__ansi', arguments: {} }))).data.code, 'MCPG_TOOL_HELD');
      assert.equal(changed(), 0, 'no list change was sent for the crash nor the restart');
    },
  );

  it('a server that served and then parks is withdrawn, with a list change', { timeout: 40_000 }, async () => {
    const { dir, gw, changed } = await rig(gatedServer, ['--retries', '2', '--backoff-cap', '50', '--park-probe', '600000']);
    assert.ok((await toolNames(gw)).includes('sink__echo'));
    const pid = await pidOf(gw, 'sink'); // a successful call: the session proved itself, the budget is whole
    await writeFile(dir.file('target'), fixture('crash-at-start'));
    process.kill(pid, 'SIGKILL');
    await gw.waitForLog((l) => l.server === 'sink' && /→ parked/.test(String(l.msg)));
    assert.ok(await until(() => changed() === 1), 'the agent was not told of the withdrawal');
    assert.ok(!(await toolNames(gw)).some((n) => n.startsWith('sink__')), "a parked server's tools are withdrawn");
    assert.equal((await rpcError(gw.client.callTool({ name: 'sink__echo', arguments: { text: 'x' } }))).data.code, 'MCPG_TOOL_NOT_FOUND');
  });

  it('renews resource subscriptions on a respawned server', { timeout: 30_000 }, async () => {
    const { gw } = await rig(() => ({ sink: fixtureServer('kitchen-sink-server') }));
    const uri = 'mcpgate://sink/sink://static/1';
    const updates: string[] = [];
    gw.client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    await gw.client.subscribeResource({ uri });
    const before = await pidOf(gw, 'sink');
    process.kill(before, 'SIGKILL');
    assert.ok(
      await until(async () => {
        try {
          return (await pidOf(gw, 'sink')) !== before;
        } catch {
          return false;
        }
      }, 15_000),
      'not respawned',
    );
    // The new process was subscribed by the gateway on the agent's behalf.
    assert.ok(
      await until(
        async () => textOf(await gw.client.callTool({ name: 'sink__touch', arguments: { uri: 'sink://static/1' } })) === 'touched',
        5000,
      ),
    );
    assert.ok(await until(() => updates.includes(uri), 5000), 'no resources/updated after the respawn');
  });

  it('a server that cannot start parks, and SIGHUP revives it once its command works', { timeout: 40_000 }, async () => {
    const { dir, gw, changed } = await rig(
      async (d) => {
        await copyFile(fixture('crash-at-start'), d.file('server.js'));
        return { late: { command: process.execPath, args: [d.file('server.js')] }, sink: fixtureServer('kitchen-sink-server') };
      },
      ['--retries', '2', '--backoff-cap', '50', '--park-probe', '600000'],
    );
    await gw.waitForLog((l) => l.server === 'late' && /→ parked/.test(String(l.msg)));
    assert.ok(!(await toolNames(gw)).some((n) => n.startsWith('late__')));
    const err = await rpcError(gw.client.callTool({ name: 'late__echo', arguments: { text: 'x' } }));
    assert.equal(err.data.code, 'MCPG_TOOL_NOT_FOUND');
    // "Fix the command": the script now runs the working echo server.
    await writeFile(dir.file('server.js'), `await import(${JSON.stringify(new URL(`file://${fixture('echo-server')}`).href)});\n`);
    const before = changed();
    process.kill(gw.pid, 'SIGHUP');
    assert.ok(await until(async () => changed() > before && (await toolNames(gw)).includes('late__echo'), 15_000), 'not revived');
    assert.equal(textOf(await gw.client.callTool({ name: 'late__echo', arguments: { text: 'alive' } })), 'alive');
    assert.ok(gw.logs.some((l) => l.server === 'late' && /reviving server "late" \(SIGHUP\)/.test(String(l.msg))));
  });

  it('a hung call is cut at the timeout while other calls on the same server succeed', { timeout: 20_000 }, async () => {
    const { gw } = await rig(() => ({ sink: fixtureServer('kitchen-sink-server', [], { timeout: 800 }) }));
    const hung = rpcError(gw.client.callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag: 'hung' } }));
    const others = await Promise.all(
      Array.from({ length: 5 }, (_, i) => gw.client.callTool({ name: 'sink__echo', arguments: { text: `ok${i}` } })),
    );
    assert.deepEqual(others.map(textOf), ['ok0', 'ok1', 'ok2', 'ok3', 'ok4']);
    const err = await hung;
    assert.equal(err.data.code, 'MCPG_SERVER_TIMEOUT');
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'still usable' } })), 'still usable');
  });

  it('consecutive timeouts open the breaker: calls fail fast until a half-open probe succeeds', { timeout: 30_000 }, async () => {
    const { gw } = await rig(
      () => ({ sink: fixtureServer('kitchen-sink-server', [], { timeout: 300 }) }),
      ['--breaker', '2', '--breaker-cooldown', '1500'],
    );
    for (const tag of ['t1', 't2'])
      assert.equal(
        (await rpcError(gw.client.callTool({ name: 'sink__slow', arguments: { ms: 5000, tag } }))).data.code,
        'MCPG_SERVER_TIMEOUT',
      );
    const t0 = Date.now();
    const fast = await rpcError(gw.client.callTool({ name: 'sink__echo', arguments: { text: 'x' } }));
    assert.ok(Date.now() - t0 < 250, 'an open breaker must fail fast');
    assert.equal(fast.data.code, 'MCPG_SERVER_UNAVAILABLE');
    assert.match(fast.message, /unreachable \(2 consecutive failures\); it will be tried again in [12] s/);
    assert.equal(fast.data.breaker, 'open');
    // After the cooldown one call goes through as the probe; its success closes the breaker.
    assert.ok(
      await until(async () => {
        try {
          return textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'probe' } })) === 'probe';
        } catch {
          return false;
        }
      }, 10_000),
    );
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'closed' } })), 'closed');
  });

  it('a flapping server parks after its retry budget instead of respawning forever', { timeout: 40_000 }, async () => {
    const { gw } = await rig(
      () => ({ flappy: fixtureServer('kitchen-sink-server', ['--exit-after', '400']) }),
      ['--retries', '3', '--backoff-cap', '100', '--stable-after', '60000', '--park-probe', '600000'],
    );
    await gw.waitForLog((l) => l.server === 'flappy' && /→ parked/.test(String(l.msg)));
    const respawns = gw.logs.filter((l) => l.server === 'flappy' && /is back/.test(String(l.msg))).length;
    assert.ok(respawns <= 3, `respawned ${respawns} times`);
    assert.ok(!(await toolNames(gw)).some((n) => n.startsWith('flappy__')), "a parked server's tools are withdrawn");
  });
});
