// Calls waiting for a person's approval across the workers of a cluster (a real redis-server, two
// real `mcpgate serve --http --redis` workers): an agent's call waits on worker A; worker B lists it
// with its exact arguments and `mcpgate approve-call` through B approves it; the server behind A runs
// it once. Someone who can write to Redis but has no cluster secret cannot approve: a forged decision
// (unsigned, or signed with another secret) wakes worker A, is refused and counted, and the call goes
// on waiting until an admin's real decision; a forged pending call is listed nowhere and cannot be decided.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Client } from '@modelcontextprotocol/client';
import { cli, fixtureServer, rpcError, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';
import { signRecord } from '../../src/cluster/signing.js';

const SECRET = randomBytes(24).toString('base64url');

interface Pending {
  id: string;
  worker: string;
  arguments: Record<string, unknown>;
  digest: string;
}

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

describe('approvals across the workers of a cluster', { timeout: 120_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let store: Redis;
  let a: HttpGateway;
  let b: HttpGateway;
  let client: Client;
  const admin = makeToken();
  const agent = makeToken();

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    store = new Redis(redis.url, { lazyConnect: true });
    await store.connect();
    const config = await writeConfig(dir, { g: fixtureServer('ledger-server') });
    const rules = await writeRules(dir, {
      agents: { bot: { allow: { servers: ['g'] }, tokens: [agent.hash], approve: { g: ['delete_*'] } } },
      admins: { alice: { tokens: [admin.hash] } },
    });
    const args = ['--rules', rules, '--pins', 'off', '--redis', redis.url];
    [a, b] = (await Promise.all(
      [0, 1].map(() => startHttpGateway({ config, agent: null, args, env: { MCPGATE_CLUSTER_SECRET: SECRET } })),
    )) as [HttpGateway, HttpGateway];
    ({ client } = await connectAgent(a.url, { token: agent.token }));
  });

  after(async () => {
    await client?.close();
    await Promise.all([a, b].map((w) => w?.stop()));
    store?.disconnect();
    await redis?.stop();
    await dir?.remove();
  });

  const listOn = async (w: HttpGateway): Promise<Pending[]> => {
    const res = await raw(`${w.base}/approvals`, { method: 'GET', headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(res.status, 200, res.body);
    return (JSON.parse(res.body) as { approvals: Pending[] }).approvals;
  };
  const deletes = async (): Promise<unknown[]> =>
    (JSON.parse(textOf(await client.callTool({ name: 'g__ledger', arguments: {} }))) as { tool: string; arguments: unknown }[])
      .filter((c) => c.tool === 'delete_branch')
      .map((c) => c.arguments);
  /** The one call waiting, as worker B lists it (once A has posted it). */
  const waitingOnB = async (): Promise<Pending> => {
    let found: Pending[] = [];
    assert.ok(await until(async () => (found = await listOn(b)).length === 1));
    return found[0]!;
  };

  it("waits on worker A, is approved through worker B, and runs once on A's server", async () => {
    const args = { name: 'feature-1', why: 'merged' };
    const call = client.callTool({ name: 'g__delete_branch', arguments: args });
    const pending = await waitingOnB();
    assert.deepEqual(pending.arguments, args);
    assert.equal(pending.worker, a.gw.logs.find((l) => /joined the cluster/.test(String(l.msg)))?.worker);
    assert.deepEqual(await deletes(), []);
    const approved = await cli(['approve-call', pending.id, '--url', b.base, '--token', admin.token]);
    assert.equal(approved.code, 0, approved.err);
    assert.equal(textOf(await call), 'done delete_branch');
    assert.deepEqual(await deletes(), [args]);
    assert.deepEqual(await listOn(b), []);
  });

  it("a forged decision written into Redis does not approve; an admin's real one still decides", async () => {
    const failed = rpcError(client.callTool({ name: 'g__delete_branch', arguments: { name: 'main' } }));
    const pending = await waitingOnB();
    const key = `mcpgate:approval:${pending.id}:decision`;
    const decision = JSON.stringify({
      id: pending.id,
      digest: pending.digest,
      approved: true,
      by: 'admin:mallory',
      reason: '',
      at: Date.now(),
    });
    const before = await metric(a.base, 'mcpgate_cluster_records_refused_total{kind="decision"}');
    // Unsigned, then signed with another secret: each wakes worker A, which takes it and refuses it.
    let refused = before;
    for (const sig of ['forged', signRecord('not-the-cluster-secret', 'decision', key, { decision })]) {
      await store.hset(key, { decision, sig });
      await store.publish('mcpgate:approvals:decided', JSON.stringify({ id: pending.id }));
      refused += 1;
      assert.ok(await until(async () => (await metric(a.base, 'mcpgate_cluster_records_refused_total{kind="decision"}')) >= refused));
      assert.equal(await store.exists(key), 0, 'taken (and deleted) by worker A');
    }
    // Still waiting, and the server has not been called.
    assert.deepEqual(
      (await listOn(a)).map((p) => p.id),
      [pending.id],
    );
    assert.equal((await deletes()).length, 1);
    const denied = await cli([
      'approve-call',
      pending.id,
      '--deny',
      '--reason',
      'protected branch',
      '--url',
      b.base,
      '--token',
      admin.token,
    ]);
    assert.equal(denied.code, 0, denied.err);
    const err = await failed;
    assert.equal(err.data.code, 'MCPG_CALL_DENIED');
    assert.match(err.message, /denied by admin:alice: protected branch/);
    assert.equal((await deletes()).length, 1);
  });

  it('a forged pending call is listed nowhere and cannot be decided', async () => {
    const id = 'forged-call';
    const call = JSON.stringify({
      id,
      agent: 'bot',
      session: 's',
      server: 'g',
      tool: 'delete_branch',
      publicName: 'g__delete_branch',
      arguments: { name: 'x' },
      digest: '0'.repeat(64),
      rule: 'r',
      requestedAt: Date.now(),
      expiresAt: Date.now() + 60_000,
      worker: 'nobody',
    });
    await store.hset(`mcpgate:approval:${id}`, { call, sig: 'forged' });
    await store.zadd('mcpgate:approvals', Date.now() + 60_000, id);
    assert.deepEqual(await listOn(b), []);
    const res = await raw(`${b.base}/approvals/${id}`, {
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
      body: '{"approve": true}',
    });
    assert.equal(res.status, 404, res.body);
    assert.ok((await metric(b.base, 'mcpgate_cluster_records_refused_total{kind="approval"}')) >= 1);
  });

  it('1,500 forged ids ahead of a real call in the index do not hide it, and are dropped', async () => {
    const soon = Date.now() + 30_000;
    const pipeline = store.pipeline();
    for (let i = 0; i < 1500; i++) pipeline.zadd('mcpgate:approvals', soon, `stuffed-${i}`);
    await pipeline.exec();
    const call = client.callTool({ name: 'g__delete_branch', arguments: { name: 'under-the-pile' } }).then(
      () => 'ran',
      (err: Error) => err.message,
    );
    const pending = await waitingOnB();
    assert.deepEqual(pending.arguments, { name: 'under-the-pile' });
    assert.equal(await store.zscore('mcpgate:approvals', 'stuffed-0'), null, 'a forged id is dropped from the index');
    const denied = await cli(['approve-call', pending.id, '--deny', '--url', b.base, '--token', admin.token]);
    assert.equal(denied.code, 0, denied.err);
    assert.match(await call, /denied by admin:alice/);
  });
});
