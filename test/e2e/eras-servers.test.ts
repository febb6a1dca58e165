// Servers of the 2026-07-28 revision behind mcpgate, for a 2025-era agent (the server
// side). The modern servers are the v2 SDK's own serving entries in their strict modern mode
// (test/fixtures/modern-server.ts: `serveStdio` and `createMcpHandler`, both refusing initialize), so
// nothing works unless mcpgate speaks the modern era: server/discover, the `_meta` envelope, the HTTP
// headers, subscriptions/listen, input-required results answered by the agent and retried by mcpgate.
// Beside them a 2025-era server (mixed config). The entry's "era" and list cache hints: eras-entries.test.ts.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  Notifications,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  yieldBetweenMessages,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { startModernHttp, type Remote } from '../helpers/remote.js';

const AGENT_CAPABILITIES = { sampling: {}, elicitation: {}, roots: { listChanged: true } };

/** The same walk for each transport: a legacy SDK agent using a modern server through mcpgate. */
function suite(transport: 'stdio' | 'http'): void {
  describe(`a modern server over ${transport}, a 2025-era agent`, { timeout: 120_000 }, () => {
    let dir: TempDir;
    let gw: GatewayProcess;
    let remote: Remote | undefined;
    let changes: Notifications;
    const asked: { elicitation: unknown[]; sampling: unknown[] } = { elicitation: [], sampling: [] };

    before(async () => {
      dir = await tempDir();
      let modern: Record<string, unknown>;
      if (transport === 'http') {
        remote = await startModernHttp();
        modern = { type: 'http', url: remote.url, era: '2026-07-28' };
      } else {
        modern = fixtureServer('modern-server', [], { era: 'auto' });
      }
      const config = await writeConfig(dir, { modern, legacy: fixtureServer('echo-server') });
      gw = await startGateway({
        config,
        // Pins off: the tool a server grows would otherwise be held (new since first use), not shown.
        args: ['--pins', 'off'],
        capabilities: AGENT_CAPABILITIES,
        setup: (client) => {
          client.setRequestHandler('elicitation/create', (req) => {
            asked.elicitation.push(req.params);
            return { action: 'accept', content: { name: 'Ada' } };
          });
          client.setRequestHandler('sampling/createMessage', (req) => {
            asked.sampling.push(req.params);
            return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'hi there' } };
          });
          client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///legacy/agent' }] }));
        },
      });
      changes = new Notifications(gw);
      yieldBetweenMessages(gw);
    });

    after(async () => {
      await gw?.stop();
      await remote?.stop();
      await dir?.remove();
    });

    it("lists and calls the modern server's tools beside a legacy server's (mixed config)", { timeout: 15_000 }, async () => {
      const { tools } = await gw.client.listTools();
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('modern__echo') && names.includes('modern__ask'), `modern tools missing: ${names.join(', ')}`);
      assert.ok(names.includes('legacy__echo'), "the legacy server's tool is missing");
      assert.equal(textOf(await gw.client.callTool({ name: 'modern__echo', arguments: { text: 'from 2025' } })), 'from 2025');
      assert.equal(textOf(await gw.client.callTool({ name: 'legacy__echo', arguments: { text: 'old' } })), 'old');
    });

    it("reads the modern server's resource and gets its prompt", { timeout: 15_000 }, async () => {
      const { resources } = await gw.client.listResources();
      const note = resources.find((r) => r.uri.endsWith('modern://note'));
      assert.ok(note !== undefined, `no note among ${resources.map((r) => r.uri).join(', ')}`);
      const read = await gw.client.readResource({ uri: note.uri });
      assert.equal((read.contents[0] as { text?: string }).text, 'a modern note');
      const prompt = await gw.client.getPrompt({ name: 'modern__greet', arguments: { name: 'Bo' } });
      assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Bo' });
    });

    it(
      'turns an input-required elicitation into elicitation/create to the agent and retries with the answer',
      { timeout: 15_000 },
      async () => {
        const result = await gw.client.callTool({ name: 'modern__ask', arguments: {} });
        // accept:NAME:STATE — the server got the agent's answer and its own requestState back.
        assert.equal(textOf(result), 'accept:Ada:state-1');
        assert.equal(asked.elicitation.length, 1);
        assert.equal((asked.elicitation[0] as { message: string }).message, 'Your name?');
      },
    );

    it('sends each round of an input-required call as a new request, under a new id', { timeout: 15_000 }, async () => {
      const ids = /^ids:(\d+):(\d+)$/.exec(textOf(await gw.client.callTool({ name: 'modern__rounds', arguments: {} })));
      assert.ok(ids !== null, "the server did not name both rounds' ids");
      assert.notEqual(ids[1], ids[2]);
    });

    it('turns an input-required sampling request into sampling/createMessage to the agent', { timeout: 15_000 }, async () => {
      assert.equal(textOf(await gw.client.callTool({ name: 'modern__sample', arguments: {} })), 'model said: hi there');
      assert.equal(asked.sampling.length, 1);
    });

    it("relays progress from the call's own stream to an agent that answers sampling and elicitation", { timeout: 15_000 }, async () => {
      const seen: number[] = [];
      const result = await gw.client.callTool(
        { name: 'modern__progress', arguments: {} },
        { onprogress: (p) => void seen.push(p.progress) },
      );
      assert.equal(textOf(result), 'done');
      assert.deepEqual(seen, [1, 2]);
    });

    it('turns an input-required roots/list into roots/list to the agent', { timeout: 15_000 }, async () => {
      assert.equal(textOf(await gw.client.callTool({ name: 'modern__roots', arguments: {} })), 'file:///legacy/agent');
    });

    it('ends a call whose server never stops asking, with MCPG_INPUT_ROUNDS_EXCEEDED', { timeout: 20_000 }, async () => {
      const before = asked.elicitation.length;
      const err = await rpcError(gw.client.callTool({ name: 'modern__again', arguments: {} }));
      assert.equal(err.data?.code, 'MCPG_INPUT_ROUNDS_EXCEEDED', err.message);
      assert.equal(asked.elicitation.length - before, 8, 'eight rounds were relayed, then the call ended');
    });

    it('passes a list change from the listen stream on as notifications/tools/list_changed', { timeout: 15_000 }, async () => {
      const seen = changes.count.tools;
      assert.equal(textOf(await gw.client.callTool({ name: 'modern__grow', arguments: {} })), 'grown 1');
      await changes.until('tools', seen + 1);
      assert.ok(
        await until(async () => (await gw.client.listTools()).tools.some((t) => t.name === 'modern__grown_1')),
        'the grown tool never appeared',
      );
    });

    it('cancels the call on the server when the agent cancels it', { timeout: 15_000 }, async () => {
      const stats = async (): Promise<{ started: number; cancelled: number }> =>
        JSON.parse(textOf(await gw.client.callTool({ name: 'modern__stats', arguments: {} }))) as { started: number; cancelled: number };
      const abort = new AbortController();
      const call = gw.client.callTool({ name: 'modern__slow', arguments: { ms: 20_000 } }, { signal: abort.signal });
      assert.ok(await until(async () => (await stats()).started === 1), 'the call never reached the server');
      abort.abort();
      await assert.rejects(call);
      assert.ok(await until(async () => (await stats()).cancelled === 1), 'the server never saw the cancellation');
    });
  });
}

