// JSON-RPC framing (src/wire/jsonrpc.ts): classification of every message kind and every invalid
// shape, the encoders, and spliceResponseId — the hot-path re-addressing of a server's response,
// which must yield the original message with only the id changed, or nothing.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  classify,
  encodeError,
  encodeNotification,
  encodeRequest,
  encodeResult,
  nestedDeeperThan,
  parseMessage,
  spliceResponseId,
  wireLimits,
  type RequestId,
} from '../../../src/wire/jsonrpc.js';

/** Asserts `line` is invalid with exactly this code, message and id. */
function assertInvalid(line: string, code: string, message: string, id: RequestId | null = null): void {
  const c = parseMessage(line);
  assert.equal(c.kind, 'invalid', line);
  if (c.kind !== 'invalid') return;
  assert.deepEqual({ code: c.error.code, message: c.error.message, id: c.id }, { code, message, id });
}

const INVALID = 'MCPG_INVALID_REQUEST';

void describe('parseMessage', { timeout: 5000 }, () => {
  void it('classifies requests, notifications, results and errors', { timeout: 5000 }, () => {
    const cases: [string, string][] = [
      ['{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 'request'],
      ['{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"x","arguments":{}}}', 'request'],
      ['{"jsonrpc":"2.0","method":"notifications/initialized"}', 'notification'],
      ['{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}', 'notification'],
      ['{"jsonrpc":"2.0","id":0,"result":{}}', 'response'],
      ['{"result":{"tools":[]},"jsonrpc":"2.0","id":7}', 'response'],
      ['{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":{"x":1}}}', 'response'],
      ['{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}', 'response'],
    ];
    for (const [line, kind] of cases) {
      const c = parseMessage(line);
      assert.equal(c.kind, kind, line);
      assert.ok(c.kind !== 'invalid');
      assert.deepEqual(c.msg, JSON.parse(line));
    }
  });

  void it('reports text that is not JSON as a parse error (-32700)', { timeout: 5000 }, () => {
    const c = parseMessage('{"jsonrpc":');
    assert.ok(c.kind === 'invalid');
    assert.equal(c.error.code, 'MCPG_PARSE_ERROR');
    assert.equal(c.error.rpcCode, -32700);
    assert.match(c.error.message, /^parse error: /);
    assert.equal(c.id, null);
  });

  void it('rejects batches and non-objects', { timeout: 5000 }, () => {
    const prefix = 'invalid request: expected a JSON-RPC message object, got';
    assertInvalid(
      '[{"jsonrpc":"2.0","id":1,"method":"x"}]',
      INVALID,
      `${prefix} a batch (JSON array); MCP 2025-11-25 does not allow batches`,
    );
    assertInvalid('null', INVALID, `${prefix} a null`);
    assertInvalid('42', INVALID, `${prefix} a number`);
    assertInvalid('"hi"', INVALID, `${prefix} a string`);
    assertInvalid('true', INVALID, `${prefix} a boolean`);
  });

  void it('requires "jsonrpc": "2.0", keeping a usable id for the error', { timeout: 5000 }, () => {
    const msg = 'invalid request: "jsonrpc" must be "2.0"';
    assertInvalid('{"id":3,"method":"ping"}', INVALID, msg, 3);
    assertInvalid('{"jsonrpc":"1.0","id":"x","method":"ping"}', INVALID, msg, 'x');
    assertInvalid('{"jsonrpc":2,"method":"ping"}', INVALID, msg, null);
  });

  void it('rejects a request id that is not a string or a finite number', { timeout: 5000 }, () => {
    const msg = 'invalid request: "id" must be a string or a number';
    for (const id of ['null', '{}', '[1]', 'true', '1e999']) {
      assertInvalid(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`, INVALID, msg);
    }
  });

  void it('rejects params that are not an object, and a method that is not a string', { timeout: 5000 }, () => {
    for (const params of ['[1,2]', '"x"', 'null', '5']) {
      assertInvalid(`{"jsonrpc":"2.0","id":4,"method":"m","params":${params}}`, INVALID, 'invalid request: "params" must be an object', 4);
    }
    assertInvalid('{"jsonrpc":"2.0","id":4,"method":5}', INVALID, 'invalid request: "method" must be a string', 4);
  });

  void it('rejects a result that is not an object, or a response without a valid id', { timeout: 5000 }, () => {
    for (const result of ['[]', '5', 'null', '"ok"']) {
      assertInvalid(`{"jsonrpc":"2.0","id":9,"result":${result}}`, INVALID, 'invalid response: "result" must be an object', 9);
    }
    assertInvalid('{"jsonrpc":"2.0","id":null,"result":{}}', INVALID, 'invalid response: "id" must be a string or a number');
    assertInvalid('{"jsonrpc":"2.0","result":{}}', INVALID, 'invalid response: "id" must be a string or a number');
  });

  void it('rejects a malformed error object', { timeout: 5000 }, () => {
    const msg = 'invalid response: "error" must have a numeric code and a string message';
    for (const error of ['"boom"', 'null', '{"code":"1","message":"m"}', '{"code":1}', '{"message":"m"}', '{"code":1,"message":2}']) {
      assertInvalid(`{"jsonrpc":"2.0","id":2,"error":${error}}`, INVALID, msg, 2);
    }
  });

  void it('rejects an object with no method, result or error', { timeout: 5000 }, () => {
    assertInvalid('{"jsonrpc":"2.0","id":1}', INVALID, 'invalid request: a message needs a "method", a "result" or an "error"', 1);
  });

  void it('classify works on values that are already parsed', { timeout: 5000 }, () => {
    assert.equal(classify({ jsonrpc: '2.0', id: 1, method: 'ping' }).kind, 'request');
    assert.equal(classify(undefined).kind, 'invalid');
    assert.equal(classify({ jsonrpc: '2.0', id: Number.NaN, method: 'ping' }).kind, 'invalid');
  });
});

void describe('encoders', { timeout: 5000 }, () => {
  void it('produce valid JSON-RPC that parses back to the same values', { timeout: 5000 }, () => {
    const tricky = 'quote " backslash \\ newline \n unicode é \u2028';
    assert.deepEqual(JSON.parse(encodeResult(tricky, { text: tricky })), { jsonrpc: '2.0', id: tricky, result: { text: tricky } });
    assert.deepEqual(JSON.parse(encodeError(null, { code: -32600, message: tricky, data: { code: 'X' } })), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: tricky, data: { code: 'X' } },
    });
    assert.deepEqual(JSON.parse(encodeNotification('notifications/tools/list_changed')), {
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
    });
    assert.deepEqual(JSON.parse(encodeNotification('m', { a: [1] })), { jsonrpc: '2.0', method: 'm', params: { a: [1] } });
    assert.deepEqual(JSON.parse(encodeRequest(5, 'ping')), { jsonrpc: '2.0', id: 5, method: 'ping' });
    assert.deepEqual(JSON.parse(encodeRequest('r', 'tools/call', { name: tricky })), {
      jsonrpc: '2.0',
      id: 'r',
      method: 'tools/call',
      params: { name: tricky },
    });
    assert.equal(parseMessage(encodeRequest(5, 'ping')).kind, 'request');
  });
});

/** The contract: either undefined, or text that parses to the original message with only the id changed. */
function checkSplice(line: string, oldId: number, newId: RequestId): string | undefined {
  const original = JSON.parse(line) as Record<string, unknown>;
  assert.equal(original.id, oldId, `test precondition: ${line} has top-level id ${oldId}`);
  const out = spliceResponseId(line, oldId, newId);
  if (out !== undefined) assert.deepEqual(JSON.parse(out), { ...original, id: newId }, `${line} → ${out}`);
  return out;
}

void describe('spliceResponseId', { timeout: 5000 }, () => {
  void it('re-addresses the id-last form (TypeScript SDK)', { timeout: 5000 }, () => {
    assert.equal(checkSplice('{"result":{"a":1},"jsonrpc":"2.0","id":7}', 7, 42), '{"result":{"a":1},"jsonrpc":"2.0","id":42}');
    assert.equal(checkSplice('{"result":{},"jsonrpc":"2.0","id":7}', 7, 'agent-1'), '{"result":{},"jsonrpc":"2.0","id":"agent-1"}');
  });

  void it('re-addresses the id-after-jsonrpc form and the id-first form', { timeout: 5000 }, () => {
    assert.equal(checkSplice('{"jsonrpc":"2.0","id":7,"result":{"a":1}}', 7, 3), '{"jsonrpc":"2.0","id":3,"result":{"a":1}}');
    assert.equal(checkSplice('{"id":7,"jsonrpc":"2.0","result":{}}', 7, 'x'), '{"id":"x","jsonrpc":"2.0","result":{}}');
    assert.equal(
      checkSplice('{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}', 7, 8),
      '{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"m"}}',
    );
  });

  void it('quotes and escapes string ids', { timeout: 5000 }, () => {
    for (const newId of ['a"b', 'back\\slash', 'line\nbreak', 'é\u2028', '', '7']) {
      assert.notEqual(checkSplice('{"result":{},"jsonrpc":"2.0","id":7}', 7, newId), undefined);
      assert.notEqual(checkSplice('{"jsonrpc":"2.0","id":7,"result":{}}', 7, newId), undefined);
    }
  });

  void it('never touches an "id":7 nested in the result or inside a string', { timeout: 5000 }, () => {
    const lines = [
      '{"jsonrpc":"2.0","id":7,"result":{"item":{"id":7}}}',
      '{"jsonrpc":"2.0","id":7,"result":{"items":[{"a":1,"id":7}]}}',
      '{"result":{"item":{"id":7}},"jsonrpc":"2.0","id":7}',
      '{"jsonrpc":"2.0","id":7,"result":{"text":"{\\"id\\":7,"}}',
      '{"jsonrpc":"2.0","id":7,"result":{"text":",\\"id\\":7}"}}',
      '{"result":{"text":",\\"id\\":7}"},"jsonrpc":"2.0","id":7}',
      '{"jsonrpc":"2.0","result":{"text":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":7,"},"id":7}',
    ];
    // Every one of these is still spliced (the fast path), and correctly.
    for (const line of lines) assert.notEqual(checkSplice(line, 7, 99), undefined, line);
    assert.equal(spliceResponseId(lines[0]!, 7, 99), '{"jsonrpc":"2.0","id":99,"result":{"item":{"id":7}}}');
  });

  void it('does not confuse id 7 with 17, 70 or -7', { timeout: 5000 }, () => {
    for (const other of [17, 70, -7, 77]) {
      for (const line of [
        `{"result":{},"jsonrpc":"2.0","id":${other}}`,
        `{"jsonrpc":"2.0","id":${other},"result":{}}`,
        `{"id":${other},"result":{}}`,
      ]) {
        assert.equal(spliceResponseId(line, 7, 1), undefined, line);
        checkSplice(line, other, 1);
      }
    }
  });

  void it('returns undefined for other layouts (spaces, id in the middle, 7.0)', { timeout: 5000 }, () => {
    for (const line of [
      '{"jsonrpc": "2.0", "id": 7, "result": {}}',
      '{"result":{},"id":7,"jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","id":7.0,"result":{}}',
      '{"result":{},"jsonrpc":"2.0","id":7} ',
    ])
      assert.equal(checkSplice(line, 7, 1), undefined, line);
    // Trailing whitespace after a prefix form is still the same message.
    assert.equal(checkSplice('{"jsonrpc":"2.0","id":7,"result":{}} ', 7, 1), '{"jsonrpc":"2.0","id":1,"result":{}} ');
  });

  void it('is not fooled by a duplicate top-level "id" (JSON.parse keeps the last)', { timeout: 5000 }, () => {
    for (const line of [
      '{"jsonrpc":"2.0","id":7,"id":7,"result":{}}',
      '{"jsonrpc":"2.0","id":7,"result":{},"id":7}',
      '{"id":7,"result":{},"id" : 7}',
      '{"jsonrpc":"2.0","id":7,"result":{},"\\u0069d":7}',
      '{"id":7,"result":{},"i\\u0064":7}',
      '{"jsonrpc":"2.0","id":7,"result":{"id":1,"s":"}\\"],{"},"id":7,"z":0}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":[{"id":1}]},"x":"\\"id\\"","id":7,"z":[]}',
    ])
      assert.equal(checkSplice(line, 7, 1), line.endsWith(',"id":7}') ? line.slice(0, -2) + '1}' : undefined, line);
    // The id-last form is safe with duplicates: the last member is the one JSON.parse keeps.
    assert.equal(spliceResponseId('{"id":7,"result":{},"id":7}', 7, 1), '{"id":7,"result":{},"id":1}');
    // A duplicate "id" nested deeper, or in a string value, is not top-level: the prefix splice stands.
    assert.equal(
      checkSplice('{"jsonrpc":"2.0","id":7,"result":{"x":{"id":7}},"note":"\\"id\\":7"}', 7, 1),
      '{"jsonrpc":"2.0","id":1,"result":{"x":{"id":7}},"note":"\\"id\\":7"}',
    );
  });
});

void describe('the nesting limit', { timeout: 5000 }, () => {
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

  void it('measures depth by structure only: a bare object or array is one level', { timeout: 5000 }, () => {
    assert.equal(nestedDeeperThan('x'.repeat(10_000), 0), false);
    assert.equal(nestedDeeperThan({}, 1), false);
    assert.equal(nestedDeeperThan({}, 0), true);
    assert.equal(nestedDeeperThan({ a: [{ b: 1 }] }, 3), false);
    assert.equal(nestedDeeperThan({ a: [{ b: 1 }] }, 2), true);
    assert.equal(nestedDeeperThan([1, 'two', null, [[]]], 3), false);
    assert.equal(nestedDeeperThan([1, 'two', null, [[]]], 2), true);
    // 100,000 levels: the walk stops at the limit, so it never overflows the stack.
    assert.equal(nestedDeeperThan(JSON.parse(nested(100_000)), 128), true);
  });

  void it('refuses a message past the limit in any member, keeping its id when it has one', { timeout: 5000 }, () => {
    const max = wireLimits.maxDepth;
    const within = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":${nested(max - 2)}}}`;
    assert.equal(parseMessage(within).kind, 'request');
    const past = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":${nested(max - 1)}}}`;
    const refused = parseMessage(past);
    assert.equal(refused.kind, 'invalid');
    assert.ok(refused.kind === 'invalid');
    assert.equal(refused.id, 1);
    assert.equal(refused.error.code, 'MCPG_MESSAGE_TOO_DEEP');
    assert.match(refused.error.message, new RegExp(`deeper than ${max} levels`));
    const notification = parseMessage(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":${nested(20_000)}}}`);
    assert.ok(notification.kind === 'invalid' && notification.id === null && notification.error.code === 'MCPG_MESSAGE_TOO_DEEP');
    assert.equal(parseMessage(nested(20_000)).kind, 'invalid');
  });

  void it('follows the configured limit (--max-depth)', { timeout: 5000 }, () => {
    const saved = wireLimits.maxDepth;
    try {
      wireLimits.maxDepth = 3;
      assert.equal(classify({ jsonrpc: '2.0', id: 1, result: { a: {} } }).kind, 'response');
      assert.equal(classify({ jsonrpc: '2.0', id: 1, result: { a: { b: {} } } }).kind, 'invalid');
    } finally {
      wireLimits.maxDepth = saved;
    }
  });

  void it('refuses a response that carries both result and error', { timeout: 5000 }, () => {
    assertInvalid(
      '{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":-1,"message":"x"}}',
      INVALID,
      'invalid response: a response carries "result" or "error", not both',
      4,
    );
  });
});
