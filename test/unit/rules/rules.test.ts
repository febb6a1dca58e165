// Per-agent rules (docs/architecture.md "`gateway-rules.json` (agents)") in-process
// (test/helpers/in-process.ts): the real stdio front and Gateway, rules parsed as the real loader
// does, over two in-memory kitchen sinks `web` and `db` (test/helpers/fake-server.ts). An agent is
// shown exactly what its rules let it call (tools, resources, templates and prompts are filtered by
// the same decision); a denied call is MCPG_POLICY_DENIED naming agent, server and item, with the
// same answer for a name that does not exist (a denial reveals nothing); an allowed name that does
// not exist is MCPG_TOOL_NOT_FOUND; an unlisted agent gets the `default` agent's rules, else
// deny_on_missing_agent decides; no rules file leaves everything open. What needs the command line
// — gateway-rules.json found beside .mcp.json, `mcpgate check --rules` — is test/e2e/rules.test.ts.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kitchenSink } from '../../helpers/fake-server.js';
import { stdioFront, type InProcessStdio, type StdioAgent } from '../../helpers/in-process.js';

const SERVERS = ['db', 'web'] as const;
type RpcError = Awaited<ReturnType<StdioAgent['error']>>;

/** A gateway over `web` and `db` for `agent`, initialized. `rules` undefined: no rules file at all. */
async function rig(agent: string, rules: unknown): Promise<InProcessStdio> {
  const r = await stdioFront({ servers: [kitchenSink('web'), kitchenSink('db')], agent, ...(rules !== undefined && { rules }) });
  try {
    await r.agent.initialize();
    return r;
  } catch (err) {
    await r.close();
    throw err;
  }
}

const close = (r: InProcessStdio | undefined): Promise<void> => r?.close() ?? Promise.resolve();

interface View {
  tools: string[];
  resources: string[];
  templates: string[];
  prompts: string[];
}

/** Everything the agent is shown, each list sorted. */
async function view(r: InProcessStdio): Promise<View> {
  const [tools, resources, templates, prompts] = await Promise.all([
    r.agent.result('tools/list'),
    r.agent.result('resources/list'),
    r.agent.result('resources/templates/list'),
    r.agent.result('prompts/list'),
  ]);
  const names = (list: unknown, key: string): string[] => (list as Record<string, string>[]).map((item) => item[key]!).sort();
  return {
    tools: names(tools.tools, 'name'),
    resources: names(resources.resources, 'uri'),
    templates: names(templates.resourceTemplates, 'uriTemplate'),
    prompts: names(prompts.prompts, 'name'),
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

/** The text of a result's first block (fails unless it is text). */
function textOf(result: Record<string, unknown>): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`expected a text result, got ${JSON.stringify(result)}`);
  return first.text;
}

const echo = async (r: InProcessStdio, name: string): Promise<string> =>
  textOf(await r.agent.result('tools/call', { name, arguments: { text: 'hi' } }));

/** The one shape of a denial: JSON-RPC -31018, data naming code, agent and server, the message naming the item. */
function assertDenied(err: RpcError, agent: string, server: string, what: string): void {
  assert.equal(err.code, -31018);
  assert.equal(err.message, `agent "${agent}" may not use ${what} of server "${server}"`);
  assert.deepEqual(err.data, { code: 'MCPG_POLICY_DENIED', agent, server });
}

const deniedCall = (r: InProcessStdio, name: string): Promise<RpcError> => r.agent.error('tools/call', { name, arguments: { text: 'hi' } });
const readError = (r: InProcessStdio, uri: string): Promise<RpcError> => r.agent.error('resources/read', { uri });
const promptError = (r: InProcessStdio, name: string, args: Record<string, string>): Promise<RpcError> =>
  r.agent.error('prompts/get', { name, arguments: args });

function assertNotFound(err: RpcError, name: string): void {
  assert.equal(err.code, -32602);
  assert.equal(err.message, `unknown tool: ${name}`);
  assert.deepEqual(err.data, { code: 'MCPG_TOOL_NOT_FOUND', tool: name });
}

/** The kitchen-sink's tool names, read from a gateway with no rules file (which also is the first test). */
let SINK: string[] = [];
let open: InProcessStdio | undefined;

before(async () => {
  open = await rig('tester', undefined);
  const tools = ((await open.agent.result('tools/list')).tools as { name: string }[]).map((t) => t.name);
  SINK = tools
    .filter((t) => t.startsWith('web__'))
    .map((t) => t.slice('web__'.length))
    .sort();
  // The rules below lean on these tools; the rest of the list is whatever the server offers.
  for (const tool of ['echo', 'elicit', 'env', 'pid', 'progress', 'slow']) assert.ok(SINK.includes(tool), `kitchen-sink has no ${tool}`);
});

after(() => close(open));

