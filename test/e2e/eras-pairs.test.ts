// The pairs of agent era and server era that the agent-side (eras-agents) and server-side (eras-servers) tests leave
// open: a 2026-07-28 agent in front of 2026-07-28 servers — the official SDK v2 client pinned to the
// modern revision, over Streamable HTTP and over stdio, each using the v2 SDK's strict modern server
// (test/fixtures/modern-server.ts, refusing initialize) over stdio and over HTTP — and a 2025-era
// agent over Streamable HTTP in front of the same modern servers. Nothing here works unless both
// sides of mcpgate speak the modern era: the server's input-required result becomes the agent's
// input-required result (sealed state), and the agent's retry reaches the same server call.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  GatewayProcess,
  fixtureServer,
  rpcError,
  tempDir,
  textOf,
  until,
  writeConfig,
  yieldBetweenMessages,
  type TempDir,
} from '../helpers/gateway.js';
import { JSON_HEADERS, connectAgent, raw, startHttpGateway, type HttpGateway } from '../helpers/http.js';
import { startModernHttp, type Remote } from '../helpers/remote.js';

const TIMEOUT = 120_000;
const MODERN = '2026-07-28';
const SERVERS = ['local', 'remote'] as const;

/** A v2 SDK client pinned to 2026-07-28 that answers sampling and elicitation (and counts them). */
function modernAgent(asked: { elicitation: number; sampling: number }): Client {
  const client = new Client(
    { name: 'mcpgate-modern-pair', version: '1.0.0' },
    {
      capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
      versionNegotiation: { mode: { pin: MODERN } },
    },
  );
  client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///modern/agent' }] }));
  client.setRequestHandler('elicitation/create', () => {
    asked.elicitation += 1;
    return { action: 'accept', content: { name: 'Modern Ada' } };
  });
  client.setRequestHandler('sampling/createMessage', () => {
    asked.sampling += 1;
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'modern hi' } };
  });
  return client;
}

interface Stats {
  started: number;
  cancelled: number;
}

