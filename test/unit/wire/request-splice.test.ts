// The tools/call splice (src/wire/request-splice.ts): the line a server gets is the
// agent's with only the id and params.name replaced, and it must always mean exactly what encoding
// the rewritten request would mean; whenever the line is one the scan is not sure of, it gives up.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spliceRequest } from '../../../src/wire/request-splice.js';

/** What the full path sends: the parsed request with the new id and name, encoded again. */
function expected(line: string, id: number, name: string): unknown {
  const msg = JSON.parse(line) as { id: unknown; params: { name: unknown } };
  msg.id = id;
  msg.params.name = name;
  return msg;
}

function splicesLikeTheFullPath(line: string, id = 7, name = 'echo'): void {
  const spliced = spliceRequest(line, id, name);
  assert.notEqual(spliced, undefined, `expected a splice of ${line}`);
  assert.deepEqual(JSON.parse(spliced!), expected(line, id, name), line);
}

describe('request splice: id and params.name replaced, nothing else', () => {
  it('ids of every JSON type the agent may use, first, last or between', () => {
    for (const id of ['1', '0', '-3', '1.5e3', '"abc"', '"with \\"quotes\\" and \\\\"', '""', '"\\u0031"', '9007199254740993']) {
      splicesLikeTheFullPath(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"s__echo","arguments":{"text":"ping"}}}`);
      splicesLikeTheFullPath(`{"method":"tools/call","params":{"name":"s__echo","arguments":{"text":"ping"}},"jsonrpc":"2.0","id":${id}}`);
      splicesLikeTheFullPath(`{"method":"tools/call","id":${id},"params":{"arguments":{},"name":"s__echo"},"jsonrpc":"2.0"}`);
    }
  });

  it('the exact bytes: only the two tokens change', () => {
    const line = '{"method":"tools/call","params":{"name":"s__echo","arguments":{"text":"ping"}},"jsonrpc":"2.0","id":42}';
    assert.equal(
      spliceRequest(line, 3, 'echo'),
      '{"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}},"jsonrpc":"2.0","id":3}',
    );
  });

  it('names needing escapes, on either side', () => {
    splicesLikeTheFullPath(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__a\\"b\\\\c\\u00e9\\n","arguments":{}}}',
      2,
      'a"b\\c\u00e9\n\u2028',
    );
    splicesLikeTheFullPath('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__x"}}', 2, 'quote" backslash\\ tab\t');
  });

  it('never the "name" (or "id") inside the arguments, in strings or in keys that contain it', () => {
    const lines = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"s__echo","id":5},"name":"s__echo"}}',
      '{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"x":{"name":"n","params":{"name":"m"}},"id":[1,{"id":2}]},"name":"s__echo"},"id":9}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"text":"\\"name\\":\\"s__echo\\",\\"id\\":3"},"name":"s__echo"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x\\"name":"s__echo","t":"a\\\\"},"name":"s__echo"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"t":"}]{[\\\\\\"","name":"z"},"name":"s__echo"}}',
      ' { "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "name" : "s__echo" , "arguments" : { "name" : "q" } } } ',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__echo","arguments":{"a":[true,false,null,-1.5e-7,"x",[],{}]}}}',
    ];
    for (const line of lines) splicesLikeTheFullPath(line);
  });

  it('gives up (undefined) whenever in doubt', () => {
    const doubtful = [
      // an escaped key: "\u0069d" is "id", "n\u0061me" is "name", "par\u0061ms" is "params"
      '{"jsonrpc":"2.0","\\u0069d":1,"method":"tools/call","params":{"name":"s__echo"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\\u0061me":"s__echo"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","par\\u0061ms":{"name":"s__echo"}}',
      // duplicates (JSON.parse keeps the last)
      '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"s__echo"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"s__echo"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"s__echo"}}',
      // _meta: the progress token and the trace context are rewritten on the full path
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__echo","_meta":{"progressToken":1}}}',
      // no id, no name, a name that is not a string, not an object, trailing bytes
      '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"s__echo"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}',
      '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__echo"}}]',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__echo"}} x',
      // not even JSON (the session parses first; this must still not throw or splice)
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s__echo"',
      '{"id":1,"params":{"name":"unterminated}}',
      '',
    ];
    for (const line of doubtful) assert.equal(spliceRequest(line, 7, 'echo'), undefined, line);
  });

  it('finds the spans of a typical SDK line', () => {
    const line = '{"method":"tools/call","params":{"name":"s__echo","arguments":{"text":"ping"}},"jsonrpc":"2.0","id":0}';
    // Only the id's and the name's spans change: each is found exactly, with nothing beside it.
    assert.equal(
      spliceRequest(line, 7, 'echo'),
      '{"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}},"jsonrpc":"2.0","id":7}',
    );
  });
});
