// Curated views (the rules' `views`): a named selection of tools across servers, served over stdio with
// `serve --view NAME` and over HTTP at `/mcp/v/NAME`, to SDK agents of both eras. A view renames a tool,
// replaces or extends its description, fixes or hides parameters (a hidden one gets its value on the way
// to the server); it narrows and never widens what the agent's rules allow; a tool's public name behind a
// rename is not on the view; resources and prompts are shown only of the servers the view names; a
// change of the view on reload is announced with list_changed. Real gateway processes over two
// kitchen-sink servers, `web` and `db`.

import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  cli,
  fixtureServer,
  Notifications,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, JSON_HEADERS, initializeBody, raw, startHttpGateway, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 90_000;
type Json = Record<string, unknown>;

const GREETING = 'hello from the view';

function rules(appendix = 'Use it for sums.'): Json {
  return {
    agents: {
      tester: { allow: { servers: ['web', 'db'] }, deny: { tools: { db: ['pid'] } } },
    },
    views: {
      triage: {
        tools: {
          web: {
            echo: { name: 'say', description: 'Says the team greeting.', params: { text: { value: GREETING, hidden: true } } },
            structured: { appendDescription: appendix, params: { a: { value: 2 } } },
          },
          // `pid` matches too, but the agent's rules deny it: a view never widens.
          db: ['p*'],
        },
        servers: ['db'],
      },
    },
  };
}

const VIEW_TOOLS = ['db__progress', 'say', 'web__structured'];

let dir: TempDir;
let config: string;
let rulesFile: string;

before(async () => {
  dir = await tempDir();
  config = await writeConfig(dir, {
    web: fixtureServer('kitchen-sink-server', ['--name', 'web']),
    db: fixtureServer('kitchen-sink-server', ['--name', 'db']),
  });
  rulesFile = dir.file('gateway-rules.json');
  await writeFile(rulesFile, JSON.stringify(rules(), null, 2));
});

after(async () => {
  await dir?.remove();
});

/** What a view's tools/list shows, checked the same way whatever the transport and era. */
async function checkViewList(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), VIEW_TOOLS);
  const say = tools.find((t) => t.name === 'say')!;
  assert.equal(say.description, 'Says the team greeting.');
  assert.deepEqual(Object.keys(say.inputSchema.properties ?? {}), [], 'the hidden parameter is not shown');
  assert.equal(say.inputSchema.required, undefined);
  const sum = tools.find((t) => t.name === 'web__structured')!;
  assert.match(sum.description ?? '', /^Adds a and b, returning structured content\n\nUse it for sums\.$/);
  assert.deepEqual((sum.inputSchema.properties as Json).a, { type: 'number', const: 2, default: 2 });
}

/** What a view's calls do, the same whatever the transport and era. */
async function checkViewCalls(client: Client): Promise<void> {
  assert.equal(textOf(await client.callTool({ name: 'say', arguments: {} })), GREETING);
  // A hidden parameter is set whatever the agent sends: it was never shown.
  assert.equal(textOf(await client.callTool({ name: 'say', arguments: { text: 'something else' } })), GREETING);
  const sum = await client.callTool({ name: 'web__structured', arguments: { b: 5 } });
  assert.deepEqual(sum.structuredContent, { sum: 7 });
  const fixed = await rpcError(client.callTool({ name: 'web__structured', arguments: { a: 3, b: 5 } }));
  assert.match(fixed.message, /parameter "a" is fixed to 2 on this view/);
  for (const name of ['web__echo', 'web__pid', 'nothing__here']) {
    const unknown = await rpcError(client.callTool({ name, arguments: { text: 'x' } }));
    assert.equal(unknown.data?.code, 'MCPG_TOOL_NOT_FOUND', `${name}: ${unknown.message}`);
  }
  // On the view, but the rules deny it: the rules decide, as they would without the view.
  const denied = await rpcError(client.callTool({ name: 'db__pid', arguments: {} }));
  assert.equal(denied.data?.code, 'MCPG_POLICY_DENIED');
}

describe('a curated view over stdio (serve --view)', { timeout: TIMEOUT }, () => {
  let gw: GatewayProcess | undefined;
  before(async () => {
    gw = await startGateway({ config, args: ['--pins', 'off', '--rules', rulesFile, '--view', 'triage'] });
  });
  after(async () => {
    await gw?.stop();
    await writeFile(rulesFile, JSON.stringify(rules(), null, 2));
  });

  it('lists the view: selected, renamed, described, parameters fixed or hidden; rules still filter', async () => {
    await checkViewList(gw!.client);
  });

  it('calls by the view: a renamed tool by its new name only, fixed and hidden parameters set, the rest unknown', async () => {
    await checkViewCalls(gw!.client);
  });

  it('shows resources and prompts only of the servers the view names', async () => {
    const { resources } = await gw!.client.listResources();
    assert.ok(resources.length > 0);
    assert.ok(
      resources.every((r) => r.uri.startsWith('mcpgate://db/')),
      JSON.stringify(resources.map((r) => r.uri)),
    );
    assert.deepEqual(
      (await gw!.client.listPrompts()).prompts.map((p) => p.name),
      ['db__greet'],
    );
    const read = await rpcError(gw!.client.readResource({ uri: 'mcpgate://web/sink://static/1' }));
    assert.match(read.message, /no server serves mcpgate:\/\/web\/sink:\/\/static\/1 on view "triage"/);
    assert.equal((await gw!.client.readResource({ uri: 'mcpgate://db/sink://static/1' })).contents.length, 1);
    const prompt = await rpcError(gw!.client.getPrompt({ name: 'web__greet', arguments: { name: 'x' } }));
    assert.match(prompt.message, /unknown prompt: web__greet/);
  });

  it('a changed view is announced with list_changed and listed as changed', async () => {
    const seen = new Notifications(gw!);
    const before = seen.count.tools;
    await writeFile(`${rulesFile}.tmp`, JSON.stringify(rules('Only for small sums.'), null, 2));
    const { rename } = await import('node:fs/promises');
    await rename(`${rulesFile}.tmp`, rulesFile);
    await seen.until('tools', before + 1);
    const sum = (await gw!.client.listTools()).tools.find((t) => t.name === 'web__structured')!;
    assert.match(sum.description ?? '', /Only for small sums\.$/);
  });
});

