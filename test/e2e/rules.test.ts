// Per-agent rules (seed 003, docs/architecture.md "`gateway-rules.json` (agents)") with real files and real gateway
// processes over two kitchen-sink servers, `web` and `db`: an agent is shown exactly what its rules let
// it call (tools, resources, templates and prompts are filtered by the same decision); a denied call
// is MCPG_POLICY_DENIED naming agent, server and item, with the same answer for a name that does not
// exist (a denial reveals nothing); an allowed name that does not exist is MCPG_TOOL_NOT_FOUND; an
// unlisted agent gets the `default` agent's rules, else deny_on_missing_agent decides; no rules file
// leaves everything open. `mcpgate check --rules` reports errors (exit 2, file and JSON path) and
// names agent and server when a rule names a server .mcp.json lacks (a warning, exit 0).

import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type RpcError,
  type TempDir,
  cli,
  closeRig,
} from '../helpers/gateway.js';

const SERVERS = ['db', 'web'] as const;

interface Rig {
  dir: TempDir;
  gw: GatewayProcess;
}

/**
 * A gateway over `web` and `db` for `agent`. `rules` undefined: no rules file at all; `beside`: the
 * rules are written as gateway-rules.json beside .mcp.json and found without --rules.
 */
async function rig(agent: string, rules: unknown, options: { beside?: boolean } = {}): Promise<Rig> {
  const dir = await tempDir();
  try {
    const config = await writeConfig(dir, {
      web: fixtureServer('kitchen-sink-server', ['--name', 'web']),
      db: fixtureServer('kitchen-sink-server', ['--name', 'db']),
    });
    const args = ['--pins', 'off'];
    if (rules !== undefined) {
      const file = options.beside === true ? dir.file('gateway-rules.json') : dir.file('agents.json');
      await writeFile(file, JSON.stringify(rules, null, 2));
      if (options.beside !== true) args.push('--rules', file);
    }
    return { dir, gw: await startGateway({ config, agent, args }) };
  } catch (err) {
    await dir.remove();
    throw err;
  }
}

const close = closeRig;

interface View {
  tools: string[];
  resources: string[];
  templates: string[];
  prompts: string[];
}

/** Everything the agent is shown, each list sorted. */
async function view(gw: GatewayProcess): Promise<View> {
  const [tools, resources, templates, prompts] = await Promise.all([
    gw.client.listTools(),
    gw.client.listResources(),
    gw.client.listResourceTemplates(),
    gw.client.listPrompts(),
  ]);
  return {
    tools: tools.tools.map((t) => t.name).sort(),
    resources: resources.resources.map((r) => r.uri).sort(),
    templates: templates.resourceTemplates.map((t) => t.uriTemplate).sort(),
    prompts: prompts.prompts.map((p) => p.name).sort(),
  };
}

/** The resources, templates and prompts one kitchen-sink server `server` contributes, as the agent sees them. */
function serverItems(servers: readonly string[]): Omit<View, 'tools'> {
  return {
    resources: servers.flatMap((s) => ['sink://blob/1', 'sink://static/1', 'sink://static/2'].map((u) => `mcpgate://${s}/${u}`)).sort(),
    templates: servers.map((s) => `mcpgate://${s}/sink://item/{id}`).sort(),
    prompts: servers.map((s) => `${s}__greet`).sort(),
  };
}

const namespaced = (server: string, tools: readonly string[]): string[] => tools.map((t) => `${server}__${t}`);

const echo = async (gw: GatewayProcess, name: string): Promise<string> =>
  textOf(await gw.client.callTool({ name, arguments: { text: 'hi' } }));

/** The one shape of a denial: JSON-RPC -32018, data naming code, agent and server, the message naming the item. */
function assertDenied(err: RpcError, agent: string, server: string, what: string): void {
  assert.equal(err.code, -32018);
  assert.equal(err.message, `agent "${agent}" may not use ${what} of server "${server}"`);
  assert.deepEqual(err.data, { code: 'MCPG_POLICY_DENIED', agent, server });
}

const deniedCall = (gw: GatewayProcess, name: string): Promise<RpcError> =>
  rpcError(gw.client.callTool({ name, arguments: { text: 'hi' } }));

function assertNotFound(err: RpcError, name: string): void {
  assert.equal(err.code, -32602);
  assert.equal(err.message, `unknown tool: ${name}`);
  assert.deepEqual(err.data, { code: 'MCPG_TOOL_NOT_FOUND', tool: name });
}

/** The kitchen-sink's tool names, read from a gateway with no rules file (which also is the first test). */
let SINK: string[] = [];
let open: Rig | undefined;

