// `requireClaims` (auth.jwt, and each OAuth issuer): a token without one of the listed claims is
// refused. Restrictions written as grants (`deny`, `approve`, `limits` under a grant's `when`) apply
// only to tokens whose claims meet the grant, so a token minted without the claim a grant reads
// would escape them; requiring the claim closes that. Dotted names reach nested claims, as grants' do.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { authenticate } from '../../../src/auth/auth.js';
import { parseRules } from '../../../src/rules/load.js';
import { GatewayError } from '../../../src/errors.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const SEC = NOW / 1000;
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

function hs256(claims: Record<string, unknown>): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
}

const rules = (requireClaims: unknown) =>
  parseRules(
    JSON.stringify({
      agents: { '*': {} },
      grants: { contractors: { when: { groups: 'contractors' }, deny: { servers: ['prod'] } } },
      auth: { jwt: { secret: SECRET, requireClaims } },
    }),
    '/rules.json',
    ['prod'],
  );

describe('auth: requireClaims', () => {
  const claims = { sub: 'alice', iat: SEC - 10, exp: SEC + 300 };

  it('refuses a token without a required claim, naming it, and accepts one with it', async () => {
    const r = rules(['groups', 'realm_access.roles']);
    const without = await authenticate(r, `Bearer ${hs256(claims)}`, { now: NOW });
    assert.equal(without.ok, false);
    assert.match(without.ok ? '' : without.reason, /no "groups" claim, which this gateway requires/);
    const nested = await authenticate(r, `Bearer ${hs256({ ...claims, groups: [] })}`, { now: NOW });
    assert.match(nested.ok ? '' : nested.reason, /no "realm_access\.roles" claim/);
    const whole = await authenticate(r, `Bearer ${hs256({ ...claims, groups: ['eng'], realm_access: { roles: [] } })}`, { now: NOW });
    assert.equal(whole.ok, true);
  });

  it('requires nothing by default', async () => {
    const outcome = await authenticate(rules(undefined), `Bearer ${hs256(claims)}`, { now: NOW });
    assert.equal(outcome.ok, true);
  });

  it('refuses a malformed list at load, naming its path', () => {
    assert.throws(
      () => rules('groups'),
      (err: unknown) => err instanceof GatewayError && /auth\.jwt\.requireClaims.*list of at most 32 claim names/s.test(err.message),
    );
  });
});
