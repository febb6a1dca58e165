// OAuth issuers in the rules' `auth.oauth` (src/auth/auth.ts, src/auth/issuers.ts, src/rules/auth-config.ts):
// an in-process issuer on loopback serves its metadata and JWKS (real HTTP, counted), tokens are signed
// with jose: the agent from the configured claim, the audience bound to mcpgate's resource URI, the
// required scopes (403), a rotated key picked up by a refresh on an unknown `kid`, that refresh rate-
// limited, an issuer whose keys cannot be had (503, remembered briefly), the metadata's issuer check,
// the resource metadata and challenge, and the validation of the section.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { authenticate, challenge, resourceMetadata, resourceMetadataUrl } from '../../src/auth/auth.js';
import type { AuthOutcome } from '../../src/auth/outcome.js';
import { IssuerKeys } from '../../src/auth/issuers.js';
import { parseRules, type Rules } from '../../src/rules/load.js';
import { byPath, failure } from '../helpers/config.js';

const T = { timeout: 20_000 };
const FILE = '/srv/project/gateway-rules.json';
const RESOURCE = 'https://gw.test/mcp';

interface Key {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}
async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** An issuer on loopback: `/.well-known/openid-configuration` and `/jwks` (its `published` keys). */
class Issuer {
  published: Key[] = [];
  jwksFetches = 0;
  metadataIssuer: string | undefined;
  private readonly server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ issuer: this.metadataIssuer ?? this.url, jwks_uri: `${this.url}/jwks` }));
    } else if (req.url === '/jwks') {
      this.jwksFetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: this.published.map((k) => k.jwk) }));
    } else res.writeHead(404).end();
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  sign(key: Key, claims: Record<string, unknown>, options: { exp?: number; alg?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: this.url,
      aud: RESOURCE,
      sub: 'alice',
      scope: 'openid mcp',
      iat: now,
      exp: options.exp ?? now + 300,
      ...claims,
    })
      .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: key.kid, typ: 'at+jwt' })
      .sign(key.privateKey);
  }
}

const rulesFor = (oauth: unknown, extra: Record<string, unknown> = {}): Rules =>
  parseRules(JSON.stringify({ agents: {}, defaults: { deny_on_missing_agent: false }, auth: { oauth, ...extra } }), FILE, [], { env: {} });

