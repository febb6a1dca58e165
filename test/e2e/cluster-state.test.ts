// Cluster-wide state: three `mcpgate serve --redis` workers and a real redis-server. Worker
// A reads the shared directory's files; B and C read them through symlinks in directories of their
// own, so their file watches never see a change (as on another host, or a network file system): only
// A's nudge over Redis pub/sub makes them re-read. A pin approval and a rules reload reach every
// worker (each reports the same configuration version in /status, and an agent on each sees the
// change); a list_changed from a server reaches an agent whose GET stream is on another worker
// than its POSTs.

import { mkdir, symlink } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { cli, fixtureServer, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };
/** /status is the operators': an admin's token. */
const OPS = makeToken();
const OPS_AUTH = { authorization: `Bearer ${OPS.token}` };

interface Status {
  config_version: string;
  cluster: { workers: { id: string; version: string }[] };
}

async function status(base: string): Promise<Status> {
  return (await (await fetch(`${base}/status`, { headers: OPS_AUTH })).json()) as Status;
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

describe('cluster-wide state: reloads and pin approvals reach every worker', { timeout: 180_000, skip: REDIS_MISSING }, () => {
  let shared: TempDir;
  const own: TempDir[] = [];
  let redis: RedisServer;
  let workers: HttpGateway[] = [];
  const clients: Client[] = [];
  let state = '';

  before(async () => {
    shared = await tempDir();
    redis = await RedisServer.start();
    state = shared.file('state');
    await mkdir(state);
    const servers = { sink: fixtureServer('kitchen-sink-server') };
    const config = await writeConfig(shared, servers);
    const rules = await writeRules(shared, {
      agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } },
      admins: { ops: { tokens: [OPS.hash] } },
    });
    const args = (rulesFile: string, stateDir: string): string[] => [
      '--rules',
      rulesFile,
      '--state',
      stateDir,
      '--pins',
      'strict',
      '--redis',
      redis.url,
    ];
    const a = startHttpGateway({ config, agent: null, args: args(rules, state) });
    const others = [0, 1].map(async () => {
      const dir = await tempDir();
      own.push(dir);
      const copy = await writeConfig(dir, servers);
      await symlink(rules, dir.file('gateway-rules.json'));
      await symlink(state, dir.file('state'));
      return startHttpGateway({ config: copy, agent: null, args: args(dir.file('gateway-rules.json'), dir.file('state')) });
    });
    workers = await Promise.all([a, ...others]);
    for (const w of workers) assert.ok(await until(async () => (await status(w.base)).cluster.workers.length === 3, 20_000));
    // One configuration: the same version on all three.
    assert.ok(await until(async () => new Set((await status(workers[0]!.base)).cluster.workers.map((w) => w.version)).size === 1, 10_000));
  });

  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await Promise.all(workers.map((w) => w.stop()));
    await redis?.stop();
    await shared?.remove();
    for (const dir of own) await dir.remove();
  });

  /** Resolves once every worker reports one version other than `before`; returns it. */
  async function converged(before: string): Promise<string> {
    let versions: string[] = [];
    const ok = await until(async () => {
      versions = (await status(workers[0]!.base)).cluster.workers.map((w) => w.version);
      return new Set(versions).size === 1 && versions[0] !== before;
    }, 10_000);
    assert.ok(ok, `versions ${JSON.stringify(versions)} (before ${before})`);
    for (const w of workers) assert.equal((await status(w.base)).config_version, versions[0]);
    return versions[0]!;
  }

  it('a pin approval releases the tool on every worker', { timeout: 60_000 }, async () => {
    const agents = await Promise.all(workers.map((w) => connectAgent(w.url, { token })));
    clients.push(...agents.map((a) => a.client));
    // strict: everything held, on every worker.
    for (const { client } of agents) assert.deepEqual(await toolNames(client), []);
    const before = (await status(workers[0]!.base)).config_version;
    const approved = await cli(['approve', 'sink', 'echo', 'pid', 'change', '--state', state]);
    assert.equal(approved.code, 0, approved.err);
    await converged(before);
    for (const { client } of agents) {
      assert.ok(await until(async () => (await toolNames(client)).join() === 'sink__change,sink__echo,sink__pid', 10_000));
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: 'released' } })), 'released');
    }
  });

  it('a rules reload on one worker reaches the others through a nudge, within a second or so', { timeout: 60_000 }, async (t) => {
    const agents = await Promise.all(workers.map((w) => connectAgent(w.url, { token })));
    clients.push(...agents.map((a) => a.client));
    for (const { client } of agents) assert.deepEqual(await toolNames(client), ['sink__change', 'sink__echo', 'sink__pid']);
    const before = (await status(workers[0]!.base)).config_version;
    const started = performance.now();
    await writeRules(shared, {
      agents: { alice: { allow: { servers: ['sink'] }, deny: { tools: { sink: ['echo'] } }, tokens: [hash] } },
      admins: { ops: { tokens: [OPS.hash] } },
    });
    await converged(before);
    const took = performance.now() - started;
    // B and C never saw the file change: they re-read it because A said so.
    for (const w of workers.slice(1))
      assert.ok(
        w.gw.logs.some((l) => /^configuration reloaded \(worker .* runs configuration [0-9a-f]+\)$/.test(String(l.msg))),
        'reloaded on a nudge',
      );
    for (const { client } of agents) assert.deepEqual(await toolNames(client), ['sink__change', 'sink__pid']);
    t.diagnostic(`every worker ran the new rules ${Math.round(took)} ms after the write (A's watch debounce included)`);
  });

  it(
    'a list_changed from a server reaches an agent whose GET stream is on another worker than its POSTs',
    { timeout: 60_000 },
    async () => {
      const [, post, get] = workers as [HttpGateway, HttpGateway, HttpGateway];
      // POSTs (the initialize too: the session's owner) to one worker, the GET stream to another.
      const routed = (url: string | URL, init?: RequestInit): Promise<Response> => {
        const target = new URL(url);
        target.host = new URL((init?.method ?? 'GET') === 'GET' ? get.base : post.base).host;
        return fetch(target, init);
      };
      const transport = new StreamableHTTPClientTransport(new URL(post.url), { requestInit: { headers: AUTH }, fetch: routed });
      const client = new Client({ name: 'cluster-state-test', version: '1.0.0' }, { capabilities: {} });
      let changed = 0;
      client.setNotificationHandler('notifications/prompts/list_changed', () => void changed++);
      await client.connect(transport);
      clients.push(client);
      // Another session on the same worker makes its server add a prompt (unrelated to any POST of ours).
      const trigger = await connectAgent(post.url, { token });
      clients.push(trigger.client);
      assert.ok(
        await until(async () => {
          assert.equal(textOf(await trigger.client.callTool({ name: 'sink__change', arguments: {} })), 'changed');
          return changed > 0;
        }, 15_000),
        'the list change came over the GET stream relayed by the other worker',
      );
      assert.ok(changed > 0);
    },
  );
});