before(async () => {
  open = await rig('tester', undefined);
  const tools = (await open.gw.client.listTools()).tools.map((t) => t.name);
  SINK = tools
    .filter((t) => t.startsWith('web__'))
    .map((t) => t.slice('web__'.length))
    .sort();
  // The rules below lean on these tools; the rest of the list is whatever the fixture offers.
  for (const tool of ['echo', 'elicit', 'env', 'pid', 'progress', 'slow']) assert.ok(SINK.includes(tool), `kitchen-sink has no ${tool}`);
});

after(() => close(open));

describe('rules: no rules file', { timeout: 30_000 }, () => {
  it('shows every agent every server: all tools, resources, templates and prompts', { timeout: 10_000 }, async () => {
    const v = await view(open!.gw);
    assert.deepEqual(v, { tools: [...namespaced('db', SINK), ...namespaced('web', SINK)].sort(), ...serverItems(SERVERS) });
    assert.equal(await echo(open!.gw, 'db__echo'), 'hi');
    assert.ok(open!.gw.logs.some((l) => l.msg === 'no rules file: every agent may use every server'));
  });
});

// One rules file, several agents: each test below runs the gateway as one of them.
const RULES = {
  agents: {
    // allow.tools restricts an allowed server to a glob; db is not named at all.
    reader: { allow: { servers: ['web'], tools: { web: ['e*'] } } },
    // deny.tools (exact and glob) beats allow.servers "*".
    operator: { allow: { servers: ['*'] }, deny: { tools: { db: ['slow', 'p*'] } } },
    // deny.servers beats allow.servers "*".
    webonly: { allow: { servers: ['*'] }, deny: { servers: ['db'] } },
    // allow.tools alone lends those tools, not the server's resources or prompts.
    lender: { allow: { tools: { db: ['echo', 'pid'] } } },
  },
};

describe('rules: allow.servers with an allow.tools glob (gateway-rules.json found beside .mcp.json)', { timeout: 30_000 }, () => {
  let r: Rig | undefined;
  before(async () => (r = await rig('reader', RULES, { beside: true })));
  after(() => close(r));

  it("shows only the tools the glob admits, and the allowed server's resources and prompts", { timeout: 10_000 }, async () => {
    const expected = SINK.filter((t) => t.startsWith('e'));
    assert.deepEqual(expected.slice(0, 3), ['echo', 'elicit', 'env']);
    assert.deepEqual(await view(r!.gw), { tools: namespaced('web', expected), ...serverItems(['web']) });
    assert.equal(await echo(r!.gw, 'web__echo'), 'hi');
  });

  it(
    'denies a tool the glob does not admit and every tool of a server it does not name, existing or not',
    { timeout: 10_000 },
    async () => {
      assertDenied(await deniedCall(r!.gw, 'web__pid'), 'reader', 'web', 'tool "pid"');
      assertDenied(await deniedCall(r!.gw, 'web__no_such_tool'), 'reader', 'web', 'tool "no_such_tool"');
      assertDenied(await deniedCall(r!.gw, 'db__echo'), 'reader', 'db', 'tool "echo"');
      assertDenied(await deniedCall(r!.gw, 'db__no_such_tool'), 'reader', 'db', 'tool "no_such_tool"');
    },
  );

  it('answers an allowed name that does not exist with MCPG_TOOL_NOT_FOUND', { timeout: 10_000 }, async () => {
    assertNotFound(await deniedCall(r!.gw, 'web__e_no_such_tool'), 'web__e_no_such_tool');
  });

  it('refuses resources/read and prompts/get of a server the agent may not use; allows its own', { timeout: 10_000 }, async () => {
    assertDenied(
      await rpcError(r!.gw.client.readResource({ uri: 'mcpgate://db/sink://static/1' })),
      'reader',
      'db',
      'resource "sink://static/1"',
    );
    assertDenied(await rpcError(r!.gw.client.getPrompt({ name: 'db__greet', arguments: { name: 'x' } })), 'reader', 'db', 'prompt "greet"');
    const read = await r!.gw.client.readResource({ uri: 'mcpgate://web/sink://static/1' });
    assert.deepEqual(read.contents, [{ uri: 'mcpgate://web/sink://static/1', mimeType: 'text/plain', text: 'one' }]);
  });
});

