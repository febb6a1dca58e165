// Forwarding, left to right and back (MCP 2025-11-25), with an SDK v2 agent: every request kind the
// kitchen-sink server serves reaches it through mcpgate and its answer comes back unchanged except for
// names (SERVER__TOOL, mcpgate://SERVER/URI). Notifications (progress, log, resources/updated) and
// cancellation are covered here too; server→agent requests are in agent-requests.test.ts.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Client, ResourceNotFoundError } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  fixture,
  fixtureServer,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
  until,
  yieldBetweenMessages,
} from '../helpers/gateway.js';

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const BLOB_1 = Buffer.from(Array.from({ length: 16 }, (_, i) => i)).toString('base64');
const INSTRUCTIONS = 'Use sink__echo to echo things.';

type WireError = { code: number; message: string; data?: { code?: string } };
type WireMessage = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: unknown; error?: WireError };

/** Records every message the gateway writes to the agent, exactly as it was on the wire. */
function tapWire(gw: GatewayProcess): WireMessage[] {
  const wire: WireMessage[] = [];
  let partial = '';
  gw.child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line.trim() !== '') wire.push(JSON.parse(line) as WireMessage);
  });
  return wire;
}

/** The kitchen-sink's own tools/list, asked directly (no gateway), to compare definitions against. */
async function directTools(): Promise<{ name: string }[]> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [fixture('kitchen-sink-server')] }));
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