/** The same walk over each modern server (stdio child `local`, HTTP `remote`) for one connected agent. */
function walk(agent: () => Client, asked: { elicitation: number; sampling: number }, inFlight: (server: string) => Promise<boolean>): void {
  const stats = async (server: string): Promise<Stats> =>
    JSON.parse(textOf(await agent().callTool({ name: `${server}__stats`, arguments: {} }))) as Stats;

  it(
    "lists both modern servers' tools, resources and prompts with cache hints, and calls, reads and gets them",
    { timeout: 20_000 },
    async () => {
      const client = agent();
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      const tools = await client.listTools();
      const names = tools.tools.map((t) => t.name);
      for (const server of SERVERS)
        assert.ok(names.includes(`${server}__echo`) && names.includes(`${server}__ask`), `${server}'s tools missing: ${names.join(', ')}`);
      assert.equal(tools.cacheScope, 'public');
      const resources = (await client.listResources()).resources.map((r) => r.uri);
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      for (const server of SERVERS) {
        assert.equal(textOf(await client.callTool({ name: `${server}__echo`, arguments: { text: `to ${server}` } })), `to ${server}`);
        const uri = `mcpgate://${server}/modern://note`;
        assert.ok(resources.includes(uri), `no ${uri} among ${resources.join(', ')}`);
        const read = await client.readResource({ uri });
        assert.equal((read.contents[0] as { text: string }).text, 'a modern note');
        assert.equal(read.cacheScope, 'private');
        assert.ok(prompts.includes(`${server}__greet`));
        const prompt = await client.getPrompt({ name: `${server}__greet`, arguments: { name: server } });
        assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: `Hello, ${server}` });
      }
      assert.match((await rpcError(client.callTool({ name: 'local__nope', arguments: {} }))).message, /unknown tool: local__nope/);
    },
  );

  for (const server of SERVERS) {
    it(
      `the server's elicitation, sampling and roots (input required) reach the agent as input required; its retries finish the call (${server})`,
      { timeout: 20_000 },
      async () => {
        const client = agent();
        const before = { ...asked };
        // accept:NAME:STATE — the server got the agent's answer and its own requestState back, on its retry.
        assert.equal(textOf(await client.callTool({ name: `${server}__ask`, arguments: {} })), 'accept:Modern Ada:state-1');
        assert.equal(textOf(await client.callTool({ name: `${server}__sample`, arguments: {} })), 'model said: modern hi');
        assert.deepEqual(asked, { elicitation: before.elicitation + 1, sampling: before.sampling + 1 });
        assert.equal(textOf(await client.callTool({ name: `${server}__roots`, arguments: {} })), 'file:///modern/agent');
      },
    );

    it(`progress travels on the request's own stream (${server})`, { timeout: 20_000 }, async () => {
      const seen: number[] = [];
      const result = await agent().callTool(
        { name: `${server}__progress`, arguments: {} },
        { onprogress: (p) => void seen.push(p.progress) },
      );
      assert.equal(textOf(result), 'done');
      assert.deepEqual(seen, [1, 2]);
    });

    it(`cancelling the call cancels it on the server (${server})`, { timeout: 30_000 }, async () => {
      const before = await stats(server);
      const abort = new AbortController();
      const call = agent().callTool({ name: `${server}__slow`, arguments: { ms: 20_000 } }, { signal: abort.signal });
      assert.ok(
        await until(async () => (await stats(server)).started === before.started + 1 && (await inFlight(server))),
        'the call never reached the server',
      );
      abort.abort();
      await assert.rejects(call);
      assert.ok(await until(async () => (await stats(server)).cancelled === before.cancelled + 1), 'the server never saw the cancellation');
    });
  }

  it(
    "a list change on a modern server's listen stream reaches the agent's listen stream; the new tool is listed",
    { timeout: 30_000 },
    async () => {
      const client = agent();
      for (const server of SERVERS) {
        let changed!: () => void;
        const seen = new Promise<void>((resolve) => (changed = resolve));
        client.setNotificationHandler('notifications/tools/list_changed', () => changed());
        const sub = await client.listen({ toolsListChanged: true });
        try {
          assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
          const grown = textOf(await client.callTool({ name: `${server}__grow`, arguments: {} }));
          await seen;
          const tool = `${server}__grown_${grown.split(' ')[1]}`;
          assert.ok(await until(async () => (await client.listTools()).tools.some((t) => t.name === tool)), `${tool} never appeared`);
          assert.equal(textOf(await client.callTool({ name: tool, arguments: {} })), grown);
        } finally {
          await sub.close();
        }
      }
    },
  );
}

