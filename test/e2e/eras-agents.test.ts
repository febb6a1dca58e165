// Modern (2026-07-28) agents in front of today's 2025-era servers (the agent side): the
// real gateway, the kitchen-sink server behind it, and clients no one here wrote as agents — the
// official SDK v2 client pinned to 2026-07-28 over Streamable HTTP and stdio, and the Python SDK
// (`mcp`) with mode="2026-07-28" — beside a legacy agent on the same port and path.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  CLI,
  GatewayProcess,
  fixture,
  fixtureServer,
  rpcError,
  tempDir,
  textOf,
  until,
  writeConfig,
  yieldBetweenMessages,
  type TempDir,
} from '../helpers/gateway.js';
import { JSON_HEADERS, connectAgent, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { NO_PYTHON_MCP, pythonWithMcp } from '../helpers/python.js';
import { startRemote, type Remote } from '../helpers/remote.js';

const TIMEOUT = 60_000;
const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

function modernClient(capabilities: Record<string, unknown> = {}): Client {
  return new Client({ name: 'mcpgate-modern-test', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: MODERN } } });
}

async function connectModern(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = modernClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A raw modern POST with the standard headers (overridable) and the envelope in the body. */
function modernPost(
  url: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string | undefined> = {},
  id: number | string = 1,
): ReturnType<typeof raw> {
  const all: Record<string, string | undefined> = { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': method, ...headers };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  return raw(url, {
    headers: sent,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object | undefined) } },
    }),
  });
}