describe('serve --view refuses what cannot work', { timeout: TIMEOUT }, () => {
  it('a view the rules do not define: the gateway does not start, and names the views it has', async () => {
    const gw = await startGateway({ config, args: ['--pins', 'off', '--rules', rulesFile, '--view', 'nope'], noClient: true });
    gw.child.stdin.end();
    const exit = await gw.exited;
    assert.notEqual(exit.code, 0);
    assert.ok(
      gw.logs.some((l) =>
        /--view "nope": the rules file defines no view of that name \(its views: triage\)/.test(String(l.msg) + JSON.stringify(l)),
      ),
      JSON.stringify(gw.logs.slice(-3)),
    );
  });

  it('pins judge the real tool: with nothing approved (--pins strict) the view shows nothing and its names are held', async () => {
    const gw = await startGateway({
      config,
      args: ['--pins', 'strict', '--state', dir.file('strict-state'), '--rules', rulesFile, '--view', 'triage'],
    });
    try {
      assert.deepEqual((await gw.client.listTools()).tools, []);
      const held = await rpcError(gw.client.callTool({ name: 'say', arguments: {} }));
      assert.equal(held.data?.code, 'MCPG_TOOL_HELD', held.message);
      assert.match(held.message, /tool "web__echo" of server "web" is held/);
    } finally {
      await gw.stop();
    }
  });

  it('--view with --mode discovery, with --http, or without rules is a usage error', async () => {
    const discovery = await cli(['serve', '--config', config, '--rules', rulesFile, '--view', 'triage', '--mode', 'discovery']);
    assert.equal(discovery.code, 2);
    assert.match(discovery.err, /cannot be combined with --mode discovery/);
    const http = await cli(['serve', '--config', config, '--rules', rulesFile, '--view', 'triage', '--http', '127.0.0.1:0']);
    assert.equal(http.code, 2);
    assert.match(http.err, /\/mcp\/v\/NAME/);
    // A config with no rules file beside it (gateway-rules.json beside .mcp.json is found without --rules).
    const alone = await tempDir();
    const bare = await writeConfig(alone, { web: fixtureServer('kitchen-sink-server', ['--name', 'web']) });
    const noRules = await cli(['serve', '--config', bare, '--view', 'triage']);
    await alone.remove();
    assert.equal(noRules.code, 2);
    assert.match(noRules.err, /give --rules/);
  });

  it('mcpgate check reports a malformed view with its JSON path', async () => {
    const bad = dir.file('bad-rules.json');
    await writeFile(
      bad,
      JSON.stringify({ agents: {}, views: { 'bad name': { tools: {} }, ok: { tools: { web: { 'e*': { name: 'x' } } } } } }),
    );
    const checked = await cli(['check', '--config', config, '--rules', bad]);
    assert.equal(checked.code, 2, checked.out + checked.err);
    const text = checked.out + checked.err;
    assert.match(text, /views\["bad name"\]|views\.bad name/);
    assert.match(text, /cannot give them one name/);
  });
});

describe('a curated view over HTTP (/mcp/v/NAME)', { timeout: TIMEOUT }, () => {
  let gate: HttpGateway | undefined;
  let viewUrl: string;
  before(async () => {
    gate = await startHttpGateway({ config, args: ['--pins', 'off', '--rules', rulesFile, '--no-auth'] });
    viewUrl = `${gate.base}/mcp/v/triage`;
  });
  after(async () => {
    await gate?.stop();
  });

  it('a 2025 SDK agent at /mcp/v/triage sees and calls the view; at /mcp it sees its whole view', async () => {
    const { client } = await connectAgent(viewUrl);
    try {
      await checkViewList(client);
      await checkViewCalls(client);
    } finally {
      await client.close();
    }
    const whole = await connectAgent(gate!.url);
    try {
      const names = (await whole.client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('web__echo') && !names.includes('say'));
    } finally {
      await whole.client.close();
    }
  });

  it('a 2026-07-28 SDK agent at /mcp/v/triage sees and calls the view', async () => {
    const client = new Client({ name: 'mcpgate-view-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(viewUrl)));
    try {
      await checkViewList(client);
      await checkViewCalls(client);
    } finally {
      await client.close();
    }
  });

  it('an unknown view is 404; a session is served only on the path it was opened on', async () => {
    const missing = await raw(`${gate!.base}/mcp/v/nope`, { method: 'POST', headers: JSON_HEADERS, body: initializeBody() });
    assert.equal(missing.status, 404);
    assert.match(missing.body, /defines no view of that name/);
    const opened = await raw(gate!.url, { method: 'POST', headers: JSON_HEADERS, body: initializeBody() });
    assert.equal(opened.status, 200);
    const session = opened.headers['mcp-session-id'] as string;
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const elsewhere = await raw(viewUrl, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      body: list,
    });
    assert.equal(elsewhere.status, 400);
    assert.match(elsewhere.body, /was opened at \/mcp: send its requests there/);
  });
});
