// The console's sign-in limit across workers (console sign-in): two `serve --redis`
// workers on a real redis-server count an address's failed sign-ins together, so the limit of 5 a
// minute holds for the cluster, not for each worker. What Redis holds can only tighten each worker's
// own limit: a hostile writer who deletes the counts gets one worker's limit, one who writes huge
// counts without expiry locks out for one window at most and never refuses the right token past the
// total ceiling. With Redis down each worker limits alone, says so in its log and /status, and says
// so again when the counts are shared once more.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { fixtureServer, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { signInFrom } from '../helpers/console.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const admin = makeToken();

async function clusterStatus(w: HttpGateway): Promise<{ redis?: string; sign_in_limit?: string }> {
  const res = await fetch(`${w.base}/status`, { headers: { authorization: `Bearer ${admin.token}` } });
  return ((await res.json()) as { cluster?: { redis?: string; sign_in_limit?: string } }).cluster ?? {};
}

describe('console: the sign-in limit shared by the workers of a cluster', { timeout: 120_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let writer: Redis;
  let a: HttpGateway;
  let b: HttpGateway;

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    writer = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await writer.connect();
    writer.on('error', () => {});
    const config = await writeConfig(dir, { e: fixtureServer('echo-server') });
    const rules = await writeRules(dir, { agents: {}, admins: { alice: { tokens: [admin.hash] } } });
    const args = ['--rules', rules, '--pins', 'off', '--redis', redis.url];
    const env = { MCPGATE_CLUSTER_SECRET: 'a-cluster-secret-for-the-console-test-0123456789' };
    [a, b] = (await Promise.all([0, 1].map(() => startHttpGateway({ config, agent: null, args, env })))) as [HttpGateway, HttpGateway];
    for (const w of [a, b]) assert.ok(await until(async () => (await clusterStatus(w)).redis === 'up', 20_000), 'the worker reaches Redis');
  });

  after(async () => {
    await Promise.all([a, b].map((w) => w?.stop()));
    writer?.disconnect();
    await redis?.stop();
    await dir?.remove();
  });

  it("an address's failures on both workers together meet its limit, the right token included; another address signs in", async () => {
    const from = '127.0.1.1';
    for (let i = 0; i < 3; i++) assert.equal((await signInFrom(a.base, from, `wrong-a-${i}`)).status, 401);
    for (let i = 0; i < 2; i++) assert.equal((await signInFrom(b.base, from, `wrong-b-${i}`)).status, 401);
    // Each worker alone has seen fewer than 5: only the shared count refuses these.
    for (const [w, token] of [
      [a, admin.token],
      [b, 'wrong-again'],
    ] as const) {
      const limited = await signInFrom(w.base, from, token);
      assert.equal(limited.status, 429, token === admin.token ? 'the right token is refused without being checked' : 'a wrong one too');
      assert.ok(limited.retryAfter !== undefined && limited.retryAfter >= 1 && limited.retryAfter <= 60, String(limited.retryAfter));
      assert.equal(limited.cookie, undefined);
    }
    const other = await signInFrom(b.base, '127.0.1.2', admin.token);
    assert.equal(other.status, 303, 'another address is not limited');
    assert.match(other.cookie ?? '', /^mcpgate_console=/);
    assert.equal((await clusterStatus(a)).sign_in_limit, 'shared');
    // The keys name no address.
    const keys = await writer.keys('mcpgate:signin:*');
    assert.ok(keys.length >= 2 && keys.every((k) => !k.includes('127.0.')), keys.join(' '));
  });

  it("what a Redis writer does cannot loosen a worker's own limit, lock out past a window, or refuse the right token past the total", async () => {
    const from = '127.0.2.1';
    for (let i = 0; i < 5; i++) assert.equal((await signInFrom(a.base, from, `wrong-${i}`)).status, 401);
    // Deleting the counts: worker a still has its own five.
    await writer.del(...(await writer.keys('mcpgate:signin:*')));
    assert.equal((await signInFrom(a.base, from, admin.token)).status, 429, "the worker's own count holds");
    assert.equal((await signInFrom(b.base, from, 'wrong-5')).status, 401, 'the other worker: its own limit, as without Redis');

    // Huge counts with no expiry on every key (the total's among them).
    await writer.set('mcpgate:signin:total', '999999999999');
    for (const key of await writer.keys('mcpgate:signin:address:*')) await writer.set(key, '999999999999');
    const right = await signInFrom(b.base, '127.0.2.9', admin.token);
    assert.equal(right.status, 303, 'past only the total the token is checked: the right one signs in');
    const wrong = await signInFrom(b.base, '127.0.2.10', 'wrong-past-the-total');
    assert.equal(wrong.status, 429);
    assert.ok(wrong.retryAfter !== undefined && wrong.retryAfter <= 60, String(wrong.retryAfter));
    const locked = await signInFrom(b.base, from, admin.token);
    assert.equal(locked.status, 429, 'a written count locks its address out…');
    assert.ok(locked.retryAfter !== undefined && locked.retryAfter <= 60, `…for one window at most (${locked.retryAfter} s)`);
    for (const key of await writer.keys('mcpgate:signin:*')) {
      const ttl = await writer.pttl(key);
      assert.ok(ttl > 0 && ttl <= 60_000, `${key} expires within a window (${ttl} ms)`);
    }
    await writer.del(...(await writer.keys('mcpgate:signin:*')));
  });

  it('with Redis down each worker limits alone and says so; shared again once Redis is back', async () => {
    await redis.kill();
    assert.ok(await until(async () => (await clusterStatus(a)).redis === 'down', 20_000));
    const from = '127.0.3.1';
    for (let i = 0; i < 5; i++) assert.equal((await signInFrom(a.base, from, `wrong-${i}`)).status, 401);
    assert.equal((await signInFrom(a.base, from, admin.token)).status, 429, "the worker's own limit holds");
    assert.equal((await signInFrom(b.base, from, 'wrong-5')).status, 401, 'the other worker counts alone');
    assert.ok(
      a.gw.logs.some((l) => /each worker limits sign-ins alone/.test(String(l.msg))),
      'the log says so',
    );
    assert.equal((await clusterStatus(a)).sign_in_limit, 'per-worker');

    await redis.restart();
    assert.ok(await until(async () => (await clusterStatus(a)).redis === 'up', 20_000));
    assert.equal((await signInFrom(a.base, '127.0.3.2', 'wrong-after')).status, 401);
    assert.equal((await clusterStatus(a)).sign_in_limit, 'shared');
    assert.ok(a.gw.logs.some((l) => /shared by the cluster's workers again/.test(String(l.msg))));
  });
});