describe('rules: deny.tools beats allow.servers "*"', { timeout: 30_000 }, () => {
  let r: Rig | undefined;
  before(async () => (r = await rig('operator', RULES)));
  after(() => close(r));

  it('hides exactly the denied tools (exact name and glob) and nothing else', { timeout: 10_000 }, async () => {
    const dbTools = SINK.filter((t) => t !== 'slow' && !t.startsWith('p'));
    assert.ok(!dbTools.includes('pid') && !dbTools.includes('progress') && dbTools.includes('echo'));
    assert.deepEqual(await view(r!.gw), {
      tools: [...namespaced('db', dbTools), ...namespaced('web', SINK)].sort(),
      ...serverItems(SERVERS),
    });
  });

  it('denies them, and a made-up name the deny glob matches, with the same error', { timeout: 10_000 }, async () => {
    assertDenied(await deniedCall(r!.gw, 'db__slow'), 'operator', 'db', 'tool "slow"');
    assertDenied(await deniedCall(r!.gw, 'db__pid'), 'operator', 'db', 'tool "pid"');
    assertDenied(await deniedCall(r!.gw, 'db__p_made_up'), 'operator', 'db', 'tool "p_made_up"');
    assertNotFound(await deniedCall(r!.gw, 'db__made_up'), 'db__made_up');
    assert.equal(await echo(r!.gw, 'db__echo'), 'hi');
    assert.equal(textOf(await r!.gw.client.callTool({ name: 'web__slow', arguments: { ms: 1 } })), 'slept');
  });
});

describe('rules: deny.servers beats allow.servers "*"', { timeout: 30_000 }, () => {
  let r: Rig | undefined;
  before(async () => (r = await rig('webonly', RULES)));
  after(() => close(r));

  it('shows nothing of the denied server', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(r!.gw), { tools: namespaced('web', SINK), ...serverItems(['web']) });
  });

  it('a denial reveals nothing: an existing and a made-up tool get the same error', { timeout: 10_000 }, async () => {
    const real = await deniedCall(r!.gw, 'db__echo');
    const madeUp = await deniedCall(r!.gw, 'db__zz_made_up');
    assertDenied(real, 'webonly', 'db', 'tool "echo"');
    assertDenied(madeUp, 'webonly', 'db', 'tool "zz_made_up"');
    assert.deepEqual({ ...madeUp, message: madeUp.message.replace('zz_made_up', 'echo') }, real);
  });

  it("refuses the denied server's resources, prompts and completions, existing or not", { timeout: 10_000 }, async () => {
    assertDenied(
      await rpcError(r!.gw.client.readResource({ uri: 'mcpgate://db/sink://static/2' })),
      'webonly',
      'db',
      'resource "sink://static/2"',
    );
    assertDenied(
      await rpcError(r!.gw.client.readResource({ uri: 'mcpgate://db/sink://made-up' })),
      'webonly',
      'db',
      'resource "sink://made-up"',
    );
    assertDenied(
      await rpcError(r!.gw.client.getPrompt({ name: 'db__greet', arguments: { name: 'x' } })),
      'webonly',
      'db',
      'prompt "greet"',
    );
    assertDenied(await rpcError(r!.gw.client.getPrompt({ name: 'db__made_up', arguments: {} })), 'webonly', 'db', 'prompt "made_up"');
    const complete = (name: string): Promise<unknown> =>
      r!.gw.client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'name', value: 'a' } });
    assertDenied(await rpcError(complete('db__greet')), 'webonly', 'db', 'prompt "greet"');
    assertDenied(await rpcError(complete('db__made_up')), 'webonly', 'db', 'prompt "made_up"');
    assert.deepEqual(
      (await r!.gw.client.complete({ ref: { type: 'ref/prompt', name: 'web__greet' }, argument: { name: 'name', value: 'al' } })).completion
        .values,
      ['alice', 'albert'],
    );
  });
});

describe('rules: allow.tools alone lends tools, not the server', { timeout: 30_000 }, () => {
  let r: Rig | undefined;
  before(async () => (r = await rig('lender', RULES)));
  after(() => close(r));

  it('shows the lent tools and no resources, templates or prompts', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(r!.gw), { tools: ['db__echo', 'db__pid'], resources: [], templates: [], prompts: [] });
    assert.equal(await echo(r!.gw, 'db__echo'), 'hi');
  });

  it("refuses the server's resources and prompts, and its other tools", { timeout: 10_000 }, async () => {
    assertDenied(
      await rpcError(r!.gw.client.readResource({ uri: 'mcpgate://db/sink://static/1' })),
      'lender',
      'db',
      'resource "sink://static/1"',
    );
    assertDenied(await rpcError(r!.gw.client.getPrompt({ name: 'db__greet', arguments: { name: 'x' } })), 'lender', 'db', 'prompt "greet"');
    assertDenied(await deniedCall(r!.gw, 'db__env'), 'lender', 'db', 'tool "env"');
    assertDenied(await deniedCall(r!.gw, 'web__echo'), 'lender', 'web', 'tool "echo"');
  });
});