describe('a 2026-07-28 agent over Streamable HTTP, beside a legacy one', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server', ['--marker-dir', dir.path]) });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    const exit = await gate?.stop();
    assert.equal(exit?.code, 0, 'the gateway exits 0 on SIGTERM');
    await dir?.remove();
  });

  it('discovers, lists with cache hints, calls, reads and gets prompts; a legacy agent keeps its session on the same /mcp', async () => {
    const client = await connectModern(gate.url);
    const legacy = await connectAgent(gate.url);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'sink__echo'));
      // No rules: every agent sees the same lists, so the hint may be public.
      assert.equal(tools.cacheScope, 'public');
      assert.equal(tools.ttlMs, 0);
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: 'modern' } })), 'modern');
      const structured = await client.callTool({ name: 'sink__structured', arguments: { a: 2, b: 3 } });
      assert.deepEqual(structured.structuredContent, { sum: 5 });
      const read = await client.readResource({ uri: 'mcpgate://sink/sink://static/1' });
      assert.equal((read.contents[0] as { text: string }).text, 'one');
      assert.equal(read.cacheScope, 'private', "a read is the server's data: never public");
      const prompt = await client.getPrompt({ name: 'sink__greet', arguments: { name: 'Ada' } });
      assert.equal((prompt.messages[0]!.content as { text: string }).text, 'Hello, Ada!');
      assert.ok((await client.listResources()).resources.length > 0);
      assert.ok((await client.listPrompts()).prompts.length > 0);
      const unknown = await rpcError(client.callTool({ name: 'sink__nope', arguments: {} }));
      assert.match(unknown.message, /unknown tool: sink__nope/);
      // The legacy agent: initialize, a session id, the same catalog.
      assert.equal(textOf(await legacy.client.callTool({ name: 'sink__echo', arguments: { text: 'legacy' } })), 'legacy');
      assert.ok(legacy.transport.sessionId !== undefined);
    } finally {
      await client.close();
      await legacy.client.close();
    }
  });

  it("progress travels on the request's own stream", async () => {
    const client = modernClient();
    const transport = new StreamableHTTPClientTransport(new URL(gate.url));
    await client.connect(transport);
    yieldBetweenMessages(transport);
    try {
      const steps: number[] = [];
      const result = await client.callTool(
        { name: 'sink__progress', arguments: { steps: 3 } },
        { onprogress: (p) => steps.push(p.progress) },
      );
      assert.equal(textOf(result), 'done');
      assert.deepEqual(steps, [1, 2, 3]);
    } finally {
      await client.close();
    }
  });

  it("log messages come on the request's stream only when its _meta asks, at or above the level", async () => {
    const log = (level: string, logLevel?: string) =>
      modernPost(
        gate.url,
        'tools/call',
        {
          name: 'sink__log',
          arguments: { level, message: `at ${level}` },
          _meta: logLevel === undefined ? {} : { 'io.modelcontextprotocol/logLevel': logLevel },
        },
        { 'mcp-name': 'sink__log' },
      );
    const loud = await log('error', 'warning');
    assert.match(String(loud.headers['content-type']), /text\/event-stream/);
    assert.match(loud.body, /"method":"notifications\/message".*"data":"at error"/);
    const quiet = await log('info', 'warning');
    assert.doesNotMatch(quiet.body, /notifications\/message/);
    const unasked = await log('error');
    assert.doesNotMatch(unasked.body, /notifications\/message/);
  });

  it("closing the request's stream cancels the call on the server", async () => {
    const client = await connectModern(gate.url);
    try {
      const tag = `modern-http-${process.pid}`;
      const controller = new AbortController();
      const call = client.callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag } }, { signal: controller.signal });
      // Cancel once the call is on its way to the server (the metrics count it in flight).
      const inFlight = async (): Promise<boolean> =>
        (await raw(`${gate.base}/metrics`, { method: 'GET' })).body.includes('mcpgate_calls_in_flight{server="sink"} 1');
      assert.ok(await until(inFlight), 'the call never reached the server');
      controller.abort();
      await assert.rejects(call);
      assert.ok(await until(() => existsSync(dir.file(`cancelled-${tag}`))), 'the server never saw the cancellation');
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: 'after' } })), 'after');
    } finally {
      await client.close();
    }
  });

  it('subscriptions/listen carries list changes and resource updates, each stamped with the listen id', async () => {
    const client = await connectModern(gate.url);
    try {
      let toolsChanged!: () => void;
      const changed = new Promise<void>((resolve) => (toolsChanged = resolve));
      let updatedUri!: (uri: string) => void;
      const updated = new Promise<string>((resolve) => (updatedUri = resolve));
      client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged());
      client.setNotificationHandler('notifications/resources/updated', (n) => updatedUri(n.params.uri));
      const sub = await client.listen({
        toolsListChanged: true,
        resourceSubscriptions: ['mcpgate://sink/sink://static/1', 'mcpgate://nowhere/x'],
      });
      assert.deepEqual(
        sub.honoredFilter,
        { toolsListChanged: true, resourceSubscriptions: ['mcpgate://sink/sink://static/1'] },
        'an unknown resource is not honoured',
      );
      await client.callTool({ name: 'sink__touch', arguments: { uri: 'sink://static/1' } });
      assert.equal(await updated, 'mcpgate://sink/sink://static/1');
      await client.callTool({ name: 'sink__change', arguments: {} });
      await changed;
      assert.ok(
        (await client.listTools()).tools.some((t) => t.name.startsWith('sink__added')),
        'the new tool is listed',
      );
      await sub.close();
      assert.equal(await sub.closed, 'local');
    } finally {
      await client.close();
    }
  });

  it('a listen stream, raw: the acknowledgement first, then notifications with the subscription id', async () => {
    const res = await new Promise<string>((resolve, reject) => {
      // Read the stream until the acknowledgement has come, then hang up (ending the listen).
      void import('node:http').then(({ request }) => {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: 'L1',
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true }, _meta: ENVELOPE },
        });
        const req = request(
          gate.url,
          {
            method: 'POST',
            headers: {
              ...JSON_HEADERS,
              'mcp-protocol-version': MODERN,
              'mcp-method': 'subscriptions/listen',
              'content-length': String(Buffer.byteLength(body)),
            },
          },
          (r) => {
            let text = '';
            r.setEncoding('utf8');
            r.on('data', (chunk: string) => {
              text += chunk;
              if (text.includes('\n\n')) {
                req.destroy();
                resolve(`${r.headers['content-type']}\n${text}`);
              }
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      }, reject);
    });
    assert.match(res, /^text\/event-stream/);
    const data = JSON.parse(/data: (.*)/.exec(res)![1]!) as { method: string; params: Record<string, unknown> };
    assert.equal(data.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(data.params, { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'L1' } });
  });

  it("refuses with the spec's errors: headers that disagree with the body, a version it does not serve, a bad envelope", async () => {
    const call = { name: 'sink__echo', arguments: { text: 'x' } };
    const cases: [string, Awaited<ReturnType<typeof raw>>, number, number][] = [
      [
        'Mcp-Method differs',
        await modernPost(gate.url, 'tools/call', call, { 'mcp-method': 'tools/list', 'mcp-name': 'sink__echo' }),
        400,
        -32020,
      ],
      ['Mcp-Name differs', await modernPost(gate.url, 'tools/call', call, { 'mcp-name': 'sink__pid' }), 400, -32020],
      ['Mcp-Name missing', await modernPost(gate.url, 'tools/call', call), 400, -32020],
      [
        'MCP-Protocol-Version missing',
        await modernPost(gate.url, 'tools/call', call, { 'mcp-name': 'sink__echo', 'mcp-protocol-version': undefined }),
        400,
        -32020,
      ],
      [
        'MCP-Protocol-Version differs',
        await modernPost(gate.url, 'tools/call', call, { 'mcp-name': 'sink__echo', 'mcp-protocol-version': '2026-09-01' }),
        400,
        -32020,
      ],
      ['Mcp-Method missing', await modernPost(gate.url, 'tools/list', {}, { 'mcp-method': undefined }), 400, -32020],
      [
        'an unserved modern version',
        await modernPost(
          gate.url,
          'tools/list',
          { _meta: { 'io.modelcontextprotocol/protocolVersion': '2027-01-01' } },
          { 'mcp-protocol-version': '2027-01-01' },
        ),
        400,
        -32022,
      ],
      [
        'no client capabilities',
        await modernPost(gate.url, 'tools/list', { _meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } }),
        400,
        -32602,
      ],
    ];
    for (const [what, res, status, code] of cases) {
      assert.equal(res.status, status, `${what}: ${res.body}`);
      assert.equal((res.json?.error as { code: number } | undefined)?.code, code, `${what}: ${res.body}`);
    }
    const unsupported = cases[6]![1].json!.error as { data: unknown };
    assert.deepEqual(unsupported.data, { supported: [MODERN], requested: '2027-01-01' });
    // A base64 sentinel that decodes to the body's name agrees.
    const encoded = await modernPost(gate.url, 'tools/call', call, {
      'mcp-name': `=?base64?${Buffer.from('sink__echo').toString('base64')}?=`,
    });
    assert.equal(encoded.status, 200, encoded.body);
    assert.equal((encoded.json!.result as { resultType: string }).resultType, 'complete');
    // The modern header on a request with no envelope; GET (POST only); an Mcp-Session-Id is ignored, not required.
    const bare = await raw(gate.url, {
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    assert.equal(bare.status, 400);
    assert.equal((bare.json!.error as { code: number }).code, -32602);
    const get = await raw(gate.url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-protocol-version': MODERN } });
    assert.equal(get.status, 405);
    const discover = await modernPost(gate.url, 'server/discover', {}, { 'mcp-session-id': 'stale' });
    assert.equal(discover.status, 200, discover.body);
    const found = discover.json!.result as Record<string, unknown>;
    assert.equal(found.resultType, 'complete');
    assert.ok((found.supportedVersions as string[]).includes(MODERN) && (found.supportedVersions as string[]).includes('2025-11-25'));
    assert.deepEqual(found.capabilities, {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    });
    // Methods the modern revision removed are not served to a modern request.
    const init = await modernPost(gate.url, 'resources/subscribe', { uri: 'mcpgate://sink/sink://static/1' });
    assert.equal((init.json!.error as { code: number }).code, -32601);
  });

  it("a 2025-era server's sampling, elicitation and roots requests reach a modern agent as input-required results, and its retries answer them", async () => {
    const client = modernClient({ sampling: {}, elicitation: { form: {} }, roots: {} });
    client.setRequestHandler('sampling/createMessage', (req) => {
      const first = req.params.messages[0]!.content as { type: string; text: string };
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `echo of ${first.text}` } };
    });
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'Grace' } }));
    client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///modern/http', name: 'http' }] }));
    await client.connect(new StreamableHTTPClientTransport(new URL(gate.url)));
    try {
      assert.equal(textOf(await client.callTool({ name: 'sink__sample', arguments: { prompt: 'hello' } })), 'sampled: echo of hello');
      assert.deepEqual(JSON.parse(textOf(await client.callTool({ name: 'sink__elicit', arguments: {} }))), {
        action: 'accept',
        content: { name: 'Grace' },
      });
      assert.deepEqual(JSON.parse(textOf(await client.callTool({ name: 'sink__roots', arguments: {} }))), [
        { uri: 'file:///modern/http', name: 'http' },
      ]);
    } finally {
      await client.close();
    }
  });

  it("refuses a requestState that is forged, altered, another agent's or replayed", async () => {
    const as = (agent: string) => ({ 'mcp-name': 'sink__elicit', 'x-mcpgate-agent': agent });
    const ask = async (agent: string): Promise<{ key: string; state: string }> => {
      const res = await modernPost(
        gate.url,
        'tools/call',
        { name: 'sink__elicit', arguments: {}, _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } } },
        as(agent),
      );
      const result = res.json?.result as { resultType: string; inputRequests: Record<string, { method: string }>; requestState: string };
      assert.equal(result.resultType, 'input_required', res.body);
      const [key, request] = Object.entries(result.inputRequests)[0]!;
      assert.equal(request.method, 'elicitation/create');
      return { key, state: result.requestState };
    };
    const retry = (agent: string, key: string, state: string) =>
      modernPost(
        gate.url,
        'tools/call',
        {
          name: 'sink__elicit',
          arguments: {},
          requestState: state,
          inputResponses: { [key]: { action: 'accept', content: { name: agent } } },
        },
        as(agent),
        2,
      );
    const codeOf = (res: Awaited<ReturnType<typeof raw>>): unknown => (res.json?.error as { code?: unknown } | undefined)?.code;

    const mine = await ask('ann');
    assert.ok(
      !mine.state.includes('ann') && !Buffer.from(mine.state, 'base64url').toString('latin1').includes('ann'),
      'the state cannot be read',
    );
    // Another agent cannot use it, nor can anyone alter or forge one.
    assert.equal(codeOf(await retry('ben', mine.key, mine.state)), -31031);
    const flipped = Buffer.from(mine.state, 'base64url');
    flipped.writeUInt8(flipped.readUInt8(flipped.length - 1) ^ 1, flipped.length - 1);
    assert.equal(codeOf(await retry('ann', mine.key, flipped.toString('base64url'))), -31031);
    assert.equal(codeOf(await retry('ann', mine.key, Buffer.from('{"h":"x","a":"ann","e":9999999999999}').toString('base64url'))), -31031);
    // The rightful retry resumes the call (still waiting on the server), once.
    const done = await retry('ann', mine.key, mine.state);
    assert.equal(done.status, 200, done.body);
    assert.deepEqual(JSON.parse((done.json!.result as { content: { text: string }[] }).content[0]!.text), {
      action: 'accept',
      content: { name: 'ann' },
    });
    assert.equal(done.json!.id, 2, "the answer carries the retry's id");
    const replay = await retry('ann', mine.key, mine.state);
    assert.equal(codeOf(replay), -31031);
    assert.match((replay.json!.error as { message: string }).message, /used already|ended|expired/);
  });

  // The 2025 → 2025 pair over HTTP, on the port the modern agents above use: everything of issue
  // 13's list in one place (forwarding.test.ts and agent-requests.test.ts walk it over stdio).
  it('a 2025-era agent beside them keeps everything: tools, resources, prompts, list changes, progress, cancellation, sampling, elicitation, roots', async () => {
    const { client, transport } = await connectAgent(gate.url, {
      capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
      setup: (c) => {
        c.setRequestHandler('sampling/createMessage', () => ({
          role: 'assistant',
          model: 'm',
          content: { type: 'text', text: 'from 2025' },
        }));
        c.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///legacy/http' }] }));
        c.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'Legacy' } }));
      },
    });
    yieldBetweenMessages(transport);
    try {
      assert.notEqual(client.getNegotiatedProtocolVersion(), MODERN);
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'sink__echo'));
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: 'legacy' } })), 'legacy');
      assert.ok((await client.listResources()).resources.some((r) => r.uri === 'mcpgate://sink/sink://static/1'));
      assert.equal(((await client.readResource({ uri: 'mcpgate://sink/sink://static/1' })).contents[0] as { text: string }).text, 'one');
      assert.ok((await client.listPrompts()).prompts.some((p) => p.name === 'sink__greet'));
      assert.equal(
        ((await client.getPrompt({ name: 'sink__greet', arguments: { name: 'Bo' } })).messages[0]!.content as { text: string }).text,
        'Hello, Bo!',
      );

      const steps: number[] = [];
      assert.equal(
        textOf(await client.callTool({ name: 'sink__progress', arguments: { steps: 3 } }, { onprogress: (p) => steps.push(p.progress) })),
        'done',
      );
      assert.deepEqual(steps, [1, 2, 3]);
      assert.equal(textOf(await client.callTool({ name: 'sink__sample', arguments: { prompt: 'p' } })), 'sampled: from 2025');
      assert.deepEqual(JSON.parse(textOf(await client.callTool({ name: 'sink__elicit', arguments: {} }))), {
        action: 'accept',
        content: { name: 'Legacy' },
      });
      assert.deepEqual(JSON.parse(textOf(await client.callTool({ name: 'sink__roots', arguments: {} }))), [{ uri: 'file:///legacy/http' }]);

      // List changes and resource updates: notifications on the session's GET stream.
      let toolsChanged!: () => void;
      const changed = new Promise<void>((resolve) => (toolsChanged = resolve));
      let updatedUri!: (uri: string) => void;
      const updated = new Promise<string>((resolve) => (updatedUri = resolve));
      client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged());
      client.setNotificationHandler('notifications/resources/updated', (n) => updatedUri(n.params.uri));
      await client.subscribeResource({ uri: 'mcpgate://sink/sink://static/2' });
      await client.callTool({ name: 'sink__touch', arguments: { uri: 'sink://static/2' } });
      assert.equal(await updated, 'mcpgate://sink/sink://static/2');
      const before = (await client.listTools()).tools.length;
      await client.callTool({ name: 'sink__change', arguments: {} });
      await changed;
      assert.ok(await until(async () => (await client.listTools()).tools.length > before), 'the new tool is listed');

      // Cancellation: notifications/cancelled reaches the server.
      const tag = `legacy-http-${process.pid}`;
      const controller = new AbortController();
      const call = client.callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag } }, { signal: controller.signal });
      const inFlight = async (): Promise<boolean> =>
        (await raw(`${gate.base}/metrics`, { method: 'GET' })).body.includes('mcpgate_calls_in_flight{server="sink"} 1');
      assert.ok(await until(inFlight), 'the call never reached the server');
      controller.abort();
      await assert.rejects(call);
      assert.ok(await until(() => existsSync(dir.file(`cancelled-${tag}`))), 'the server never saw the cancellation');
    } finally {
      await client.close();
    }
  });

  it('without the capability, the server is told at once and the call ends', async () => {
    const client = await connectModern(gate.url);
    try {
      const result = await client.callTool({ name: 'sink__sample', arguments: { prompt: 'hi' } }).catch((err: Error) => err);
      const text = result instanceof Error ? result.message : textOf(result);
      assert.match(text, /did not declare the sampling capability/);
    } finally {
      await client.close();
    }
  });
});

