// Issue #12: a forwarded request's signature (src/cluster/signing.ts) holds only for the same
// secret, method, path, session, sender, time and body, and only within 30 s of the clock.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SKEW_MS, sign, verify, type Signed } from '../../src/cluster/signing.js';

const SECRET = 'a-cluster-secret-of-some-length';
const now = 1_800_000_000_000;
const base: Signed = { method: 'POST', path: '/mcp', session: 's-1', from: 'host:1', at: now, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' };

describe('cluster signing', () => {
  it('accepts what was signed with the same secret', { timeout: 5000 }, () => {
    assert.equal(verify(SECRET, base, sign(SECRET, base), now + 1000), undefined);
  });

  it('refuses another secret, and any changed field', { timeout: 5000 }, () => {
    const sig = sign(SECRET, base);
    assert.match(verify('another-secret-entirely', base, sig, now) ?? '', /signature/);
    for (const change of [{ method: 'DELETE' }, { path: '/mcp?x' }, { session: 's-2' }, { from: 'evil:1' }, { at: now + 1 }, { body: base.body + ' ' }]) {
      assert.match(verify(SECRET, { ...base, ...change }, sig, now) ?? '', /signature/, JSON.stringify(change));
    }
    assert.match(verify(SECRET, base, 'AAAA', now) ?? '', /signature/);
    assert.match(verify(SECRET, base, '', now) ?? '', /signature/);
  });

  it('refuses a timestamp too old, too far ahead, or missing', { timeout: 5000 }, () => {
    const sig = sign(SECRET, base);
    assert.match(verify(SECRET, base, sig, now + MAX_SKEW_MS + 1) ?? '', /timestamp/);
    assert.match(verify(SECRET, base, sig, now - MAX_SKEW_MS - 1) ?? '', /timestamp/);
    assert.match(verify(SECRET, { ...base, at: Number.NaN }, sig, now) ?? '', /timestamp/);
  });
});