describe('a 2026-07-28 agent over Streamable HTTP, 2026-07-28 servers over stdio and HTTP', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let remote: Remote;
  let gate: HttpGateway;
  let client: Client;
  const asked = { elicitation: 0, sampling: 0 };

  before(async () => {
    dir = await tempDir();
    remote = await startModernHttp();
    const config = await writeConfig(dir, {
      local: fixtureServer('modern-server', [], { era: MODERN }),
      remote: { type: 'http', url: remote.url, era: MODERN },
    });
    // Pins off: a grown tool would otherwise be held (new since first use), not shown.
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
    client = modernAgent(asked);
    const transport = new StreamableHTTPClientTransport(new URL(gate.url));
    await client.connect(transport);
    yieldBetweenMessages(transport);
  });

  after(async () => {
    await client?.close();
    const exit = await gate?.stop();
    assert.equal(exit?.code, 0, 'the gateway exits 0 on SIGTERM');
    await remote?.stop();
    await dir?.remove();
  });

  walk(
    () => client,
    asked,
    async (server) => {
      const res = await fetch(`${gate.base}/metrics`);
      return (await res.text()).includes(`mcpgate_calls_in_flight{server="${server}"} 1`);
    },
  );

  it(
    "the agent's Mcp-Param-* headers reach the modern HTTP server unchanged, mcpgate writes those of a tool's x-mcp-header parameters; Mcp-Name names the server's own tool, prompt or URI",
    { timeout: 20_000 },
    async () => {
      const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
      const post = (method: string, params: Record<string, unknown>, name: string, extra: Record<string, string> = {}) =>
        raw(gate.url, {
          headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': method, 'mcp-name': name, ...extra },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } }),
        });
      const seen = async (name: string): Promise<Record<string, string>> =>
        JSON.parse(textOf(await client.callTool({ name: 'remote__headers', arguments: { name } }))) as Record<string, string>;
      const call = await post('tools/call', { name: 'remote__echo', arguments: { text: 'with params' } }, 'remote__echo', {
        'mcp-param-region': 'eu-west-1',
        'mcp-param-x-unknown': '=?base64?w6lsw6k=?=',
      });
      assert.equal(call.status, 200, call.body);
      assert.equal((call.json!.result as { content: { text: string }[] }).content[0]!.text, 'with params');
      assert.deepEqual(await seen('echo'), {
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
        'mcp-param-region': 'eu-west-1',
        'mcp-param-x-unknown': '=?base64?w6lsw6k=?=',
      });
      // A tool whose schema annotates a parameter with x-mcp-header: mcpgate, the server's client, writes
      // that header from the arguments it forwards (Base64 for what is not plain ASCII), in place of the agent's.
      const routed = await post(
        'tools/call',
        { name: 'remote__routed', arguments: { region: 'Zürich', text: 'routed' } },
        'remote__routed',
        { 'mcp-param-region': 'elsewhere', 'mcp-param-x-unknown': 'v' },
      );
      assert.equal(routed.status, 200, routed.body);
      assert.deepEqual(await seen('routed'), {
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'routed',
        'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=`,
      });
      const prompt = await post('prompts/get', { name: 'remote__greet', arguments: { name: 'h' } }, 'remote__greet');
      assert.equal(prompt.status, 200, prompt.body);
      assert.deepEqual(
        await seen('greet'),
        { 'mcp-protocol-version': MODERN, 'mcp-method': 'prompts/get', 'mcp-name': 'greet' },
        'no Mcp-Param-* header of another request',
      );
      const read = await post('resources/read', { uri: 'mcpgate://remote/modern://note' }, 'mcpgate://remote/modern://note');
      assert.equal(read.status, 200, read.body);
      assert.equal((await seen('modern://note'))['mcp-name'], 'modern://note');
      // More than the limit is refused before anything is sent.
      const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`mcp-param-p${i}`, 'v']));
      const refused = await post('tools/call', { name: 'remote__echo', arguments: { text: 'x' } }, 'remote__echo', many);
      assert.equal(refused.status, 400, refused.body);
      assert.match(refused.body, /more than 32 Mcp-Param-\* headers/);
    },
  );
});

describe('a 2026-07-28 agent over stdio, 2026-07-28 servers over stdio and HTTP', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let remote: Remote;
  let gw: GatewayProcess;
  let client: Client;
  const asked = { elicitation: 0, sampling: 0 };

  before(async () => {
    dir = await tempDir();
    remote = await startModernHttp();
    const config = await writeConfig(dir, {
      local: fixtureServer('modern-server', [], { era: MODERN }),
      remote: { type: 'http', url: remote.url, era: MODERN },
    });
    gw = new GatewayProcess({ config, args: ['--pins', 'off'] });
    client = modernAgent(asked);
    await client.connect(gw.transport as never);
    yieldBetweenMessages(gw);
  });

  after(async () => {
    await client?.close();
    const exit = await gw?.stop();
    assert.equal(exit?.code, 0);
    await remote?.stop();
    await dir?.remove();
  });

  // No metrics over stdio: the server's own count of started calls says the call has reached it.
  walk(
    () => client,
    asked,
    () => Promise.resolve(true),
  );
});