describe('forwarding (SDK v2 agent)', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let wire: WireMessage[];
  /** Every JSON-RPC error the gateway wrote to the agent, as it was on the wire. */
  const errors = (): WireError[] => wire.flatMap((m) => (m.error === undefined ? [] : [m.error]));

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      dyn: fixtureServer('dynamic-server'),
      sink: fixtureServer('kitchen-sink-server', ['--marker-dir', dir.path, '--instructions', INSTRUCTIONS]),
    });
    gw = await startGateway({ config });
    wire = tapWire(gw);
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('lists every tool with its definition unchanged except the name', { timeout: 20_000 }, async () => {
    const { tools } = await gw.client.listTools();
    const sink = tools.filter((t) => t.name.startsWith('sink__'));
    const direct = await directTools();
    assert.deepEqual(
      sink,
      direct.map((t) => ({ ...t, name: `sink__${t.name}` })),
    );
    const echo = tools.find((t) => t.name === 'dyn__echo');
    assert.deepEqual(echo?.inputSchema.required, ['message']);
    assert.equal(tools.length, direct.length + 1);
  });

  it('passes structured content (validated against outputSchema) through', { timeout: 10_000 }, async () => {
    const result = await gw.client.callTool({ name: 'sink__structured', arguments: { a: 2, b: 40 } });
    assert.deepEqual(result.structuredContent, { sum: 42 });
    assert.deepEqual(result.content, [{ type: 'text', text: '{"sum":42}' }]);
  });

  it('passes an image block through unchanged', { timeout: 10_000 }, async () => {
    const result = await gw.client.callTool({ name: 'sink__image', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }]);
  });

  it('namespaces resource_link and embedded resource URIs, and they read back through the gateway', { timeout: 10_000 }, async () => {
    const result = await gw.client.callTool({ name: 'sink__link', arguments: {} });
    assert.deepEqual(result.content, [
      { type: 'resource_link', uri: 'mcpgate://sink/sink://static/1', name: 'static-1', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'mcpgate://sink/sink://static/2', mimeType: 'text/plain', text: 'two' } },
    ]);
    const one = await gw.client.readResource({ uri: 'mcpgate://sink/sink://static/1' });
    assert.deepEqual(one.contents, [{ uri: 'mcpgate://sink/sink://static/1', mimeType: 'text/plain', text: 'one' }]);
    const two = await gw.client.readResource({ uri: 'mcpgate://sink/sink://static/2' });
    assert.deepEqual(two.contents, [{ uri: 'mcpgate://sink/sink://static/2', mimeType: 'text/plain', text: 'two' }]);
  });

  it('passes an isError result through', { timeout: 10_000 }, async () => {
    const result = await gw.client.callTool({ name: 'sink__fail', arguments: {} });
    assert.deepEqual(result, { content: [{ type: 'text', text: 'tool failed on purpose' }], isError: true });
  });

  it("passes a server's own JSON-RPC error through unchanged", { timeout: 10_000 }, async () => {
    await assert.rejects(
      gw.client.callTool({ name: 'sink__throw', arguments: {} }),
      (err: { code?: unknown; message?: unknown; data?: unknown }) => {
        assert.equal(err.code, -32050);
        assert.match(String(err.message), /^(MCP error -32050: )?boom$/);
        assert.equal(err.data, undefined);
        return true;
      },
    );
    assert.deepEqual(
      errors().find((e) => e.code === -32050),
      { code: -32050, message: 'boom' },
    );
  });

  it('lists and reads resources (text and blob) under namespaced URIs', { timeout: 10_000 }, async () => {
    const { resources } = await gw.client.listResources();
    assert.deepEqual(resources, [
      { uri: 'mcpgate://sink/sink://static/1', name: 'static-1', mimeType: 'text/plain' },
      { uri: 'mcpgate://sink/sink://static/2', name: 'static-2', mimeType: 'text/plain' },
      { uri: 'mcpgate://sink/sink://blob/1', name: 'blob-1', mimeType: 'application/octet-stream' },
    ]);
    const blob = await gw.client.readResource({ uri: 'mcpgate://sink/sink://blob/1' });
    assert.deepEqual(blob.contents, [{ uri: 'mcpgate://sink/sink://blob/1', mimeType: 'application/octet-stream', blob: BLOB_1 }]);
  });

  it('lists templates namespaced and reads through an expanded template', { timeout: 10_000 }, async () => {
    const { resourceTemplates } = await gw.client.listResourceTemplates();
    assert.deepEqual(resourceTemplates, [
      { uriTemplate: 'mcpgate://sink/sink://item/{id}', name: 'item', description: 'An item by id', mimeType: 'text/plain' },
    ]);
    const item = await gw.client.readResource({ uri: 'mcpgate://sink/sink://item/42' });
    assert.deepEqual(item.contents, [{ uri: 'mcpgate://sink/sink://item/42', mimeType: 'text/plain', text: 'item 42' }]);
  });

  it('answers an unknown URI with -32002 and data.code MCPG_RESOURCE_NOT_FOUND', { timeout: 10_000 }, async () => {
    // The v2 SDK turns any -32002 carrying a uri into its own ResourceNotFoundError (code -32602,
    // data reduced to { uri }), so the gateway's data.code is checked on the wire as well.
    await assert.rejects(gw.client.readResource({ uri: 'file:///etc/passwd' }), (err) => {
      assert.ok(err instanceof ResourceNotFoundError, String(err));
      assert.equal(err.uri, 'file:///etc/passwd');
      return true;
    });
    assert.deepEqual(
      errors().find((e) => e.data?.code === 'MCPG_RESOURCE_NOT_FOUND'),
      {
        code: -32002,
        message:
          'no server serves file:///etc/passwd (mcpgate resource URIs look like mcpgate://SERVER/URI, or ui://SERVER/… for an MCP Apps ui:// resource)',
        data: { code: 'MCPG_RESOURCE_NOT_FOUND', uri: 'file:///etc/passwd' },
      },
    );
  });

  it('delivers resources/updated to a subscriber with the namespaced URI, and stops after unsubscribe', { timeout: 10_000 }, async () => {
    const uri = 'mcpgate://sink/sink://static/1';
    const updated = new Promise<unknown>((resolve) =>
      gw.client.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params)),
    );
    await gw.client.subscribeResource({ uri });
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__touch', arguments: { uri: 'sink://static/1' } })), 'touched');
    assert.deepEqual(await updated, { uri });
    await gw.client.unsubscribeResource({ uri });
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__touch', arguments: { uri: 'sink://static/1' } })), 'not subscribed');
  });

  it('lists prompts namespaced and gets one with arguments', { timeout: 10_000 }, async () => {
    const { prompts } = await gw.client.listPrompts();
    assert.deepEqual(prompts, [
      { name: 'sink__greet', description: 'Greets someone by name', arguments: [{ name: 'name', required: true }] },
    ]);
    const got = await gw.client.getPrompt({ name: 'sink__greet', arguments: { name: 'Ada' } });
    assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } }]);
  });

  it('completes a prompt argument and a template variable', { timeout: 10_000 }, async () => {
    const prompt = await gw.client.complete({ ref: { type: 'ref/prompt', name: 'sink__greet' }, argument: { name: 'name', value: 'al' } });
    assert.deepEqual(prompt.completion, { values: ['alice', 'albert'], total: 2, hasMore: false });
    const ref = { type: 'ref/resource' as const, uri: 'mcpgate://sink/sink://item/{id}' };
    const template = await gw.client.complete({ ref, argument: { name: 'id', value: '1' } });
    assert.deepEqual(template.completion, { values: ['1', '10'], total: 2, hasMore: false });
  });

  it('answers ping', { timeout: 10_000 }, async () => {
    assert.deepEqual(await gw.client.ping(), {});
  });

  it('maps progress tokens per call: every step reaches onprogress, before the result', { timeout: 10_000 }, async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const restore = yieldBetweenMessages(gw);
    const result = await gw.client.callTool({ name: 'sink__progress', arguments: { steps: 3 } }, { onprogress: (p) => void seen.push(p) });
    restore();
    assert.equal(textOf(result), 'done');
    const steps = [1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` }));
    assert.deepEqual(seen, steps);
    const response = wire.find((m) => JSON.stringify(m.result) === JSON.stringify(result));
    assert.ok(response !== undefined);
    const ofCall = wire.filter((m) => m === response || (m.method === 'notifications/progress' && m.params?.progressToken === response.id));
    assert.deepEqual(ofCall, [
      ...steps.map((p) => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: response.id, ...p } })),
      response,
    ]);
  });

  it('cancels the call on the server when the agent aborts, and the next call works', { timeout: 20_000 }, async () => {
    const tag = `abort-${process.pid}`;
    // Know when the request has left the client: then one round trip to the same server proves it arrived.
    const send = gw.transport.send.bind(gw.transport);
    const sent = new Promise<void>((resolve) => {
      gw.transport.send = (message) => {
        const params = message.params as { name?: unknown } | undefined;
        if (message.method === 'tools/call' && params?.name === 'sink__slow') resolve();
        return send(message);
      };
    });
    const controller = new AbortController();
    const call = gw.client.callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag } }, { signal: controller.signal });
    await sent;
    gw.transport.send = send;
    assert.match(textOf(await gw.client.callTool({ name: 'sink__pid', arguments: {} })), /^\d+$/);
    controller.abort();
    await assert.rejects(call);
    assert.ok(await until(() => existsSync(dir.file(`cancelled-${tag}`))), 'the server never saw notifications/cancelled');
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'still here' } })), 'still here');
  });

  it('forwards log messages at or above the level set, with the logger namespaced', { timeout: 10_000 }, async () => {
    const first = new Promise<unknown>((resolve) => gw.client.setNotificationHandler('notifications/message', (n) => resolve(n.params)));
    await gw.client.setLoggingLevel('warning');
    await gw.client.callTool({ name: 'sink__log', arguments: { level: 'info', message: 'quiet' } });
    await gw.client.callTool({ name: 'sink__log', arguments: { level: 'error', message: 'loud' } });
    assert.deepEqual(await first, { level: 'error', logger: 'sink/sink', data: 'loud' });
    await gw.client.setLoggingLevel('debug');
  });

  it("shows each server's instructions to the agent", { timeout: 10_000 }, () => {
    const instructions = gw.client.getInstructions() ?? '';
    assert.ok(instructions.includes(`## sink\n${INSTRUCTIONS}`), instructions);
  });
});