describe('a 2026-07-28 agent: identity and rules per request', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const alice = makeToken();
  const bob = makeToken();

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, {
      agents: {
        alice: { tokens: [alice.hash], allow: { servers: ['sink'], tools: { sink: ['echo'] } } },
        bob: { tokens: [bob.hash], allow: { servers: ['*'] } },
      },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules, '--pins', 'off'] });
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  it('each request is decided for the agent its token names, as a legacy session is; lists are private', async () => {
    const a = await connectModern(gate.url, { authorization: `Bearer ${alice.token}` });
    const b = await connectModern(gate.url, { authorization: `Bearer ${bob.token}` });
    const legacyA = await connectAgent(gate.url, { token: alice.token });
    try {
      const aTools = await a.listTools();
      assert.deepEqual(
        aTools.tools.map((t) => t.name),
        ['sink__echo'],
      );
      assert.equal(aTools.cacheScope, 'private', 'views differ between agents: never public');
      assert.deepEqual(
        (await legacyA.client.listTools()).tools.map((t) => t.name),
        ['sink__echo'],
        'the same view as a legacy session',
      );
      assert.ok((await b.listTools()).tools.length > 1);
      const denied = await rpcError(a.callTool({ name: 'sink__pid', arguments: {} }));
      assert.equal(denied.data.code, 'MCPG_POLICY_DENIED');
      assert.equal(textOf(await a.callTool({ name: 'sink__echo', arguments: { text: 'ok' } })), 'ok');
      assert.match(textOf(await b.callTool({ name: 'sink__pid', arguments: {} })), /^\d+$/);
    } finally {
      await a.close();
      await b.close();
      await legacyA.client.close();
    }
  });

  it('a modern request without a valid token gets 401', async () => {
    const res = await modernPost(gate.url, 'tools/list', {});
    assert.equal(res.status, 401);
    const forged = await modernPost(gate.url, 'tools/list', {}, { authorization: 'Bearer mcpg_not-a-token' });
    assert.equal(forged.status, 401);
  });
});