void describe('OAuth issuers: JWT access tokens by the issuer JWKS', T, () => {
  const idp = new Issuer();
  let k1: Key;
  let k2: Key;
  let rules: Rules;
  const issuers = new IssuerKeys();
  // The outcome without its claims (the first test looks at those).
  const check = async (token: string, r: Rules = rules, resource = RESOURCE): Promise<AuthOutcome> => {
    const outcome = await authenticate(r, `Bearer ${token}`, { issuers, resource });
    if (!outcome.ok) return outcome;
    const { claims: _claims, ...rest } = outcome;
    return rest;
  };

  before(async () => {
    await idp.start();
    [k1, k2] = await Promise.all([newKey('k1'), newKey('k2')]);
    idp.published = [k1];
    rules = rulesFor({ issuer: idp.url, scopes: ['mcp'], agentClaim: 'email' }, { resource: RESOURCE });
  });
  after(() => idp.stop());

  void it('a token for the resource URI names the agent by the configured claim; the JWKS is fetched once', T, async () => {
    assert.deepEqual(await check(await idp.sign(k1, { email: 'alice@example.com' })), {
      ok: true,
      agent: 'alice@example.com',
      via: 'oauth',
    });
    assert.deepEqual(await check(await idp.sign(k1, { email: 'bob@example.com', aud: ['other', RESOURCE] })), {
      ok: true,
      agent: 'bob@example.com',
      via: 'oauth',
    });
    assert.equal(idp.jwksFetches, 1);
    // The verified claims come with the outcome, for the rules' grants.
    const full = await authenticate(rules, `Bearer ${await idp.sign(k1, { email: 'c@example.com', groups: ['eng'] })}`, {
      issuers,
      resource: RESOURCE,
    });
    assert.ok(full.ok);
    assert.deepEqual(full.claims?.groups, ['eng']);
  });

  void it('refused: another audience (RFC 8707), expired, no agent claim, HMAC, an unknown issuer', T, async () => {
    const why = async (token: string): Promise<string> => {
      const outcome = await check(token);
      return outcome.ok ? 'accepted' : outcome.reason;
    };
    assert.equal(
      await why(await idp.sign(k1, { email: 'a@x', aud: 'https://other.test/mcp' })),
      'JWT audience "https://other.test/mcp" is not "https://gw.test/mcp"',
    );
    assert.match(await why(await idp.sign(k1, { email: 'a@x' }, { exp: Math.floor(Date.now() / 1000) - 3600 })), /^JWT expired at /);
    assert.equal(await why(await idp.sign(k1, {})), 'JWT has no "email" claim');
    const machine = rulesFor({ issuer: idp.url }, { resource: RESOURCE });
    assert.deepEqual(
      await check(await idp.sign(k1, { sub: undefined, client_id: 'ci-runner' }), machine),
      { ok: true, agent: 'ci-runner', via: 'oauth' },
      'no sub: the client is the agent',
    );
    const hmac = await new SignJWT({ iss: idp.url, aud: RESOURCE, email: 'a@x', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new Uint8Array(32));
    assert.match(await why(hmac), /^JWT algorithm HS256 is not allowed \(allowed: RS256, /);
    assert.equal(
      await why(await idp.sign(k1, { email: 'a@x', iss: 'https://evil.test' })),
      `JWT issuer "https://evil.test" is not a configured issuer ("${idp.url}")`,
    );
  });

  void it('a token without a required scope: 403 insufficient_scope naming the scope', T, async () => {
    const outcome = await check(await idp.sign(k1, { email: 'a@x', scope: 'openid' }));
    assert.deepEqual(outcome, {
      ok: false,
      status: 403,
      scope: 'mcp',
      reason: `the token lacks the scope mcp that issuer ${idp.url} requires`,
    });
    const scp = await check(await idp.sign(k1, { email: 'a@x', scope: undefined, scp: ['mcp'] }));
    assert.equal(scp.ok, true, 'scp as an array');
  });

  void it('a rotated key is picked up by a refresh on its unknown kid (past the cooldown)', T, async () => {
    const eager = rulesFor({ issuer: idp.url, agentClaim: 'email', refreshCooldownSeconds: 0 }, { resource: RESOURCE });
    assert.equal((await check(await idp.sign(k1, { email: 'a@x' }), eager)).ok, true);
    idp.published = [k1, k2];
    const before = idp.jwksFetches;
    assert.deepEqual(await check(await idp.sign(k2, { email: 'a@x' }), eager), { ok: true, agent: 'a@x', via: 'oauth' });
    assert.equal(idp.jwksFetches, before + 1);
  });

  void it('within the cooldown (default 30 s) an unknown kid causes no fetch: made-up kids cannot flood the issuer', T, async () => {
    const before = idp.jwksFetches;
    const k3 = await newKey('k3');
    for (let i = 0; i < 5; i++) {
      const outcome = await check(await idp.sign(k3, { email: 'a@x' }));
      assert.equal(
        outcome.ok ? '' : outcome.reason,
        'JWT is signed with a key the issuer does not publish (no key in its JWKS matches the kid and algorithm, even after a refresh)',
      );
    }
    assert.equal(idp.jwksFetches, before, 'within the cooldown, no refresh');
  });

  void it('without auth.resource the audience is the resource URI the front gives', T, async () => {
    const derived = rulesFor({ issuer: idp.url });
    assert.equal((await check(await idp.sign(k1, { aud: 'http://127.0.0.1:8808/mcp' }), derived, 'http://127.0.0.1:8808/mcp')).ok, true);
    assert.equal((await check(await idp.sign(k1, {}), derived, 'http://127.0.0.1:8808/mcp')).ok, false);
  });

  void it('the resource metadata and the challenge name the issuer, resource and scopes', T, () => {
    assert.deepEqual(resourceMetadata(rules, RESOURCE), {
      resource: RESOURCE,
      authorization_servers: [idp.url],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp'],
      resource_name: 'mcpgate',
    });
    assert.equal(resourceMetadataUrl(RESOURCE), 'https://gw.test/.well-known/oauth-protected-resource/mcp');
    assert.equal(resourceMetadataUrl('http://127.0.0.1:80/'), 'http://127.0.0.1/.well-known/oauth-protected-resource');
    assert.equal(
      challenge('no bearer token (send Authorization: Bearer <token>)', { resourceMetadata: resourceMetadataUrl(RESOURCE), scope: 'mcp' }),
      'Bearer realm="mcpgate", resource_metadata="https://gw.test/.well-known/oauth-protected-resource/mcp", scope="mcp"',
    );
    assert.equal(
      challenge('no', { insufficientScope: true, scope: 'mcp' }),
      'Bearer realm="mcpgate", scope="mcp", error="insufficient_scope", error_description="no"',
    );
  });
});

void describe('OAuth issuers: when the keys cannot be had', T, () => {
  const idp = new Issuer();
  let key: Key;
  before(async () => {
    await idp.start();
    key = await newKey('k1');
    idp.published = [key];
  });
  after(() => idp.stop());

  void it('metadata naming another issuer: 503, and the reason says so', T, async () => {
    idp.metadataIssuer = 'https://someone-else.test';
    const outcome = await authenticate(rulesFor({ issuer: idp.url, audience: RESOURCE }), `Bearer ${await idp.sign(key, {})}`, {
      issuers: new IssuerKeys(),
      resource: RESOURCE,
    });
    idp.metadataIssuer = undefined;
    assert.equal(outcome.ok ? 0 : outcome.status, 503);
    assert.match(outcome.ok ? '' : outcome.reason, /names issuer "https:\/\/someone-else.test", not "http:\/\/127.0.0.1:\d+"/);
  });

  void it('an unreachable issuer: 503, and the failure is remembered for the cooldown (no fetch per request)', T, async () => {
    const gone = new Issuer();
    await gone.start();
    const url = gone.url;
    await gone.stop();
    const rules = rulesFor({ issuer: url });
    const token = await new SignJWT({ iss: url, aud: RESOURCE, sub: 'a', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(key.privateKey);
    const issuers = new IssuerKeys({ failureCooldownMs: 60_000 });
    const first = await authenticate(rules, `Bearer ${token}`, { issuers, resource: RESOURCE });
    assert.equal(first.ok ? 0 : first.status, 503);
    assert.match(
      first.ok ? '' : first.reason,
      /^the signing keys of issuer http:\/\/127\.0\.0\.1:\d+ are unavailable: cannot read the metadata of issuer/,
    );
    const second = await authenticate(rules, `Bearer ${token}`, { issuers, resource: RESOURCE });
    assert.equal(second.ok ? '' : second.reason, first.ok ? 'x' : first.reason, 'answered from memory');
  });
});

void describe('auth.oauth and auth.resource configuration', T, () => {
  const bad = async (auth: unknown): Promise<Record<string, string>> =>
    byPath((await failure(() => parseRules(JSON.stringify({ agents: {}, auth }), FILE, [], { env: {} }))).issues);

  void it('an issuer object or a list; defaults', T, () => {
    const rules = rulesFor([
      { issuer: 'https://a.test' },
      {
        issuer: 'https://b.test/realms/x',
        namespace: 'b',
        audience: ['api'],
        algorithms: ['RS256'],
        scopes: ['mcp', 'mcp'],
        jwksUri: 'https://b.test/keys',
      },
    ]);
    const issuers = rules.auth?.oauth.map((o) => ({
      issuer: o.issuer,
      ...(o.namespace !== undefined && { namespace: o.namespace }),
      jwks_uri: o.jwksUri ?? null,
      audience: o.audience === undefined ? null : [...o.audience],
      algorithms: [...o.algorithms],
      agent_claim: o.agentClaim,
      scopes: [...o.scopes],
      clock_skew_seconds: o.clockSkewSeconds,
      refresh_cooldown_seconds: o.refreshCooldownSeconds,
    }));
    assert.deepEqual(
      { oauth: issuers },
      {
        oauth: [
          {
            issuer: 'https://a.test',
            jwks_uri: null,
            audience: null,
            algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
            agent_claim: 'sub',
            scopes: [],
            clock_skew_seconds: 30,
            refresh_cooldown_seconds: 30,
          },
          {
            issuer: 'https://b.test/realms/x',
            namespace: 'b',
            jwks_uri: 'https://b.test/keys',
            audience: ['api'],
            algorithms: ['RS256'],
            agent_claim: 'sub',
            scopes: ['mcp'],
            clock_skew_seconds: 30,
            refresh_cooldown_seconds: 30,
          },
        ],
      },
    );
  });

  void it('introspection: credentials from ${VAR}; a literal secret is a warning; missing ones are errors', T, async () => {
    const rules = parseRules(
      JSON.stringify({
        agents: {},
        auth: { oauth: { issuer: 'https://a.test', introspection: { clientId: 'gw', clientSecret: '${IDP_SECRET}' } } },
      }),
      FILE,
      [],
      { env: { IDP_SECRET: 'the-secret-value' } },
    );
    assert.equal(rules.auth?.oauth[0]?.introspection?.clientSecret, 'the-secret-value');
    const literal = rulesFor({ issuer: 'https://a.test', introspection: { clientId: 'gw', clientSecret: 'inline' } });
    assert.deepEqual(byPath(literal.warnings), {
      '$.auth.oauth.introspection.clientSecret':
        'the client secret is written in the rules file itself; prefer "${VAR}" with the variable set',
    });
    assert.deepEqual(
      await bad({ oauth: { issuer: 'https://a.test', introspection: { clientId: 'gw', clientSecret: '${NOPE}', url: 'x' } } }),
      {
        '$.auth.oauth.introspection.clientSecret': 'environment variable NOPE is not set',
        '$.auth.oauth.introspection.url':
          'unknown key "url" in introspection (known: clientId, clientSecret, endpoint, maxPerSecond, cacheSeconds)',
      },
    );
    assert.deepEqual(
      await bad({
        oauth: { issuer: 'https://a.test', introspection: { clientId: 'gw', clientSecret: 's', maxPerSecond: 0, cacheSeconds: 3601 } },
      }),
      {
        '$.auth.oauth.introspection.maxPerSecond':
          'expected the most introspection calls a second to this issuer, a whole number from 1 to 1000, got 0',
        '$.auth.oauth.introspection.cacheSeconds':
          'expected how many seconds an active answer is trusted (a revoked token is accepted that long), a whole number from 0 to 3600, got 3601',
      },
    );
  });

  void it('errors at their paths: no issuer, bad URLs, HMAC algorithms, unknown keys, duplicates, bad scopes', T, async () => {
    assert.deepEqual(await bad({ oauth: {} }), {
      '$.auth.oauth.issuer': 'expected "issuer", the authorization server\'s issuer URL (e.g. "https://login.example.com/realms/acme")',
    });
    assert.deepEqual(await bad({ oauth: [{ issuer: 'idp.test' }, { issuer: 'ftp://x' }, { issuer: 'https://x#y' }] }), {
      '$.auth.oauth[0].issuer': '"idp.test" is not an absolute URL',
      '$.auth.oauth[1].issuer': 'expected an http(s) URL, got ftp',
      '$.auth.oauth[2].issuer': 'the URL has a fragment',
    });
    assert.deepEqual(await bad({ oauth: { issuer: 'https://a.test', algorithms: ['HS256'], introspect: {}, scopes: ['a b'] } }), {
      '$.auth.oauth.algorithms[0]':
        'algorithm HS256 cannot be verified with an issuer\'s published keys (HMAC is never accepted from an issuer): HMAC needs "secret"; a public key never verifies HMAC tokens',
      '$.auth.oauth.introspect':
        'unknown key "introspect" in an oauth issuer (known: issuer, namespace, jwksUri, audience, algorithms, agentClaim, scopes, clockSkewSeconds, refreshCooldownSeconds, introspection, requireClaims)',
      '$.auth.oauth.scopes': 'expected an array of scope names (no spaces, quotes or backslashes; RFC 6749 §3.3), got an array',
    });
    assert.deepEqual(await bad({ oauth: [{ issuer: 'https://a.test' }, { issuer: 'https://a.test', namespace: 'a' }] }), {
      '$.auth.oauth[1].issuer': 'issuer "https://a.test" is listed twice',
    });
    // One agent namespace per issuer; an opaque token goes to one issuer only.
    const second = await bad({ oauth: [{ issuer: 'https://a.test' }, { issuer: 'https://b.test' }] });
    assert.match(
      second['$.auth.oauth[1].namespace'] ?? '',
      /^missing: with more than one issuer, each after the first needs a "namespace"/,
    );
    assert.deepEqual(
      await bad({
        oauth: [
          { issuer: 'https://a.test', namespace: 'x' },
          { issuer: 'https://b.test', namespace: 'x' },
          { issuer: 'https://c.test', namespace: 'no spaces' },
        ],
      }),
      {
        '$.auth.oauth[1].namespace': 'namespace "x" is used by two issuers',
        '$.auth.oauth[2].namespace':
          'expected 1 to 32 letters, digits, "." , "_" or "-" (the prefix of this issuer\'s agent ids, "NAMESPACE:ID"), got a string',
      },
    );
    const both = { clientId: 'gw', clientSecret: '${S}' };
    const twice = await failure(() =>
      parseRules(
        JSON.stringify({
          agents: {},
          auth: {
            oauth: [
              { issuer: 'https://a.test', introspection: both },
              { issuer: 'https://b.test', namespace: 'b', introspection: both },
            ],
          },
        }),
        FILE,
        [],
        { env: { S: 's' } },
      ),
    );
    assert.match(
      byPath(twice.issues)['$.auth.oauth'] ?? '',
      /^2 issuers have "introspection" \("https:\/\/a.test", "https:\/\/b.test"\): an opaque token names no issuer, so it would be shown to each; keep "introspection" on one issuer/,
    );
    const squatter = await failure(() =>
      parseRules(
        JSON.stringify({
          agents: { 'b:alice': { tokens: [`sha256:${'0'.repeat(64)}`] } },
          auth: { oauth: [{ issuer: 'https://a.test' }, { issuer: 'https://b.test', namespace: 'b' }] },
        }),
        FILE,
        [],
        { env: {} },
      ),
    );
    assert.match(
      byPath(squatter.issues)['$.agents["b:alice"].tokens'] ?? JSON.stringify(byPath(squatter.issues)),
      /are issuer "https:\/\/b.test"'s/,
    );
    assert.deepEqual(await bad({ resource: 'https://gw.test/mcp?x=1', oauth: [] }), {
      '$.auth.resource': 'a resource URI has no fragment and no query (RFC 8707 §2)',
      '$.auth.oauth': 'expected an issuer object or an array of 1 to 8 of them, got an empty array',
    });
  });
});
