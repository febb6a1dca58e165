// Search mode over stdio, in-process (test/helpers/in-process.ts): the real stdio front and
// Gateway over in-memory tool sets (test/helpers/fake-server.ts `toolsServer`, the definitions of
// test/fixtures/tools-server.ts). An agent is listed `search_tools`, its always-shown tools and what
// its session found; every tool it may call stays reachable through the search and callable by name.
// A 2025 (legacy) agent remembers what its searches found (list_changed, then listed); a 2026-07-28
// (modern) agent has no session, so nothing is remembered: it calls what a search returned by name.
// Rules and pins hold: a denied tool is never returned (an exact-name query included), nor a held
// one. What needs more than the gateway — the command line's refusals, HTTP agents of the official
// SDKs with pooled servers, the console, a real embeddings endpoint — is test/e2e/search-mode.test.ts.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toolsServer } from '../../helpers/fake-server.js';
import { reloadRules, stdioFront, until, type InProcessStdio, type StdioAgent } from '../../helpers/in-process.js';
import type { Found } from '../../fixtures/tool-sets.js';

const TIMEOUT = 30_000;
const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** An agent's requests, legacy (in its session) or modern (each request carries the envelope). */
interface Caller {
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  refused(name: string, args: Record<string, unknown>): ReturnType<StdioAgent['error']>;
  list(): Promise<Record<string, unknown>>;
}

function caller(agent: StdioAgent, era: 'legacy' | 'modern'): Caller {
  const meta = era === 'modern' ? { _meta: ENVELOPE } : {};
  return {
    call: (name, args) => agent.result('tools/call', { name, arguments: args, ...meta }),
    refused: (name, args) => agent.error('tools/call', { name, arguments: args, ...meta }),
    list: () => agent.result('tools/list', { ...meta }),
  };
}

/** The text of a result's first block (fails unless it is text). */
function textOf(result: Record<string, unknown>): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`expected a text result, got ${JSON.stringify(result)}`);
  return first.text;
}

async function search(client: Caller, query: string, limit?: number): Promise<Found[]> {
  const result = await client.call('search_tools', limit === undefined ? { query } : { query, limit });
  const structured = result.structuredContent as { tools: Found[] };
  // The same as text, one compact line per tool, for clients that ignore structured content.
  const lines = textOf(result).split('\n');
  structured.tools.forEach((tool, i) => assert.equal(lines[i], `${tool.name}${tool.signature} — ${tool.summary}`));
  return structured.tools;
}

const names = (tools: readonly { name: string }[]): string[] => tools.map((t) => t.name);
const toolsOf = async (client: Caller): Promise<{ name: string; inputSchema: Record<string, unknown> }[]> =>
  (await client.list()).tools as { name: string; inputSchema: Record<string, unknown> }[];
const listed = async (client: Caller): Promise<string[]> => names(await toolsOf(client));