describe('a 2026-07-28 agent over stdio', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let client: Client;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server', ['--marker-dir', dir.path]) });
    gw = new GatewayProcess({ config, args: ['--pins', 'off'] });
    client = modernClient({ sampling: {}, elicitation: { form: {} }, roots: {} });
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      model: 'm',
      content: { type: 'text', text: 'from stdio' },
    }));
    client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///modern/stdio' }] }));
    client.setRequestHandler('elicitation/create', (req) => ({
      action: 'accept',
      content: { name: `stdio, asked ${(req.params as { message: string }).message}` },
    }));
    await client.connect(gw.transport as never);
    yieldBetweenMessages(gw);
  });

  after(async () => {
    await client?.close();
    const exit = await gw?.stop();
    assert.equal(exit?.code, 0);
    await dir?.remove();
  });

  it('lists, calls with progress, reads and gets prompts', async () => {
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'sink__echo'));
    assert.equal(tools.cacheScope, 'public');
    const steps: number[] = [];
    assert.equal(
      textOf(await client.callTool({ name: 'sink__progress', arguments: { steps: 2 } }, { onprogress: (p) => steps.push(p.progress) })),
      'done',
    );
    assert.deepEqual(steps, [1, 2]);
    assert.equal(((await client.readResource({ uri: 'mcpgate://sink/sink://static/2' })).contents[0] as { text: string }).text, 'two');
    assert.equal(
      ((await client.getPrompt({ name: 'sink__greet', arguments: { name: 'stdio' } })).messages[0]!.content as { text: string }).text,
      'Hello, stdio!',
    );
  });

  it("a server's sampling request becomes an input-required result; the retry answers it", async () => {
    assert.equal(textOf(await client.callTool({ name: 'sink__sample', arguments: { prompt: 'x' } })), 'sampled: from stdio');
  });

  it("a server's elicitation request becomes an input-required result; the retry answers it", async () => {
    const answer = JSON.parse(textOf(await client.callTool({ name: 'sink__elicit', arguments: {} }))) as unknown;
    assert.deepEqual(answer, { action: 'accept', content: { name: 'stdio, asked Who are you?' } });
  });

  it("a server's roots/list becomes an input-required result; the retry answers it", async () => {
    assert.deepEqual(JSON.parse(textOf(await client.callTool({ name: 'sink__roots', arguments: {} }))), [{ uri: 'file:///modern/stdio' }]);
  });

  it('notifications/cancelled cancels the call on the server', async () => {
    const tag = `modern-stdio-${process.pid}`;
    const controller = new AbortController();
    const call = client.callTool({ name: 'sink__slow', arguments: { ms: 20_000, tag } }, { signal: controller.signal });
    assert.match(textOf(await client.callTool({ name: 'sink__pid', arguments: {} })), /^\d+$/);
    controller.abort();
    await assert.rejects(call);
    assert.ok(await until(() => existsSync(dir.file(`cancelled-${tag}`))), 'the server never saw the cancellation');
  });

  it('subscriptions/listen carries list changes', async () => {
    let toolsChanged!: () => void;
    const changed = new Promise<void>((resolve) => (toolsChanged = resolve));
    client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged());
    const sub = await client.listen({ toolsListChanged: true });
    assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
    await client.callTool({ name: 'sink__change', arguments: {} });
    await changed;
    await sub.close();
  });
});