describe('rules: an unlisted agent gets the rules of agent "default"', { timeout: 30_000 }, () => {
  let r: Rig | undefined;
  before(
    async () =>
      (r = await rig('stranger', { agents: { default: { allow: { servers: ['db'] } }, named: { allow: { servers: ['web'] } } } })),
  );
  after(() => close(r));

  it('sees what default may see, and is refused the rest under its own name', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(r!.gw), { tools: namespaced('db', SINK), ...serverItems(['db']) });
    assert.equal(await echo(r!.gw, 'db__echo'), 'hi');
    assertDenied(await deniedCall(r!.gw, 'web__echo'), 'stranger', 'web', 'tool "echo"');
  });
});

describe('rules: deny_on_missing_agent', { timeout: 60_000 }, () => {
  const listed = { someone: { allow: { servers: ['*'] } } };
  let denying: Rig | undefined;
  let allowing: Rig | undefined;
  before(async () => {
    const started = await Promise.allSettled([
      rig('stranger', { agents: listed }), // the default is true
      rig('stranger', { agents: listed, defaults: { deny_on_missing_agent: false } }),
    ]);
    [denying, allowing] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  });
  after(async () => {
    await close(denying);
    await close(allowing);
  });

  it('true (the default): an unlisted agent sees nothing and may call nothing', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(denying!.gw), { tools: [], resources: [], templates: [], prompts: [] });
    assertDenied(await deniedCall(denying!.gw, 'web__echo'), 'stranger', 'web', 'tool "echo"');
    assertDenied(await deniedCall(denying!.gw, 'db__made_up'), 'stranger', 'db', 'tool "made_up"');
    assertDenied(
      await rpcError(denying!.gw.client.readResource({ uri: 'mcpgate://web/sink://static/1' })),
      'stranger',
      'web',
      'resource "sink://static/1"',
    );
  });

  it('false: an unlisted agent sees and may call everything', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(allowing!.gw), {
      tools: [...namespaced('db', SINK), ...namespaced('web', SINK)].sort(),
      ...serverItems(SERVERS),
    });
    assert.equal(await echo(allowing!.gw, 'web__echo'), 'hi');
    assertNotFound(await deniedCall(allowing!.gw, 'db__made_up'), 'db__made_up');
  });
});

describe('mcpgate check --rules', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let config: string;
  before(async () => {
    dir = await tempDir();
    config = await writeConfig(dir, { web: fixtureServer('kitchen-sink-server'), db: fixtureServer('kitchen-sink-server') });
  });
  after(() => dir?.remove());

  it('exits 2 on errors, naming the file and the JSON path of each', { timeout: 10_000 }, async () => {
    const file = dir.file('bad-rules.json');
    await writeFile(
      file,
      JSON.stringify({
        agents: { ops: { allow: { servers: 'web', tools: { db: ['echo', 7] } } } },
        defaults: { deny_on_missing_agent: 'yes' },
      }),
    );
    const r = await cli(['check', '--config', config, '--rules', file]);
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.equal(
      r.err,
      [
        `error: ${file}: $.defaults.deny_on_missing_agent: expected true or false, got a string`,
        `error: ${file}: $.agents.ops.allow.servers: expected an array of server names or patterns, got a string`,
        `error: ${file}: $.agents.ops.allow.tools.db[1]: expected a tool name or pattern (a non-empty string), got 7`,
        '',
      ].join('\n'),
    );
  });

  it('exits 2 on a file that is not JSON, naming line and column', { timeout: 10_000 }, async () => {
    const file = dir.file('broken.json');
    await writeFile(file, '{\n  "agents": {\n    "ops": { "allow": }\n  }\n}\n');
    const r = await cli(['check', '--config', config, '--rules', file]);
    assert.equal(r.code, 2);
    assert.match(r.err, new RegExp(`^error: ${escape(file)}: \\$: invalid JSON at line 3, column \\d+: .+\\n$`));
  });

  it('exits 0 with a warning naming agent and server when a rule names a server .mcp.json lacks', { timeout: 10_000 }, async () => {
    const file = dir.file('gateway-rules.json');
    await writeFile(
      file,
      JSON.stringify({ agents: { backend: { allow: { servers: ['postgres', 'db'], tools: { postgres: ['query'] } } } } }),
    );
    const r = await cli(['check', '--config', config, '--rules', file]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.err,
      [
        `warning: ${file}: $.agents.backend.allow.servers[0]: agent "backend" names server "postgres", which .mcp.json does not define`,
        `warning: ${file}: $.agents.backend.allow.tools.postgres: agent "backend" names server "postgres", which .mcp.json does not define`,
        '',
      ].join('\n'),
    );
    // Then one line per stdio server naming the variables it will get (test/cli covers those lines).
    assert.ok(r.out.startsWith(`${config}: OK, 2 server(s): web, db\n${file}: OK, 1 agent(s), 2 warning(s)\n  web: environment`), r.out);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
