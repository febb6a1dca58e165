// The sealed requestState of modern agents' input-required results (gateway/modern/request-state.ts):
// unreadable, bound to the agent and an expiry, refused when altered or sealed under another key.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestStateSealer } from '../../../src/gateway/modern/request-state.js';
import { parseRequestStateKey } from '../../../src/wire/era.js';
import { requestStateKeyOf } from '../../../src/cli/cluster-secret.js';

describe('requestState sealing', () => {
  const sealer = new RequestStateSealer();
  const fields = { handle: 'h-123', expires: Date.now() + 60_000 };

  it('opens for the agent it was sealed for, and reveals nothing in the clear', () => {
    const state = sealer.seal('alice', fields);
    assert.deepEqual(sealer.open('alice', state), fields);
    assert.ok(!Buffer.from(state, 'base64url').toString('latin1').includes('h-123'));
  });

  it(
    'in a cluster: names the worker holding the call, and opens on any worker with the key the cluster secret gives',
    { timeout: 5000 },
    () => {
      const key = requestStateKeyOf('a-cluster-secret-of-some-length');
      assert.equal(key.length, 32);
      assert.deepEqual(requestStateKeyOf('a-cluster-secret-of-some-length'), key);
      assert.notDeepEqual(requestStateKeyOf('another-cluster-secret-entirely'), key);
      const state = new RequestStateSealer(key, 'host:1').seal('alice', fields);
      assert.deepEqual(new RequestStateSealer(key, 'host:2').open('alice', state), { ...fields, holder: 'host:1' });
      assert.equal(
        typeof new RequestStateSealer(requestStateKeyOf('another-cluster-secret-entirely'), 'host:2').open('alice', state),
        'string',
      );
    },
  );

  it('refuses another agent, an altered state, another key, an expired one and garbage', () => {
    const state = sealer.seal('alice', fields);
    assert.equal(typeof sealer.open('bob', state), 'string');
    const bytes = Buffer.from(state, 'base64url');
    for (const at of [0, 13, bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered.writeUInt8(altered.readUInt8(at) ^ 0x40, at);
      assert.equal(typeof sealer.open('alice', altered.toString('base64url')), 'string', `byte ${at}`);
    }
    assert.equal(typeof new RequestStateSealer().open('alice', state), 'string');
    const expired = sealer.open('alice', sealer.seal('alice', { handle: 'x', expires: Date.now() - 1 }));
    assert.ok(typeof expired === 'string' && expired.includes('expired'));
    for (const junk of ['', 'not base64!', 'AAAA', 'x'.repeat(5000)]) assert.equal(typeof sealer.open('alice', junk), 'string');
  });

  it('takes a configured key of 32 bytes, hex or base64, and refuses any other', () => {
    const hex = 'ab'.repeat(32);
    const a = new RequestStateSealer(parseRequestStateKey(hex));
    const b = new RequestStateSealer(parseRequestStateKey(Buffer.from(hex, 'hex').toString('base64')));
    assert.deepEqual(b.open('alice', a.seal('alice', fields)), fields, 'two gateways with one key understand each other');
    assert.equal(parseRequestStateKey(undefined), undefined);
    assert.throws(() => parseRequestStateKey('abcd'), /32 bytes/);
  });
});