// The server side of the same pair over HTTP: a 2025-era Streamable HTTP server (the v1 SDK fixture)
// asks its questions on the call's own POST stream, so they are related to the call there, not
// routed by who has a call in flight as a stdio server's are.
describe('2026-07-28 agents over Streamable HTTP and stdio, a 2025-era server over Streamable HTTP', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let remote: Remote;
  let gate: HttpGateway;
  let gw: GatewayProcess;
  const agents = {} as Record<'http' | 'stdio', Client>;

  before(async () => {
    dir = await tempDir();
    remote = await startRemote(process.execPath, [fixture('remote-server')]);
    const config = await writeConfig(dir, { web: { type: 'http', url: remote.url, era: '2025' } });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
    gw = new GatewayProcess({ config, args: ['--pins', 'off'] });
    for (const via of ['http', 'stdio'] as const) {
      const client = modernClient({ sampling: {} });
      client.setRequestHandler('sampling/createMessage', () => ({
        role: 'assistant',
        model: 'm',
        content: { type: 'text', text: `over ${via}` },
      }));
      const transport = via === 'http' ? new StreamableHTTPClientTransport(new URL(gate.url)) : gw.transport;
      await client.connect(transport as never);
      yieldBetweenMessages(via === 'http' ? transport : gw);
      agents[via] = client;
    }
  });

  after(async () => {
    for (const client of Object.values(agents)) await client.close();
    await gate?.stop();
    await gw?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  for (const via of ['http', 'stdio'] as const) {
    it(
      `calls, progress, sampling (input required, answered on the retry) and list changes (agent over ${via})`,
      { timeout: 30_000 },
      async () => {
        const client = agents[via];
        assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
        assert.ok((await client.listTools()).tools.some((t) => t.name === 'web__echo'));
        assert.equal(textOf(await client.callTool({ name: 'web__echo', arguments: { text: via } })), via);
        const steps: number[] = [];
        assert.equal(
          textOf(await client.callTool({ name: 'web__progress', arguments: { steps: 2 } }, { onprogress: (p) => steps.push(p.progress) })),
          'done',
        );
        assert.deepEqual(steps, [1, 2]);
        assert.equal(textOf(await client.callTool({ name: 'web__sample', arguments: { prompt: 'hi' } })), `sampled: over ${via}`);

        let toolsChanged!: () => void;
        const changed = new Promise<void>((resolve) => (toolsChanged = resolve));
        client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged());
        const sub = await client.listen({ toolsListChanged: true });
        try {
          const grown = textOf(await client.callTool({ name: 'web__grow', arguments: {} }));
          await changed;
          assert.ok(
            await until(async () => (await client.listTools()).tools.some((t) => t.name === `web__${grown}`)),
            `web__${grown} never appeared`,
          );
        } finally {
          await sub.close();
        }
      },
    );
  }
});

