// Two `mcpgate serve --redis --max-sessions 3` workers and a real redis-server.
// Cluster-wide session caps: sessions on both count against one limit (each worker reads the others'
// counts at its heartbeat); an ended session frees a place on any worker; with Redis down each
// worker falls back to its own limit and keeps serving. A forward to an owner that accepts the
// connection but never answers (SIGSTOP) ends with the outcome-unknown error once the owner's
// heartbeat has expired, not a hang; the session's next request is adopted.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import {
  JSON_HEADERS,
  initializeBody,
  makeToken,
  raw,
  rawSession,
  startHttpGateway,
  writeRules,
  type HttpGateway,
} from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };
/** /status is the operators': an admin's token. */
const OPS = makeToken();
const OPS_AUTH = { authorization: `Bearer ${OPS.token}` };

async function clusterOf(base: string): Promise<{ redis: string; cluster_sessions: number | null }> {
  return (
    (await (await fetch(`${base}/status`, { headers: OPS_AUTH })).json()) as { cluster: { redis: string; cluster_sessions: number | null } }
  ).cluster;
}

async function initialize(
  base: string,
): Promise<{ status: number; session: string | undefined; code: string | undefined; message: string | undefined }> {
  const res = await raw(`${base}/mcp`, { headers: { ...JSON_HEADERS, ...AUTH }, body: initializeBody() });
  const error = res.json?.error as { message?: string; data?: { code?: string } } | undefined;
  return {
    status: res.status,
    session: res.headers['mcp-session-id'] as string | undefined,
    code: error?.data?.code,
    message: error?.message,
  };
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
    const rules = await writeRules(dir, {
      agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } },
      admins: { ops: { tokens: [OPS.hash] } },
    });
    [a, b] = (await Promise.all(
      [0, 1].map(() =>
        startHttpGateway({ config, agent: null, args: ['--rules', rules, '--pins', 'off', '--redis', redis.url, '--max-sessions', '3'] }),
      ),
    )) as [HttpGateway, HttpGateway];
    assert.ok(
      await until(async () => (await clusterOf(a.base)).cluster_sessions === 0 && (await clusterOf(b.base)).cluster_sessions === 0, 20_000),
    );
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    await dir?.remove();
  });

  it(
    'refuses a fourth session on either worker, frees a place when one ends, and falls back to the local limit when Redis is down',
    { timeout: 90_000 },
    async () => {
      const onA = [await initialize(a.base), await initialize(a.base)];
      const onB = await initialize(b.base);
      for (const r of [...onA, onB]) assert.equal(r.status, 200);
      // Each worker has seen the other's count (its next heartbeat).
      for (const w of [a, b])
        assert.ok(await until(async () => (await clusterOf(w.base)).cluster_sessions === 3, 10_000), 'three in the cluster');
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
      const third = await initialize(a.base);
      assert.equal(third.status, 200);
      // A now holds 3 (its own limit too); with Redis down B counts only its own 0 and serves.
      await redis.kill();
      assert.ok(await until(async () => (await clusterOf(b.base)).redis === 'down', 10_000));
      assert.equal((await clusterOf(b.base)).cluster_sessions, null);
      const downOnB = await initialize(b.base);
      assert.equal(downOnB.status, 200);
      const local = await initialize(a.base);
      assert.equal(local.status, 503);
      assert.match(local.message ?? '', /the gateway already serves 3 sessions/);
      await redis.restart();
      for (const w of [a, b]) assert.ok(await until(async () => (await clusterOf(w.base)).redis === 'up', 15_000), 'back');
      // Leave no session for the next test to count.
      for (const [w, r] of [
        [a, onA[0]!],
        [a, onA[1]!],
        [a, third],
        [b, downOnB],
      ] as const) {
        assert.equal((await raw(`${w.base}/mcp`, { method: 'DELETE', headers: { ...AUTH, 'mcp-session-id': r.session! } })).status, 200);
      }
    },
  );

  it(
    'a forward to an owner that accepts but never answers ends with outcome unknown, then the session is adopted',
    { timeout: 60_000 },
    async () => {
      const session = await rawSession(a.url, AUTH);
      const call = (text: string): Promise<Awaited<ReturnType<typeof raw>>> =>
        raw(`${b.base}/mcp`, {
          headers: { ...JSON_HEADERS, ...AUTH, 'mcp-session-id': session },
          body: JSON.stringify({ jsonrpc: '2.0', id: text, method: 'tools/call', params: { name: 'sink__echo', arguments: { text } } }),
        });
      assert.equal((await call('through b')).json?.result !== undefined, true);
      process.kill(a.gw.pid, 'SIGSTOP');
      try {
        const started = performance.now();
        const stuck = await call('to a stopped owner');
        const error = stuck.json?.error as { message: string; data: { code: string; outcome: string } } | undefined;
        assert.equal(error?.data.code, 'MCPG_SERVER_UNAVAILABLE', stuck.body);
        assert.equal(error?.data.outcome, 'unknown');
        assert.match(error?.message ?? '', /heartbeat expired/);
        assert.ok(performance.now() - started < 15_000);
        // Its record has expired: the next request is adopted by B and served.
        const served = await call('adopted');
        assert.equal((served.json?.result as { content: { text: string }[] } | undefined)?.content[0]?.text, 'adopted', served.body);
      } finally {
        process.kill(a.gw.pid, 'SIGCONT');
      }
    },
  );
});
