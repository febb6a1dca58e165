// A 2026-07-28 agent's `requestState`: whichever era the server that asked is — a 2025-era
// server's elicitation/create during the call (kitchen-sink `sink`) or a 2026-07-28 server's
// input-required result (modern-server `local`) — the agent gets mcpgate's own sealed state, and a
// retry with a forged, altered, replayed or another agent's state is refused (-31031,
// MCPG_REQUEST_STATE_INVALID) while the rightful retry finishes the call on the server. Over
// Streamable HTTP the two agents share a gateway (`X-Mcpgate-Agent`); over stdio each has its own
// gateway process (`--agent`), both with the same MCPGATE_REQUEST_STATE_KEY, so a state the other
// could open is refused for being bound to another agent, not for being sealed under another key.
// eras-agents.test.ts checks the same over HTTP for the 2025-era server with the SDK client driving.

import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  RawReplies,
  fixtureServer,
  startGateway,
  tempDir,
  writeConfig,
  type GatewayProcess,
  type RawReply,
  type TempDir,
} from '../helpers/gateway.js';
import { JSON_HEADERS, raw, startHttpGateway, type HttpGateway } from '../helpers/http.js';

const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
const STATE_INVALID = -31031;
/** The asking tool of each server, and what it answers once the agent `ann` has answered. */
const ASKERS = [
  { tool: 'sink__elicit', done: JSON.stringify({ action: 'accept', content: { name: 'ann' } }) },
  { tool: 'local__ask', done: 'accept:ann:state-1' },
] as const;

type Agent = 'ann' | 'ben';
/** Sends one modern tools/call as `agent` and returns the JSON-RPC answer. */
type Send = (agent: Agent, id: number, params: Record<string, unknown>) => Promise<RawReply>;

async function config(dir: TempDir): Promise<string> {
  return writeConfig(dir, {
    sink: fixtureServer('kitchen-sink-server'),
    local: fixtureServer('modern-server', [], { era: MODERN }),
  });
}

/** The walk for one asking tool: ann and ben each get a state; only ann's, once, finishes ann's call. */
async function refusals(send: Send, tool: string, done: string): Promise<void> {
  let id = 0;
  const ask = async (agent: Agent): Promise<{ key: string; state: string }> => {
    const reply = await send(agent, ++id, { name: tool, arguments: {} });
    const result = reply.result as
      { resultType?: string; inputRequests?: Record<string, { method: string }>; requestState?: string } | undefined;
    assert.equal(result?.resultType, 'input_required', `${tool}: ${JSON.stringify(reply)}`);
    const [key, request] = Object.entries(result.inputRequests!)[0]!;
    assert.equal(request.method, 'elicitation/create');
    assert.equal(typeof result.requestState, 'string');
    return { key, state: result.requestState! };
  };
  const retry = (agent: Agent, key: string, state: string): Promise<RawReply> =>
    send(agent, ++id, {
      name: tool,
      arguments: {},
      requestState: state,
      inputResponses: { [key]: { action: 'accept', content: { name: agent } } },
    });
  const refused = (reply: RawReply, why: RegExp, what: string): void => {
    assert.equal(reply.error?.code, STATE_INVALID, `${tool}, ${what}: ${JSON.stringify(reply)}`);
    assert.equal(reply.error.data?.code, 'MCPG_REQUEST_STATE_INVALID', what);
    assert.match(reply.error.message, why, what);
  };

  // ben's call goes first and ends: a shared 2025-era server's question cannot say which of two
  // waiting calls it belongs to (MCPG_AGENT_UNAVAILABLE), so the two never wait at once.
  const ben = await ask('ben');
  const bens = await retry('ben', ben.key, ben.state);
  assert.equal((bens.result as { resultType?: string } | undefined)?.resultType, 'complete', JSON.stringify(bens));
  const ann = await ask('ann');
  assert.ok(!Buffer.from(ann.state, 'base64url').toString('latin1').includes('ann'), 'the state cannot be read');
  // The binding is checked before the call is looked up: refused as another agent's, not as used.
  refused(await retry('ann', ben.key, ben.state), /not issued by this gateway to this agent/, "another agent's state");
  refused(await retry('ben', ann.key, ann.state), /not issued by this gateway to this agent/, "another agent's state");
  const altered = Buffer.from(ann.state, 'base64url');
  altered.writeUInt8(altered.readUInt8(altered.length - 1) ^ 1, altered.length - 1);
  refused(
    await retry('ann', ann.key, altered.toString('base64url')),
    /not issued by this gateway to this agent, or was altered/,
    'altered',
  );
  const forged = Buffer.from(JSON.stringify({ v: 1, a: 'ann', h: 'x', e: 9_999_999_999_999 })).toString('base64url');
  refused(await retry('ann', ann.key, forged), /not issued|not one mcpgate issued/, 'forged');

  // The refusals took nothing away: the rightful retry finishes ann's call on the server, once.
  const finished = await retry('ann', ann.key, ann.state);
  assert.equal(finished.id, id, "the answer carries the retry's id");
  assert.equal(
    (finished.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text,
    done,
    `${tool}: ${JSON.stringify(finished)}`,
  );
  refused(await retry('ann', ann.key, ann.state), /used already/, 'replayed');
}

describe('requestState over Streamable HTTP: two 2026-07-28 agents, a 2025-era and a 2026-07-28 server', { timeout: 90_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;

  before(async () => {
    dir = await tempDir();
    gate = await startHttpGateway({ config: await config(dir), args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  const send: Send = async (agent, id, params) => {
    const res = await raw(gate.url, {
      headers: {
        ...JSON_HEADERS,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': params.name as string,
        'x-mcpgate-agent': agent,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: ENVELOPE } }),
    });
    assert.ok(res.json !== undefined, `not JSON (${res.status}): ${res.body}`);
    return res.json;
  };

  for (const { tool, done } of ASKERS) {
    it(`refuses a forged, altered, replayed or other agent's requestState (${tool})`, { timeout: 30_000 }, () =>
      refusals(send, tool, done),
    );
  }
});

describe(
  'requestState over stdio: a 2026-07-28 agent per gateway, one key, a 2025-era and a 2026-07-28 server',
  { timeout: 90_000 },
  () => {
    let dir: TempDir;
    const gateways = {} as Record<Agent, { gw: GatewayProcess; replies: RawReplies }>;

    before(async () => {
      dir = await tempDir();
      const file = await config(dir);
      const key = randomBytes(32).toString('hex');
      for (const agent of ['ann', 'ben'] as const) {
        const gw = await startGateway({
          config: file,
          agent,
          args: ['--pins', 'off'],
          env: { MCPGATE_REQUEST_STATE_KEY: key },
          noClient: true,
        });
        gateways[agent] = { gw, replies: new RawReplies(gw) };
      }
    });

    after(async () => {
      for (const { gw } of Object.values(gateways)) await gw.stop();
      await dir?.remove();
    });

    const send: Send = async (agent, id, params) => {
      const { gw, replies } = gateways[agent];
      gw.transport.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: ENVELOPE } }));
      // Each request is answered before the next is sent; nothing else is written to a modern agent's stdout here.
      const reply = await replies.next();
      assert.equal(reply.id, id, JSON.stringify(reply));
      return reply;
    };

    for (const { tool, done } of ASKERS) {
      it(`refuses a forged, altered, replayed or other agent's requestState (${tool})`, { timeout: 30_000 }, () =>
        refusals(send, tool, done),
      );
    }
  },
);