describe('a 2025-era agent over Streamable HTTP, 2026-07-28 servers over stdio and HTTP', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let remote: Remote;
  let gate: HttpGateway;
  let client: Client;
  const asked = { elicitation: 0, sampling: 0 };

  before(async () => {
    dir = await tempDir();
    remote = await startModernHttp();
    const config = await writeConfig(dir, {
      local: fixtureServer('modern-server', [], { era: MODERN }),
      remote: { type: 'http', url: remote.url, era: MODERN },
    });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
    let transport: StreamableHTTPClientTransport;
    ({ client, transport } = await connectAgent(gate.url, {
      capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
      setup: (c) => {
        c.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///legacy/http' }] }));
        c.setRequestHandler('elicitation/create', () => {
          asked.elicitation += 1;
          return { action: 'accept', content: { name: 'Legacy Bo' } };
        });
        c.setRequestHandler('sampling/createMessage', () => {
          asked.sampling += 1;
          return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'legacy hi' } };
        });
      },
    }));
    yieldBetweenMessages(transport);
  });

  after(async () => {
    await client?.close();
    await gate?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  it(
    "calls, reads and gets prompts; the servers' input-required results reach it as ordinary requests on its POST stream",
    { timeout: 30_000 },
    async () => {
      assert.notEqual(client.getNegotiatedProtocolVersion(), MODERN);
      for (const server of SERVERS) {
        assert.equal(textOf(await client.callTool({ name: `${server}__echo`, arguments: { text: 'legacy' } })), 'legacy');
        assert.equal(
          ((await client.readResource({ uri: `mcpgate://${server}/modern://note` })).contents[0] as { text: string }).text,
          'a modern note',
        );
        assert.deepEqual((await client.getPrompt({ name: `${server}__greet`, arguments: { name: 'Bo' } })).messages[0]?.content, {
          type: 'text',
          text: 'Hello, Bo',
        });
        assert.equal(textOf(await client.callTool({ name: `${server}__ask`, arguments: {} })), 'accept:Legacy Bo:state-1');
        assert.equal(textOf(await client.callTool({ name: `${server}__sample`, arguments: {} })), 'model said: legacy hi');
        assert.equal(textOf(await client.callTool({ name: `${server}__roots`, arguments: {} })), 'file:///legacy/http');
      }
      assert.deepEqual(asked, { elicitation: 2, sampling: 2 });
    },
  );

  it("a modern server's listen event reaches it as notifications/tools/list_changed on its GET stream", { timeout: 30_000 }, async () => {
    for (const server of SERVERS) {
      let changed!: () => void;
      const seen = new Promise<void>((resolve) => (changed = resolve));
      client.setNotificationHandler('notifications/tools/list_changed', () => changed());
      const grown = textOf(await client.callTool({ name: `${server}__grow`, arguments: {} }));
      await seen;
      const tool = `${server}__grown_${grown.split(' ')[1]}`;
      assert.ok(await until(async () => (await client.listTools()).tools.some((t) => t.name === tool)), `${tool} never appeared`);
    }
  });

  it("progress from the modern servers' call streams reaches it on its POST stream", { timeout: 30_000 }, async () => {
    for (const server of SERVERS) {
      const seen: number[] = [];
      const result = await client.callTool(
        { name: `${server}__progress`, arguments: {} },
        { onprogress: (p) => void seen.push(p.progress) },
      );
      assert.equal(textOf(result), 'done');
      assert.deepEqual(seen, [1, 2], `progress from ${server}`);
    }
  });

  it('cancelling the call cancels it on the server', { timeout: 30_000 }, async () => {
    for (const server of SERVERS) {
      const stats = async (): Promise<Stats> =>
        JSON.parse(textOf(await client.callTool({ name: `${server}__stats`, arguments: {} }))) as Stats;
      const before = await stats();
      const abort = new AbortController();
      const call = client.callTool({ name: `${server}__slow`, arguments: { ms: 20_000 } }, { signal: abort.signal });
      assert.ok(await until(async () => (await stats()).started === before.started + 1), 'the call never reached the server');
      abort.abort();
      await assert.rejects(call);
      assert.ok(await until(async () => (await stats()).cancelled === before.cancelled + 1), `${server} never saw the cancellation`);
    }
  });
});
