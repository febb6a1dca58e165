// Server→agent requests through mcpgate (MCP 2025-11-25 sampling, elicitation, roots) with an SDK v2
// agent: a server's question reaches the agent's handler with its params intact and the answer goes
// back to the server; roots/list_changed flows from the agent to the servers; and an agent that did
// not declare a capability is never asked — the server gets MCPG_CAPABILITY_UNSUPPORTED instead.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import {
  fixtureServer,
  jsonOf,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
  until,
} from '../helpers/gateway.js';

const ROOTS = [{ uri: 'file:///tmp/project', name: 'project' }];

describe('agent requests: an agent with sampling, elicitation and roots', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  const asked: Record<string, unknown[]> = { sampling: [], elicitation: [] };

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    gw = await startGateway({ config, capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
    gw.client.setRequestHandler('sampling/createMessage', (req) => {
      asked.sampling!.push(req.params);
      const last = req.params.messages.at(-1)?.content;
      const prompt = last !== undefined && !Array.isArray(last) && last.type === 'text' ? last.text : '?';
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `echo of ${prompt}` } };
    });
    gw.client.setRequestHandler('elicitation/create', (req) => {
      asked.elicitation!.push(req.params);
      return { action: 'accept', content: { name: 'ada' } };
    });
    gw.client.setRequestHandler('roots/list', () => ({ roots: ROOTS }));
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('relays sampling/createMessage to the agent and its answer back to the server', { timeout: 10_000 }, async () => {
    const result = await gw.client.callTool({ name: 'sink__sample', arguments: { prompt: 'write a haiku' } });
    assert.equal(textOf(result), 'sampled: echo of write a haiku');
    assert.equal(asked.sampling!.length, 1);
    const params = asked.sampling![0] as { messages: unknown; maxTokens: unknown };
    assert.deepEqual(params.messages, [{ role: 'user', content: { type: 'text', text: 'write a haiku' } }]);
    assert.equal(params.maxTokens, 50);
  });

  it('relays elicitation/create and the accepted content', { timeout: 10_000 }, async () => {
    const result = await gw.client.callTool({ name: 'sink__elicit', arguments: {} });
    assert.deepEqual(jsonOf(result), { action: 'accept', content: { name: 'ada' } });
    assert.equal(asked.elicitation!.length, 1);
    const params = asked.elicitation![0] as { message: unknown; requestedSchema: unknown };
    assert.equal(params.message, 'Who are you?');
    assert.deepEqual(params.requestedSchema, { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
  });

  it('refuses a URL-mode elicitation/create to an agent that declared form mode only, never showing it', { timeout: 10_000 }, async () => {
    const before = asked.elicitation!.length;
    const answer = textOf(await gw.client.callTool({ name: 'sink__elicit_url', arguments: {} }));
    // mcpgate refuses it, naming what the agent lacks (an agent that would take it anyway never sees it).
    assert.match(answer, /^refused: .*did not declare URL-mode elicitation/);
    assert.equal(asked.elicitation!.length, before);
  });

  it("relays roots/list and returns the agent's roots", { timeout: 10_000 }, async () => {
    assert.deepEqual(jsonOf(await gw.client.callTool({ name: 'sink__roots', arguments: {} })), ROOTS);
  });

  it("passes the agent's roots/list_changed on to the server", { timeout: 15_000 }, async () => {
    const count = async (): Promise<number> => Number(textOf(await gw.client.callTool({ name: 'sink__roots_changed', arguments: {} })));
    const before = await count();
    await gw.client.sendRootsListChanged();
    assert.ok(await until(async () => (await count()) === before + 1), 'the server never counted the notification');
    await gw.client.sendRootsListChanged();
    assert.ok(await until(async () => (await count()) === before + 2), 'the second notification was lost');
  });
});

describe('agent requests: an agent without those capabilities', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  /** Every message the gateway wrote to the agent, to prove it never asked. */
  const wire: { method?: string }[] = [];

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    gw = await startGateway({ config });
    let partial = '';
    gw.child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line.trim() !== '') wire.push(JSON.parse(line) as { method?: string });
    });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  const cases = [
    { tool: 'sink__sample', args: { prompt: 'hi' }, capability: 'sampling', method: 'sampling/createMessage' },
    { tool: 'sink__elicit', args: {}, capability: 'elicitation', method: 'elicitation/create' },
    { tool: 'sink__roots', args: {}, capability: 'roots', method: 'roots/list' },
  ];
  for (const { tool, args, capability, method } of cases) {
    it(`answers the server's ${method} with MCPG_CAPABILITY_UNSUPPORTED, without asking the agent`, { timeout: 10_000 }, async () => {
      // The kitchen-sink lets the error it received propagate, so the agent sees what the server got.
      await assert.rejects(
        gw.client.callTool({ name: tool, arguments: args }),
        (err: { code?: unknown; message?: unknown; data?: unknown }) => {
          assert.equal(err.code, -32601);
          assert.match(
            String(err.message),
            new RegExp(`agent "tester" did not declare the ${capability} capability, so ${method} cannot be relayed`),
          );
          assert.deepEqual(err.data, { code: 'MCPG_CAPABILITY_UNSUPPORTED', server: 'sink' });
          return true;
        },
      );
      assert.deepEqual(
        wire.filter((m) => m.method === method),
        [],
      );
    });
  }

  it('keeps serving after refusing', { timeout: 10_000 }, async () => {
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'ok' } })), 'ok');
  });
});

describe('agent requests: a server that asks before the agent has initialized', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { early: fixtureServer('kitchen-sink-server', ['--roots-at-start']) });
    gw = await startGateway({ config, noClient: true });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it("holds the server's roots/list until the agent is initialized, then relays it", { timeout: 20_000 }, async () => {
    // The server asked for roots the moment it was initialized, before its summary line; no agent yet.
    await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('server "early" ready'));
    gw.client = new Client({ name: 'late-agent', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    gw.client.setRequestHandler('roots/list', () => ({ roots: ROOTS }));
    await gw.client.connect(gw.transport as never);
    let answer = '';
    assert.ok(
      await until(async () => (answer = textOf(await gw.client.callTool({ name: 'early__roots_at_start', arguments: {} }))) !== 'pending'),
    );
    assert.deepEqual(JSON.parse(answer), ROOTS);
  });
});
