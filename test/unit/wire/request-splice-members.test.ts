// A tools/call line whose arguments (or any object in it) name a member twice is never spliced: the
// rules, the approval desk and the audit trail read the parsed request, where the last member wins,
// and a server whose parser keeps the first would act on another value than the one judged. Such a
// line is encoded from the parsed request instead (spliceRequest answers undefined), so the server
// gets exactly what was judged. Lines without duplicates are still spliced.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spliceRequest } from '../../../src/wire/request-splice.js';

const call = (args: string): string => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"g__push","arguments":${args}}}`;

describe('request splice: members named twice', () => {
  it('splices a line whose objects name each member once, at any depth', () => {
    const line = call('{"branch":"dev","opts":{"force":false,"list":[{"a":1},{"a":2}]},"b":"x\\\\"}');
    const out = spliceRequest(line, 42, 'push');
    assert.ok(out !== undefined);
    assert.deepEqual(JSON.parse(out), {
      ...(JSON.parse(line) as object),
      id: 42,
      params: { ...(JSON.parse(line) as { params: object }).params, name: 'push' },
    });
  });

  it('gives up on a member twice in the arguments, nested, or spelled with an escape', () => {
    for (const args of [
      '{"force":false,"force":true}',
      '{"opts":{"force":false,"force":true}}',
      '{"list":[{"a":1,"a":2}]}',
      '{"force":false,"\\u0066orce":true}',
    ])
      assert.equal(spliceRequest(call(args), 1, 'push'), undefined, args);
  });

  it('gives up on a member twice in params or at the top', () => {
    assert.equal(spliceRequest('{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"x","params":{"name":"a"}}', 1, 'a'), undefined);
    assert.equal(
      spliceRequest('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{},"arguments":{"x":1}}}', 1, 'a'),
      undefined,
    );
  });

  it('compares names within one object only: siblings, an object and its members, params and the top may share names', () => {
    for (const line of [
      call('{"a":{"x":1},"b":{"x":2},"x":{"x":{"x":3}}}'),
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","id":3,"jsonrpc":{"id":4}}}',
      '{"params":{"name":"a","jsonrpc":1,"method":2},"jsonrpc":"2.0","id":1,"method":"tools/call"}',
    ])
      assert.ok(spliceRequest(line, 9, 'b') !== undefined, line);
  });

  it('finds a member twice among many, however it is spelled', () => {
    const many = Array.from({ length: 20 }, (_, k) => `"m${k}":${k}`).join(',');
    assert.ok(spliceRequest(call(`{${many}}`), 1, 'push') !== undefined);
    for (const twice of ['"m3":0', '"m19":0', '"\\u006d3":0', '"m\\u0033":0'])
      for (const args of [`{${many},${twice}}`, `{${twice},${many}}`, `{"n":{${many},${twice}}}`])
        assert.equal(spliceRequest(call(args), 1, 'push'), undefined, args);
    const top = Array.from({ length: 12 }, (_, k) => `"t${k}":${k}`).join(',');
    assert.equal(spliceRequest(`{"jsonrpc":"2.0","id":1,"method":"tools/call",${top},"params":{"name":"a"},"t5":0}`, 1, 'a'), undefined);
    assert.ok(spliceRequest(`{"jsonrpc":"2.0","id":1,"method":"tools/call",${top},"params":{"name":"a"}}`, 1, 'a') !== undefined);
  });

  it('gives up past a bounded depth rather than recursing without end', () => {
    const deep = '['.repeat(200) + ']'.repeat(200);
    assert.equal(spliceRequest(call(`{"d":${deep}}`), 1, 'push'), undefined);
  });
});
