// Agent identity on the HTTP front (src/auth/auth.ts, src/rules/auth-config.ts, src/cli/token.ts;
// docs/architecture.md "Agent identity"): bearer header parsing, static token hashes, JWTs of every algorithm
// family with real keys (signed here by a small signer of our own), each refusal with its reason,
// the algorithm-confusion and `none` attacks, `auth` validation errors with their JSON paths,
// `${VAR}` expansion of the secret, the RFC 6750 challenge, and `mcpgate token`.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { constants, createHash, createHmac, generateKeyPairSync, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { authenticate, challenge, hashToken } from '../../../src/auth/auth.js';
import type { AuthOutcome } from '../../../src/auth/outcome.js';
import { OPEN_RULES, parseRules } from '../../../src/rules/load.js';
import type { Rules } from '../../../src/rules/load.js';
import { runToken } from '../../../src/cli/token.js';
import { byPath, failure, loadRulesFile } from '../../helpers/config.js';

/** The refusals and the challenge an agent reads, word for word. */
const BEARER_CHALLENGE = 'Bearer realm="mcpgate"';
const NO_TOKEN = 'no bearer token (send Authorization: Bearer <token>)';
const NOT_BEARER = 'the Authorization header is not a bearer token';

const FILE = '/srv/project/gateway-rules.json';
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const SEC = NOW / 1000;
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const SECRET_64 = 'x'.repeat(64);
const TOKEN = 'mcpg_static-token-for-tests';
const T = { timeout: 10_000 };

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const ed = generateKeyPairSync('ed25519');
const pem = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString();

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS, signed with `key` as `alg` says (or `sig` verbatim). */
function jwt(
  alg: string,
  key: KeyObject | string | undefined,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
  sig?: string,
): string {
  const input = `${b64({ alg, typ: 'JWT', ...header })}.${b64(claims)}`;
  if (sig !== undefined || key === undefined) return `${input}.${sig ?? ''}`;
  const data = Buffer.from(input);
  const hash = `sha${alg.slice(2)}`;
  let signature: Buffer;
  if (typeof key === 'string') signature = createHmac(hash, key).update(data).digest();
  else if (alg.startsWith('PS'))
    signature = sign(hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST });
  else if (alg.startsWith('ES')) signature = sign(hash, data, { key, dsaEncoding: 'ieee-p1363' });
  else signature = sign(alg === 'EdDSA' ? null : hash, data, key);
  return `${input}.${signature.toString('base64url')}`;
}

const good = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ sub: 'ci-bot', iat: SEC - 10, exp: SEC + 300, ...extra });
const rulesWith = (auth: unknown, env: NodeJS.ProcessEnv = {}): Rules =>
  parseRules(JSON.stringify({ agents: { 'ci-bot': { tokens: [hashToken(TOKEN)] } }, ...(auth === undefined ? {} : { auth }) }), FILE, [], {
    env,
  });
const bearer = (token: string): string => `Bearer ${token}`;
/** An outcome without the verified claims (compared on their own where they matter). */
function plain(outcome: AuthOutcome): AuthOutcome {
  if (!outcome.ok) return outcome;
  const { claims: _claims, ...rest } = outcome;
  return rest;
}

const reason = async (rules: Rules, token: string): Promise<string> => {
  const outcome = await authenticate(rules, bearer(token), { now: NOW });
  assert.equal(outcome.ok, false, 'expected a refusal');
  return outcome.ok ? '' : outcome.reason;
};

const HS = rulesWith({ jwt: { secret: '${JWT_SECRET}' } }, { JWT_SECRET: SECRET });
const RS = rulesWith({
  jwt: { publicKey: pem(rsa.publicKey), issuer: 'https://idp.test', audience: ['mcpgate', 'other'], algorithms: ['RS256', 'PS256'] },
});

