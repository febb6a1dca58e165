// Smoke: the built CLI fronts two real servers (one v1-SDK, one v2-SDK) and an SDK v2 agent lists and
// calls tools through it; the gateway exits 0 when the agent closes stdin.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  jsonOf,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

describe('smoke: one agent, two servers', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      dyn: fixtureServer('dynamic-server', ['--pidfile', dir.file('dyn.pid')]),
      sink: fixtureServer('kitchen-sink-server'),
    });
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('lists namespaced tools from both servers', async () => {
    const { tools } = await gw.client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('dyn__echo'), names.join(','));
    assert.ok(names.includes('sink__echo'), names.join(','));
    for (const name of names) assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
  });

  it('routes a call to the right server and relays the result unchanged', async () => {
    assert.deepEqual(jsonOf(await gw.client.callTool({ name: 'dyn__echo', arguments: { message: 'hi' } })), { echo_message: 'hi' });
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'hello' } })), 'hello');
  });

  it('exits 0 when the agent closes stdin', async () => {
    const exit = await gw.stop();
    assert.deepEqual(exit, { code: 0, signal: null });
  });
});
