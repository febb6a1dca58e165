// Servers that fail while running: a call that outlives the server's `timeout` is cut, cancelled on
// the server and reported as MCPG_SERVER_TIMEOUT while the connection stays usable; progress resets
// the clock; a server killed with calls in flight fails every one of them at once (never left to run
// into a timeout), its tools stay listed while it restarts (a call meanwhile gets the
// retryable MCPG_SERVER_UNAVAILABLE, not "unknown tool"), and the other servers carry on.

import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
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

describe('failures: timeouts and servers that die mid-call', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let listChanged = 0;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      sink: fixtureServer('kitchen-sink-server', ['--marker-dir', dir.path], { timeout: 500 }),
      victim: fixtureServer('kitchen-sink-server', ['--name', 'victim']),
    });
    gw = await startGateway({ config });
    gw.client.setNotificationHandler('notifications/tools/list_changed', () => void listChanged++);
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it("cuts a call at the server's timeout, cancels it on the server, and keeps the connection usable", { timeout: 15_000 }, async () => {
    const started = Date.now();
    const err = await rpcError(gw.client.callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag: 'timeout' } }));
    assert.equal(err.code, -31012);
    assert.equal(err.data.code, 'MCPG_SERVER_TIMEOUT');
    assert.equal(err.data.server, 'sink');
    assert.equal(err.data.timeoutMs, 500);
    assert.ok(Date.now() - started < 5000, 'the timeout fired late');
    assert.ok(await until(() => existsSync(dir.file('cancelled-timeout'))), 'the server was not told to cancel');
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'after' } })), 'after');
  });

  it('lets a call that reports progress run past the timeout (progress resets the clock)', { timeout: 15_000 }, async () => {
    // 80 steps 10 ms apart: ~0.8 s in all, longer than the 500 ms timeout, never 500 ms silent.
    let seen = 0;
    const result = await gw.client.callTool({ name: 'sink__progress', arguments: { steps: 80 } }, { onprogress: () => void seen++ });
    assert.equal(textOf(result), 'done');
    assert.ok(seen > 0);
  });

  it('fails every call in flight at once when its server dies; its tools stay listed while it restarts', { timeout: 20_000 }, async () => {
    const pid = Number(textOf(await gw.client.callTool({ name: 'victim__pid', arguments: {} })));
    const before_ = listChanged;
    const calls = [1, 2, 3].map((i) => rpcError(gw.client.callTool({ name: 'victim__slow', arguments: { ms: 30_000, tag: `v${i}` } })));
    // The calls are in flight once the server has them; a round trip to the same server proves it.
    await gw.client.callTool({ name: 'victim__echo', arguments: { text: 'sync' } });
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    for (const err of await Promise.all(calls)) {
      assert.equal(err.code, -31011);
      assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.equal(err.data.server, 'victim');
      assert.match(err.message, /killed by SIGKILL/);
    }
    assert.ok(Date.now() - killedAt < 3000, 'calls were not failed at once');
    const names = (await gw.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('victim__echo'), names.join(', '));
    // Until it is back, a call is refused as retryable (never "unknown tool"); then it goes through.
    assert.ok(
      await until(async () => {
        try {
          return textOf(await gw.client.callTool({ name: 'victim__echo', arguments: { text: 'x' } })) === 'x';
        } catch (err) {
          const { data } = err as { data?: Record<string, unknown> };
          assert.equal(data?.code, 'MCPG_SERVER_UNAVAILABLE');
          assert.equal(data.retryable, true);
          return false;
        }
      }, 15_000),
      'not back',
    );
    assert.equal(listChanged, before_, 'the agent was told of no list change');
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'alive' } })), 'alive');
  });
});

describe('failures: an agent with too many requests in flight', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    gw = await startGateway({
      config: await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') }),
      args: ['--max-inflight', '2'],
    });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('refuses requests past --max-inflight with MCPG_OVERLOADED, without reaching the server', { timeout: 15_000 }, async () => {
    const controller = new AbortController();
    const slow = [1, 2].map((i) =>
      gw.client
        .callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag: `o${i}` } }, { signal: controller.signal })
        .catch(() => 'aborted'),
    );
    // The agent's messages are handled in the order sent, so both slow calls are in flight by now.
    const err = await rpcError(gw.client.callTool({ name: 'sink__echo', arguments: { text: 'x' } }));
    assert.equal(err.code, -31016);
    assert.equal(err.data.code, 'MCPG_OVERLOADED');
    assert.match(err.message, /2 requests in flight \(the limit is 2\)/);
    controller.abort();
    assert.deepEqual(await Promise.all(slow), ['aborted', 'aborted']);
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'free' } })), 'free');
  });
});