void describe('the Authorization header', T, () => {
  void it('without bearer credentials: a reason and a challenge without error (RFC 6750 §3.1)', T, async () => {
    for (const header of [undefined, '', '   '])
      assert.deepEqual(plain(await authenticate(HS, header, { now: NOW })), { ok: false, reason: NO_TOKEN });
    assert.deepEqual(plain(await authenticate(HS, 'Basic dXNlcjpwdw==', { now: NOW })), { ok: false, reason: NOT_BEARER });
    assert.deepEqual(plain(await authenticate(HS, TOKEN, { now: NOW })), { ok: false, reason: NOT_BEARER }, 'a token without a scheme');
    assert.equal(challenge(NO_TOKEN), BEARER_CHALLENGE);
    assert.equal(challenge(NOT_BEARER), 'Bearer realm="mcpgate"');
  });

  void it('a malformed bearer header is refused without echoing it', T, async () => {
    const refuse = async (header: string): Promise<string> => {
      const outcome = plain(await authenticate(HS, header, { now: NOW }));
      return outcome.ok ? 'accepted' : outcome.reason;
    };
    assert.equal(await refuse('Bearer'), 'the Authorization header has no token after "Bearer"');
    assert.equal(await refuse('Bearer   '), 'the Authorization header has no token after "Bearer"');
    assert.equal(await refuse('Bearer abc def'), 'the bearer token contains characters a token cannot have (RFC 6750 §2.1)');
    assert.equal(await refuse(`Bearer ${'a'.repeat(9000)}`), 'the bearer token is longer than 8192 characters');
  });

  void it('the scheme is case-insensitive and surrounding spaces are ignored', T, async () => {
    assert.deepEqual(plain(await authenticate(HS, `bearer   ${TOKEN} `, { now: NOW })), { ok: true, agent: 'ci-bot', via: 'token' });
    assert.deepEqual(plain(await authenticate(HS, `BEARER ${TOKEN}`, { now: NOW })), { ok: true, agent: 'ci-bot', via: 'token' });
  });

  void it('challenge: invalid_token with an RFC 6750-safe description (no quotes, no backslashes)', T, () => {
    assert.equal(
      challenge('JWT issuer "x\\y" is not "z" — é'),
      `Bearer realm="mcpgate", error="invalid_token", error_description="JWT issuer 'x/y' is not 'z' ? ?"`,
    );
    assert.equal(challenge('unknown token'), 'Bearer realm="mcpgate", error="invalid_token", error_description="unknown token"');
  });
});

void describe('static tokens', T, () => {
  void it('a listed token names its agent; an unknown one is refused without being echoed', T, async () => {
    assert.deepEqual(plain(await authenticate(HS, bearer(TOKEN), { now: NOW })), { ok: true, agent: 'ci-bot', via: 'token' });
    const unlisted = 'unknown token (an mcpgate token that the rules do not list: revoked, or for another gateway)';
    assert.equal(await reason(HS, 'mcpg_not-listed'), unlisted);
    assert.equal(await reason(OPEN_RULES, TOKEN), unlisted);
    assert.equal(await reason(HS, 'not-listed'), 'unknown token');
  });

  void it('a JWT-shaped token is a JWT only when JWT auth is configured; a listed one is a static token first', T, async () => {
    const token = jwt('HS256', SECRET, good());
    assert.equal(
      await reason(rulesWith(undefined), token),
      'unknown token (it looks like a JWT, but JWT authentication is not configured)',
    );
    const listed = parseRules(
      JSON.stringify({ agents: { a: { tokens: [hashToken(token)] } }, auth: { jwt: { secret: '${S}' } } }),
      FILE,
      [],
      { env: { S: SECRET } },
    );
    assert.deepEqual(plain(await authenticate(listed, bearer(token), { now: NOW })), { ok: true, agent: 'a', via: 'token' });
  });
});

