// Per-agent and per-session catalogs: what a pooled
// connection lists belongs to its owners. The fixture (test/fixtures/counter-server.ts) adds a tool
// to its own session's list with `grow` and sends tools/list_changed; official SDK clients over
// Streamable HTTP (--no-auth, agents named by X-Mcpgate-Agent) check that only the owner (the agent
// on a per-agent server, the agent session on a per-session one) is told, sees the tool and may
// call it, that everyone else gets it refused as unknown, and that pins hold a tool first seen on a
// pooled connection exactly as on a shared one until `mcpgate approve` releases it.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import { cli, fixtureServer, rpcError, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 90_000;

interface Agent {
  client: Client;
  /** tools/list_changed notifications received. */
  changed: () => number;
  close: () => Promise<void>;
}

async function agent(gate: HttpGateway, name: string): Promise<Agent> {
  let changed = 0;
  const { client } = await connectAgent(gate.url, {
    headers: { 'x-mcpgate-agent': name },
    setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => void (changed += 1)),
  });
  return { client, changed: () => changed, close: () => client.close() };
}

const toolNames = async (a: Agent): Promise<string[]> => (await a.client.listTools()).tools.map((t) => t.name);

describe('per-agent and per-session catalogs (pins off)', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const agents: Agent[] = [];
  const open = async (name: string): Promise<Agent> => {
    const a = await agent(gate, name);
    agents.push(a);
    return a;
  };

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      counter: fixtureServer('counter-server', [], { sessions: 'per-agent' }),
      scratch: fixtureServer('counter-server', [], { sessions: 'per-session' }),
      shared: fixtureServer('counter-server'),
    });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    for (const a of agents) await a.close().catch(() => undefined);
    await gate?.stop();
    await dir?.remove();
  });

  it("a per-agent server's list_changed updates only its agent's view; the other agent cannot see or call the tool", async () => {
    const alice = await open('alice');
    const bob = await open('bob');
    const before = await toolNames(bob);
    assert.ok(before.includes('counter__grow'), JSON.stringify(before));
    assert.deepEqual(await toolNames(alice), before, "both start from the catalog connection's view");
    assert.equal(textOf(await alice.client.callTool({ name: 'counter__grow', arguments: { name: 'alice_tool' } })), 'grew alice_tool');
    assert.ok(await until(() => alice.changed() >= 1), 'alice is told her list changed');
    assert.ok((await toolNames(alice)).includes('counter__alice_tool'));
    assert.match(textOf(await alice.client.callTool({ name: 'counter__alice_tool', arguments: {} })), /^grown alice_tool pid=\d+$/);
    // Bob's connection to the same server (his own session) never listed it.
    await bob.client.callTool({ name: 'counter__inc', arguments: {} });
    assert.deepEqual(await toolNames(bob), before, "bob's view is unchanged");
    const refused = await rpcError(bob.client.callTool({ name: 'counter__alice_tool', arguments: {} }));
    assert.equal(refused.data.code, 'MCPG_TOOL_NOT_FOUND', JSON.stringify(refused));
    assert.equal(bob.changed(), 0, 'bob was never told of a change');
    // A second session of alice has her view (per-agent: one server session for the agent).
    const alice2 = await open('alice');
    assert.ok((await toolNames(alice2)).includes('counter__alice_tool'));
    assert.match(textOf(await alice2.client.callTool({ name: 'counter__alice_tool', arguments: {} })), /^grown alice_tool/);
    // The shared view is untouched for a newcomer too.
    const carol = await open('carol');
    assert.deepEqual(await toolNames(carol), before);
  });

  it("a per-session server's tool is its session's only, even against another session of the same agent", async () => {
    const one = await open('dora');
    const two = await open('dora');
    const before = await toolNames(one); // what a session was shown is what a change is measured against
    assert.deepEqual(await toolNames(two), before);
    assert.equal(textOf(await one.client.callTool({ name: 'scratch__grow', arguments: { name: 'mine' } })), 'grew mine');
    assert.ok(await until(() => one.changed() >= 1), 'the owning session is told');
    const now = await toolNames(one);
    assert.ok(now.includes('scratch__mine'), JSON.stringify(now));
    assert.deepEqual(
      now.filter((name) => name !== 'scratch__mine'),
      before,
      'the rest of its view is as it was',
    );
    assert.match(textOf(await one.client.callTool({ name: 'scratch__mine', arguments: {} })), /^grown mine/);
    await two.client.callTool({ name: 'scratch__inc', arguments: {} });
    assert.ok(!(await toolNames(two)).includes('scratch__mine'));
    const refused = await rpcError(two.client.callTool({ name: 'scratch__mine', arguments: {} }));
    assert.equal(refused.data.code, 'MCPG_TOOL_NOT_FOUND');
    assert.equal(two.changed(), 0);
  });

  it("a tool grown on the shared server is everyone's, as before", async () => {
    const erin = await open('erin');
    const fred = await open('fred');
    await erin.client.callTool({ name: 'shared__grow', arguments: { name: 'common' } });
    assert.ok(await until(() => fred.changed() >= 1), 'every agent is told');
    assert.ok((await toolNames(fred)).includes('shared__common'));
    assert.match(textOf(await fred.client.callTool({ name: 'shared__common', arguments: {} })), /^grown common/);
  });
});

