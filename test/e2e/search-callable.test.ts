// "Callable after found", everywhere: a tool an agent found with search_tools stays callable by its
// name from any worker of a cluster (two `mcpgate serve --http` workers on one real Redis), after a
// rules reload and after a catalog reload (a server's list_changed, and a configuration reload that
// adds a server), for TypeScript SDK agents of both eras (2025 sessions and 2026-07-28 requests).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fixtureServer, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';
import type { Found } from '../fixtures/tool-sets.js';

const TIMEOUT = 120_000;
const MODERN = '2026-07-28';
const alice = makeToken();

async function connect(url: string, era: 'legacy' | 'modern'): Promise<Client> {
  const client = new Client(
    { name: 'mcpgate-callable-test', version: '1.0.0' },
    era === 'modern' ? { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } } : { capabilities: {} },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${alice.token}` } } }),
  );
  return client;
}

async function searchFor(client: Client, query: string): Promise<string> {
  const result = await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } });
  return (result.structuredContent as { tools: Found[] }).tools[0]!.name;
}

describe(
  'a found tool stays callable by name: on either worker of a cluster, across reloads, both eras',
  { timeout: TIMEOUT, skip: REDIS_MISSING },
  () => {
    let dir: TempDir;
    let redis: RedisServer;
    let workers: HttpGateway[] = [];
    let rulesFile: string;
    const clients: Client[] = [];
    const rules = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      agents: { alice: { tokens: [alice.hash], allow: { servers: ['github', 'files'] }, mode: 'search' }, ...extra },
    });
    const client = async (worker: number, era: 'legacy' | 'modern'): Promise<Client> => {
      const c = await connect(workers[worker]!.url, era);
      clients.push(c);
      return c;
    };
    const reloads = (w: HttpGateway): number => w.gw.logs.filter((l) => String(l.msg).startsWith('configuration reloaded')).length;

    before(async () => {
      dir = await tempDir();
      redis = await RedisServer.start();
      await writeConfig(dir, { github: fixtureServer('tools-server', ['--set', 'github']) });
      rulesFile = await writeRules(dir, rules());
      workers = await Promise.all(
        [0, 1].map(() =>
          startHttpGateway({
            config: dir.file('.mcp.json'),
            agent: null,
            args: ['--rules', rulesFile, '--pins', 'off', '--redis', redis.url],
          }),
        ),
      );
    });

    after(async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      await Promise.all(workers.map((w) => w.stop()));
      await redis?.stop();
      await dir?.remove();
    });

    /** Each era's agent on each worker calls `name` by its name. */
    const callableEverywhere = async (name: string, expect: RegExp): Promise<void> => {
      for (const worker of [0, 1])
        for (const era of ['legacy', 'modern'] as const) {
          const c = await client(worker, era);
          assert.match(textOf(await c.callTool({ name, arguments: {} })), expect, `${era} agent on worker ${worker}`);
        }
    };

    it('found on one worker, called on the other, by agents of both eras', async () => {
      for (const era of ['legacy', 'modern'] as const) {
        const found = await searchFor(await client(0, era), 'open a new issue in a repository');
        assert.equal(found, 'github__create_issue', era);
      }
      await callableEverywhere('github__create_issue', /^called create_issue/);
    });

    it('a 2025 session found the tool, and still calls it after a rules reload and a catalog reload', async () => {
      const session = await client(1, 'legacy');
      assert.equal(await searchFor(session, 'search code across repositories'), 'github__search_code');
      // A rules reload (another agent added) on both workers.
      const before = workers.map(reloads);
      await writeRules(dir, rules({ bob: { allow: { servers: ['github'] } } }));
      for (const [i, w] of workers.entries())
        assert.ok(await until(() => reloads(w) > before[i]!, 20_000), `worker ${i} reloaded the rules`);
      assert.match(textOf(await session.callTool({ name: 'github__search_code', arguments: {} })), /^called search_code/);
      await callableEverywhere('github__search_code', /^called search_code/);

      // The server's catalog changes (retitle: a new description and list_changed): still callable, still found.
      assert.match(textOf(await session.callTool({ name: 'github__retitle', arguments: {} })), /^called retitle/);
      assert.match(textOf(await session.callTool({ name: 'github__search_code', arguments: {} })), /^called search_code/);
      await callableEverywhere('github__search_code', /^called search_code/);

      // A configuration reload that adds a server rebuilds the catalog: the found tool stays callable, the new server's tools are found.
      const again = workers.map(reloads);
      await writeConfig(dir, {
        github: fixtureServer('tools-server', ['--set', 'github']),
        files: fixtureServer('tools-server', ['--set', 'files']),
      });
      for (const [i, w] of workers.entries())
        assert.ok(await until(() => reloads(w) > again[i]!, 20_000), `worker ${i} reloaded the configuration`);
      assert.ok(
        await until(async () => (await searchFor(session, 'read the contents of a file on disk')) === 'files__read_file', 20_000),
        'the new server is searched',
      );
      assert.match(textOf(await session.callTool({ name: 'github__search_code', arguments: {} })), /^called search_code/);
      await callableEverywhere('github__search_code', /^called search_code/);
      await callableEverywhere('files__read_file', /^called read_file/);
    });
  },
);