void describe('JWTs: each algorithm family verifies', T, () => {
  const ok = { ok: true, agent: 'ci-bot', via: 'jwt' };

  void it('HS256 with a ${VAR} secret; HS384 and HS512 with a long enough one', T, async () => {
    assert.deepEqual(plain(await authenticate(HS, bearer(jwt('HS256', SECRET, good())), { now: NOW })), ok);
    const long = rulesWith({ jwt: { secret: '${K}' } }, { K: SECRET_64 });
    for (const alg of ['HS256', 'HS384', 'HS512'])
      assert.deepEqual(plain(await authenticate(long, bearer(jwt(alg, SECRET_64, good())), { now: NOW })), ok, alg);
    assert.equal(
      await reason(HS, jwt('HS512', SECRET, good())),
      'JWT algorithm HS512 is not allowed (allowed: HS256)',
      'a 37-byte secret is too short for HS512',
    );
  });

  void it('RS256 and PS256 with a PEM public key, issuer and audience', T, async () => {
    const claims = good({ iss: 'https://idp.test', aud: ['x', 'mcpgate'] });
    assert.deepEqual(plain(await authenticate(RS, bearer(jwt('RS256', rsa.privateKey, claims)), { now: NOW })), ok);
    assert.deepEqual(plain(await authenticate(RS, bearer(jwt('PS256', rsa.privateKey, { ...claims, aud: 'other' })), { now: NOW })), ok);
  });

  void it('ES256 and ES384 (raw r||s signatures), EdDSA from a JWK, each key only with its own algorithm', T, async () => {
    const es256 = rulesWith({ jwt: { publicKey: pem(p256.publicKey) } });
    assert.deepEqual(es256.auth?.jwt?.algorithms, ['ES256']);
    assert.deepEqual(plain(await authenticate(es256, bearer(jwt('ES256', p256.privateKey, good())), { now: NOW })), ok);
    const es384 = rulesWith({ jwt: { publicKey: pem(p384.publicKey) } });
    assert.deepEqual(plain(await authenticate(es384, bearer(jwt('ES384', p384.privateKey, good())), { now: NOW })), ok);
    const der = sign('sha256', Buffer.from('x.y'), p256.privateKey).toString('base64url'); // DER, not JWS
    assert.equal(await reason(es256, jwt('ES256', undefined, good(), {}, der)), 'JWT signature does not verify');
    const eddsa = rulesWith({ jwt: { publicKey: ed.publicKey.export({ format: 'jwk' }) } });
    assert.deepEqual(plain(await authenticate(eddsa, bearer(jwt('EdDSA', ed.privateKey, good())), { now: NOW })), ok);
    assert.equal(await reason(eddsa, jwt('ES256', p256.privateKey, good())), 'JWT algorithm ES256 is not allowed (allowed: EdDSA)');
  });

  void it('defaults: an RSA key allows RS* and PS*; the agent claim can be another claim', T, async () => {
    const rules = rulesWith({ jwt: { publicKey: pem(rsa.publicKey), agentClaim: 'client_id' } });
    assert.deepEqual(rules.auth?.jwt?.algorithms, ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);
    assert.deepEqual(plain(await authenticate(rules, bearer(jwt('PS512', rsa.privateKey, good({ client_id: 'svc' }))), { now: NOW })), {
      ok: true,
      agent: 'svc',
      via: 'jwt',
    });
  });
});

