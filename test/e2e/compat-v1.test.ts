// Agents built on the v1 SDK package (@modelcontextprotocol/sdk) work through mcpgate unchanged: the
// core flows of forwarding.test.ts and agent-requests.test.ts (list, call, structured output, progress,
// sampling, resources, prompts, completion, logging, errors) with a v1 `Client` as the agent.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import {
  fixtureServer,
  jsonOf,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
  yieldBetweenMessages,
} from '../helpers/gateway.js';

describe('compat: an SDK v1 agent', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let client: ClientV1;
  const prompts: string[] = [];

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      dyn: fixtureServer('dynamic-server'),
      sink: fixtureServer('kitchen-sink-server', ['--instructions', 'v1 agents welcome']),
    });
    gw = await startGateway({ config, sdk: 'v1', capabilities: { sampling: {}, elicitation: {} } });
    client = gw.clientV1;
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      const content = req.params.messages.at(-1)?.content;
      const text = content !== undefined && !Array.isArray(content) && content.type === 'text' ? content.text : '?';
      prompts.push(text);
      return { model: 'v1-model', role: 'assistant', content: { type: 'text', text: text.toUpperCase() } };
    });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' }));
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it("initializes and sees the servers' instructions", { timeout: 10_000 }, () => {
    assert.equal(client.getServerVersion()?.name, 'mcpgate');
    assert.ok(client.getInstructions()?.includes('## sink\nv1 agents welcome'), client.getInstructions());
  });

  it('lists namespaced tools from both servers', { timeout: 10_000 }, async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['dyn__echo', 'sink__echo', 'sink__structured', 'sink__progress', 'sink__sample'])
      assert.ok(names.includes(name), name);
    const structured = tools.find((t) => t.name === 'sink__structured');
    assert.deepEqual(structured?.outputSchema, { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] });
  });

  it('calls tools on both servers', { timeout: 10_000 }, async () => {
    assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: 'v1 hello' } })), 'v1 hello');
    assert.deepEqual(jsonOf(await client.callTool({ name: 'dyn__echo', arguments: { message: 'v1' } })), { echo_message: 'v1' });
  });

  it('gets structured content', { timeout: 10_000 }, async () => {
    const result = await client.callTool({ name: 'sink__structured', arguments: { a: 1, b: 2 } });
    assert.deepEqual(result.structuredContent, { sum: 3 });
  });

  it('gets every progress notification', { timeout: 10_000 }, async () => {
    const seen: number[] = [];
    const restore = yieldBetweenMessages(gw);
    const result = await client.callTool({ name: 'sink__progress', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => void seen.push(p.progress),
    });
    restore();
    assert.equal(textOf(result), 'done');
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('answers sampling and elicitation relayed from a server', { timeout: 10_000 }, async () => {
    assert.equal(textOf(await client.callTool({ name: 'sink__sample', arguments: { prompt: 'quiet words' } })), 'sampled: QUIET WORDS');
    assert.deepEqual(prompts, ['quiet words']);
    assert.deepEqual(jsonOf(await client.callTool({ name: 'sink__elicit', arguments: {} })), { action: 'decline' });
  });

  it('passes a server error through, and reports an unknown tool with MCPG_TOOL_NOT_FOUND', { timeout: 10_000 }, async () => {
    await assert.rejects(client.callTool({ name: 'sink__throw', arguments: {} }), (err) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32050);
      assert.equal(err.message, 'MCP error -32050: boom');
      return true;
    });
    await assert.rejects(client.callTool({ name: 'sink__nope', arguments: {} }), (err) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      assert.deepEqual(err.data, { code: 'MCPG_TOOL_NOT_FOUND', tool: 'sink__nope' });
      return true;
    });
  });

  it('lists and reads resources, templates included', { timeout: 10_000 }, async () => {
    const { resources } = await client.listResources();
    assert.deepEqual(
      resources.map((r) => r.uri),
      ['mcpgate://sink/sink://static/1', 'mcpgate://sink/sink://static/2', 'mcpgate://sink/sink://blob/1'],
    );
    const read = await client.readResource({ uri: 'mcpgate://sink/sink://static/2' });
    assert.deepEqual(read.contents, [{ uri: 'mcpgate://sink/sink://static/2', mimeType: 'text/plain', text: 'two' }]);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(
      resourceTemplates.map((t) => t.uriTemplate),
      ['mcpgate://sink/sink://item/{id}'],
    );
    const item = await client.readResource({ uri: 'mcpgate://sink/sink://item/7' });
    assert.deepEqual(item.contents, [{ uri: 'mcpgate://sink/sink://item/7', mimeType: 'text/plain', text: 'item 7' }]);
  });

  it('sees MCPG_RESOURCE_NOT_FOUND for a URI no server serves', { timeout: 10_000 }, async () => {
    await assert.rejects(client.readResource({ uri: 'mcpgate://nobody/x://y' }), (err) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32002);
      assert.deepEqual(err.data, { code: 'MCPG_RESOURCE_NOT_FOUND', uri: 'mcpgate://nobody/x://y' });
      return true;
    });
  });

  it('subscribes and gets resources/updated with the namespaced URI', { timeout: 10_000 }, async () => {
    const uri = 'mcpgate://sink/sink://blob/1';
    const updated = new Promise<unknown>((resolve) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params)),
    );
    await client.subscribeResource({ uri });
    assert.equal(textOf(await client.callTool({ name: 'sink__touch', arguments: { uri: 'sink://blob/1' } })), 'touched');
    assert.deepEqual(await updated, { uri });
    await client.unsubscribeResource({ uri });
  });

  it('lists and gets prompts, and completes their arguments', { timeout: 10_000 }, async () => {
    const { prompts: list } = await client.listPrompts();
    assert.deepEqual(
      list.map((p) => p.name),
      ['sink__greet'],
    );
    const got = await client.getPrompt({ name: 'sink__greet', arguments: { name: 'Grace' } });
    assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'Hello, Grace!' } }]);
    const done = await client.complete({ ref: { type: 'ref/prompt', name: 'sink__greet' }, argument: { name: 'name', value: 'b' } });
    assert.deepEqual(done.completion.values, ['bob']);
  });

  it('gets log messages above its level with the logger namespaced', { timeout: 10_000 }, async () => {
    const first = new Promise<unknown>((resolve) =>
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => resolve(n.params)),
    );
    await client.setLoggingLevel('error');
    await client.callTool({ name: 'sink__log', arguments: { level: 'warning', message: 'filtered' } });
    await client.callTool({ name: 'sink__log', arguments: { level: 'critical', message: 'shown' } });
    assert.deepEqual(await first, { level: 'critical', logger: 'sink/sink', data: 'shown' });
  });

  it('pings', { timeout: 10_000 }, async () => {
    assert.deepEqual(await client.ping(), {});
  });
});
