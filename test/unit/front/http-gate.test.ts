// The gate's pure checks (src/front/http/exchange.ts): which Host values are served on a loopback and on
// a non-loopback bind, and which repeated headers are found.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostAllowed, repeatedHeader } from '../../../src/front/http/exchange.js';

void describe('hostAllowed', { timeout: 5000 }, () => {
  const none: ReadonlySet<string> = new Set();

  void it('on loopback serves loopback names with any port and nothing else unless allowed', { timeout: 5000 }, () => {
    for (const host of ['localhost', 'localhost:8808', '127.0.0.1:8808', '127.1.2.3', '[::1]:8808', 'LOCALHOST:1', undefined]) {
      assert.equal(hostAllowed(host, none, true), true, String(host));
    }
    for (const host of [
      'attacker.example:8808',
      'localhost.attacker.example',
      '10.0.0.1:8808',
      '[fe80::1]:80',
      '',
      'local host',
      'localhost:80:80',
      '127.0.0.1.nip.io',
    ]) {
      assert.equal(hostAllowed(host, none, true), false, host);
    }
  });

  void it('off loopback also serves IP literals, but names only when allowed', { timeout: 5000 }, () => {
    for (const host of ['10.0.0.1:8808', '192.168.1.5', '[2001:db8::1]:8808', 'localhost:8808'])
      assert.equal(hostAllowed(host, none, false), true, host);
    assert.equal(hostAllowed('gateway.internal:8808', none, false), false);
    assert.equal(hostAllowed('gateway.internal:8808', new Set(['gateway.internal']), false), true, 'a bare name allows any port');
    assert.equal(hostAllowed('gateway.internal:8808', new Set(['gateway.internal:9000']), false), false, 'name:port allows that port only');
    assert.equal(hostAllowed('gateway.internal:9000', new Set(['gateway.internal:9000']), false), true);
    assert.equal(hostAllowed('anything.example', new Set(['*']), true), true, '* turns the check off');
  });
});

void describe('repeatedHeader', { timeout: 5000 }, () => {
  void it(
    'finds Host, Authorization, Origin, Mcp-Session-Id and X-Mcpgate-Agent sent twice, whatever their case',
    { timeout: 5000 },
    () => {
      assert.equal(repeatedHeader(['Host', 'a', 'Authorization', 'Bearer x', 'authorization', 'Bearer y']), 'authorization');
      assert.equal(repeatedHeader(['host', 'a', 'HOST', 'b']), 'host');
      assert.equal(repeatedHeader(['Mcp-Session-Id', '1', 'mcp-session-id', '2']), 'mcp-session-id');
      assert.equal(repeatedHeader(['Accept', 'a', 'accept', 'b', 'Cookie', 'x', 'cookie', 'y']), undefined, 'others may repeat');
      assert.equal(repeatedHeader(['Host', 'a', 'Authorization', 'Bearer x', 'Origin', 'o']), undefined);
    },
  );
});
