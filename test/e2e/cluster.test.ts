// A cluster: three `mcpgate serve --http` workers sharing one real Redis, driven by the official SDK
// client whose requests of one agent session are spread over the workers on purpose (a fetch that
// rewrites each request to the next worker's port): the GET stream on one worker, POSTs on others.
// Tools, progress, sampling and elicitation across workers; a forged forward is refused; Redis
// killed and restarted mid-use; kill -9 of the owner loses only its in-flight calls.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fixtureServer, jsonOf, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { JSON_HEADERS, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };
/** /status is the operators': an admin's token. */
const OPS = makeToken();
const OPS_AUTH = { authorization: `Bearer ${OPS.token}` };

/** A fetch that sends each request to the next of `bases()` (round robin), as a non-sticky balancer would. */
function spreading(bases: () => string[]): (url: string | URL, init?: RequestInit) => Promise<Response> {
  let next = 0;
  return (url, init) => {
    const list = bases();
    const target = new URL(url);
    target.host = new URL(list[next++ % list.length]!).host;
    return fetch(target, init);
  };
}

async function agent(bases: () => string[]): Promise<{ client: Client; asked: string[] }> {
  const asked: string[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(`${bases()[0]!}/mcp`), {
    requestInit: { headers: AUTH },
    fetch: spreading(bases),
  });
  const client = new Client({ name: 'cluster-test', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  client.setRequestHandler('sampling/createMessage', () => {
    asked.push('sampling');
    return { model: 'm', role: 'assistant', content: { type: 'text', text: 'from the agent' } };
  });
  client.setRequestHandler('elicitation/create', () => {
    asked.push('elicitation');
    return { action: 'accept', content: { name: 'ada' } };
  });
  await client.connect(transport);
  return { client, asked };
}

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

async function status(base: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${base}/status`, { headers: OPS_AUTH })).json()) as Record<string, unknown>;
}

describe('a cluster of three workers sharing one Redis', { timeout: 120_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let workers: HttpGateway[] = [];
  const clients: Client[] = [];

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, {
      agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } },
      admins: { ops: { tokens: [OPS.hash] } },
    });
    workers = await Promise.all(
      [0, 1, 2].map(() => startHttpGateway({ config, agent: null, args: ['--rules', rules, '--pins', 'off', '--redis', redis.url] })),
    );
    // Each has joined: its status lists three live workers.
    for (const w of workers)
      assert.ok(await until(async () => ((await status(w.base)).cluster as { workers: unknown[] }).workers.length === 3, 10_000));
  });

  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await Promise.all(workers.map((w) => w.stop()));
    await redis?.stop();
    await dir?.remove();
  });

  it('serves one session whose requests land on every worker: tools, progress, sampling, elicitation', { timeout: 30_000 }, async () => {
    const bases = workers.map((w) => w.base);
    const { client, asked } = await agent(() => bases);
    clients.push(client);
    for (let i = 0; i < 6; i++)
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: `hi ${i}` } })), `hi ${i}`);
    const progress: number[] = [];
    const done = await client.callTool(
      { name: 'sink__progress', arguments: { steps: 3 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    assert.equal(done.isError, undefined);
    assert.deepEqual(progress, [1, 2, 3]);
    assert.equal(textOf(await client.callTool({ name: 'sink__sample', arguments: { prompt: 'x' } })), 'sampled: from the agent');
    assert.deepEqual(jsonOf(await client.callTool({ name: 'sink__elicit', arguments: {} })), {
      action: 'accept',
      content: { name: 'ada' },
    });
    assert.deepEqual(asked, ['sampling', 'elicitation']);
    // Two of every three requests landed on a worker that does not own the session: forwarded, not adopted.
    let relayed = 0;
    let adopted = 0;
    for (const b of bases) {
      relayed += await metric(b, 'mcpgate_cluster_forwarded_total{outcome="relayed"}');
      adopted += await metric(b, 'mcpgate_cluster_adoptions_total');
    }
    assert.ok(relayed >= 8, `forwarded ${relayed}`);
    assert.equal(adopted, 0);
    const owner = await status(bases[0]!);
    assert.equal((owner.cluster as { sessions: number }).sessions, 1);
    await client.close();
  });

  it('refuses a forged forward (headers without the cluster secret), on any worker', { timeout: 10_000 }, async () => {
    const init = await raw(`${workers[0]!.base}/mcp`, {
      headers: { ...JSON_HEADERS, ...AUTH },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const session = init.headers['mcp-session-id'] as string;
    assert.ok(session);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const forged = { 'x-mcpgate-forwarded-by': 'evil:1', 'x-mcpgate-forwarded-at': String(Date.now()), 'x-mcpgate-forwarded-sig': 'AAAA' };
    for (const w of workers) {
      const res = await raw(`${w.base}/mcp`, { headers: { ...JSON_HEADERS, ...AUTH, 'mcp-session-id': session, ...forged }, body });
      assert.equal(res.status, 403, res.body);
      assert.equal((res.json?.error as { data: { code: string } }).data.code, 'MCPG_FORWARD_REFUSED');
    }
    // Without the forged headers the same request is served (forwarded where needed).
    const ok = await raw(`${workers[1]!.base}/mcp`, { headers: { ...JSON_HEADERS, ...AUTH, 'mcp-session-id': session }, body });
    assert.equal(ok.status, 200, ok.body);
    // Another agent's token (none here) or no token: 401 on the worker reached, before any forwarding.
    const anon = await raw(`${workers[2]!.base}/mcp`, { headers: { ...JSON_HEADERS, 'mcp-session-id': session }, body });
    assert.equal(anon.status, 401);
  });

  it('keeps serving while Redis is down, and the workers rejoin when it is back', { timeout: 60_000 }, async () => {
    const bases = workers.map((w) => w.base);
    const { client } = await agent(() => bases);
    clients.push(client);
    assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: 'before' } })), 'before');
    await redis.kill();
    for (const b of bases) assert.ok(await until(async () => (await metric(b, 'mcpgate_cluster_redis_up')) === 0, 10_000));
    for (let i = 0; i < 6; i++)
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: `down ${i}` } })), `down ${i}`);
    for (const b of bases) assert.equal(((await status(b)).cluster as { redis: string }).redis, 'down');
    await redis.restart();
    for (const b of bases)
      assert.ok(
        await until(async () => ((await status(b)).cluster as { workers: unknown[] }).workers.length === 3, 15_000),
        `${b} rejoined`,
      );
    for (let i = 0; i < 6; i++)
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: `after ${i}` } })), `after ${i}`);
    for (const b of bases) assert.equal(await metric(b, 'mcpgate_cluster_redis_up'), 1);
    await client.close();
  });

  it(
    'kill -9 of the owner mid-load: only its in-flight calls fail (outcome unknown); the session goes on elsewhere',
    { timeout: 60_000 },
    async () => {
      const [owner, ...rest] = workers as [HttpGateway, HttpGateway, HttpGateway];
      let alive = [owner.base, ...rest.map((w) => w.base)];
      const { client } = await agent(() => alive);
      clients.push(client);
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: 'owned' } })), 'owned');
      assert.equal(((await status(owner.base)).cluster as { sessions: number }).sessions >= 1, true);
      // Slow calls, spread over the three workers, all running on the owner.
      const before = await metric(owner.base, 'mcpgate_calls_in_flight');
      const inflight = [0, 1, 2, 3, 4, 5].map(() =>
        client.callTool({ name: 'sink__slow', arguments: { ms: 20_000 } }).then(
          () => 'ok',
          (err: Error & { code?: number }) => err,
        ),
      );
      assert.ok(
        await until(async () => (await metric(owner.base, 'mcpgate_calls_in_flight')) >= before + 6, 10_000),
        `six calls in flight on the owner (it has ${await metric(owner.base, 'mcpgate_calls_in_flight')})`,
      );
      // The balancer takes the dead worker out; then the owner dies hard.
      alive = rest.map((w) => w.base);
      owner.gw.child.kill('SIGKILL');
      const outcomes = await Promise.all(inflight);
      for (const outcome of outcomes) {
        assert.ok(outcome instanceof Error, 'an in-flight call on the dead owner cannot succeed');
      }
      // Those relayed by a live worker end with the outcome-unknown error; the session is adopted and goes on.
      assert.ok(
        outcomes.some((o) => o instanceof Error && /may or may not have run/.test(o.message)),
        outcomes.map(String).join('; '),
      );
      for (let i = 0; i < 4; i++)
        assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: `after ${i}` } })), `after ${i}`);
      let adopted = 0;
      for (const w of rest) adopted += await metric(w.base, 'mcpgate_cluster_adoptions_total');
      assert.ok(adopted >= 1, `adopted ${adopted}`);
    },
  );
});