void describe('JWTs: refusals', T, () => {
  const hs = async (claims: Record<string, unknown>): Promise<string> => reason(HS, jwt('HS256', SECRET, claims));

  void it('time: exp (past the skew), nbf, iat in the future; exp required unless requireExp is false', T, async () => {
    assert.equal(await hs(good({ exp: SEC - 60 })), 'JWT expired at 2026-03-01T11:59:00.000Z');
    assert.equal(
      plain(await authenticate(HS, bearer(jwt('HS256', SECRET, good({ exp: SEC - 20 }))), { now: NOW })).ok,
      true,
      'within the 30 s skew',
    );
    assert.equal(await hs(good({ nbf: SEC + 120 })), 'JWT is not valid before 2026-03-01T12:02:00.000Z');
    assert.equal(await hs(good({ iat: SEC + 3600 })), 'JWT was issued in the future (iat 2026-03-01T13:00:00.000Z)');
    assert.equal(await hs(good({ exp: '1' })), 'JWT "exp" claim is not a number of seconds');
    assert.equal(await hs({ sub: 'ci-bot' }), 'JWT has no "exp" claim; tokens must expire');
    const lax = rulesWith({ jwt: { secret: '${S}', requireExp: false, clockSkewSeconds: 0 } }, { S: SECRET });
    assert.equal(plain(await authenticate(lax, bearer(jwt('HS256', SECRET, { sub: 'ci-bot' })), { now: NOW })).ok, true);
    assert.equal(await reason(lax, jwt('HS256', SECRET, good({ exp: SEC - 1 }))), 'JWT expired at 2026-03-01T11:59:59.000Z');
  });

  void it('issuer, audience and the agent claim', T, async () => {
    const rs = async (claims: Record<string, unknown>): Promise<string> =>
      reason(RS, jwt('RS256', rsa.privateKey, good({ iss: 'https://idp.test', aud: 'mcpgate', ...claims })));
    assert.equal(await rs({ iss: 'https://evil.test' }), 'JWT issuer "https://evil.test" is not "https://idp.test"');
    assert.equal(await rs({ iss: undefined }), 'JWT has no "iss" claim (expected "https://idp.test")');
    assert.equal(await rs({ aud: 'billing' }), 'JWT audience "billing" is not one of "mcpgate", "other"');
    assert.equal(await rs({ aud: ['a', 'b'] }), 'JWT audience ["a","b"] is not one of "mcpgate", "other"');
    assert.equal(await rs({ aud: undefined }), 'JWT has no "aud" claim (expected one of "mcpgate", "other")');
    assert.equal(await rs({ aud: [1] }), 'JWT "aud" claim is not a string or an array of strings');
    assert.equal(await rs({ sub: undefined }), 'JWT has no "sub" claim');
    assert.equal(await rs({ sub: '' }), 'JWT claim "sub" is not a non-empty string (it names the agent)');
    assert.equal(await hs(good({ aud: 'billing' })), 'JWT audience "billing" is not accepted: no audience is configured for this gateway');
  });

  void it('alg none and the algorithm-confusion attack (HMAC keyed with the public key) are refused', T, async () => {
    assert.equal(await reason(RS, jwt('none', undefined, good())), 'JWT algorithm "none" (an unsigned token) is never accepted');
    assert.equal(await reason(HS, jwt('NONE', undefined, good())), 'JWT algorithm "none" (an unsigned token) is never accepted');
    const forged = jwt('HS256', pem(rsa.publicKey), good({ iss: 'https://idp.test', aud: 'mcpgate' }));
    assert.equal(await reason(RS, forged), 'JWT algorithm HS256 is not allowed (allowed: RS256, PS256)');
    assert.equal(await reason(HS, jwt('RS256', rsa.privateKey, good())), 'JWT algorithm RS256 is not allowed (allowed: HS256)');
  });

  void it('bad signatures and malformed tokens', T, async () => {
    const [h, p, s] = jwt('HS256', SECRET, good()).split('.') as [string, string, string];
    assert.equal(await reason(HS, `${h}.${b64(good({ sub: 'admin' }))}.${s}`), 'JWT signature does not verify');
    assert.equal(await reason(HS, `${h}.${p}.`), 'JWT signature does not verify');
    assert.equal(await reason(HS, jwt('HS256', 'another-secret-of-at-least-32-bytes!!', good())), 'JWT signature does not verify');
    assert.equal(
      await reason(HS, `${Buffer.from('not json').toString('base64url')}.${p}.${s}`),
      'JWT header is not base64url-encoded JSON',
    );
    assert.equal(await reason(HS, `${b64([1])}.${p}.${s}`), 'JWT header is not a JSON object');
    assert.equal(await reason(HS, `${b64({ typ: 'JWT' })}.${p}.${s}`), 'JWT header has no "alg"');
    assert.equal(
      await reason(HS, jwt('HS256', SECRET, good(), { crit: ['exp'] })),
      'JWT header lists "crit" extensions, which mcpgate does not support (RFC 7515 §4.1.11)',
    );
    const array = `${h}.${Buffer.from('[1]').toString('base64url')}`;
    assert.equal(
      await reason(HS, `${array}.${createHmac('sha256', SECRET).update(array).digest('base64url')}`),
      'JWT payload is not a JSON object',
    );
  });
});

