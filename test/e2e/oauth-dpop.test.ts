// DPoP (RFC 9449) with mcpgate as the OAuth client, end to end against real parts: oidc-provider as
// the authorization server (test/helpers/oidc.ts; `features.dPoP`, with nonces required at its token
// endpoint), the resource server fixture (test/fixtures/oauth-remote-server.ts `--dpop`), which
// verifies every proof with `jose` (signature by the embedded key, typ, htm, htu, iat, jti, ath, the
// token's `cnf.jkt`, its own nonce), the built `mcpgate login` driven as a person would, `serve`, and
// the SDK client as the agent.
// - Both servers take DPoP: login binds the tokens to a new key, kept in the token file; the agent's
//   calls reach the server as `DPoP <token>` with valid proofs, after one `use_dpop_nonce` retry at
//   each server; a refresh keeps the key. The fixture refuses a proof signed by another key, a bound
//   token sent as Bearer, and a replayed proof (so these checks can fail).
// - The authorization server does not offer DPoP: plain bearer tokens, no key, no proof.

import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { textOf, type GatewayProcess } from '../helpers/gateway.js';
import { oauthRig } from '../helpers/oauth-rig.js';

interface TokenFile {
  tokens?: { access_token: string; token_type?: string; refresh_token?: string };
  dpop?: { alg: string; jwk: JWK };
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
});

/** A DPoP proof for a POST to `url` presenting `token`, signed by `privateKey` (public half `jwk`). */
async function proof(privateKey: CryptoKey, jwk: JWK, url: string, token: string, nonce?: string): Promise<string> {
  const { d: _d, ...publicJwk } = jwk;
  return new SignJWT({
    htm: 'POST',
    htu: url,
    ath: createHash('sha256').update(token).digest('base64url'),
    jti: crypto.randomUUID(),
    ...(nonce !== undefined && { nonce }),
  })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk })
    .setIssuedAt()
    .sign(privateKey);
}

async function post(url: string, authorization: string, dpop?: string): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization,
      ...(dpop !== undefined && { dpop }),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: INIT,
  });
  await res.arrayBuffer();
  return res;
}

