// Issue #12, cluster-wide session caps: two `mcpgate serve --redis --max-sessions 3` workers and a real
// redis-server. Sessions on both count against one limit (each worker reads the others' counts at its
// heartbeat); an ended session frees a place on any worker; with Redis down each worker falls back to
// its own limit and keeps serving.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { JSON_HEADERS, initializeBody, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };

async function clusterOf(base: string): Promise<{ redis: string; cluster_sessions: number | null }> {
  return ((await (await fetch(`${base}/status`, { headers: AUTH })).json()) as { cluster: { redis: string; cluster_sessions: number | null } }).cluster;
}

async function initialize(base: string): Promise<{ status: number; session: string | undefined; code: string | undefined; message: string | undefined }> {
  const res = await raw(`${base}/mcp`, { headers: { ...JSON_HEADERS, ...AUTH }, body: initializeBody() });
  const error = res.json?.error as { message?: string; data?: { code?: string } } | undefined;
  return { status: res.status, session: res.headers['mcp-session-id'] as string | undefined, code: error?.data?.code, message: error?.message };
}

describe('--max-sessions counts across the cluster', { timeout: 120_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let a: HttpGateway;
  let b: HttpGateway;

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, { agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } } });
    [a, b] = await Promise.all([0, 1].map(() => startHttpGateway({ config, agent: null, args: ['--rules', rules, '--pins', 'off', '--redis', redis.url, '--max-sessions', '3'] }))) as [HttpGateway, HttpGateway];
    assert.ok(await until(async () => (await clusterOf(a.base)).cluster_sessions === 0 && (await clusterOf(b.base)).cluster_sessions === 0, 20_000));
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    await dir?.remove();
  });

  it('refuses a fourth session on either worker, frees a place when one ends, and falls back to the local limit when Redis is down', { timeout: 90_000 }, async () => {
    const onA = [await initialize(a.base), await initialize(a.base)];
    const onB = await initialize(b.base);
    for (const r of [...onA, onB]) assert.equal(r.status, 200);
    // Each worker has seen the other's count (its next heartbeat).
    for (const w of [a, b]) assert.ok(await until(async () => (await clusterOf(w.base)).cluster_sessions === 3, 10_000), 'three in the cluster');
    for (const w of [a, b]) {
      const refused = await initialize(w.base);
      assert.equal(refused.status, 503);
      assert.equal(refused.code, 'MCPG_SESSION_LIMIT');
      assert.match(refused.message ?? '', /the cluster already serves 3 sessions \(the limit is 3, counted across its workers\)/);
    }
    // One ends (DELETE) on B: A may open one again.
    const ended = await raw(`${b.base}/mcp`, { method: 'DELETE', headers: { ...AUTH, 'mcp-session-id': onB.session! } });
    assert.equal(ended.status, 200);
    assert.ok(await until(async () => (await clusterOf(a.base)).cluster_sessions === 2, 10_000), 'A sees two');
    assert.equal((await initialize(a.base)).status, 200);
    // A now holds 3 (its own limit too); with Redis down B counts only its own 0 and serves.
    await redis.kill();
    assert.ok(await until(async () => (await clusterOf(b.base)).redis === 'down', 10_000));
    assert.equal((await clusterOf(b.base)).cluster_sessions, null);
    assert.equal((await initialize(b.base)).status, 200);
    const local = await initialize(a.base);
    assert.equal(local.status, 503);
    assert.match(local.message ?? '', /the gateway already serves 3 sessions/);
  });
});
