// A server's question to an agent (sampling, roots) through mcpgate's HTTP front, with SDK v2 agents
// named by X-Mcpgate-Agent and the kitchen-sink fixture over stdio, which cannot say which call its
// question belongs to: it is refused as ambiguous only when two different agents have calls in flight
// on a shared connection, and then the message names them and the fix. One agent's two sessions
// with a call each, on a shared or a per-agent server, are one agent and are asked; a start-up
// `roots/list` with no agent to ask gets an empty list rather than an error.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import { fixtureServer, rpcError, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, raw, startHttpGateway, type HttpGateway } from '../helpers/http.js';

/** Resolves when `n` parties have arrived, or after `ms` (a refused party never arrives). */
function rendezvous(n: number, ms: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  const timer = setTimeout(release, ms);
  return () => {
    arrived += 1;
    if (arrived >= n) {
      clearTimeout(timer);
      release();
    }
    return all;
  };
}

describe('server→agent requests: ambiguous only between two agents', { timeout: 90_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const clients: Client[] = [];

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      sink: fixtureServer('kitchen-sink-server'),
      own: fixtureServer('kitchen-sink-server', [], { sessions: 'per-agent' }),
      early: fixtureServer('kitchen-sink-server', ['--roots-at-start']),
    });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await gate?.stop();
    await dir?.remove();
  });

  /** An agent session of `name` whose sampling handler answers `name` once `meet` lets it. */
  async function agent(name: string, meet: () => Promise<void>): Promise<Client> {
    const setup = (c: Client): void => {
      c.setRequestHandler('sampling/createMessage', async () => {
        await meet();
        return { model: 'm', role: 'assistant', content: { type: 'text', text: name } };
      });
    };
    const { client } = await connectAgent(gate.url, { headers: { 'x-mcpgate-agent': name }, capabilities: { sampling: {} }, setup });
    clients.push(client);
    return client;
  }

  it('answers a start-up roots/list with no agent to ask with an empty list', { timeout: 20_000 }, async () => {
    const { client } = await connectAgent(gate.url, { headers: { 'x-mcpgate-agent': 'zoe' } });
    clients.push(client);
    let answer = '';
    assert.ok(
      await until(async () => (answer = textOf(await client.callTool({ name: 'early__roots_at_start', arguments: {} }))) !== 'pending'),
    );
    assert.equal(answer, '[]');
  });

  for (const server of ['sink', 'own']) {
    it(
      `asks the agent whose two sessions both have a call in flight on ${server === 'sink' ? 'a shared' : 'a per-agent'} server`,
      { timeout: 20_000 },
      async () => {
        const meet = rendezvous(2, 5000);
        const name = `ann-${server}`;
        const [one, two] = [await agent(name, meet), await agent(name, meet)];
        const results = await Promise.all(
          [one, two].map((c, i) => c.callTool({ name: `${server}__sample`, arguments: { prompt: `p${i}` } })),
        );
        assert.deepEqual(results.map(textOf), [`sampled: ${name}`, `sampled: ${name}`]);
      },
    );
  }

  it('refuses it between two agents with calls in flight on a shared server, naming them and the fix', { timeout: 20_000 }, async () => {
    const [bob, cat] = [await agent('bob', () => Promise.resolve()), await agent('cat', () => Promise.resolve())];
    // bob's call is in flight on the shared server before cat's asks for sampling.
    const slow = bob.callTool({ name: 'sink__slow', arguments: { ms: 3000 } });
    assert.ok(
      await until(
        async () => (await raw(`${gate.base}/metrics`, { method: 'GET' })).body.includes('mcpgate_calls_in_flight{server="sink"} 1'),
        5000,
      ),
    );
    const ambiguous = await rpcError(cat.callTool({ name: 'sink__sample', arguments: { prompt: 'who?' } }));
    assert.match(ambiguous.message, /agents "(bob|cat)" and "(bob|cat)" have calls in flight on server "sink".*"sessions": "per-agent"/);
    await slow;
  });

  it('asks each agent of a per-agent server, both busy at once', { timeout: 20_000 }, async () => {
    const meet = rendezvous(2, 5000);
    const [dan, eve] = [await agent('dan', meet), await agent('eve', meet)];
    const results = await Promise.all([dan, eve].map((c) => c.callTool({ name: 'own__sample', arguments: { prompt: 'x' } })));
    assert.deepEqual(results.map(textOf), ['sampled: dan', 'sampled: eve']);
  });
});
