// wire/encoded.ts: a message in pieces (a cached list's bytes between its head and tail) joins to the
// same JSON as encoding it whole.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeResultParts, partsToText, sameBytes } from '../../../src/wire/encoded.js';
import { encodeResult } from '../../../src/wire/jsonrpc.js';

void describe('encoded parts', { timeout: 5000 }, () => {
  void it('a result in parts is the same JSON as the result encoded whole, for any id', { timeout: 5000 }, () => {
    const result = { tools: [{ name: 'ü__t', description: 'naïve — ☃' }] };
    const bytes = Buffer.from(JSON.stringify(result));
    for (const id of [1, 0, 'abc', 'é "q" \\ \u2028']) {
      const parts = encodeResultParts(JSON.stringify(id), [bytes]);
      assert.equal(parts[1], bytes, 'the cached bytes are written as they are, not copied');
      assert.equal(partsToText(parts), encodeResult(id, result));
    }
  });
});

void describe('sameBytes', { timeout: 5000 }, () => {
  void it('compares what the pieces join to, however they are cut', { timeout: 5000 }, () => {
    const b = (text: string): Buffer => Buffer.from(text);
    const shared = b('{"tools":[');
    assert.equal(sameBytes([shared, b('1')], [shared, b('1')]), true, 'equal pieces, not the same objects');
    assert.equal(sameBytes([shared, b('1')], [shared, b('2')]), false);
    assert.equal(sameBytes([b('ab'), b('c')], [b('a'), b('bc')]), true, 'cut elsewhere');
    assert.equal(sameBytes([b('ab'), b('c')], [b('ab')]), false);
    assert.equal(sameBytes([b('ab'), b('c')], [b('a'), b('bd')]), false);
  });
});
