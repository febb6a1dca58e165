// The JSON syntax-error locator (src/config/json-error.ts): where V8 gives a position, our scanner
// must find the same one, so line/column are right also when V8 gives none. Each case goes through
// `locateJsonError`, given V8's error or one without a position (as V8 gives for some texts), which
// makes it scan.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { locateJsonError } from '../../src/config/json-error.js';

const syntaxError = (text: string): SyntaxError => {
  try {
    JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return err;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be invalid JSON`);
};

/** A SyntaxError as V8 gives for some texts: no position, so the locator scans the text itself. */
const positionless = (): SyntaxError => new SyntaxError('Unexpected end of JSON input');

/** The line and column the locator finds by scanning `text`. */
const scanned = (text: string): { line: number; column: number } => {
  const { line, column } = locateJsonError(text, positionless());
  return { line, column };
};

/** The offset the locator's scan finds in one-line `text` (its column less one). */
const scannedOffset = (text: string): number => {
  const { line, column } = scanned(text);
  assert.equal(line, 1, JSON.stringify(text));
  return column - 1;
};

/** The location of V8's `at position N` (made up for `offset`). */
const atPosition = (text: string, offset: number): { line: number; column: number } => {
  const { line, column } = locateJsonError(text, new SyntaxError(`Unexpected token in JSON at position ${offset}`));
  return { line, column };
};

void describe('the scan for a syntax error', () => {
  void it('accepts valid JSON', { timeout: 5000 }, () => {
    // A valid value is read whole: the first error is the character after it.
    for (const text of ['{}', ' [1, -2.5e+3, "a\\u00e9\\n", true, false, null, {"k": []}] ', '"x"', '0']) {
      assert.equal(scannedOffset(`${text} x`), text.length + 1, text);
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
      assert.deepEqual(scanned(text), atPosition(text, Number(position)), JSON.stringify(text));
      if (!text.includes('\n')) assert.equal(scannedOffset(text), Number(position), JSON.stringify(text));
    }
  });

  void it('finds the unexpected token V8 only quotes', { timeout: 5000 }, () => {
    assert.equal(scannedOffset('{"a":}'), 5);
    assert.equal(scannedOffset('{"a": tru}'), 9);
    assert.equal(scannedOffset('x'), 0);
    assert.equal(scannedOffset('[1,]'), 3);
    assert.equal(scannedOffset('[.5]'), 1);
    assert.equal(scannedOffset('{"a": undefined}'), 6);
  });
});

void describe('locateJsonError', () => {
  void it('counts lines and columns from 1', { timeout: 5000 }, () => {
    assert.deepEqual(atPosition('ab\ncd\r\nef', 0), { line: 1, column: 1 });
    assert.deepEqual(atPosition('ab\ncd\r\nef', 4), { line: 2, column: 2 });
    assert.deepEqual(atPosition('ab\ncd\r\nef', 8), { line: 3, column: 2 });
  });

  void it('gives a readable message without V8 quoting the text', { timeout: 5000 }, () => {
    const text = '{\n  "key": "hunter2",\n  "x": }';
    assert.deepEqual(locateJsonError(text, syntaxError(text)), { line: 3, column: 8, message: 'unexpected character "}"' });
    const comma = '{"a":1,}';
    assert.deepEqual(locateJsonError(comma, syntaxError(comma)), { line: 1, column: 8, message: 'expected double-quoted property name' });
  });
});