describe('mcpgate as an OAuth client: DPoP where both servers take it', { timeout: 120_000 }, () => {
  const rig = oauthRig({ idp: { dpop: 'nonce' }, remote: ['--dpop', 'required', '--dpop-nonce'] });
  let gw: GatewayProcess;

  it('login binds the tokens to a new key kept in the token file; calls carry valid proofs after a nonce retry', async () => {
    const result = await rig.login();
    assert.equal(result.code, 0, result.err);
    const file = await rig.tokenFile<TokenFile>();
    assert.equal(file.tokens?.token_type?.toLowerCase(), 'dpop');
    assert.equal(file.dpop?.alg, 'ES256');
    assert.equal(typeof file.dpop?.jwk.d, 'string', 'the private key is stored with the tokens');
    const { d: _d, ...publicJwk } = file.dpop.jwk;
    const cnf = decodeJwt(file.tokens.access_token).cnf as { jkt?: string } | undefined;
    assert.equal(cnf?.jkt, await calculateJwkThumbprint(publicJwk, 'sha256'), 'the access token is bound to the stored key');
    // The code exchange carried a proof, was asked for the provider's nonce, and was sent again with it.
    assert.equal(rig.as.tokenRequests.plain, 0);
    assert.ok(rig.as.tokenRequests.dpop >= 2, JSON.stringify(rig.as.tokenRequests));
    assert.ok(rig.as.tokenRequests.nonceChallenges >= 1, JSON.stringify(rig.as.tokenRequests));

    gw = await rig.gateway();
    const who = JSON.parse(textOf(await gw.client.callTool({ name: 'remote__whoami', arguments: {} }))) as { sub: string };
    assert.equal(who.sub, 'alice');
    assert.equal(textOf(await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'bound' } })), 'bound');
    const dpop = await rig.remote.dpop();
    assert.deepEqual(dpop.refused, [], 'no proof was refused');
    assert.ok(dpop.nonceChallenges >= 1, 'the server asked for its nonce');
    assert.ok(dpop.accepted >= 3, `proofs accepted: ${dpop.accepted}`);
    const seen = await rig.remote.seen();
    assert.ok(seen.length > 0 && seen.every((a) => a.startsWith('DPoP ')), `schemes sent: ${seen.map((a) => a.split(' ')[0]).join(',')}`);
  });

  it('a refresh keeps the key: the new token is bound to it and served', async () => {
    const before = await rig.tokenFile<TokenFile>();
    const exchanges = rig.as.tokenRequests.dpop;
    // As a server does once a token is revoked: the gateway's next request is refused, and it refreshes.
    await rig.remote.refuseLast();
    assert.equal(textOf(await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'after refresh' } })), 'after refresh');
    const after = await rig.tokenFile<TokenFile>();
    assert.notEqual(after.tokens?.access_token, before.tokens?.access_token, 'a new access token');
    assert.equal(after.dpop?.jwk.d, before.dpop?.jwk.d, 'the same key');
    const { d: _d, ...publicJwk } = after.dpop!.jwk;
    assert.equal((decodeJwt(after.tokens!.access_token).cnf as { jkt?: string }).jkt, await calculateJwkThumbprint(publicJwk, 'sha256'));
    assert.ok(rig.as.tokenRequests.dpop > exchanges, 'the refresh carried a proof');
    assert.equal(rig.as.tokenRequests.plain, 0);
    assert.deepEqual((await rig.remote.dpop()).refused, []);
  });

  it('the server refuses a proof by another key, the bound token as Bearer, and a replayed proof', async () => {
    const file = await rig.tokenFile<TokenFile>();
    const token = file.tokens!.access_token;
    const url = rig.remote.url;
    const stored = (await importJWK(file.dpop!.jwk, 'ES256')) as CryptoKey;

    // The right key, as a control: the nonce round trip, then accepted.
    const first = await post(url, `DPoP ${token}`, await proof(stored, file.dpop!.jwk, url, token));
    assert.equal(first.status, 401);
    assert.match(first.headers.get('www-authenticate') ?? '', /use_dpop_nonce/);
    const nonce = first.headers.get('dpop-nonce') ?? undefined;
    assert.ok(nonce !== undefined);
    const good = await proof(stored, file.dpop!.jwk, url, token, nonce);
    assert.equal((await post(url, `DPoP ${token}`, good)).status, 200);

    const other = await generateKeyPair('ES256', { extractable: true });
    const forged = await post(url, `DPoP ${token}`, await proof(other.privateKey, await exportJWK(other.publicKey), url, token, nonce));
    assert.equal(forged.status, 401);
    assert.match(forged.headers.get('www-authenticate') ?? '', /invalid_token/);
    assert.equal((await post(url, `Bearer ${token}`)).status, 401);
    assert.equal((await post(url, `DPoP ${token}`, good)).status, 401, 'a proof is used once');
    const refused = (await rig.remote.dpop()).refused;
    assert.ok(
      refused.some((r) => /another key/.test(r)),
      refused.join('; '),
    );
    assert.ok(
      refused.some((r) => /as a bearer token/.test(r)),
      refused.join('; '),
    );
    assert.ok(
      refused.some((r) => /replayed/.test(r)),
      refused.join('; '),
    );
  });
});

describe('mcpgate as an OAuth client: DPoP not offered by the authorization server', { timeout: 120_000 }, () => {
  const rig = oauthRig({ idp: { dpop: 'off' }, remote: ['--dpop', 'allowed'] });

  it('signs in and calls with plain bearer tokens: no key, no proof', async () => {
    const result = await rig.login();
    assert.equal(result.code, 0, result.err);
    const file = await rig.tokenFile<TokenFile>();
    assert.equal(file.tokens?.token_type?.toLowerCase(), 'bearer');
    assert.equal(file.dpop, undefined, 'no key is made');
    assert.equal(decodeJwt(file.tokens.access_token).cnf, undefined);
    assert.equal(rig.as.tokenRequests.dpop, 0, 'no proof went to the token endpoint');

    const gw = await rig.gateway();
    assert.equal(textOf(await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'plain' } })), 'plain');
    const seen = await rig.remote.seen();
    assert.ok(seen.length > 0 && seen.every((a) => a.startsWith('Bearer ')), `schemes sent: ${seen.map((a) => a.split(' ')[0]).join(',')}`);
    assert.equal((await rig.remote.dpop()).accepted, 0);
  });
});
