// The JSON syntax-error locator (src/config/json-error.ts): where V8 gives a position, our scanner
// must find the same one, so line/column are right also when V8 gives none.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findSyntaxErrorOffset, lineAndColumn, locateJsonError } from '../../src/config/json-error.js';

const syntaxError = (text: string): SyntaxError => {
  try {
    JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return err;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be invalid JSON`);
};

void describe('findSyntaxErrorOffset', () => {
  void it('accepts valid JSON', { timeout: 5000 }, () => {
    for (const text of ['{}', ' [1, -2.5e+3, "a\\u00e9\\n", true, false, null, {"k": []}] ', '"x"', '0']) {
      assert.equal(findSyntaxErrorOffset(text), undefined, text);
    }
  });

  void it('agrees with every position V8 reports', { timeout: 5000 }, () => {
    const cases = [
      '{"a":1,}',
      '[1,2',
      '{"a" 1}',
      '{"a":"\\q"}',
      '{"a":01}',
      '{\n"a":1\n"b":2}',
      '{"a":1}}',
      '{"a":"\u0001"}',
      '{"a":-}',
      '{"a":"\\u12g4"}',
      '[1.]',
      '[1e]',
      '[1e+]',
      '[-x]',
    ];
    for (const text of cases) {
      const position = /at position (\d+)/.exec(syntaxError(text).message)?.[1];
      assert.ok(position !== undefined, `V8 gave no position for ${JSON.stringify(text)}: ${syntaxError(text).message}`);
      assert.equal(findSyntaxErrorOffset(text), Number(position), JSON.stringify(text));
    }
  });

  void it('finds the unexpected token V8 only quotes', { timeout: 5000 }, () => {
    assert.equal(findSyntaxErrorOffset('{"a":}'), 5);
    assert.equal(findSyntaxErrorOffset('{"a": tru}'), 9);
    assert.equal(findSyntaxErrorOffset('x'), 0);
    assert.equal(findSyntaxErrorOffset('[1,]'), 3);
    assert.equal(findSyntaxErrorOffset('[.5]'), 1);
    assert.equal(findSyntaxErrorOffset('{"a": undefined}'), 6);
  });
});

void describe('locateJsonError', () => {
  void it('counts lines and columns from 1', { timeout: 5000 }, () => {
    assert.deepEqual(lineAndColumn('ab\ncd\r\nef', 0), { line: 1, column: 1 });
    assert.deepEqual(lineAndColumn('ab\ncd\r\nef', 4), { line: 2, column: 2 });
    assert.deepEqual(lineAndColumn('ab\ncd\r\nef', 8), { line: 3, column: 2 });
  });

  void it('gives a readable message without V8 quoting the text', { timeout: 5000 }, () => {
    const text = '{\n  "key": "hunter2",\n  "x": }';
    assert.deepEqual(locateJsonError(text, syntaxError(text)), { line: 3, column: 8, message: 'unexpected character "}"' });
    const comma = '{"a":1,}';
    assert.deepEqual(locateJsonError(comma, syntaxError(comma)), { line: 1, column: 8, message: 'expected double-quoted property name' });
  });
});
