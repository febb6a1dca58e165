// Agents sign in to mcpgate with OAuth (docs/rules-and-identity.md "Sign in with your identity provider"): a real
// authorization server (oidc-provider, test/helpers/oidc.ts) on loopback, the real gateway with the
// issuer in its rules, and the official SDK client with its OAuth client provider. The client starts
// with no token, follows the 401 to the protected-resource metadata, registers dynamically, gets a
// token with PKCE for mcpgate's resource URI (the login and consent pages driven by HTTP) and calls
// a tool. Refused: a token for another audience, an expired one, a forged one. A rotated signing key
// is picked up (unknown kid → JWKS fetched again). The metadata routes sit behind the Host gate.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import {
  JSON_HEADERS,
  connectAgent,
  initializeBody,
  messageOf,
  raw,
  startHttpGateway,
  writeRules,
  type HttpGateway,
} from '../helpers/http.js';
import { AGENT_REDIRECT as REDIRECT, Idp, MemoryProvider, OPAQUE_ROBOT, ROBOT, signingKey } from '../helpers/oidc.js';

const TIMEOUT = 90_000;

describe('agents sign in with OAuth (oidc-provider on loopback)', { timeout: TIMEOUT }, () => {
  const idp = new Idp();
  let dir: TempDir;
  let gate: HttpGateway;

  before(async () => {
    await idp.start();
    dir = await tempDir();
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const rules = await writeRules(dir, {
      // The resource URI is derived from the listen address; refreshCooldownSeconds 0 so the
      // rotation below is picked up at once (the default, 30 s, is covered by the unit tests).
      auth: {
        oauth: {
          issuer: idp.issuer,
          scopes: ['mcp'],
          refreshCooldownSeconds: 0,
          introspection: { clientId: ROBOT.id, clientSecret: '${TEST_INTROSPECTION_SECRET}' },
        },
      },
      agents: {
        alice: { allow: { servers: ['echo'] } },
        [ROBOT.id]: { allow: { servers: ['echo'] } },
        [OPAQUE_ROBOT.id]: { allow: { servers: ['echo'] } },
      },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules], env: { TEST_INTROSPECTION_SECRET: ROBOT.secret } });
  });

  after(async () => {
    await gate?.stop();
    await idp.stop();
    await dir?.remove();
  });

  it('no token: 401 naming the resource metadata, which names the resource and the issuer (behind the Host gate)', async () => {
    const res = await raw(gate.url, { headers: JSON_HEADERS, body: initializeBody() });
    assert.equal(res.status, 401);
    const metadataUrl = `${gate.base}/.well-known/oauth-protected-resource/mcp`;
    assert.equal(res.headers['www-authenticate'], `Bearer realm="mcpgate", resource_metadata="${metadataUrl}", scope="mcp"`);
    for (const url of [metadataUrl, `${gate.base}/.well-known/oauth-protected-resource`]) {
      const doc = await raw(url, { method: 'GET' });
      assert.equal(doc.status, 200, doc.body);
      assert.deepEqual(doc.json, {
        resource: gate.url,
        authorization_servers: [idp.issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: ['mcp'],
        resource_name: 'mcpgate',
      });
    }
    const rebound = await raw(metadataUrl, { method: 'GET', headers: { host: 'evil.example:80' } });
    assert.equal(rebound.status, 403);
    assert.equal((rebound.json?.error as { data?: { code?: unknown } } | undefined)?.data?.code, 'MCPG_HOST_FORBIDDEN');
    assert.equal((await raw(`${gate.base}/.well-known/oauth-protected-resource/other`, { method: 'GET' })).status, 404);
  });

  it('the SDK client follows the 401, registers, signs in with PKCE for the resource URI, and calls a tool', async () => {
    const provider = new MemoryProvider();
    const first = new Client({ name: 'oauth-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(gate.url), { authProvider: provider });
    await assert.rejects(first.connect(transport), UnauthorizedError);
    assert.ok(provider.registered, 'registered dynamically with the issuer');
    const asked = provider.authorizationUrl;
    assert.ok(asked !== undefined && asked.href.startsWith(`${idp.issuer}/`), `authorization URL: ${asked?.href}`);
    assert.equal(asked.searchParams.get('resource'), gate.url, 'RFC 8707: the token is asked for mcpgate');
    assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');
    await transport.finishAuth(await idp.authorize(asked, REDIRECT, 'alice'));
    await transport.close();

    const client = new Client({ name: 'oauth-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gate.url), { authProvider: provider }));
    try {
      assert.equal(textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'signed in' } })), 'signed in');
      const status = await raw(`${gate.base}/status`, {
        method: 'GET',
        headers: { authorization: `Bearer ${provider.tokens()?.access_token ?? ''}` },
      });
      assert.equal(status.status, 403, "an agent's token does not read the operators' status");
    } finally {
      await client.close();
    }
  });

  it('refused: a token for another audience, an expired one, a forged one', async () => {
    const refusal = async (token: string): Promise<string> => {
      const res = await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` }, body: initializeBody() });
      assert.equal(res.status, 401, res.body);
      assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
      return messageOf(res.json);
    };
    const other = await idp.clientCredentials('https://other.example/mcp');
    assert.match(await refusal(other), /JWT audience "https:\/\/other.example\/mcp" is not/);
    const now = Math.floor(Date.now() / 1000);
    const [real] = idp.keys;
    assert.ok(real !== undefined);
    const claims = { iss: idp.issuer, aud: gate.url, sub: 'alice', scope: 'mcp' };
    const expired = await new SignJWT({ ...claims, iat: now - 7200, exp: now - 3600 })
      .setProtectedHeader({ alg: 'ES256', kid: real.kid })
      .sign(real.privateKey);
    assert.match(await refusal(expired), /^JWT expired at /);
    const impostor = await signingKey(real.kid);
    const forged = await new SignJWT({ ...claims, iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'ES256', kid: real.kid })
      .sign(impostor.privateKey);
    assert.match(await refusal(forged), /JWT signature does not verify/);
  });

  it('client credentials (no person) for the resource URI; after the issuer rotates its key, the new kid is fetched and accepted', async () => {
    const before = await idp.clientCredentials(gate.url);
    const robot = await connectAgent(gate.url, { token: before });
    assert.equal(textOf(await robot.client.callTool({ name: 'echo__echo', arguments: { text: 'robot' } })), 'robot');
    await robot.client.close();

    const key = await idp.rotate();
    const after = await idp.clientCredentials(gate.url);
    const header = JSON.parse(Buffer.from(after.split('.')[0] ?? '', 'base64url').toString()) as { kid?: string };
    assert.equal(header.kid, key.kid, 'the provider signs with the new key');
    const rotated = await connectAgent(gate.url, { token: after });
    try {
      assert.equal(textOf(await rotated.client.callTool({ name: 'echo__echo', arguments: { text: 'rotated' } })), 'rotated');
    } finally {
      await rotated.client.close();
    }
  });

  it('an opaque token is checked by introspection (RFC 7662) with the same audience rule; an unknown one is refused', async () => {
    const opaque = await idp.clientCredentials(gate.url, OPAQUE_ROBOT);
    assert.equal(opaque.split('.').length, 1, 'the provider issued an opaque token');
    const agent = await connectAgent(gate.url, { token: opaque });
    try {
      assert.equal(textOf(await agent.client.callTool({ name: 'echo__echo', arguments: { text: 'opaque' } })), 'opaque');
    } finally {
      await agent.client.close();
    }
    const elsewhere = await idp.clientCredentials('https://other.example/mcp', OPAQUE_ROBOT);
    const refused = await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${elsewhere}` }, body: initializeBody() });
    assert.equal(refused.status, 401);
    assert.match(
      messageOf(refused.json),
      /^the introspected token audience "https:\/\/other.example\/mcp" is not "http:\/\/127\.0\.0\.1:\d+\/mcp"$/,
    );
    const unknown = await raw(gate.url, {
      headers: { ...JSON_HEADERS, authorization: 'Bearer not-a-token-the-issuer-made' },
      body: initializeBody(),
    });
    assert.equal(unknown.status, 401);
    assert.match(messageOf(unknown.json), /^unknown token \(not active at http:\/\/127\.0\.0\.1:\d+\)$/);
  });
});
