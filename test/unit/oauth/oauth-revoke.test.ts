// Revocation on logout (src/oauth/revoke.ts, RFC 7009): which endpoint, how the client authenticates,
// and each outcome, over an in-process fetch (test/e2e/oauth-upstream.test.ts revokes at a real
// oidc-provider). No token appears in a reason.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { revokeStored } from '../../../src/oauth/revoke.js';
import type { TokenFile } from '../../../src/oauth/store.js';

const ENDPOINT = 'https://as.test/revoke';
const base = (
  client: Record<string, unknown>,
  metadata: Record<string, unknown> | undefined = { issuer: 'https://as.test', revocation_endpoint: ENDPOINT },
): TokenFile => ({
  version: 1,
  url: 'https://mcp.test/mcp',
  savedAt: '2026-01-01T00:00:00Z',
  client: { client_id: 'cli:ent', ...client },
  tokens: { access_token: 'AT-secret', refresh_token: 'RT-secret' },
  discovery: { authorizationServerUrl: 'https://as.test', ...(metadata !== undefined && { authorizationServerMetadata: metadata }) },
});

interface Seen {
  url: string;
  headers: Record<string, string>;
  body: URLSearchParams;
}

function fakeFetch(answer: (seen: Seen) => Response): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const f = ((url: string | URL, init?: RequestInit) => {
    const s = { url: String(url), headers: init?.headers as Record<string, string>, body: new URLSearchParams(init?.body as string) };
    seen.push(s);
    try {
      return Promise.resolve(answer(s));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }) as typeof fetch;
  return { fetch: f, seen };
}

void describe('revokeStored', () => {
  void it('a public client sends its id in the body; refresh token first, then the access token', { timeout: 5000 }, async () => {
    const { fetch, seen } = fakeFetch(() => new Response('', { status: 200 }));
    assert.deepEqual(await revokeStored(base({ token_endpoint_auth_method: 'none' }), { fetch }), {
      kind: 'revoked',
      endpoint: ENDPOINT,
      tokens: ['refresh_token', 'access_token'],
      kept: [],
    });
    assert.deepEqual(
      seen.map((s) => [s.url, s.body.get('token_type_hint'), s.body.get('token'), s.body.get('client_id'), s.headers.authorization]),
      [
        [ENDPOINT, 'refresh_token', 'RT-secret', 'cli:ent', undefined],
        [ENDPOINT, 'access_token', 'AT-secret', 'cli:ent', undefined],
      ],
    );
  });

  void it('a confidential client uses HTTP Basic (form-encoded parts), or the body for client_secret_post', { timeout: 5000 }, async () => {
    const basic = fakeFetch(() => new Response('', { status: 200 }));
    await revokeStored(base({ client_secret: 's/ecret' }), { fetch: basic.fetch });
    assert.equal(basic.seen[0]!.headers.authorization, `Basic ${Buffer.from('cli%3Aent:s%2Fecret').toString('base64')}`);
    assert.equal(basic.seen[0]!.body.get('client_id'), null);
    const post = fakeFetch(() => new Response('', { status: 200 }));
    await revokeStored(base({ client_secret: 'x', token_endpoint_auth_method: 'client_secret_post' }), { fetch: post.fetch });
    assert.equal(post.seen[0]!.body.get('client_secret'), 'x');
    // A configured client: its secret comes from the entry (the store never holds it).
    const configured = fakeFetch(() => new Response('', { status: 200 }));
    await revokeStored(base({}), { fetch: configured.fetch, client: { clientId: 'cli:ent', clientSecret: 'from-config' } });
    assert.equal(configured.seen[0]!.headers.authorization, `Basic ${Buffer.from('cli%3Aent:from-config').toString('base64')}`);
  });

  void it(
    'an access token the server cannot revoke (unsupported_token_type) after the refresh token is kept, not a failure',
    { timeout: 5000 },
    async () => {
      const { fetch } = fakeFetch((s) =>
        s.body.get('token_type_hint') === 'access_token'
          ? Response.json({ error: 'unsupported_token_type' }, { status: 400 })
          : new Response('', { status: 200 }),
      );
      assert.deepEqual(await revokeStored(base({}), { fetch }), {
        kind: 'revoked',
        endpoint: ENDPOINT,
        tokens: ['refresh_token'],
        kept: ['access_token'],
      });
    },
  );

  void it('a refusal or no answer is a failure naming the endpoint and the error, never the token', { timeout: 5000 }, async () => {
    const refused = fakeFetch(() => Response.json({ error: 'invalid_client', error_description: 'who are you' }, { status: 401 }));
    const outcome = await revokeStored(base({}), { fetch: refused.fetch });
    assert.deepEqual(outcome, {
      kind: 'failed',
      reason: `the refresh token was not revoked at ${ENDPOINT}: HTTP 401 invalid_client (who are you)`,
    });
    const down = fakeFetch(() => {
      throw new TypeError('fetch failed');
    });
    const failed = await revokeStored(base({}), { fetch: down.fetch });
    assert.equal(failed.kind, 'failed');
    assert.ok(!JSON.stringify(failed).includes('secret'));
  });

  void it('no revocation_endpoint in the metadata: unsupported; no tokens: nothing', { timeout: 5000 }, async () => {
    const { fetch, seen } = fakeFetch(() => new Response('', { status: 200 }));
    assert.deepEqual(await revokeStored(base({}, { issuer: 'https://as.test' }), { fetch }), {
      kind: 'unsupported',
      issuer: 'https://as.test',
    });
    assert.equal(seen.length, 0);
    const { tokens: _t, ...empty } = base({});
    assert.deepEqual(await revokeStored(empty, { fetch }), { kind: 'nothing' });
  });
});
