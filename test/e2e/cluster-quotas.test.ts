// Quotas across a cluster: two `mcpgate serve --redis` workers and a real redis-server.
// One agent's calls through either worker count on one window (the n+1th is refused on whichever
// worker it reaches), a calls-in-flight limit holds across workers and is released when the call
// ends, and when the worker holding a call dies (SIGKILL) its lease lapses and the slot frees on its
// own. With Redis stopped each worker limits on its own counters (neither all allowed nor all
// refused) and /status says so; when Redis is back the counters are shared again.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import { fixtureServer, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const AGENT = makeToken();
const OPS = makeToken();
const OPS_AUTH = { authorization: `Bearer ${OPS.token}` };

interface QuotaStatus {
  counters: string;
  note?: string;
  local_checks: number;
  limits: { subject: string; rule: string; kind: string; limit: number; used: number }[];
}

async function quotas(base: string): Promise<QuotaStatus> {
  return ((await (await fetch(`${base}/status`, { headers: OPS_AUTH })).json()) as { quotas: QuotaStatus }).quotas;
}

/** The rate-limited refusal (a 429 through the SDK's transport), or undefined when the call passed. */
async function refusal(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    const e = err as Error & { status?: number };
    assert.equal(e.status, 429, `expected a 429, got ${e.message}`);
    assert.match(e.message, /"code":-31023/);
    return e.message;
  }
}

describe('quotas across the workers of a cluster', { timeout: 120_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let a: HttpGateway;
  let b: HttpGateway;
  let onA: Client;
  let onB: Client;
  const echo = (client: Client, text: string): Promise<unknown> => client.callTool({ name: 'sink__echo', arguments: { text } });
  const slow = (client: Client, ms: number, signal?: AbortSignal): Promise<unknown> =>
    client.callTool({ name: 'sink__slow', arguments: { ms } }, signal === undefined ? undefined : { signal });

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, {
      admins: { ops: { tokens: [OPS.hash] } },
      agents: {
        alice: {
          tokens: [AGENT.hash],
          allow: { servers: ['sink'] },
          limits: { tools: { sink: { echo: { calls: 4, per: '1h' }, 'slo*': { inFlight: 1 } } } },
        },
      },
    });
    const args = ['--rules', rules, '--state', dir.file('state'), '--redis', redis.url];
    [a, b] = await Promise.all([startHttpGateway({ config, agent: null, args }), startHttpGateway({ config, agent: null, args })]);
    onA = (await connectAgent(a.url, { token: AGENT.token })).client;
    onB = (await connectAgent(b.url, { token: AGENT.token })).client;
  });

  after(async () => {
    await onA?.close().catch(() => undefined);
    await onB?.close().catch(() => undefined);
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    await dir?.remove();
  });

  it("shares one window: the agent's fifth call is refused whichever worker it reaches", async () => {
    assert.equal(textOf(await echo(onA, 'a1')), 'a1');
    assert.equal(textOf(await echo(onB, 'b1')), 'b1');
    assert.equal(textOf(await echo(onA, 'a2')), 'a2');
    assert.equal(textOf(await echo(onB, 'b2')), 'b2');
    assert.match((await refusal(echo(onA, 'a3')))!, /\$\.agents\.alice\.limits\.tools\.sink\.echo \(4 calls per 1h\)/);
    assert.ok((await refusal(echo(onB, 'b3'))) !== undefined);
    const status = await quotas(b.base);
    assert.equal(status.counters, 'shared');
    assert.deepEqual(
      status.limits.find((l) => l.kind === 'calls'),
      { subject: 'alice', rule: '$.agents.alice.limits.tools.sink.echo', level: 'tool', kind: 'calls', limit: 4, per: '1h', used: 4 },
    );
  });

  it('holds a calls-in-flight limit across workers, and frees it when the call ends', async () => {
    const abort = new AbortController();
    const held = slow(onA, 30_000, abort.signal);
    // Counted once A has taken the call: until then B's call may still pass.
    assert.ok(await until(async () => (await quotas(b.base)).limits.some((l) => l.kind === 'in_flight' && l.used === 1)));
    assert.ok((await refusal(slow(onB, 1))) !== undefined);
    abort.abort();
    await assert.rejects(held);
    // The server stops the cancelled call without answering it: the release reaches Redis once the
    // grace for an abandoned call has passed (servers/abandoned-calls.ts).
    assert.ok(await until(async () => (await refusal(slow(onB, 1))) === undefined, 15_000));
  });

  it('with Redis stopped, each worker limits on its own and says so; shared again once Redis is back', async () => {
    await redis.stop();
    assert.ok(await until(async () => (await quotas(a.base)).counters === 'local'));
    const status = await quotas(a.base);
    assert.match(status.note ?? '', /Redis cannot be asked/);
    // Each worker's own window starts empty: four calls pass on each, the fifth is refused on each.
    for (const [client, name] of [
      [onA, 'a'],
      [onB, 'b'],
    ] as const) {
      for (let i = 0; i < 4; i++) assert.equal(textOf(await echo(client, `${name}${i}`)), `${name}${i}`);
      assert.ok((await refusal(echo(client, `${name}-over`))) !== undefined);
    }
    assert.ok((await quotas(a.base)).local_checks >= 5);
    const metrics = await (await fetch(`${a.base}/metrics`)).text();
    assert.match(metrics, /^mcpgate_quota_local_checks_total [1-9][0-9]*$/m);
    await redis.restart();
    assert.ok(
      await until(async () => (await quotas(a.base)).counters === 'shared' && (await quotas(b.base)).counters === 'shared', 15_000),
    );
  });

  it('frees the calls in flight of a worker that dies, once its lease lapses', async () => {
    void slow(onA, 30_000).catch(() => undefined);
    assert.ok(await until(async () => (await quotas(b.base)).limits.some((l) => l.kind === 'in_flight' && l.used === 1)));
    a.gw.child.kill('SIGKILL');
    await a.gw.exited;
    assert.ok((await refusal(slow(onB, 1))) !== undefined, "the dead worker's call still counts until its lease lapses");
    assert.ok(await until(async () => (await refusal(slow(onB, 1))) === undefined, 15_000));
  });
});
