// Search mode where it needs real processes: the command line's refusals (serve, check),
// real gateways over Streamable HTTP in front of real fixture servers driven by the official SDK
// clients of both eras — a 2025 (legacy) agent remembers what its searches found (list_changed, then
// listed); a 2026-07-28 (modern) agent has no session, so nothing is remembered — with pooled servers
// per owner, /status, /metrics and the console; and the hybrid ranking against a real (test)
// embeddings endpoint, whose failures fall back to lexical. What the gateway decides over stdio
// (listing, ranking, rules, pins, a reload, both eras) is test/unit/gateway/search-mode.test.ts, in-process.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  cli,
  fixtureServer,
  rpcError,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../fixtures/embeddings-server.js';
import type { Found } from '../fixtures/tool-sets.js';

const TIMEOUT = 90_000;
const MODERN = '2026-07-28';

type Caller = Pick<Client, 'callTool' | 'listTools'>;

async function search(client: Caller, query: string, limit?: number): Promise<Found[]> {
  const result = await client.callTool({ name: 'search_tools', arguments: limit === undefined ? { query } : { query, limit } });
  const structured = result.structuredContent as { tools: Found[] };
  // The same as text, one compact line per tool, for clients that ignore structured content.
  const lines = textOf(result).split('\n');
  structured.tools.forEach((tool, i) => assert.equal(lines[i], `${tool.name}${tool.signature} — ${tool.summary}`));
  return structured.tools;
}

const names = (tools: readonly { name: string }[]): string[] => tools.map((t) => t.name);
const listed = async (client: Caller): Promise<string[]> => names((await client.listTools()).tools);

describe('search mode on the command line', { timeout: TIMEOUT }, () => {
  let dir: TempDir;

  before(async () => {
    dir = await tempDir();
    await writeConfig(dir, {
      github: fixtureServer('tools-server', ['--set', 'github']),
      files: fixtureServer('tools-server', ['--set', 'files']),
    });
  });

  after(async () => {
    await dir?.remove();
  });

  it('serve refuses a bad --mode and bad embeddings settings at once (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['--mode', 'searchx'], /--mode must be aggregate, discovery, search or code \(got "searchx"\)/],
      [['--mode', 'search', '--embeddings-url', 'ftp://x'], /--embeddings-url must be an http\(s\) URL/],
      [['--mode', 'search', '--embeddings-url', 'http://u:secret@127.0.0.1:9/v1', '--embeddings-model', 'm'], /may not hold credentials/],
      [['--mode', 'search', '--embeddings-url', 'http://127.0.0.1:9/v1'], /needs --embeddings-model/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(['serve', '--config', dir.file('.mcp.json'), ...args]);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.err, message);
      assert.ok(!result.err.includes('secret'), 'credentials are not echoed');
    }
  });

  it('mcpgate check rejects a bad mode and a bad alwaysShown', async () => {
    const config = await writeConfig(dir, { github: fixtureServer('tools-server') }, 'check.mcp.json');
    const rules = dir.file('check-rules.json');
    await import('node:fs/promises').then((fs) =>
      fs.writeFile(rules, JSON.stringify({ agents: { x: { allow: { servers: ['*'] }, mode: 'find', alwaysShown: 'github__*' } } })),
    );
    const result = await cli(['check', '--config', config, '--rules', rules]);
    assert.equal(result.code, 2);
    assert.match(result.out + result.err, /agents\.x\.mode.*expected one of "aggregate", "discovery", "search", "code", got "find"/);
    assert.match(result.out + result.err, /agents\.x\.alwaysShown.*expected an array of public tool names or globs/);
  });
});

