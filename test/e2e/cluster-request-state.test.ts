// A 2026-07-28 agent's input-required retries across the workers of a cluster: two `serve --redis`
// workers on a real Redis, a 2025-era server asking during a call (kitchen-sink `sink__elicit`) and
// a 2026-07-28 server answering input-required (modern-server `local__ask`). The call starts on one
// worker and waits in its memory; the retry, with the sealed requestState, goes to the other. The
// state opens there (its key comes from the cluster secret), names the worker holding the call, and
// the retry is forwarded to it: every retry completes, and a replayed one is still refused.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, tempDir, writeConfig, type TempDir } from '../helpers/gateway.js';
import { JSON_HEADERS, raw, startHttpGateway, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
const ASKERS = [
  { tool: 'sink__elicit', done: JSON.stringify({ action: 'accept', content: { name: 'ann' } }) },
  { tool: 'local__ask', done: 'accept:ann:state-1' },
] as const;
const RETRIES = 10;

interface Reply {
  id?: unknown;
  result?: { resultType?: string; inputRequests?: Record<string, { method: string }>; requestState?: string; content?: { text: string }[] };
  error?: { code: number; message: string; data?: { code?: string } };
}

describe('input-required retries across two workers', { timeout: 180_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let workers: HttpGateway[] = [];

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    const config = await writeConfig(dir, {
      sink: fixtureServer('kitchen-sink-server'),
      local: fixtureServer('modern-server', [], { era: MODERN }),
    });
    workers = await Promise.all([0, 1].map(() => startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--redis', redis.url] })));
  });

  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await redis?.stop();
    await dir?.remove();
  });

  let id = 0;
  async function send(w: HttpGateway, params: Record<string, unknown>): Promise<Reply> {
    const res = await raw(w.url, {
      headers: {
        ...JSON_HEADERS,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': params.name as string,
        'x-mcpgate-agent': 'ann',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { ...params, _meta: ENVELOPE } }),
    });
    assert.ok(res.json !== undefined, `not JSON (${res.status}): ${res.body}`);
    return res.json;
  }

  for (const { tool, done } of ASKERS) {
    it(`${RETRIES} of ${RETRIES} retries sent to the other worker complete (${tool})`, { timeout: 60_000 }, async () => {
      let completed = 0;
      for (let i = 0; i < RETRIES; i++) {
        const [first, second] = i % 2 === 0 ? [workers[0]!, workers[1]!] : [workers[1]!, workers[0]!];
        const asked = await send(first, { name: tool, arguments: {} });
        assert.equal(asked.result?.resultType, 'input_required', JSON.stringify(asked));
        const key = Object.keys(asked.result.inputRequests ?? {})[0]!;
        const state = asked.result.requestState!;
        const retry = {
          name: tool,
          arguments: {},
          requestState: state,
          inputResponses: { [key]: { action: 'accept', content: { name: 'ann' } } },
        };
        const finished = await send(second, retry);
        assert.equal(finished.id, id, "the answer carries the retry's id");
        if (finished.result?.content?.[0]?.text === done) completed++;
        else assert.fail(`retry ${i} on the other worker: ${JSON.stringify(finished)}`);
        if (i === 0) {
          // The same retry again, on either worker: the call was taken once.
          for (const w of workers) {
            const again = await send(w, retry);
            assert.equal(again.error?.data?.code, 'MCPG_REQUEST_STATE_INVALID', JSON.stringify(again));
            assert.match(again.error?.message ?? '', /used already/);
          }
        }
      }
      assert.equal(completed, RETRIES);
    });
  }
});