void describe('JWTs: attacks jose refuses (RFC 8725)', T, () => {
  const ES = rulesWith({ jwt: { publicKey: pem(p256.publicKey) } });
  const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const attackerJwk = attacker.publicKey.export({ format: 'jwk' });

  void it('an embedded jwk, jku or x5u never supplies the key: the configured key decides', T, async () => {
    for (const header of [
      { jwk: attackerJwk },
      { jku: 'http://127.0.0.1:9/keys.json', kid: 'k' },
      { x5u: 'http://127.0.0.1:9/cert.pem' },
      { x5c: ['AAAA'] },
    ]) {
      assert.equal(
        await reason(ES, jwt('ES256', attacker.privateKey, good(), header)),
        'JWT signature does not verify',
        JSON.stringify(header),
      );
    }
    assert.equal(
      plain(await authenticate(ES, bearer(jwt('ES256', p256.privateKey, good(), { jwk: attackerJwk })), { now: NOW })).ok,
      true,
      'the real key still verifies',
    );
  });

  void it('bad ECDSA signatures: zero r and s (CVE-2022-21449), truncated, DER-encoded, another curve', T, async () => {
    const [h, p] = jwt('ES256', p256.privateKey, good()).split('.') as [string, string];
    assert.equal(await reason(ES, `${h}.${p}.${Buffer.alloc(64).toString('base64url')}`), 'JWT signature does not verify');
    const real = jwt('ES256', p256.privateKey, good()).split('.')[2] ?? '';
    assert.equal(
      await reason(ES, `${h}.${p}.${Buffer.from(real, 'base64url').subarray(0, 63).toString('base64url')}`),
      'JWT signature does not verify',
    );
    const der = sign('sha256', Buffer.from(`${h}.${p}`), p256.privateKey).toString('base64url');
    assert.equal(await reason(ES, `${h}.${p}.${der}`), 'JWT signature does not verify');
    assert.equal(await reason(ES, jwt('ES384', p384.privateKey, good())), 'JWT algorithm ES384 is not allowed (allowed: ES256)');
  });

  void it('alg none in any case, empty signature, and HMAC keyed with the PEM or JWK text of the public key', T, async () => {
    for (const alg of ['none', 'None', 'nOnE'])
      assert.equal(await reason(ES, jwt(alg, undefined, good())), 'JWT algorithm "none" (an unsigned token) is never accepted');
    const claims = good();
    assert.equal(await reason(ES, jwt('HS256', pem(p256.publicKey), claims)), 'JWT algorithm HS256 is not allowed (allowed: ES256)');
    assert.equal(
      await reason(ES, jwt('HS256', JSON.stringify(p256.publicKey.export({ format: 'jwk' })), claims)),
      'JWT algorithm HS256 is not allowed (allowed: ES256)',
    );
  });

  void it('crit, even naming a known extension; expired, not yet valid, wrong audience or issuer', T, async () => {
    assert.equal(
      await reason(ES, jwt('ES256', p256.privateKey, good(), { crit: ['b64'], b64: false })),
      'JWT header lists "crit" extensions, which mcpgate does not support (RFC 7515 §4.1.11)',
    );
    const strict = rulesWith({
      jwt: { publicKey: pem(p256.publicKey), issuer: 'https://idp.test', audience: 'https://gw.test/mcp', clockSkewSeconds: 0 },
    });
    const es = async (claims: Record<string, unknown>): Promise<string> =>
      reason(strict, jwt('ES256', p256.privateKey, good({ iss: 'https://idp.test', aud: 'https://gw.test/mcp', ...claims })));
    assert.equal(await es({ exp: SEC }), 'JWT expired at 2026-03-01T12:00:00.000Z');
    assert.equal(await es({ nbf: SEC + 1 }), 'JWT is not valid before 2026-03-01T12:00:01.000Z');
    assert.equal(await es({ aud: 'https://gw.test/mcp/other' }), 'JWT audience "https://gw.test/mcp/other" is not "https://gw.test/mcp"');
    assert.equal(await es({ iss: 'https://idp.test/' }), 'JWT issuer "https://idp.test/" is not "https://idp.test"');
  });
});

