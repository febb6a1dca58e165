// A calls-in-flight limit lasts as long as the server's work: a call the agent cancels (a 2025 agent's
// notifications/cancelled, a 2026-07-28 agent's dropped POST) still counts while the server may be
// working on it, until the server answers it anyway (or a grace period passes: unit
// `abandoned-calls`). The server here (limits-server --stubborn) never stops for a cancellation.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fixtureServer, rpcError, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

const MODERN = '2026-07-28';

describe('inFlight: 1 holds a cancelled call until the server is through with it', { timeout: 90_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const agents: Partial<Record<'legacy' | 'modern', Client>> = {};

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { stub: fixtureServer('limits-server', ['--stubborn']) });
    const rules = await writeRules(dir, {
      agents: { tester: { allow: { servers: ['stub'] } } },
      limits: { tools: { stub: { stubborn: { inFlight: 1 } } } },
    });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--rules', rules] });
    ({ client: agents.legacy } = await connectAgent(gate.url));
    agents.modern = new Client({ name: 'mcpgate-modern-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await agents.modern.connect(new StreamableHTTPClientTransport(new URL(gate.url)));
  });

  after(async () => {
    await agents.legacy?.close();
    await agents.modern?.close();
    await gate?.stop();
    await dir?.remove();
  });

  for (const who of ['legacy', 'modern'] as const) {
    it(`a ${who} agent: call, cancel, call again is refused while the server works; passes once it answered`, async () => {
      const client = agents[who]!;
      const working = async (): Promise<number> => Number(textOf(await client.callTool({ name: 'stub__working', arguments: {} })));
      const abort = new AbortController();
      const first = client.callTool({ name: 'stub__stubborn', arguments: {} }, { signal: abort.signal });
      assert.ok(await until(async () => (await working()) === 1), 'the first call never reached the server');
      abort.abort();
      await assert.rejects(first);
      // The server still works on the cancelled call: the limit still counts it.
      const refused = await rpcError(client.callTool({ name: 'stub__stubborn', arguments: {} }));
      // (Over HTTP a 429: the SDK's error carries the body in its message.)
      assert.match(`${refused.message} ${JSON.stringify(refused.data)}`, /MCPG_RATE_LIMITED/);
      assert.equal(await working(), 1);
      // The server answers the cancelled call after all: the hold ends, the next call passes.
      assert.equal(textOf(await client.callTool({ name: 'stub__finish', arguments: {} })), 'finished 1');
      const abortNext = new AbortController();
      const next = client.callTool({ name: 'stub__stubborn', arguments: {} }, { signal: abortNext.signal });
      assert.ok(await until(async () => (await working()) === 1), 'the next call never reached the server');
      assert.equal(textOf(await client.callTool({ name: 'stub__finish', arguments: {} })), 'finished 1');
      assert.equal(textOf(await next), 'finished');
    });
  }
});