describe('rules: no rules file', { timeout: 30_000 }, () => {
  it('shows every agent every server: all tools, resources, templates and prompts', { timeout: 10_000 }, async () => {
    const v = await view(open!);
    assert.deepEqual(v, { tools: [...namespaced('db', SINK), ...namespaced('web', SINK)].sort(), ...serverItems(SERVERS) });
    assert.equal(await echo(open!, 'db__echo'), 'hi');
    // The composition root logs this note at start (src/mcpgate.ts); the gateway's status carries it.
    assert.deepEqual(open!.gateway.status().policy, { file: null, open: true, note: 'no rules file: every agent may use every server' });
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

describe('rules: allow.servers with an allow.tools glob', { timeout: 30_000 }, () => {
  let r: InProcessStdio | undefined;
  before(async () => (r = await rig('reader', RULES)));
  after(() => close(r));

  it("shows only the tools the glob admits, and the allowed server's resources and prompts", { timeout: 10_000 }, async () => {
    const expected = SINK.filter((t) => t.startsWith('e'));
    assert.deepEqual(expected.slice(0, 3), ['echo', 'elicit', 'env']);
    assert.deepEqual(await view(r!), { tools: namespaced('web', expected), ...serverItems(['web']) });
    assert.equal(await echo(r!, 'web__echo'), 'hi');
  });

  it(
    'denies a tool the glob does not admit and every tool of a server it does not name, existing or not',
    { timeout: 10_000 },
    async () => {
      assertDenied(await deniedCall(r!, 'web__pid'), 'reader', 'web', 'tool "pid"');
      assertDenied(await deniedCall(r!, 'web__no_such_tool'), 'reader', 'web', 'tool "no_such_tool"');
      assertDenied(await deniedCall(r!, 'db__echo'), 'reader', 'db', 'tool "echo"');
      assertDenied(await deniedCall(r!, 'db__no_such_tool'), 'reader', 'db', 'tool "no_such_tool"');
    },
  );

  it('answers an allowed name that does not exist with MCPG_TOOL_NOT_FOUND', { timeout: 10_000 }, async () => {
    assertNotFound(await deniedCall(r!, 'web__e_no_such_tool'), 'web__e_no_such_tool');
  });

  it('refuses resources/read and prompts/get of a server the agent may not use; allows its own', { timeout: 10_000 }, async () => {
    assertDenied(await readError(r!, 'mcpgate://db/sink://static/1'), 'reader', 'db', 'resource "sink://static/1"');
    assertDenied(await promptError(r!, 'db__greet', { name: 'x' }), 'reader', 'db', 'prompt "greet"');
    const read = await r!.agent.result('resources/read', { uri: 'mcpgate://web/sink://static/1' });
    assert.deepEqual(read.contents, [{ uri: 'mcpgate://web/sink://static/1', mimeType: 'text/plain', text: 'one' }]);
  });
});

describe('rules: deny.tools beats allow.servers "*"', { timeout: 30_000 }, () => {
  let r: InProcessStdio | undefined;
  before(async () => (r = await rig('operator', RULES)));
  after(() => close(r));

  it('hides exactly the denied tools (exact name and glob) and nothing else', { timeout: 10_000 }, async () => {
    const dbTools = SINK.filter((t) => t !== 'slow' && !t.startsWith('p'));
    assert.ok(!dbTools.includes('pid') && !dbTools.includes('progress') && dbTools.includes('echo'));
    assert.deepEqual(await view(r!), {
      tools: [...namespaced('db', dbTools), ...namespaced('web', SINK)].sort(),
      ...serverItems(SERVERS),
    });
  });

  it('denies them, and a made-up name the deny glob matches, with the same error', { timeout: 10_000 }, async () => {
    assertDenied(await deniedCall(r!, 'db__slow'), 'operator', 'db', 'tool "slow"');
    assertDenied(await deniedCall(r!, 'db__pid'), 'operator', 'db', 'tool "pid"');
    assertDenied(await deniedCall(r!, 'db__p_made_up'), 'operator', 'db', 'tool "p_made_up"');
    assertNotFound(await deniedCall(r!, 'db__made_up'), 'db__made_up');
    assert.equal(await echo(r!, 'db__echo'), 'hi');
    assert.equal(textOf(await r!.agent.result('tools/call', { name: 'web__slow', arguments: { ms: 1 } })), 'slept');
  });
});

describe('rules: deny.servers beats allow.servers "*"', { timeout: 30_000 }, () => {
  let r: InProcessStdio | undefined;
  before(async () => (r = await rig('webonly', RULES)));
  after(() => close(r));

  it('shows nothing of the denied server', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(r!), { tools: namespaced('web', SINK), ...serverItems(['web']) });
  });

  it('a denial reveals nothing: an existing and a made-up tool get the same error', { timeout: 10_000 }, async () => {
    const real = await deniedCall(r!, 'db__echo');
    const madeUp = await deniedCall(r!, 'db__zz_made_up');
    assertDenied(real, 'webonly', 'db', 'tool "echo"');
    assertDenied(madeUp, 'webonly', 'db', 'tool "zz_made_up"');
    assert.deepEqual({ ...madeUp, message: madeUp.message.replace('zz_made_up', 'echo') }, real);
  });

  it("refuses the denied server's resources, prompts and completions, existing or not", { timeout: 10_000 }, async () => {
    assertDenied(await readError(r!, 'mcpgate://db/sink://static/2'), 'webonly', 'db', 'resource "sink://static/2"');
    assertDenied(await readError(r!, 'mcpgate://db/sink://made-up'), 'webonly', 'db', 'resource "sink://made-up"');
    assertDenied(await promptError(r!, 'db__greet', { name: 'x' }), 'webonly', 'db', 'prompt "greet"');
    assertDenied(await promptError(r!, 'db__made_up', {}), 'webonly', 'db', 'prompt "made_up"');
    const complete = (name: string, value: string): Record<string, unknown> => ({
      ref: { type: 'ref/prompt', name },
      argument: { name: 'name', value },
    });
    assertDenied(await r!.agent.error('completion/complete', complete('db__greet', 'a')), 'webonly', 'db', 'prompt "greet"');
    assertDenied(await r!.agent.error('completion/complete', complete('db__made_up', 'a')), 'webonly', 'db', 'prompt "made_up"');
    const completed = await r!.agent.result('completion/complete', complete('web__greet', 'al'));
    assert.deepEqual((completed.completion as { values: string[] }).values, ['alice', 'albert']);
  });
});

describe('rules: allow.tools alone lends tools, not the server', { timeout: 30_000 }, () => {
  let r: InProcessStdio | undefined;
  before(async () => (r = await rig('lender', RULES)));
  after(() => close(r));

  it('shows the lent tools and no resources, templates or prompts', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(r!), { tools: ['db__echo', 'db__pid'], resources: [], templates: [], prompts: [] });
    assert.equal(await echo(r!, 'db__echo'), 'hi');
  });

  it("refuses the server's resources and prompts, and its other tools", { timeout: 10_000 }, async () => {
    assertDenied(await readError(r!, 'mcpgate://db/sink://static/1'), 'lender', 'db', 'resource "sink://static/1"');
    assertDenied(await promptError(r!, 'db__greet', { name: 'x' }), 'lender', 'db', 'prompt "greet"');
    assertDenied(await deniedCall(r!, 'db__env'), 'lender', 'db', 'tool "env"');
    assertDenied(await deniedCall(r!, 'web__echo'), 'lender', 'web', 'tool "echo"');
  });
});