void describe('auth configuration', T, () => {
  const bad = async (auth: unknown, env: NodeJS.ProcessEnv = {}): Promise<Record<string, string>> =>
    byPath((await failure(() => rulesWith(auth, env))).issues);

  void it('compiles the key once; no auth means no JWTs', T, () => {
    assert.equal(rulesWith(undefined).auth, undefined);
    assert.equal(OPEN_RULES.auth, undefined);
    const jwtConfig = HS.auth?.jwt;
    assert.ok(jwtConfig !== undefined && Object.isFrozen(HS.auth) && Object.isFrozen(jwtConfig));
    assert.equal(jwtConfig.key.type, 'secret');
    assert.deepEqual(HS.warnings, []);
    assert.ok(!HS.auth?.jwt?.keyDescription.includes(SECRET) && HS.auth?.jwt?.keyDescription === 'a 37-byte secret');
    const rs = RS.auth?.jwt;
    assert.deepEqual(
      {
        key: rs?.keyDescription,
        algorithms: [...(rs?.algorithms ?? [])],
        issuer: rs?.issuer,
        audience: [...(rs?.audience ?? [])],
        agent_claim: rs?.agentClaim,
        clock_skew_seconds: rs?.clockSkewSeconds,
        require_exp: rs?.requireExp,
      },
      {
        key: 'an RSA 2048-bit public key',
        algorithms: ['RS256', 'PS256'],
        issuer: 'https://idp.test',
        audience: ['mcpgate', 'other'],
        agent_claim: 'sub',
        clock_skew_seconds: 30,
        require_exp: true,
      },
    );
  });

  void it('key errors: none, two, bad PEM, a private key, short secrets and weak or unusable keys', T, async () => {
    const k1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey;
    assert.deepEqual(await bad({ jwt: {} }), {
      '$.auth.jwt': 'expected one of "secret" (for HS256/384/512), "publicKey" or "publicKeyFile" (for RS*, PS*, ES*, EdDSA)',
    });
    assert.deepEqual(await bad({ jwt: { secret: '${S}', publicKey: pem(rsa.publicKey) } }, { S: SECRET }), {
      '$.auth.jwt': '"secret" and "publicKey" are both set; give exactly one key',
    });
    const garbage = await bad({ jwt: { publicKey: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' } });
    assert.match(garbage['$.auth.jwt.publicKey'] ?? '', /^publicKey is not a usable PEM public key \("-----BEGIN PUBLIC KEY-----" …\): /);
    const priv = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    assert.deepEqual(await bad({ jwt: { publicKey: priv } }), {
      '$.auth.jwt.publicKey': 'publicKey holds a private key; give the public key only (the gateway never needs the private half)',
    });
    assert.deepEqual(await bad({ jwt: { secret: '${S}' } }, { S: 'short' }), {
      '$.auth.jwt.secret': 'the secret is 5 bytes; HMAC keys need at least 32 bytes (RFC 7518 §3.2)',
    });
    assert.deepEqual(await bad({ jwt: { publicKey: pem(k1024) } }), {
      '$.auth.jwt.publicKey': 'the RSA key is 1024 bits; JWT signatures need at least 2048 (RFC 7518 §3.3)',
    });
    assert.deepEqual(await bad({ jwt: { publicKey: pem(k1) } }), {
      '$.auth.jwt.publicKey': 'an EC key on curve secp256k1 cannot verify JWTs; ES256, ES384 and ES512 need P-256, P-384 and P-521',
    });
    assert.deepEqual(await bad({ jwt: { publicKey: { ...ed.privateKey.export({ format: 'jwk' }) } } }), {
      '$.auth.jwt.publicKey': 'publicKey is a private JWK (it has "d"); give the public key only',
    });
  });

  void it(
    'algorithm errors: unknown, none, HMAC with a public key, a public-key algorithm with a secret, HS512 with a short secret',
    T,
    async () => {
      assert.deepEqual(await bad({ jwt: { publicKey: pem(rsa.publicKey), algorithms: ['RS256', 'RS999', 'none', 'HS256', 'ES256'] } }), {
        '$.auth.jwt.algorithms[1]':
          'unknown algorithm "RS999" (known: HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA)',
        '$.auth.jwt.algorithms[2]': 'the "none" algorithm (an unsigned token) is never accepted',
        '$.auth.jwt.algorithms[3]':
          'algorithm HS256 cannot be verified with an RSA 2048-bit public key: HMAC needs "secret"; a public key never verifies HMAC tokens',
        '$.auth.jwt.algorithms[4]':
          'algorithm ES256 cannot be verified with an RSA 2048-bit public key: it fits RS256, RS384, RS512, PS256, PS384, PS512',
      });
      assert.deepEqual(await bad({ jwt: { secret: '${S}', algorithms: ['RS256', 'HS512'] } }, { S: SECRET }), {
        '$.auth.jwt.algorithms[0]': 'algorithm RS256 cannot be verified with a 37-byte secret: it fits HS256',
        '$.auth.jwt.algorithms[1]':
          'algorithm HS512 cannot be verified with a 37-byte secret: the secret is too short for it (RFC 7518 §3.2: 64 bytes or more)',
      });
      assert.deepEqual(await bad({ jwt: { secret: '${S}', algorithms: [] } }, { S: SECRET }), {
        '$.auth.jwt.algorithms':
          'expected a non-empty array of algorithm names (HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA), got an empty array',
      });
    },
  );

  void it('other settings: types, ranges, unknown keys (errors in jwt, warnings in auth)', T, async () => {
    const { issues, warnings } = await failure(() =>
      rulesWith(
        {
          jwt: { secret: '${S}', issuer: '', audience: ['ok', 3], agentClaim: 7, clockSkewSeconds: 9999, requireExp: 'no', audiance: 'x' },
          jwks: 'x',
        },
        { S: SECRET },
      ),
    );
    assert.deepEqual(byPath(issues), {
      '$.auth.jwt.audiance':
        'unknown key "audiance" in auth.jwt (known: secret, publicKey, publicKeyFile, algorithms, issuer, audience, agentClaim, clockSkewSeconds, requireExp, requireClaims)',
      '$.auth.jwt.issuer': 'expected a non-empty string, got ""',
      '$.auth.jwt.audience[1]': 'expected a non-empty string, got 3',
      '$.auth.jwt.agentClaim': 'expected a non-empty string, got 7',
      '$.auth.jwt.clockSkewSeconds': 'expected a whole number of seconds from 0 to 600, got 9999',
      '$.auth.jwt.requireExp': 'expected true or false, got a string',
    });
    assert.deepEqual(byPath(warnings), { '$.auth.jwks': 'unknown key "jwks" in auth is ignored' });
    assert.deepEqual(await bad({ jwt: 'x' }), {
      '$.auth.jwt': 'expected an object with "secret", "publicKey" or "publicKeyFile", got a string',
    });
  });

  void it('${VAR} in the secret: an unset variable is an error at its path, and no message shows the secret', T, async () => {
    assert.deepEqual(await bad({ jwt: { secret: '${JWT_SECRET}' } }), {
      '$.auth.jwt.secret': 'environment variable JWT_SECRET is not set',
    });
    const literal = rulesWith({ jwt: { secret: SECRET } });
    assert.deepEqual(byPath(literal.warnings), {
      '$.auth.jwt.secret':
        'the secret is written in the rules file itself; prefer "${JWT_SECRET}" with the variable set, so the file holds no secret',
    });
    const { message } = await failure(() => rulesWith({ jwt: { secret: 'tiny-literal-secret', algorithms: 'HS256' } }));
    assert.ok(!message.includes('tiny-literal-secret'), message);
    assert.equal(
      plain(
        await authenticate(
          rulesWith({ jwt: { secret: '${A}${B}' } }, { A: SECRET.slice(0, 20), B: SECRET.slice(20) }),
          bearer(jwt('HS256', SECRET, good())),
          { now: NOW },
        ),
      ).ok,
      true,
    );
  });
});

void describe('publicKeyFile read with the rules file, ${VAR} from the env (src/reload.ts reads the files)', T, () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-auth-'));
    await writeFile(path.join(dir, 'idp.pem'), pem(ed.publicKey));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('reads the key relative to the rules file, expanding ${VAR} from the env given', T, async () => {
    const file = path.join(dir, 'gateway-rules.json');
    await writeFile(
      file,
      JSON.stringify({ agents: {}, defaults: { deny_on_missing_agent: false }, auth: { jwt: { publicKeyFile: '${KEY_NAME}' } } }),
    );
    const rules = await loadRulesFile(file, [], { KEY_NAME: 'idp.pem' });
    assert.deepEqual(plain(await authenticate(rules, bearer(jwt('EdDSA', ed.privateKey, good())), { now: NOW })), {
      ok: true,
      agent: 'ci-bot',
      via: 'jwt',
    });
    const { issues } = await failure(() => loadRulesFile(file, [], { KEY_NAME: 'missing.pem' }));
    assert.deepEqual(byPath(issues), {
      '$.auth.jwt.publicKeyFile': `cannot read the key file ${path.join(dir, 'missing.pem')}: no such file`,
    });
  });
});

void describe('publicKeyFile compiled from text: the key comes through the reader given, no file', T, () => {
  const withKeyFile = (keyFile: string, options: Parameters<typeof parseRules>[3]): Rules =>
    parseRules(
      JSON.stringify({ agents: {}, defaults: { deny_on_missing_agent: false }, auth: { jwt: { publicKeyFile: keyFile } } }),
      FILE,
      [],
      options,
    );

  void it('reads the key through readKeyFile, at the path resolved beside the rules file after ${VAR}', T, async () => {
    const asked: string[] = [];
    const rules = withKeyFile('keys/${IDP}.pem', { env: { IDP: 'idp' }, readKeyFile: (file) => (asked.push(file), pem(ed.publicKey)) });
    assert.deepEqual(asked, ['/srv/project/keys/idp.pem']);
    assert.equal(rules.auth?.jwt?.keyDescription, 'an Ed25519 public key');
    assert.deepEqual(plain(await authenticate(rules, bearer(jwt('EdDSA', ed.privateKey, good())), { now: NOW })), {
      ok: true,
      agent: 'ci-bot',
      via: 'jwt',
    });
    assert.equal(await reason(rules, jwt('EdDSA', generateKeyPairSync('ed25519').privateKey, good())), 'JWT signature does not verify');
  });

  void it('with no reader a key file is an error that says what to do, and nothing is read', T, async () => {
    const { issues } = await failure(() => withKeyFile('idp.pem', {}));
    assert.deepEqual(byPath(issues), {
      '$.auth.jwt.publicKeyFile':
        'cannot read the key file /srv/project/idp.pem: these rules are compiled from text alone, with no file reader; give the key itself as "publicKey"',
    });
  });

  void it("the reader's failure is the file's error, named by its code; what it returns is checked like any PEM", T, async () => {
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const refused = await failure(() =>
      withKeyFile('idp.pem', {
        readKeyFile: () => {
          throw denied;
        },
      }),
    );
    assert.deepEqual(byPath(refused.issues), { '$.auth.jwt.publicKeyFile': 'cannot read the key file /srv/project/idp.pem: EACCES' });
    const priv = ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const leaked = await failure(() => withKeyFile('idp.pem', { readKeyFile: () => priv }));
    assert.deepEqual(byPath(leaked.issues), {
      '$.auth.jwt.publicKeyFile':
        'the key file /srv/project/idp.pem holds a private key; give the public key only (the gateway never needs the private half)',
    });
  });
});

void describe('mcpgate token', T, () => {
  const run = (agent: string): { code: number; out: string; err: string } => {
    let out = '';
    let err = '';
    const code = runToken(agent, { out: (t) => (out += t), err: (t) => (err += t) });
    return { code, out, err };
  };

  void it('prints a new token on stdout and, on stderr, the hash line that makes it authenticate', T, async () => {
    const { code, out, err } = run('ci-bot');
    assert.equal(code, 0);
    const token = out.trim();
    assert.match(token, /^mcpg_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(run('ci-bot').out.trim(), token, 'a new token each time');
    const line = /^ {2}("tokens": \["sha256:[0-9a-f]{64}"\])$/m.exec(err)?.[1];
    assert.ok(line !== undefined, err);
    assert.equal(line, `"tokens": ["sha256:${createHash('sha256').update(token).digest('hex')}"]`);
    assert.match(err, /shown only this once/);
    assert.ok(!err.includes(token), 'the token is not repeated on stderr');
    const rules = parseRules(`{"agents": {"ci-bot": {${line}}}}`, FILE, []);
    assert.deepEqual(plain(await authenticate(rules, bearer(token), { now: NOW })), { ok: true, agent: 'ci-bot', via: 'token' });
  });

  void it('refuses an empty AGENT with exit code 2 and prints no token', T, () => {
    const { code, out, err } = run(' ');
    assert.equal(code, 2);
    assert.equal(out, '');
    assert.match(err, /AGENT must be a non-empty agent id/);
  });
});
