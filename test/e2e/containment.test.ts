// One request must not bring the gateway down (security audit): messages nested far past the depth
// limit, from an agent or from a hostile server, are refused where they are parsed, so nothing deep
// ever reaches JSON.stringify; a progress token that is not a string or number is refused; a response
// with both result and error is a bad response. After each, the gateway and the server still serve.
// A request refused before it is sent leaves no call pending and never counts against the breaker.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  RawReplies,
  fixtureServer,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { JSON_HEADERS, connectAgent, raw, rawSession, startHttpGateway, type HttpGateway } from '../helpers/http.js';

const DEEP = 20_000;
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const callLine = (id: number | string, name: string, extra: string): string =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":${JSON.stringify(name)},${extra}}}`;

describe('containment over stdio: deep and malformed messages from both sides', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let replies: RawReplies;

  const send = (line: string): void => gw.transport.sendRaw(line);
  async function echoStillWorks(id: string): Promise<void> {
    send(callLine(id, 'bomb__echo', '"arguments":{"text":"still here"}'));
    const reply = await replies.next();
    assert.equal(reply.id, id, JSON.stringify(reply));
    assert.equal(textOf(reply.result), 'still here');
    assert.equal(gw.child.exitCode, null, 'the gateway is still running');
  }

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { bomb: fixtureServer('nested-bomb-server') });
    gw = await startGateway({ config, noClient: true });
    replies = new RawReplies(gw);
    send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    );
    assert.equal((await replies.next()).id, 0);
    send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  });

  after(async () => {
    const exit = await gw?.stop();
    assert.equal(exit?.code, 0, 'the gateway shuts down cleanly after all of it');
    await dir?.remove();
  });

  it('refuses a progress token nested 20,000 deep with MCPG_MESSAGE_TOO_DEEP, naming the request', async () => {
    send(callLine(1, 'bomb__progress', `"arguments":{},"_meta":{"progressToken":${nested(DEEP)}}`));
    const reply = await replies.next();
    assert.equal(reply.id, 1);
    assert.equal(reply.error?.code, -32600);
    assert.equal(reply.error.data?.code, 'MCPG_MESSAGE_TOO_DEEP');
    await echoStillWorks('after-token');
  });

  it('refuses a progress token that is neither a string nor a number with -32602', async () => {
    send(callLine(2, 'bomb__progress', '"arguments":{},"_meta":{"progressToken":{"a":[1]}}'));
    const reply = await replies.next();
    assert.equal(reply.id, 2, JSON.stringify(reply));
    assert.equal(reply.error?.code, -32602);
    assert.equal(reply.error.data?.code, 'MCPG_INVALID_PARAMS');
    assert.match(reply.error.message, /progressToken/);
    // A string token still gets its progress, mapped back to the agent's own token.
    send(callLine(3, 'bomb__progress', '"arguments":{},"_meta":{"progressToken":"tok"}'));
    const progress = await replies.next();
    assert.equal(progress.method, 'notifications/progress');
    assert.equal((progress as { params?: { progressToken?: unknown } }).params?.progressToken, 'tok');
    assert.equal(textOf((await replies.next()).result), 'progressed');
  });

  it('refuses arguments nested 20,000 deep without sending anything to the server', async () => {
    send(callLine(4, 'bomb__echo', `"arguments":{"text":"x","deep":${nested(DEEP)}}`));
    const reply = await replies.next();
    assert.equal(reply.id, 4);
    assert.equal(reply.error?.data?.code, 'MCPG_MESSAGE_TOO_DEEP');
    await echoStillWorks('after-arguments');
  });

  it('a hostile server: a result to sanitize with a structuredContent 20,000 deep fails only that call', async () => {
    send(callLine(5, 'bomb__deep_result', '"arguments":{}'));
    const reply = await replies.next();
    assert.equal(reply.id, 5);
    assert.equal(reply.error?.data?.code, 'MCPG_SERVER_BAD_RESPONSE');
    assert.equal(reply.error.data?.server, 'bomb');
    assert.match(reply.error.message, /deeper than/);
    await echoStillWorks('after-result');
  });

  it('a hostile server: a log message 20,000 deep, with a level set, is dropped and logged', async () => {
    send('{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"debug"}}');
    assert.deepEqual((await replies.next()).result, {});
    send(callLine(7, 'bomb__deep_log', '"arguments":{}'));
    const reply = await replies.next();
    assert.equal(reply.id, 7, `no log notification reaches the agent: ${JSON.stringify(reply).slice(0, 200)}`);
    assert.equal(textOf(reply.result), 'logged');
    await gw.waitForLog((l) => l.level === 'warn' && /invalid message/.test(String(l.msg)) && /deeper than/.test(String(l.error)));
    await echoStillWorks('after-log');
  });

  it('a response carrying both result and error is refused as a bad response', async () => {
    send(callLine(8, 'bomb__both', '"arguments":{}'));
    const reply = await replies.next();
    assert.equal(reply.id, 8);
    assert.equal(reply.result, undefined);
    assert.equal(reply.error?.data?.code, 'MCPG_SERVER_BAD_RESPONSE');
    assert.match(reply.error.message, /not both/);
    assert.deepEqual(
      gw.logs.filter((l) => l.level === 'error' || l.level === 'fatal'),
      [],
      'nothing here is an internal error',
    );
  });
});

describe('containment over HTTP: a request refused before it is sent never counts against the breaker', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;

  before(async () => {
    dir = await tempDir();
    // A short server timeout: a pending entry left behind by a refused request would time out, count
    // as a server failure, and three of them would open the breaker for every agent.
    const config = await writeConfig(dir, { bomb: fixtureServer('nested-bomb-server', [], { timeout: 300 }) });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--breaker', '3'] });
  });

  after(async () => {
    const exit = await gate?.stop();
    assert.equal(exit?.code, 0);
    await dir?.remove();
  });

  it('answers deep arguments with 400 MCPG_MESSAGE_TOO_DEEP; other agents keep the server', async () => {
    const session = await rawSession(gate.url);
    for (let i = 0; i < 5; i++) {
      const res = await raw(gate.url, {
        headers: { ...JSON_HEADERS, 'mcp-session-id': session },
        body: callLine(100 + i, 'bomb__echo', `"arguments":{"deep":${nested(DEEP)}}`),
      });
      assert.equal(res.status, 400, res.body.slice(0, 300));
      assert.equal((res.json?.error as { data?: { code?: string } } | undefined)?.data?.code, 'MCPG_MESSAGE_TOO_DEEP');
      assert.equal(res.json?.id, 100 + i);
    }
    // Nothing was left pending: no call is in flight to time out later and count as a server failure.
    const metrics = await raw(`${gate.base}/metrics`, { method: 'GET' });
    assert.match(metrics.body, /mcpgate_calls_in_flight\{server="bomb"\} 0\n/);
    const other = await connectAgent(gate.url, { headers: { 'x-mcpgate-agent': 'other' } });
    try {
      const result = await other.client.callTool({ name: 'bomb__echo', arguments: { text: 'breaker closed' } });
      assert.equal(textOf(result), 'breaker closed');
    } finally {
      await other.client.close();
    }
    const later = await raw(`${gate.base}/metrics`, { method: 'GET' });
    assert.match(later.body, /mcpgate_circuit_breaker_trips_total\{server="bomb"\} 0\n/);
    assert.doesNotMatch(later.body, /mcpgate_tool_calls_total\{[^}]*outcome="failed"\} [1-9]/);
  });
});