suite('stdio');
suite('http');

// Apart: progress for an agent that declares no capabilities, from a modern stdio server and from a
// remote one whose entry says "auto" (found modern by the server/discover probe).
describe('progress from modern servers over stdio and HTTP', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let remote: Remote;

  before(async () => {
    dir = await tempDir();
    remote = await startModernHttp();
    const config = await writeConfig(dir, {
      local: fixtureServer('modern-server', [], { era: '2026-07-28' }),
      remote: { type: 'http', url: remote.url, era: 'auto' },
    });
    gw = await startGateway({ config });
    yieldBetweenMessages(gw);
  });

  after(async () => {
    await gw?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  for (const server of ['local', 'remote']) {
    it(`relays progress from the call's own stream (${server})`, { timeout: 10_000 }, async () => {
      const seen: number[] = [];
      const result = await gw.client.callTool(
        { name: `${server}__progress`, arguments: {} },
        { onprogress: (p) => void seen.push(p.progress) },
      );
      assert.equal(textOf(result), 'done');
      assert.deepEqual(seen, [1, 2]);
    });
  }
});

// A modern server that refuses the first server/discover as an unsupported protocol version while
// listing 2026-07-28 among those it supports is asked once more, and its tools are served.
describe('a modern server refusing the first server/discover with -32022 that lists 2026-07-28', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let remote: Remote;

  before(async () => {
    dir = await tempDir();
    remote = await startModernHttp(['--refuse-first-discover']);
    const config = await writeConfig(dir, { remote: { type: 'http', url: remote.url, era: '2026-07-28' } });
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  it('asks again and serves its tools', { timeout: 15_000 }, async () => {
    const result = await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'again' } });
    assert.equal(textOf(result), 'again');
  });
});
