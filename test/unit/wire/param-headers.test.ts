// wire/era.ts paramHeaders: which of a modern agent's headers go on to a modern HTTP server
// (SEP-2243's Mcp-Param-* headers), and the bounds on them.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paramHeaders } from '../../../src/wire/era.js';

/** Most Mcp-Param-* headers passed on from one request. */
const MAX_PARAM_HEADERS = 32;

describe('paramHeaders', () => {
  it('keeps every Mcp-Param-* header, known or not, and nothing else', () => {
    assert.deepEqual(
      paramHeaders({
        'mcp-param-region': 'eu',
        'mcp-param-x-odd': '=?base64?w6k=?=',
        'mcp-name': 't',
        authorization: 'Bearer s',
        'mcp-session-id': 'x',
      }),
      {
        'mcp-param-region': 'eu',
        'mcp-param-x-odd': '=?base64?w6k=?=',
      },
    );
  });

  it('is undefined when there are none (the hot path allocates nothing)', () => {
    assert.equal(paramHeaders({ 'content-type': 'application/json', 'mcp-method': 'tools/call' }), undefined);
  });

  it('refuses more than the limit, saying so', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_PARAM_HEADERS + 1 }, (_, i) => [`mcp-param-p${i}`, String(i)]));
    assert.equal(paramHeaders(many), `more than ${MAX_PARAM_HEADERS} Mcp-Param-* headers`);
    assert.equal(Object.keys(paramHeaders(Object.fromEntries(Object.entries(many).slice(1))) as object).length, MAX_PARAM_HEADERS);
  });
});
