// Malformed and mistaken agent input, sent as raw lines: each gets exactly one JSON-RPC error with the
// right code and a stable data.code (errors.ts), never a stack trace, and neither the gateway nor its
// servers are harmed — a valid call afterwards still succeeds. The real stdio front in-process
// (test/helpers/in-process.ts) over an in-memory server; the line reader's bounds on a real pipe are
// the e2e tests'.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer } from '../../helpers/fake-server.js';
import { stdioFront, until, type InProcessStdio, type Message } from '../../helpers/in-process.js';

describe('bad input from the agent', { timeout: 30_000 }, () => {
  let gw: InProcessStdio;
  const sink = new FakeServer('sink', {
    tools: [
      { name: 'echo', text: (args) => String(args?.text) },
      { name: 'slow', holds: true },
    ],
  });

  const send = (message: unknown): void => gw.agent.send(message);
  const call = (id: unknown, method: string, params?: unknown): void =>
    send({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });

  /** Sends `line` and checks the one reply: its id, JSON-RPC code and data.code. */
  async function expectError(line: unknown, id: unknown, code: number, dataCode: string): Promise<NonNullable<Message['error']>> {
    send(line);
    const reply = await gw.agent.next();
    assert.equal(reply.jsonrpc, '2.0');
    assert.equal(reply.id, id, JSON.stringify(reply));
    assert.equal(reply.error?.code, code, JSON.stringify(reply));
    assert.equal(reply.error.data?.code, dataCode, JSON.stringify(reply));
    return reply.error;
  }

  before(async () => {
    gw = await stdioFront({ servers: [sink] });
    call(0, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } });
    const init = await gw.agent.next();
    assert.equal(init.id, 0);
    assert.equal(init.result?.protocolVersion, '2025-11-25');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  });

  after(async () => {
    await gw?.close();
  });

  it('answers a line that is not JSON with -32700 MCPG_PARSE_ERROR and id null', { timeout: 5_000 }, async () => {
    await expectError('{"jsonrpc":"2.0","id":1,"method":', null, -32700, 'MCPG_PARSE_ERROR');
    await expectError('hello gateway', null, -32700, 'MCPG_PARSE_ERROR');
  });

  it('refuses a batch (JSON array) with -32600', { timeout: 5_000 }, async () => {
    const error = await expectError([{ jsonrpc: '2.0', id: 2, method: 'ping' }], null, -32600, 'MCPG_INVALID_REQUEST');
    assert.match(error.message, /batch/);
  });

  it('refuses messages that are not JSON-RPC 2.0 with -32600', { timeout: 5_000 }, async () => {
    await expectError({ id: 3, method: 'ping' }, 3, -32600, 'MCPG_INVALID_REQUEST');
    await expectError({ jsonrpc: '1.0', id: 'v1', method: 'ping' }, 'v1', -32600, 'MCPG_INVALID_REQUEST');
    await expectError({ jsonrpc: '2.0', id: { no: 1 }, method: 'ping' }, null, -32600, 'MCPG_INVALID_REQUEST');
    await expectError({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: [1] }, 4, -32600, 'MCPG_INVALID_REQUEST');
    await expectError({ jsonrpc: '2.0', id: 5 }, 5, -32600, 'MCPG_INVALID_REQUEST');
    await expectError('42', null, -32600, 'MCPG_INVALID_REQUEST');
  });

  it('answers an unknown method no server declares with -32601 MCPG_METHOD_NOT_FOUND', { timeout: 5_000 }, async () => {
    const error = await expectError({ jsonrpc: '2.0', id: 6, method: 'frobnicate/now' }, 6, -32601, 'MCPG_METHOD_NOT_FOUND');
    assert.match(error.message, /frobnicate\/now/);
  });

  it('answers tools/call without a name with -32602 MCPG_INVALID_PARAMS', { timeout: 5_000 }, async () => {
    await expectError({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {} } }, 7, -32602, 'MCPG_INVALID_PARAMS');
    await expectError({ jsonrpc: '2.0', id: 8, method: 'tools/call' }, 8, -32602, 'MCPG_INVALID_PARAMS');
    await expectError({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 42 } }, 9, -32602, 'MCPG_INVALID_PARAMS');
  });

  it('answers an unknown tool with -32602 MCPG_TOOL_NOT_FOUND naming it', { timeout: 5_000 }, async () => {
    const error = await expectError(
      { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'sink__missing', arguments: {} } },
      10,
      -32602,
      'MCPG_TOOL_NOT_FOUND',
    );
    assert.match(error.message, /sink__missing/);
    assert.equal(error.data?.tool, 'sink__missing');
  });

  it('answers arguments that are not an object with MCPG_INVALID_PARAMS', { timeout: 5_000 }, async () => {
    for (const [id, args] of [
      [11, 'text'],
      [12, [1, 2]],
      [13, null],
      [14, 7],
    ] as const) {
      await expectError(
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sink__echo', arguments: args } },
        id,
        -32602,
        'MCPG_INVALID_PARAMS',
      );
    }
  });

  it('answers unknown prompts and URIs with their not-found codes', { timeout: 5_000 }, async () => {
    const prompt = await expectError(
      { jsonrpc: '2.0', id: 15, method: 'prompts/get', params: { name: 'sink__nope' } },
      15,
      -32602,
      'MCPG_PROMPT_NOT_FOUND',
    );
    assert.match(prompt.message, /sink__nope/);
    await expectError(
      { jsonrpc: '2.0', id: 16, method: 'resources/read', params: { uri: 'mcpgate://ghost/x' } },
      16,
      -32002,
      'MCPG_RESOURCE_NOT_FOUND',
    );
    await expectError({ jsonrpc: '2.0', id: 17, method: 'resources/read', params: {} }, 17, -32602, 'MCPG_INVALID_PARAMS');
    await expectError({ jsonrpc: '2.0', id: 18, method: 'logging/setLevel', params: { level: 'loud' } }, 18, -32602, 'MCPG_INVALID_PARAMS');
  });

  it('refuses a request id already in flight with MCPG_INVALID_REQUEST, leaving the first call alone', { timeout: 15_000 }, async () => {
    call('dup', 'tools/call', { name: 'sink__slow', arguments: { ms: 20_000, tag: 'dup' } });
    await expectError(
      { jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'sink__echo', arguments: { text: 'x' } } },
      'dup',
      -32600,
      'MCPG_INVALID_REQUEST',
    );
    // The first call is still the gateway's to cancel: the server sees the cancellation for it.
    send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'dup', reason: 'test' } });
    assert.ok(await until(() => sink.cancelled.length > 0), 'the first call was not cancelled on the server');
    assert.deepEqual(sink.cancelled, [{ name: 'slow', arguments: { ms: 20_000, tag: 'dup' } }]);
  });

  it('ignores stray responses and unknown notifications without answering', { timeout: 5_000 }, async () => {
    send({ jsonrpc: '2.0', id: 999, result: {} });
    send({ jsonrpc: '2.0', method: 'notifications/whatever', params: { x: 1 } });
    call('after', 'ping');
    assert.deepEqual(await gw.agent.next(), { jsonrpc: '2.0', id: 'after', result: {} });
  });

  it('still serves a valid call, and no error carried a stack trace', { timeout: 10_000 }, async () => {
    call('ok', 'tools/call', { name: 'sink__echo', arguments: { text: 'still fine' } });
    assert.deepEqual(await gw.agent.next(), { jsonrpc: '2.0', id: 'ok', result: { content: [{ type: 'text', text: 'still fine' }] } });
    const errors = gw.agent.all.filter((r) => r.error !== undefined);
    assert.equal(errors.length, 23);
    for (const reply of errors) assert.doesNotMatch(JSON.stringify(reply.error), /\bat \S+ \(|\bat (file|node):|\.js:\d+:\d+/);
    assert.equal(gw.agent.all.filter((r) => r.id === 'dup').length, 1, 'a cancelled call must not be answered');
    assert.deepEqual(
      gw.lines.filter((l) => l.level === 'error' || l.level === 'fatal'),
      [],
    );
  });
});