describe('forwarding: paginated server lists', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server', ['--page-size', '2', '--extra-tools', '7']) });
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('follows every cursor, so all tools and resources are present', { timeout: 20_000 }, async () => {
    const direct = (await directTools()).map((t) => `sink__${t.name}`);
    const extra = Array.from({ length: 7 }, (_, i) => `sink__t${i}`);
    const { tools } = await gw.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...direct, ...extra].sort());
    const { resources } = await gw.client.listResources();
    assert.equal(resources.length, 3);
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__t6', arguments: {} })), 't6');
  });
});

describe('forwarding: the gateway filters log messages itself', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    // This server logs everything whatever level it is told; what reaches the agent is the gateway's doing.
    gw = await startGateway({ config: await writeConfig(dir, { loud: fixtureServer('kitchen-sink-server', ['--ignore-set-level']) }) });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it("filters log messages by the agent's level itself when a server ignores logging/setLevel", { timeout: 10_000 }, async () => {
    const first = new Promise<unknown>((resolve) => gw.client.setNotificationHandler('notifications/message', (n) => resolve(n.params)));
    await gw.client.setLoggingLevel('warning');
    await gw.client.callTool({ name: 'loud__log', arguments: { level: 'info', message: 'quiet' } });
    await gw.client.callTool({ name: 'loud__log', arguments: { level: 'error', message: 'loud' } });
    assert.deepEqual(await first, { level: 'error', logger: 'loud/sink', data: 'loud' });
    await gw.client.setLoggingLevel('debug');
  });
});