describe('the Python SDK as a 2026-07-28 agent', { timeout: TIMEOUT }, () => {
  const python = pythonWithMcp();
  let dir: TempDir;
  let gate: HttpGateway | undefined;
  let config: string;

  const SCRIPT = `
import json, sys, anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    target = sys.argv[1]
    server = target if target.startswith('http') else StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
    async with Client(server, mode="2026-07-28") as client:
        tools = await client.list_tools()
        out = {
            "tools": sorted(t.name for t in tools.tools),
            "echo": (await client.call_tool("sink__echo", {"text": "py"})).content[0].text,
            "read": (await client.read_resource("mcpgate://sink/sink://static/1")).contents[0].text,
            "prompt": (await client.get_prompt("sink__greet", {"name": "py"})).messages[0].content.text,
        }
        print(json.dumps(out))

anyio.run(main)
`;

  before(async () => {
    dir = await tempDir();
    config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    await writeFile(dir.file('agent.py'), SCRIPT);
    if (python !== null) gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  const run = async (args: string[]): Promise<Record<string, unknown>> => {
    const { stdout } = await promisify(execFile)(python!, [dir.file('agent.py'), ...args], { timeout: 45_000 });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  };

  const check = (out: Record<string, unknown>): void => {
    assert.ok((out.tools as string[]).includes('sink__echo'));
    assert.equal(out.echo, 'py');
    assert.equal(out.read, 'one');
    assert.equal(out.prompt, 'Hello, py!');
  };

  it('over Streamable HTTP', { skip: python === null && NO_PYTHON_MCP }, async () => {
    check(await run([gate!.url]));
  });

  it('over stdio', { skip: python === null && NO_PYTHON_MCP }, async () => {
    check(await run(['stdio', process.execPath, CLI, 'serve', '--config', config, '--pins', 'off', '--agent', 'py']));
  });
});