describe(
  'search mode over Streamable HTTP: per-agent mode in the rules, both eras, pooled servers per owner, status',
  { timeout: TIMEOUT },
  () => {
    let dir: TempDir;
    let gate: HttpGateway;
    const alice = makeToken();
    const bob = makeToken();
    const carol = makeToken();
    const dave = makeToken();
    const ops = makeToken();
    const clients: Client[] = [];

    const legacy = async (token: string, onChanged?: () => void): Promise<Client> => {
      const { client } = await connectAgent(gate.url, {
        token,
        setup: (c) => onChanged !== undefined && c.setNotificationHandler('notifications/tools/list_changed', onChanged),
      });
      clients.push(client);
      return client;
    };
    const modern = async (token: string): Promise<Client> => {
      const client = new Client(
        { name: 'mcpgate-modern-test', version: '1.0.0' },
        { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(gate.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      clients.push(client);
      return client;
    };

    before(async () => {
      dir = await tempDir();
      const config = await writeConfig(dir, {
        github: fixtureServer('tools-server', ['--set', 'github']),
        counter: fixtureServer('counter-server', [], { sessions: 'per-agent' }),
        scratch: fixtureServer('counter-server', [], { sessions: 'per-session' }),
      });
      const rules = await writeRules(dir, {
        agents: {
          alice: { tokens: [alice.hash], allow: { servers: ['github', 'counter', 'scratch'] }, mode: 'search' },
          bob: { tokens: [bob.hash], allow: { servers: ['github', 'counter'] }, mode: 'search' },
          carol: { tokens: [carol.hash], allow: { servers: ['github'] } },
          dave: { tokens: [dave.hash], allow: { servers: ['github'] }, mode: 'discovery' },
        },
        admins: { ops: { tokens: [ops.hash] } },
      });
      gate = await startHttpGateway({ config, args: ['--rules', rules, '--pins', 'off'] });
    });

    after(async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      await gate?.stop();
      await dir?.remove();
    });

    it('an agent whose rules say search is in search mode; one whose rules say nothing sees the catalog', async () => {
      const a = await legacy(alice.token);
      assert.deepEqual(await listed(a), ['search_tools', 'describe_tools']);
      const c = await legacy(carol.token);
      const all = await listed(c);
      assert.ok(all.includes('github__create_issue') && !all.includes('search_tools'), JSON.stringify(all));
      const d = await legacy(dave.token);
      assert.deepEqual(await listed(d), ['list_servers', 'get_server_tools', 'execute_tool'], 'discovery mode by the rules');
      const refused = await rpcError(c.callTool({ name: 'search_tools', arguments: { query: 'issue' } }));
      assert.match(refused.message, /unknown tool: search_tools/, 'no search_tools outside search mode');
    });

    it('a 2025 agent over HTTP: list_changed after a search, the found tool listed and callable', async () => {
      let changed = 0;
      const a = await legacy(alice.token, () => void (changed += 1));
      const found = await search(a, 'create an issue');
      assert.equal(found[0]!.name, 'github__create_issue');
      assert.ok(await until(() => changed > 0), 'list_changed arrives');
      assert.deepEqual(await listed(a), ['search_tools', 'describe_tools', ...names(found)]);
      assert.match(textOf(await a.callTool({ name: 'github__create_issue', arguments: {} })), /^called create_issue/);
    });

    it('a 2026-07-28 agent: searches and calls what it found by name; nothing is remembered between requests', async () => {
      const m = await modern(alice.token);
      assert.equal(m.getNegotiatedProtocolVersion(), MODERN);
      assert.deepEqual(await listed(m), ['search_tools', 'describe_tools']);
      const found = await search(m, 'list the pull requests');
      assert.equal(found[0]!.name, 'github__list_pull_requests');
      assert.match(textOf(await m.callTool({ name: found[0]!.name, arguments: {} })), /^called list_pull_requests/);
      assert.deepEqual(await listed(m), ['search_tools', 'describe_tools'], 'a modern agent has no session to remember finds in');
      const bad = await rpcError(m.callTool({ name: 'search_tools', arguments: { query: 'x', limit: 99 } }));
      assert.equal(bad.code, -32602);
    });

    it("a per-agent server's own tools are searched by their owner only", async () => {
      const a = await legacy(alice.token);
      assert.equal(
        textOf(await a.callTool({ name: 'counter__grow', arguments: { name: 'frobnicate_widgets' } })),
        'grew frobnicate_widgets',
      );
      assert.ok(
        await until(async () => names(await search(a, 'frobnicate widgets')).includes('counter__frobnicate_widgets')),
        "alice finds her pooled server's new tool",
      );
      const b = await legacy(bob.token);
      assert.equal(textOf(await b.callTool({ name: 'counter__inc', arguments: {} })).startsWith('count=1'), true);
      assert.ok(!names(await search(b, 'frobnicate widgets', 50)).includes('counter__frobnicate_widgets'), "bob never finds alice's tool");
      assert.ok(!names(await search(b, 'counter__frobnicate_widgets', 50)).includes('counter__frobnicate_widgets'));
      const m = await modern(bob.token);
      assert.ok(!names(await search(m, 'frobnicate widgets', 50)).includes('counter__frobnicate_widgets'));
    });

    it("a per-session server's own tools are searched by their session only, not by another session of the agent", async () => {
      const one = await legacy(alice.token);
      const two = await legacy(alice.token);
      assert.equal(textOf(await one.callTool({ name: 'scratch__grow', arguments: { name: 'zanzibar_report' } })), 'grew zanzibar_report');
      assert.ok(
        await until(async () => names(await search(one, 'zanzibar report')).includes('scratch__zanzibar_report')),
        'the session finds its own tool',
      );
      await two.callTool({ name: 'scratch__inc', arguments: {} });
      assert.ok(
        !names(await search(two, 'zanzibar report', 50)).includes('scratch__zanzibar_report'),
        'another session of the agent does not',
      );
    });

    it('status and metrics count searches, results and zero-result queries', async () => {
      const a = await legacy(alice.token);
      assert.deepEqual(await search(a, 'qwxyzzy unmatched'), []);
      const status = (await (await fetch(`${gate.base}/status`, { headers: { authorization: `Bearer ${ops.token}` } })).json()) as {
        search: { searches: number; results: number; zero_results: number; ranking: string; indexed_tools: number };
      };
      assert.ok(status.search.searches >= 1, JSON.stringify(status.search));
      assert.ok(status.search.zero_results >= 1);
      assert.ok(status.search.results >= status.search.searches - status.search.zero_results);
      assert.equal(status.search.ranking, 'lexical');
      assert.ok(status.search.indexed_tools >= 6);
      const metrics = await (await fetch(`${gate.base}/metrics`)).text();
      assert.match(metrics, new RegExp(`^mcpgate_tool_searches_total ${status.search.searches}$`, 'm'));
      assert.match(metrics, /^mcpgate_tool_search_zero_results_total [1-9]\d*$/m);
      assert.match(metrics, /^mcpgate_tool_search_results_bucket\{le="0"\} [1-9]\d*$/m);
      const cliStatus = await cli(['status', '--url', gate.base, '--token', ops.token]);
      assert.match(cliStatus.out, /^search: \d+ searches, \d+ results, [1-9]\d* with none \(lexical\)$/m);
      // The console's overview has them in one line.
      const login = await raw(`${gate.base}/ui/login`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: ops.token }).toString(),
      });
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const page = (await raw(`${gate.base}/ui`, { method: 'GET', headers: { cookie } })).body;
      assert.match(
        page,
        /<p id="search">Tool search: \d+ searches · \d+ tools returned · [1-9]\d* found none · \d+ tools indexed · lexical ranking<\/p>/,
      );
    });
  },
);

