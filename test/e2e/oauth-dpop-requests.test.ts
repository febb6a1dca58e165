// DPoP (RFC 9449) on requests to a remote server: a stored login with a DPoP-bound token is presented
// with the DPoP scheme and a fresh proof per request (typ, public jwk, htm, htu without query or
// fragment, iat, jti, ath, the server's nonce), a `DPoP-Nonce` from the server is used from then on, a
// bearer token stays Bearer with no proof, and the key stays in the 0600 token file. The requests go
// over the transport's real HTTP client to a real server on 127.0.0.1 that checks the proofs with jose.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { RemoteServerConfig } from '../../src/config/types.js';
import { silentLogger } from '../../src/observability/logger.js';
import { OAuthCredentials } from '../../src/oauth/credentials.js';
import { newDpopKey, type StoredDpopKey } from '../../src/oauth/dpop.js';
import { TokenStore } from '../../src/oauth/store.js';
import { HttpClient } from '../../src/servers/transports/http/request.js';
import { tempDir, type TempDir } from '../helpers/gateway.js';

const NONCE = 'server-nonce-1';

interface Seen {
  authorization: string | undefined;
  proof: string | undefined;
}

describe('DPoP-bound upstream credentials', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let server: Server;
  let url: URL;
  const seen: Seen[] = [];

  before(async () => {
    dir = await tempDir('mcpgate-dpop-');
    server = createServer((req: IncomingMessage, res) => {
      seen.push({ authorization: req.headers.authorization, proof: req.headers.dpop as string | undefined });
      req.resume();
      // The first proof without the nonce gets the RFC 9449 §9 challenge; later ones pass.
      const proof = req.headers.dpop as string | undefined;
      const payload =
        proof === undefined ? undefined : (JSON.parse(Buffer.from(proof.split('.')[1]!, 'base64url').toString()) as JWTPayload);
      if (proof !== undefined && payload?.nonce !== NONCE) {
        res.writeHead(401, { 'www-authenticate': 'DPoP error="use_dpop_nonce"', 'dpop-nonce': NONCE }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp?session=1#frag`);
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await dir.remove();
  });

  const config = (name: string): RemoteServerConfig =>
    ({
      type: 'http',
      name,
      url: url.href,
      headers: {},
      disabled: false,
      timeout: 30_000,
      sessions: 'shared',
      auth: { grant: 'authorization_code' },
    }) as unknown as RemoteServerConfig;

  async function login(
    name: string,
    tokenType: string,
    key: StoredDpopKey | undefined,
  ): Promise<{ store: TokenStore; credentials: OAuthCredentials }> {
    const store = new TokenStore(dir.path);
    await store.write(name, {
      url: url.href,
      tokens: { access_token: `token-of-${name}`, token_type: tokenType, expires_in: 3600, expires_at: Date.now() + 3_600_000 },
      ...(key !== undefined && { dpop: key as never }),
    });
    const credentials = new OAuthCredentials(config(name), store, silentLogger);
    await credentials.ready();
    return { store, credentials };
  }

  async function send(http: HttpClient): Promise<number> {
    const res = await http.send(url, 'POST', { 'content-type': 'application/json' }, '{}').response;
    res.resume();
    return res.statusCode ?? 0;
  }

  async function verify(proof: string, key: StoredDpopKey, token: string): Promise<JWTPayload> {
    const header = decodeProtectedHeader(proof);
    assert.equal(header.typ, 'dpop+jwt');
    assert.equal(header.alg, 'ES256');
    const jwk = header.jwk as JWK;
    assert.equal(jwk.d, undefined, 'the proof carries the public key only');
    const { d: _d, ...publicKey } = key.jwk;
    assert.equal(await calculateJwkThumbprint(jwk), await calculateJwkThumbprint(publicKey), 'signed with the stored key');
    const { payload } = await jwtVerify(proof, await importJWK(jwk, 'ES256'), { algorithms: ['ES256'] });
    assert.equal(payload.htm, 'POST');
    assert.equal(payload.htu, `${url.origin}${url.pathname}`, 'htu has no query or fragment');
    assert.equal(typeof payload.iat, 'number');
    assert.ok(Math.abs(Date.now() / 1000 - payload.iat!) < 60);
    assert.equal(typeof payload.jti, 'string');
    assert.equal(payload.ath, createHash('sha256').update(token).digest('base64url'), 'ath is the access token hash');
    return payload;
  }

  it('signs a fresh proof per request, takes the server nonce, and retries the use_dpop_nonce challenge once', async () => {
    const key = await newDpopKey();
    const { store, credentials } = await login('bound', 'DPoP', key);
    assert.equal(credentials.header(), 'DPoP token-of-bound');
    assert.equal((await stat(store.fileOf('bound'))).mode & 0o777, 0o600, 'the key lives in the 0600 token file');
    const http = new HttpClient(false, {}, credentials);
    try {
      seen.length = 0;
      const first = await send(http);
      assert.equal(first, 401);
      const used = credentials.header();
      // The transport hands the challenge to the credentials: a nonce challenge needs no refresh.
      await credentials.unauthorized(used, 'DPoP error="use_dpop_nonce"');
      assert.equal(credentials.header(), used);
      assert.equal(await send(http), 200, 'the retried request carries the nonce');
      assert.equal(await send(http), 200, 'and so does every later one');
      assert.equal(seen.length, 3);
      const payloads: JWTPayload[] = [];
      for (const request of seen) {
        assert.equal(request.authorization, 'DPoP token-of-bound');
        assert.ok(request.proof !== undefined);
        payloads.push(await verify(request.proof, key, 'token-of-bound'));
      }
      assert.equal(payloads[0]!.nonce, undefined);
      assert.equal(payloads[1]!.nonce, NONCE);
      assert.equal(payloads[2]!.nonce, NONCE);
      assert.equal(new Set(payloads.map((p) => p.jti)).size, 3, 'every proof has its own jti');
    } finally {
      http.destroy();
    }
  });

  it('keeps a bearer token Bearer, with no proof, even with a key stored', async () => {
    const { credentials } = await login('bearer', 'Bearer', await newDpopKey());
    assert.equal(credentials.header(), 'Bearer token-of-bearer');
    assert.equal(credentials.bound('POST', url), undefined);
    const http = new HttpClient(false, {}, credentials);
    try {
      seen.length = 0;
      assert.equal(await send(http), 200);
      assert.deepEqual(seen, [{ authorization: 'Bearer token-of-bearer', proof: undefined }]);
    } finally {
      http.destroy();
    }
  });

  it('refuses a token file whose DPoP key is not a private P-256 key', async () => {
    const store = new TokenStore(dir.path);
    const { d: _d, ...publicOnly } = (await newDpopKey()).jwk;
    await store.write('broken', { url: url.href, dpop: { alg: 'ES256', jwk: publicOnly } as never });
    await assert.rejects(store.read('broken', url.href), /not a valid token file \(dpop\.jwk\.d\)/);
  });
});