describe("pins on a per-agent server's own tools", { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const agents: Agent[] = [];

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { counter: fixtureServer('counter-server', [], { sessions: 'per-agent' }) });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'tofu', '--state', dir.file('state')] });
  });

  after(async () => {
    for (const a of agents) await a.close().catch(() => undefined);
    await gate?.stop();
    await dir?.remove();
  });

  it('a tool first seen on a pooled connection is held until approved, then shown to its owner only', async () => {
    const alice = await agent(gate, 'alice');
    const bob = await agent(gate, 'bob');
    agents.push(alice, bob);
    await alice.client.callTool({ name: 'counter__grow', arguments: { name: 'fresh' } });
    // The pooled connection lists it (after its list_changed); the server's pins (made by the catalog
    // connection) do not have it: it is held, as a new tool of a shared server is.
    let held = await rpcError(alice.client.callTool({ name: 'counter__fresh', arguments: {} }));
    assert.ok(
      await until(
        async () =>
          (held = await rpcError(alice.client.callTool({ name: 'counter__fresh', arguments: {} }))).data.code === 'MCPG_TOOL_HELD',
      ),
      JSON.stringify(held),
    );
    assert.equal(held.data.approve, `mcpgate approve counter fresh --state ${dir.file('state')}`);
    assert.ok(!(await toolNames(alice)).includes('counter__fresh'), 'a held tool is not shown');
    const approved = await cli(['approve', 'counter', 'fresh', '--state', dir.file('state')]);
    assert.equal(approved.code, 0, approved.err);
    assert.ok(await until(async () => (await toolNames(alice)).includes('counter__fresh')), 'released for its owner');
    assert.ok(await until(() => alice.changed() >= 1), 'alice is told');
    assert.match(textOf(await alice.client.callTool({ name: 'counter__fresh', arguments: {} })), /^grown fresh/);
    // Approved, but bob's own session never listed it.
    await bob.client.callTool({ name: 'counter__inc', arguments: {} });
    assert.ok(!(await toolNames(bob)).includes('counter__fresh'));
    assert.equal((await rpcError(bob.client.callTool({ name: 'counter__fresh', arguments: {} }))).data.code, 'MCPG_TOOL_NOT_FOUND');
  });
});

describe('discovery mode on a per-agent server', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const agents: Agent[] = [];

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { counter: fixtureServer('counter-server', [], { sessions: 'per-agent' }) });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--mode', 'discovery'] });
  });

  after(async () => {
    for (const a of agents) await a.close().catch(() => undefined);
    await gate?.stop();
    await dir?.remove();
  });

  const serverTools = async (a: Agent): Promise<string[]> => {
    const result = await a.client.callTool({ name: 'get_server_tools', arguments: { server: 'counter' } });
    return (JSON.parse(textOf(result)) as { tools: { name: string }[] }).tools.map((t) => t.name);
  };
  const count = async (a: Agent): Promise<number> => {
    const result = await a.client.callTool({ name: 'list_servers', arguments: {} });
    return (JSON.parse(textOf(result)) as { servers: { name: string; tools: number }[] }).servers.find((s) => s.name === 'counter')!.tools;
  };

  it("get_server_tools and list_servers show an agent its own connection's tools, and execute_tool reaches only its own", async () => {
    const alice = await agent(gate, 'alice');
    const bob = await agent(gate, 'bob');
    agents.push(alice, bob);
    const before = await serverTools(bob);
    assert.ok(before.includes('grow'), JSON.stringify(before));
    const grown = await alice.client.callTool({
      name: 'execute_tool',
      arguments: { server: 'counter', tool: 'grow', args: { name: 'alice_tool' } },
    });
    assert.equal(textOf(grown), 'grew alice_tool');
    assert.ok(await until(async () => (await serverTools(alice)).includes('alice_tool')), 'alice discovers her own tool');
    assert.equal(await count(alice), before.length + 1);
    assert.match(
      textOf(await alice.client.callTool({ name: 'execute_tool', arguments: { server: 'counter', tool: 'alice_tool' } })),
      /^grown alice_tool/,
    );
    assert.deepEqual(await serverTools(bob), before, 'bob discovers only his own');
    assert.equal(await count(bob), before.length);
    const refused = await rpcError(bob.client.callTool({ name: 'execute_tool', arguments: { server: 'counter', tool: 'alice_tool' } }));
    assert.equal(refused.data.code, 'MCPG_TOOL_NOT_FOUND', JSON.stringify(refused));
  });
});
