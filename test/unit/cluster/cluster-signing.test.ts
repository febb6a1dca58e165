// A forwarded request's signature (src/cluster/signing.ts) holds only for the same
// secret, method, path, session, sender, receiver, forward id, time, identity and body digest, and only within 30 s of
// the clock; a record read from Redis holds only for the same secret, kind, key and fields.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeIdentity,
  digest,
  encodeIdentity,
  MAX_SKEW_MS,
  sign,
  signRecord,
  verify,
  verifyRecord,
} from '../../../src/cluster/signing.js';

/** What a signature covers. */
type Signed = Parameters<typeof sign>[1];

const SECRET = 'a-cluster-secret-of-some-length';
const now = 1_800_000_000_000;
const identity = encodeIdentity({ agent: 'alice', identified: true, claims: { sub: 'alice', groups: ['a'] } });
const base: Signed = {
  method: 'POST',
  path: '/mcp',
  session: 's-1',
  from: 'host:1',
  to: 'host:2',
  id: '0123456789abcdef.1',
  at: now,
  identity,
  digest: digest('{"jsonrpc":"2.0","id":1,"method":"ping"}'),
};

describe('cluster signing', () => {
  it('accepts what was signed with the same secret', { timeout: 5000 }, () => {
    assert.equal(verify(SECRET, base, sign(SECRET, base), now + 1000), undefined);
    assert.deepEqual(decodeIdentity(identity), { agent: 'alice', identified: true, claims: { sub: 'alice', groups: ['a'] } });
  });

  it('refuses another secret, and any changed field', { timeout: 5000 }, () => {
    const sig = sign(SECRET, base);
    assert.match(verify('another-secret-entirely', base, sig, now) ?? '', /signature/);
    const bob = encodeIdentity({ agent: 'bob', identified: true, claims: undefined });
    for (const change of [
      { method: 'DELETE' },
      { path: '/mcp?x' },
      { session: 's-2' },
      { from: 'evil:1' },
      { to: 'host:3' },
      { id: '0123456789abcdef.2' },
      { at: now + 1 },
      { identity: bob },
      { digest: digest('other') },
    ]) {
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

  it('reads no identity from a header that is not one', { timeout: 5000 }, () => {
    for (const header of [
      '',
      '!!',
      Buffer.from('[]').toString('base64url'),
      Buffer.from('{"agent":""}').toString('base64url'),
      Buffer.from('{"agent":"a","identified":true,"claims":[1]}').toString('base64url'),
    ]) {
      assert.equal(decodeIdentity(header), undefined, header);
    }
  });

  it('a record holds only under its kind, key and secret, with every field as signed', { timeout: 5000 }, () => {
    const fields = { id: 'host:1', address: 'http://10.0.0.1:8080', sessions: '2', heartbeat: String(now) };
    const record = { ...fields, sig: signRecord(SECRET, 'worker', 'host:1', fields) };
    assert.equal(verifyRecord(SECRET, 'worker', 'host:1', record), true);
    assert.equal(verifyRecord(SECRET, 'worker', 'host:2', record), false);
    assert.equal(verifyRecord(SECRET, 'session', 'host:1', record), false);
    assert.equal(verifyRecord('another-secret-entirely', 'worker', 'host:1', record), false);
    assert.equal(verifyRecord(SECRET, 'worker', 'host:1', { ...record, address: 'http://evil:80' }), false);
    assert.equal(verifyRecord(SECRET, 'worker', 'host:1', { ...record, extra: 'x' }), false);
    assert.equal(verifyRecord(SECRET, 'worker', 'host:1', fields), false);
  });
});