describe("search mode's hybrid ranking against a test embeddings endpoint", { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let gw: { client: Client; logs: GatewayProcess['logs'] };
  let embeddings: EmbeddingsServer;
  const agent = makeToken();
  const ops = makeToken();

  before(async () => {
    dir = await tempDir();
    embeddings = await startEmbeddingsServer();
    const config = await writeConfig(dir, {
      github: fixtureServer('tools-server', ['--set', 'github']),
      files: fixtureServer('tools-server', ['--set', 'files']),
    });
    const rules = await writeRules(dir, {
      agents: { hy: { tokens: [agent.hash], allow: { servers: ['*'] } } },
      admins: { ops: { tokens: [ops.hash] } },
    });
    gate = await startHttpGateway({
      config,
      args: [
        '--rules',
        rules,
        '--mode',
        'search',
        '--pins',
        'off',
        '--state',
        dir.file('state'),
        '--embeddings-url',
        embeddings.url,
        '--embeddings-model',
        'hash-64',
        '--embeddings-timeout',
        '500',
      ],
      env: { MCPGATE_EMBEDDINGS_API_KEY: 'sk-test-secret-key' },
    });
    gw = { client: (await connectAgent(gate.url, { token: agent.token })).client, logs: gate.gw.logs };
  });

  after(async () => {
    await gw?.client.close();
    await gate?.stop();
    await embeddings?.close();
    await dir?.remove();
  });

  it('fuses the vector ranking: a query no lexical ranker matches still finds the tool', async () => {
    const found = await search(gw.client, 'zorblax');
    assert.equal(found[0]?.name, 'github__create_issue', JSON.stringify(names(found)));
    assert.ok(embeddings.requests.length >= 2, 'the query and the tools were embedded');
    assert.ok(embeddings.requests.every((r) => r.model === 'hash-64' && r.authorization === 'Bearer sk-test-secret-key'));
    const embeddedTools = embeddings.requests.reduce((n, r) => n + r.inputs, 0);
    // Tools are embedded once: a second search embeds only its query.
    await search(gw.client, 'quibbit');
    assert.equal(
      embeddings.requests.reduce((n, r) => n + r.inputs, 0),
      embeddedTools + 1,
    );
  });

  it('keeps the vectors in the state directory, bounded and readable back', async () => {
    const file = dir.file('state/search-vectors.json');
    assert.ok(await until(() => existsSync(file)), 'the cache file is written');
    const cache = JSON.parse(readFileSync(file, 'utf8')) as { version: number; model: string; vectors: Record<string, string> };
    assert.equal(cache.version, 1);
    assert.equal(cache.model, 'hash-64');
    assert.equal(Object.keys(cache.vectors).length, 10, 'one vector per tool');
    for (const v of Object.values(cache.vectors)) assert.equal(Buffer.from(v, 'base64').length, 64 * 4);
  });

  it('falls back to lexical on every kind of failure, warns at most once a minute, never fails the search', async () => {
    for (const mode of ['status', 'garbage', 'nan', 'hang'] as const) {
      embeddings.mode = mode;
      const found = await search(gw.client, 'read a file from disk');
      assert.equal(found[0]?.name, 'files__read_file', `${mode}: the lexical ranking answers`);
    }
    embeddings.mode = 'ok';
    const warnings = gw.logs.filter((l) => l.msg === 'the embeddings endpoint failed; searches are ranked lexically');
    assert.equal(warnings.length, 1, 'rate-limited to one warning');
    assert.ok(!JSON.stringify(gw.logs).includes('sk-test-secret-key'), 'the API key is never logged');
    const status = (await (await fetch(`${gate.base}/status`, { headers: { authorization: `Bearer ${ops.token}` } })).json()) as {
      search: { ranking: string; embeddings: Record<string, unknown> };
    };
    assert.equal(status.search.ranking, 'hybrid');
    assert.equal(status.search.embeddings.fallbacks, 4);
    assert.equal(status.search.embeddings.model, 'hash-64');
    assert.equal(status.search.embeddings.vectors, 10);
    assert.match(String(status.search.embeddings.last_error), /no answer within 500 ms/);
    assert.ok(!JSON.stringify(status).includes('sk-test-secret-key'));
    assert.equal((await search(gw.client, 'zorblax'))[0]?.name, 'github__create_issue', 'back to hybrid once the endpoint answers');
  });
});