describe('search mode over stdio (a 2025 agent, rules, pins)', { timeout: TIMEOUT }, () => {
  let state: string;
  let r: InProcessStdio;
  let client: Caller;
  const listChanges = (): number => r.agent.all.filter((m) => m.method === 'notifications/tools/list_changed').length;

  before(async () => {
    state = await mkdtemp(join(tmpdir(), 'mcpgate-search-'));
    r = await stdioFront({
      servers: [toolsServer('github', 'github'), toolsServer('files', 'files')],
      agent: 'alice',
      rules: {
        agents: {
          alice: {
            allow: { servers: ['github', 'files'] },
            deny: { tools: { github: ['delete_repository'] } },
            alwaysShown: ['files__list_*'],
          },
        },
      },
      gateway: { mode: 'search', pins: { mode: 'tofu', dir: state } },
    });
    await r.agent.initialize();
    client = caller(r.agent, 'legacy');
  });

  after(async () => {
    await r?.close();
    await rm(state, { recursive: true, force: true });
  });

  it('lists search_tools, describe_tools and the always-shown tools only', async () => {
    const tools = await toolsOf(client);
    assert.deepEqual(names(tools), ['search_tools', 'describe_tools', 'files__list_directory']);
    const searchTool = tools[0]!;
    assert.deepEqual((searchTool.inputSchema as { required: string[] }).required, ['query']);
  });

  it('an allowed tool never found is still callable by name', async () => {
    assert.ok(!(await listed(client)).includes('files__move_file'));
    assert.match(textOf(await client.call('files__move_file', {})), /^called move_file/);
  });

  it('finds the tool for a task, best first, one compact hit each: public name, server, signature, summary', async () => {
    const found = await search(client, 'open a new issue in a repository');
    assert.equal(found[0]!.name, 'github__create_issue', JSON.stringify(names(found)));
    assert.equal(found[0]!.server, 'github');
    assert.equal(found[0]!.summary, 'Create a new issue in a GitHub repository');
    assert.equal(found[0]!.signature, '(owner?: string, repo?: string, title?: string, body?: string)');
    assert.equal(found[0]!.shortened, undefined);
    assert.ok(found.length <= 5, 'the default limit is 5');
    const files = await search(client, 'read the contents of a file on disk', 2);
    assert.equal(files.length, 2);
    assert.equal(files[0]!.name, 'files__read_file');
  });

  it("adds what a search found to the session's list, with list_changed; a found tool is callable", async () => {
    const before = listChanges();
    assert.ok(!(await listed(client)).includes('files__move_file'));
    assert.deepEqual(names(await search(client, 'move or rename a file', 1)), ['files__move_file']);
    assert.ok(await until(() => listChanges() >= before + 1), 'list_changed arrives');
    const now = await listed(client);
    assert.ok(now.includes('files__move_file'), JSON.stringify(now));
    assert.ok(now.includes('github__create_issue'), 'earlier finds stay listed');
    assert.equal(now[0], 'search_tools');
    assert.match(textOf(await client.call('files__move_file', {})), /^called move_file pid=\d+$/);
    // A search that finds nothing new announces nothing.
    const count = listChanges();
    await search(client, 'move or rename a file', 1);
    assert.equal((await listed(client)).length, now.length);
    assert.equal(listChanges(), count);
  });

  it('lists two small fixed tools; describe_tools gives full definitions, a denied or unknown name is unknown alike', async () => {
    const fixed = (await toolsOf(client)).slice(0, 2);
    assert.deepEqual(names(fixed), ['search_tools', 'describe_tools']);
    assert.ok(JSON.stringify(fixed).length / 4 <= 350, `the fixed tools cost ${JSON.stringify(fixed).length / 4} tokens`);
    const result = await client.call('describe_tools', { names: ['github__create_issue', 'github__delete_repository', 'nope'] });
    const structured = result.structuredContent as { tools: { name: string; inputSchema: { properties: object } }[]; unknown: string[] };
    assert.deepEqual(JSON.parse(textOf(result)), structured);
    assert.deepEqual(names(structured.tools), ['github__create_issue']);
    assert.deepEqual(Object.keys(structured.tools[0]!.inputSchema.properties), ['owner', 'repo', 'title', 'body']);
    assert.deepEqual(structured.unknown, ['github__delete_repository', 'nope']);
    for (const args of [{}, { names: [] }, { names: Array.from({ length: 11 }, (_, i) => `t${i}`) }, { names: [1] }]) {
      const err = await client.refused('describe_tools', args);
      assert.equal(err.data.code, 'MCPG_INVALID_PARAMS', JSON.stringify(args));
      assert.match(err.message, /describe_tools needs "names"/);
    }
  });

  it('never returns a denied tool, not even for its exact name; a call is refused as ever', async () => {
    for (const query of ['delete a repository permanently', 'github__delete_repository', 'delete_repository']) {
      const found = await search(client, query, 50);
      assert.ok(!names(found).includes('github__delete_repository'), `${query}: ${JSON.stringify(names(found))}`);
    }
    const refused = await client.refused('github__delete_repository', {});
    assert.equal(refused.data.code, 'MCPG_POLICY_DENIED');
  });

  it('refuses bad input with a clear error', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /"query" must be a string \(it is missing\)/],
      [{ query: 3 }, /"query" must be a string/],
      [{ query: '   ' }, /must not be empty/],
      [{ query: 'x'.repeat(20_001) }, /"query" is 20001 characters; at most 20000/],
      [{ query: 'issue', limit: 0 }, /"limit" must be a whole number from 1 to 50, got 0/],
      [{ query: 'issue', limit: 51 }, /from 1 to 50, got 51/],
      [{ query: 'issue', limit: 2.5 }, /got 2.5/],
      [{ query: 'issue', limit: '3' }, /got "3"/],
      [{ query: 'issue', extra: true }, /unknown: "extra"/],
    ];
    for (const [args, message] of cases) {
      const err = await client.refused('search_tools', args as Record<string, unknown>);
      assert.equal(err.code, -32602, JSON.stringify(args));
      assert.match(err.message, message);
    }
  });

  it('answers a long task (18,000 characters) that names the tool only at its end', async () => {
    // Filler of words no tool holds, then the one step that says what to do: the whole text is read.
    const filler = 'zqxv wrlmt '.repeat(1_700);
    const query = `${filler}. Finally, search code across repositories`;
    assert.ok(query.length >= 18_000 && query.length <= 20_000, String(query.length));
    assert.equal((await search(client, query))[0]!.name, 'github__search_code');
  });

  it('never returns a held tool (its definition changed since it was approved)', async () => {
    assert.equal((await search(client, 'search code across repositories'))[0]!.name, 'github__search_code');
    await client.call('github__retitle', {});
    // The server's list_changed is refreshed (debounced); then the changed tool is held.
    const gone = async (): Promise<boolean> =>
      !names(await search(client, 'search code across repositories', 50)).includes('github__search_code');
    const deadline = Date.now() + 10_000;
    while (!(await gone()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(await gone(), 'the held tool leaves the results');
    const held = await client.refused('github__search_code', {});
    assert.equal(held.data.code, 'MCPG_TOOL_HELD');
    const described = await client.call('describe_tools', { names: ['github__search_code'] });
    assert.deepEqual(
      (described.structuredContent as { unknown: string[] }).unknown,
      ['github__search_code'],
      'a held tool is not described',
    );
  });

  it('a reload that takes the agent out of search mode lists the catalog, with list_changed', async () => {
    const before = listChanges();
    await reloadRules(r.gateway, {
      agents: { alice: { allow: { servers: ['github', 'files'] }, deny: { tools: { github: ['delete_repository'] } }, mode: 'aggregate' } },
    });
    assert.ok(await until(() => listChanges() >= before + 1), 'list_changed arrives');
    const all = await listed(client);
    assert.ok(
      !all.includes('search_tools') && all.includes('files__write_file') && !all.includes('github__delete_repository'),
      JSON.stringify(all),
    );
  });
});

