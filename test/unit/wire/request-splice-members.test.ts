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

  it('gives up past a bounded depth rather than recursing without end', () => {
    const deep = '['.repeat(200) + ']'.repeat(200);
    assert.equal(spliceRequest(call(`{"d":${deep}}`), 1, 'push'), undefined);
  });
});
