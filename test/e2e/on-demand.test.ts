// Servers on demand (`"start": "on-demand"`, `"idleStop"`), with real child-process servers: a first
// run starts the server once to learn its catalog and stops it; a later run lists it from the state
// directory without spawning it; the first call starts it and succeeds; idleStop stops it (its process
// gone) and the next call starts it again; a server that cannot start fails the call promptly with a
// clear error; a definition changed while it rested is held by the pins when it starts; a corrupt
// known catalog is a warning (and the server is learned again); status and metrics show it all.

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  alive,
  cli,
  fixtureServer,
  jsonOf,
  rpcError,
  startGateway,
  tempDir,
  until,
  waitGone,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules } from '../helpers/http.js';

const IDLE_STOP = 1500;

const exists = (path: string): Promise<boolean> =>
  readFile(path).then(
    () => true,
    () => false,
  );
const pidIn = async (path: string): Promise<number> => Number((await readFile(path, 'utf8')).trim());
const names = async (gw: GatewayProcess): Promise<string[]> => (await gw.client.listTools()).tools.map((t) => t.name).sort();
const msgOf = (line: Record<string, unknown>): string => String(line.msg);

describe('on-demand servers', { timeout: 120_000 }, () => {
  let dir: TempDir;
  let config: string;
  let state: string;
  let gw: GatewayProcess | undefined;

  const dyn = (extra: string[] = [], entry: Record<string, unknown> = {}): Record<string, unknown> =>
    fixtureServer('dynamic-server', ['--pidfile', dir.file('dyn.pid'), ...extra], { start: 'on-demand', idleStop: IDLE_STOP, ...entry });
  const run = async (servers: Record<string, unknown>): Promise<GatewayProcess> => {
    await stop(); // one left running by a failed test
    config = await writeConfig(dir, servers);
    gw = await startGateway({ config, args: ['--pins', 'tofu', '--state', state] });
    return gw;
  };
  const stop = async (): Promise<void> => {
    await gw?.stop();
    gw = undefined;
  };

  before(async () => {
    dir = await tempDir();
    state = dir.file('state');
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('a first run starts it once to learn its catalog, keeps it in the state directory, and stops it', { timeout: 30_000 }, async () => {
    const g = await run({ dyn: dyn() });
    const learned = await g.waitForLog((l) => msgOf(l).includes('its catalog is learned; stopped until its first call'));
    assert.equal(learned.level, 'info');
    const pid = await pidIn(dir.file('dyn.pid'));
    assert.ok(await waitGone(pid), 'the learning start stops the server');
    assert.deepEqual(await names(g), ['dyn__echo'], 'still listed while it rests');
    const known = JSON.parse(await readFile(dir.file('state/catalogs/dyn.json'), 'utf8')) as { server: string; tools: { name: string }[] };
    assert.equal(known.server, 'dyn');
    assert.deepEqual(
      known.tools.map((t) => t.name),
      ['echo'],
    );
    await stop();
  });

  it('a later run lists it from its known catalog without spawning it; the first call starts it', { timeout: 30_000 }, async () => {
    await rm(dir.file('dyn.pid'));
    const g = await run({ dyn: dyn() });
    assert.deepEqual(await names(g), ['dyn__echo']);
    await g.waitForLog((l) => msgOf(l).startsWith('server "dyn" idle: 1 tools'));
    assert.equal(await exists(dir.file('dyn.pid')), false, 'listing spawned no server');
    const started = Date.now();
    assert.deepEqual(jsonOf(await g.client.callTool({ name: 'dyn__echo', arguments: { message: 'first' } })), { echo_message: 'first' });
    assert.ok(Date.now() - started < 15_000);
    const pid = await pidIn(dir.file('dyn.pid'));
    assert.ok(alive(pid), 'started by the call');
    await g.waitForLog((l) => msgOf(l) === 'server "dyn" started on demand');
  });

  it('idleStop stops it (its process gone) and the next call starts it again', { timeout: 30_000 }, async () => {
    const g = gw!;
    const first = await pidIn(dir.file('dyn.pid'));
    // Calls keep it up: each one ends before the idle time runs out.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, IDLE_STOP / 3));
      await g.client.callTool({ name: 'dyn__echo', arguments: { message: `keep ${i}` } });
    }
    assert.ok(alive(first), 'calls within idleStop keep it running');
    await g.waitForLog((l) => msgOf(l).includes(`no call for ${IDLE_STOP} ms: stopped until the next call`));
    assert.ok(await waitGone(first), 'the idle server is stopped');
    assert.deepEqual(await names(g), ['dyn__echo'], 'listed from its last known catalog again');
    assert.deepEqual(jsonOf(await g.client.callTool({ name: 'dyn__echo', arguments: { message: 'again' } })), { echo_message: 'again' });
    const second = await pidIn(dir.file('dyn.pid'));
    assert.notEqual(second, first);
    assert.ok(alive(second));
    await stop();
    assert.ok(await waitGone(second), 'shutdown stops it');
  });

  it('a definition changed while it rested is held by the pins when the call starts it', { timeout: 30_000 }, async () => {
    const g = await run({ dyn: dyn(['--revised']) });
    assert.deepEqual(await names(g), ['dyn__echo'], 'the known (approved) definition is listed');
    let changed = 0;
    g.client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    const err = await rpcError(g.client.callTool({ name: 'dyn__echo', arguments: { message: 'rug' } }));
    assert.equal(err.data.code, 'MCPG_TOOL_HELD', err.message);
    assert.match(err.message, /definition changed/);
    assert.ok(await until(() => changed > 0), 'the agent is told its list changed');
    assert.deepEqual(await names(g), [], 'the held tool is no longer listed');
    await stop();
    // The held tool stays held on the next run, listed from the (now revised) known catalog.
    await rm(dir.file('dyn.pid'), { force: true });
    const again = await run({ dyn: dyn(['--revised']) });
    assert.deepEqual(await names(again), []);
    assert.equal(await exists(dir.file('dyn.pid')), false);
    await stop();
  });

  it(
    'a server that cannot start on demand fails the call promptly with a clear error; a later call does not respawn it at once',
    { timeout: 30_000 },
    async () => {
      // A known catalog for a server whose command dies at start.
      await mkdir(dir.file('state/catalogs'), { recursive: true });
      const tool = { name: 'work', description: 'does work', inputSchema: { type: 'object', properties: {} } };
      for (const server of ['broken', 'missing']) {
        await writeFile(
          dir.file(`state/catalogs/${server}.json`),
          JSON.stringify({ format: 1, server, modern: false, tools: [tool], resources: [], resourceTemplates: [], prompts: [] }),
        );
      }
      const g = await run({
        broken: fixtureServer('crash-at-start', [], { start: 'on-demand', idleStop: IDLE_STOP }),
        missing: { command: dir.file('no-such-server'), start: 'on-demand' },
      });
      assert.deepEqual(await names(g), ['broken__work', 'missing__work']);
      const missing = await rpcError(g.client.callTool({ name: 'missing__work', arguments: {} }));
      assert.equal(missing.data.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.match(missing.message, /server "missing" could not be started on demand: .*command not found: .*no-such-server/s);
      const started = Date.now();
      const err = await rpcError(g.client.callTool({ name: 'broken__work', arguments: {} }));
      assert.ok(Date.now() - started < 10_000, 'answered promptly');
      assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.match(err.message, /server "broken" could not be started on demand: .*exited.*code 3/s);
      assert.equal(err.data.state, 'backoff');
      assert.equal(err.data.retryable, true);
      // Backing off: the next call is answered at once, naming when it is tried again.
      const before = g.logs.filter((l) => msgOf(l).startsWith('starting server "broken" on demand')).length;
      const next = await rpcError(g.client.callTool({ name: 'broken__work', arguments: {} }));
      assert.equal(next.data.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.equal(
        g.logs.filter((l) => msgOf(l).startsWith('starting server "broken" on demand')).length,
        before,
        'no new start for that call',
      );
      await stop();
    },
  );

  it('a corrupt known catalog is a warning, and the server is started to learn it again', { timeout: 30_000 }, async () => {
    await writeFile(dir.file('state/catalogs/dyn.json'), '{"format": 1, "server": "dyn", "modern": false, "tools": [{"name": 42}]');
    await rm(dir.file('dyn.pid'), { force: true });
    const g = await run({ dyn: dyn() });
    const warning = await g.waitForLog(
      (l) => msgOf(l).includes('the last known catalog of server "dyn"') && msgOf(l).includes('is unusable'),
    );
    assert.equal(warning.level, 'warn');
    await g.waitForLog((l) => msgOf(l).includes('its catalog is learned'));
    assert.ok(await exists(dir.file('dyn.pid')), 'started to learn it');
    await until(async () => (await readFile(dir.file('state/catalogs/dyn.json'), 'utf8')).includes('"tools":'), 5000);
    const known = JSON.parse(await readFile(dir.file('state/catalogs/dyn.json'), 'utf8')) as { tools: { name: string }[] };
    assert.deepEqual(
      known.tools.map((t) => t.name),
      ['echo'],
      'rewritten from the live server',
    );
    await stop();
  });

  it('a reload that changes the start mode restarts the entry: always-started, then resting on demand', { timeout: 30_000 }, async () => {
    await rm(dir.file('dyn.pid'), { force: true });
    const g = await run({ dyn: dyn([], { start: 'always', idleStop: undefined }) });
    assert.ok(await until(() => exists(dir.file('dyn.pid'))), 'an always-started entry is started with the gateway');
    const pid = await pidIn(dir.file('dyn.pid'));
    assert.ok(alive(pid));
    await writeConfig(dir, { dyn: dyn() });
    await g.waitForLog((l) => msgOf(l).startsWith('server "dyn" idle: 1 tools'));
    assert.ok(await waitGone(pid), 'the always-started process is stopped');
    assert.deepEqual(await names(g), ['dyn__echo']);
    assert.deepEqual(jsonOf(await g.client.callTool({ name: 'dyn__echo', arguments: { message: 'reloaded' } })), {
      echo_message: 'reloaded',
    });
    await stop();
  });

  it('status and metrics show an on-demand server resting, and its starts', { timeout: 30_000 }, async () => {
    config = await writeConfig(dir, { dyn: dyn() });
    await rm(dir.file('dyn.pid'), { force: true });
    const ops = makeToken();
    const agent = makeToken();
    const rules = await writeRules(dir, {
      agents: { alice: { allow: { servers: ['dyn'] }, tokens: [agent.hash] } },
      admins: { ops: { tokens: [ops.hash] } },
    });
    const http = await startHttpGateway({ config, agent: null, args: ['--rules', rules, '--pins', 'tofu', '--state', state] });
    try {
      await http.gw.waitForLog((l) => msgOf(l).startsWith('server "dyn" idle'));
      const status = (await (await fetch(`${http.base}/status`, { headers: { authorization: `Bearer ${ops.token}` } })).json()) as {
        servers: { name: string; state: string; start?: string; on_demand?: { starts: number } }[];
      };
      const row = status.servers.find((s) => s.name === 'dyn')!;
      assert.equal(row.state, 'idle (on demand)');
      assert.equal(row.start, 'on-demand');
      const printed = await cli(['status', '--url', http.url, '--token', ops.token]);
      assert.equal(printed.code, 0, printed.err);
      assert.match(printed.out, /servers: 0 of 1 ready, 1 idle \(on demand: listed, started on a call\)/);
      assert.match(printed.out, /dyn\s+idle \(on demand\)\s+1 tools/);
      let metrics = await (await fetch(`${http.base}/metrics`)).text();
      assert.match(metrics, /mcpgate_on_demand_servers\{state="idle"\} 1/);
      assert.match(metrics, /mcpgate_connection_state\{server="dyn",state="idle"\} 1/);
      const { client } = await connectAgent(http.url, { token: agent.token });
      assert.deepEqual(jsonOf(await client.callTool({ name: 'dyn__echo', arguments: { message: 'http' } })), { echo_message: 'http' });
      metrics = await (await fetch(`${http.base}/metrics`)).text();
      assert.match(metrics, /mcpgate_on_demand_starts_total\{server="dyn"\} 1/);
      assert.match(metrics, /mcpgate_on_demand_servers\{state="running"\} 1/);
      await http.gw.waitForLog((l) => msgOf(l).includes('stopped until the next call'));
      metrics = await (await fetch(`${http.base}/metrics`)).text();
      assert.match(metrics, /mcpgate_on_demand_stops_total\{server="dyn"\} 1/);
      await client.close();
    } finally {
      await http.stop();
    }
  });
});