describe('search mode over stdio (a 2026-07-28 agent)', { timeout: TIMEOUT }, () => {
  let r: InProcessStdio;
  let client: Caller;

  before(async () => {
    r = await stdioFront({
      servers: [toolsServer('github', 'github')],
      agent: 'mo',
      rules: {
        agents: { mo: { allow: { servers: ['github'] }, deny: { tools: { github: ['delete_*'] } }, alwaysShown: ['github__search_code'] } },
      },
      gateway: { mode: 'search' },
    });
    client = caller(r.agent, 'modern');
  });

  after(async () => {
    await r?.close();
  });

  it('lists search_tools and the always-shown tool, searches under the rules, calls a found tool by name', async () => {
    // What an SDK client pinned to 2026-07-28 negotiates with: server/discover offers that revision.
    const discovered = await r.agent.result('server/discover', { _meta: ENVELOPE });
    assert.ok((discovered.supportedVersions as string[]).includes(MODERN), JSON.stringify(discovered));
    assert.deepEqual(await listed(client), ['search_tools', 'describe_tools', 'github__search_code']);
    const found = await search(client, 'delete the repository', 50);
    assert.ok(!names(found).includes('github__delete_repository'), JSON.stringify(names(found)));
    assert.equal((await search(client, 'create an issue'))[0]!.name, 'github__create_issue');
    assert.match(textOf(await client.call('github__create_issue', {})), /^called create_issue/);
    assert.deepEqual(await listed(client), ['search_tools', 'describe_tools', 'github__search_code']);
  });
});
