// Resource subscriptions and log levels on a per-agent server: a subscription goes to the
// agent's own pooled connection (test/fixtures/counter-server.ts keeps them per process) and its
// updates reach only that agent; `logging/setLevel` reaches the agent's own connection with its own
// level, not another agent's. Two official SDK clients over Streamable HTTP.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import { fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 60_000;
const URI = 'mcpgate://counter/counter://count';

describe('subscriptions and log levels on a per-agent server', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const clients: Client[] = [];
  const agent = async (name: string): Promise<{ client: Client; updates: unknown[] }> => {
    const updates: unknown[] = [];
    const { client } = await connectAgent(gate.url, {
      headers: { 'x-mcpgate-agent': name },
      setup: (c) => c.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params)),
    });
    clients.push(client);
    return { client, updates };
  };
  const call = async (client: Client, tool: string) => textOf(await client.callTool({ name: `counter__${tool}`, arguments: {} }));

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { counter: fixtureServer('counter-server', [], { sessions: 'per-agent' }) });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gate?.stop();
    await dir?.remove();
  });

  it("a subscription is made on the agent's own connection and its updates reach only that agent", async () => {
    const alice = await agent('alice');
    const bob = await agent('bob');
    await call(bob.client, 'get'); // bob's own connection exists
    const updated = new Promise<void>((resolve) =>
      alice.client.setNotificationHandler('notifications/resources/updated', (n) => (alice.updates.push(n.params), resolve())),
    );
    await alice.client.subscribeResource({ uri: URI });
    assert.equal(await call(alice.client, 'touch'), 'touched');
    await updated;
    assert.deepEqual(alice.updates, [{ uri: URI }]);
    assert.equal(await call(bob.client, 'touch'), 'not subscribed', "bob's server session has no subscription of alice's");
    await alice.client.unsubscribeResource({ uri: URI });
    assert.equal(await call(alice.client, 'touch'), 'not subscribed');
    // bob's own subscription is his, and alice hears nothing of it.
    await bob.client.subscribeResource({ uri: URI });
    assert.equal(await call(bob.client, 'touch'), 'touched');
    assert.equal(await call(alice.client, 'touch'), 'not subscribed');
    assert.deepEqual(alice.updates, [{ uri: URI }]);
  });

  it("logging/setLevel reaches the agent's own connection with its own level; a new connection gets it at start", async () => {
    const carol = await agent('carol');
    const dave = await agent('dave');
    await carol.client.setLoggingLevel('error'); // before carol's connection exists
    assert.equal(await call(carol.client, 'level'), 'error');
    assert.equal(await call(dave.client, 'level'), 'unset', 'dave never set a level');
    await dave.client.setLoggingLevel('debug');
    assert.equal(await call(dave.client, 'level'), 'debug');
    assert.equal(await call(carol.client, 'level'), 'error', "dave's level did not reach carol's server session");
  });
});
