// A call sent the moment its session's owner dies is served, not lost: two `serve --redis` workers
// (A, B) stay up while, round after round, a third one (the owner) opens an agent session, gets calls
// forwarded by A (so A holds kept-alive sockets to it), a slow call in flight, and is killed with
// SIGKILL; the calls sent right after the kill, through A and B, must adopt the session and run,
// while the one in flight at the kill ends with the outcome-unknown error.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import {
  JSON_HEADERS,
  makeToken,
  raw,
  rawSession,
  startHttpGateway,
  writeRules,
  type HttpGateway,
  type RawResponse,
} from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };
const ROUNDS = 4;

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

function call(w: HttpGateway, session: string, name: string, args: Record<string, unknown>, id: string): Promise<RawResponse> {
  return raw(`${w.base}/mcp`, {
    headers: { ...JSON_HEADERS, ...AUTH, 'mcp-session-id': session },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
}

function echoed(res: RawResponse): string | undefined {
  return (res.json?.result as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text;
}

describe('failover: a call sent after its owner died', { timeout: 240_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let config: string;
  let rules: string;
  let a: HttpGateway;
  let b: HttpGateway;

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    rules = await writeRules(dir, { agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } } });
    [a, b] = (await Promise.all(
      [0, 1].map(() => startHttpGateway({ config, agent: null, args: ['--rules', rules, '--pins', 'off', '--redis', redis.url] })),
    )) as [HttpGateway, HttpGateway];
  });

  after(async () => {
    await Promise.all([a, b].map((w) => w?.stop()));
    await redis?.stop();
    await dir?.remove();
  });

  it(
    `adopts and runs every call sent after a kill -9 of the owner (${ROUNDS} rounds); only the call in flight is outcome unknown`,
    { timeout: 200_000 },
    async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const owner = await startHttpGateway({ config, agent: null, args: ['--rules', rules, '--pins', 'off', '--redis', redis.url] });
        try {
          const session = await rawSession(owner.url, AUTH);
          // Forwarded through A, three at once: A keeps three sockets to the owner alive.
          const warm = await Promise.all([0, 1, 2].map((i) => call(a, session, 'sink__echo', { text: `warm ${i}` }, `warm-${round}-${i}`)));
          assert.deepEqual(warm.map(echoed), ['warm 0', 'warm 1', 'warm 2'], warm.map((r) => r.body).join('\n'));
          const before = await metric(owner.base, 'mcpgate_calls_in_flight');
          const inflight = call(a, session, 'sink__slow', { ms: 30_000 }, `slow-${round}`);
          assert.ok(
            await until(async () => (await metric(owner.base, 'mcpgate_calls_in_flight')) > before, 10_000),
            'the slow call runs on the owner',
          );
          owner.gw.child.kill('SIGKILL');
          // At once: through A (its kept-alive sockets lead to the dead worker) and through B (which has none).
          const sent = await Promise.all([
            ...[0, 1, 2].map((i) => call(a, session, 'sink__echo', { text: `after ${i}` }, `after-${round}-${i}`)),
            call(b, session, 'sink__echo', { text: 'after b' }, `after-${round}-b`),
          ]);
          assert.deepEqual(
            sent.map(echoed),
            ['after 0', 'after 1', 'after 2', 'after b'],
            `round ${round}: ${sent.map((r) => r.body).join('\n')}`,
          );
          const lost = await inflight;
          const error = lost.json?.error as { message?: string; data?: { code?: string; outcome?: string } } | undefined;
          assert.equal(error?.data?.code, 'MCPG_SERVER_UNAVAILABLE', lost.body);
          assert.equal(error?.data?.outcome, 'unknown', lost.body);
          assert.match(error?.message ?? '', /may or may not have run/);
        } finally {
          await owner.stop();
        }
      }
    },
  );
});