describe('rules: an unlisted agent gets the rules of agent "default"', { timeout: 30_000 }, () => {
  let r: InProcessStdio | undefined;
  before(
    async () =>
      (r = await rig('stranger', { agents: { default: { allow: { servers: ['db'] } }, named: { allow: { servers: ['web'] } } } })),
  );
  after(() => close(r));

  it('sees what default may see, and is refused the rest under its own name', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(r!), { tools: namespaced('db', SINK), ...serverItems(['db']) });
    assert.equal(await echo(r!, 'db__echo'), 'hi');
    assertDenied(await deniedCall(r!, 'web__echo'), 'stranger', 'web', 'tool "echo"');
  });
});

describe('rules: deny_on_missing_agent', { timeout: 60_000 }, () => {
  const listed = { someone: { allow: { servers: ['*'] } } };
  let denying: InProcessStdio | undefined;
  let allowing: InProcessStdio | undefined;
  before(async () => {
    denying = await rig('stranger', { agents: listed }); // the default is true
    allowing = await rig('stranger', { agents: listed, defaults: { deny_on_missing_agent: false } });
  });
  after(async () => {
    await close(denying);
    await close(allowing);
  });

  it('true (the default): an unlisted agent sees nothing and may call nothing', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(denying!), { tools: [], resources: [], templates: [], prompts: [] });
    assertDenied(await deniedCall(denying!, 'web__echo'), 'stranger', 'web', 'tool "echo"');
    assertDenied(await deniedCall(denying!, 'db__made_up'), 'stranger', 'db', 'tool "made_up"');
    assertDenied(await readError(denying!, 'mcpgate://web/sink://static/1'), 'stranger', 'web', 'resource "sink://static/1"');
  });

  it('false: an unlisted agent sees and may call everything', { timeout: 10_000 }, async () => {
    assert.deepEqual(await view(allowing!), {
      tools: [...namespaced('db', SINK), ...namespaced('web', SINK)].sort(),
      ...serverItems(SERVERS),
    });
    assert.equal(await echo(allowing!, 'web__echo'), 'hi');
    assertNotFound(await deniedCall(allowing!, 'db__made_up'), 'db__made_up');
  });
});
