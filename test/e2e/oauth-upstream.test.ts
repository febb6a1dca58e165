// mcpgate as an OAuth client of remote servers, end to end against real parts: oidc-provider
// as the authorization server on loopback (test/helpers/oidc.ts: dynamic registration, PKCE, rotated
// refresh tokens, client credentials, resource indicators issuing JWTs), a v2-SDK remote server that
// verifies those JWTs with jose (test/fixtures/oauth-remote-server.ts), the built `mcpgate login`,
// `logout` and `serve`. The browser step is driven by the test through the provider's own login and
// consent pages. Verified: a gateway started before anyone logged in parks the server with the login
// hint, picks up the tokens `mcpgate login` stores (file mode 0600) and serves the tools; tokens never
// appear in the log; an access token that expires is refreshed before use; a token the server refuses
// mid-session is refreshed and the call retried; a revoked refresh token parks the server with
// MCPG_SERVER_NEEDS_LOGIN; a server without "auth" that answers 401 with a Bearer challenge asks for a
// login too; the client-credentials grant works with no person; logout removes the tokens.
// Per-agent accounts (login --agent) are oauth-accounts.test.ts.

import { readFile, stat, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cli, rpcError, startGateway, tempDir, textOf, until, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import {
  runLogin,
  startAuthServer,
  startOAuthRemote as startRemote,
  type Idp as AuthServer,
  type OAuthRemote as Remote,
} from '../helpers/oidc.js';

interface TokenFile {
  client?: { client_id: string };
  tokens?: { access_token: string; refresh_token?: string; expires_at?: number };
}

function login(as: AuthServer, config: string, state: string, server = 'remote'): ReturnType<typeof runLogin> {
  return runLogin(as, { config, state, server });
}

async function readTokens(state: string, server = 'remote'): Promise<TokenFile> {
  return JSON.parse(await readFile(`${state}/oauth/${server}.json`, 'utf8')) as TokenFile;
}

async function toolNames(gw: GatewayProcess): Promise<string[]> {
  return (await gw.client.listTools()).tools.map((t) => t.name);
}

describe('mcpgate as an OAuth client: login, refresh, revocation', { timeout: 120_000 }, () => {
  let as: AuthServer;
  let remote: Remote;
  let dir: TempDir;
  let gw: GatewayProcess;
  let config: string;
  let state: string;

  before(async () => {
    as = await startAuthServer({ accessTokenTtl: 4 });
    remote = await startRemote(as.issuer);
    dir = await tempDir();
    state = dir.file('state');
    config = await writeConfig(dir, { remote: { type: 'http', url: remote.url, auth: 'oauth' } });
  });

  after(async () => {
    if (gw !== undefined && gw.child.exitCode === null) await gw.stop();
    await remote?.stop();
    await as?.close();
    await dir?.remove();
  });

  it('parks the server with the login hint, then serves it once mcpgate login has stored tokens', async () => {
    gw = await startGateway({ config, args: ['--state', state] });
    const parked = await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.includes('needs login: run `mcpgate login remote`'));
    assert.match(String(parked.msg), /remote/);
    assert.deepEqual(await toolNames(gw), []);

    const result = await login(as, config, state);
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /Logged in to server "remote"/);
    const mode = (await stat(`${state}/oauth/remote.json`)).mode & 0o777;
    assert.equal(mode, 0o600);
    assert.equal((await stat(`${state}/oauth`)).mode & 0o777, 0o700);
    const stored = await readTokens(state);
    assert.ok(stored.tokens?.refresh_token, 'a refresh token is stored');
    assert.ok(stored.client?.client_id, 'mcpgate registered itself (RFC 7591)');

    assert.ok(await until(async () => (await toolNames(gw)).includes('remote__echo'), 20_000), 'the gateway picked up the login');
    const answer = await gw.client.callTool({ name: 'remote__whoami', arguments: {} });
    assert.equal((JSON.parse(textOf(answer)) as { sub: string }).sub, 'alice');
    const log = JSON.stringify(gw.logs);
    assert.ok(!log.includes(stored.tokens.access_token) && !log.includes(stored.tokens.refresh_token), 'no token in the log');
  });

  it('refreshes an access token before it expires, and keeps calling', async () => {
    const before = await readTokens(state);
    assert.ok(await until(() => Date.now() > before.tokens!.expires_at!, 10_000));
    const answer = await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'after expiry' } });
    assert.equal(textOf(answer), 'after expiry');
    const after = await readTokens(state);
    assert.notEqual(after.tokens!.access_token, before.tokens!.access_token);
    assert.notEqual(after.tokens!.refresh_token, before.tokens!.refresh_token, 'the refresh token was rotated');
  });

  it('refreshes and retries once when the server refuses the token mid-session', async () => {
    const refusedBefore = (await remote.stats()).refused;
    const before = await readTokens(state);
    await remote.refuseLast();
    const answer = await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'retried' } });
    assert.equal(textOf(answer), 'retried');
    assert.ok((await remote.stats()).refused > refusedBefore, 'the server did refuse the old token');
    assert.notEqual((await readTokens(state)).tokens!.access_token, before.tokens!.access_token);
  });

  it('parks the server with MCPG_SERVER_NEEDS_LOGIN when the refresh token is revoked', async () => {
    const stored = await readTokens(state);
    await as.revoke(stored.tokens!.refresh_token!, stored.client!.client_id);
    await remote.refuseLast();
    const err = await rpcError(gw.client.callTool({ name: 'remote__echo', arguments: { text: 'x' } }));
    assert.equal(err.code, -31033, err.message);
    assert.match(err.message, /needs login: run `mcpgate login remote`/);
    await gw.waitForLog((l) => l.state === 'parked' && String(l.msg).includes('needs login'));
    const log = JSON.stringify(gw.logs);
    assert.ok(!log.includes(stored.tokens!.refresh_token!), 'no token in the log');
  });

  it('logout revokes the tokens at the authorization server (RFC 7009) and removes them; a failed revocation is reported', async () => {
    // A fresh login (the test before revoked the last one's refresh token), then logout revokes it (RFC 7009).
    const relogin = await login(as, config, state);
    assert.equal(relogin.code, 0, relogin.err);
    const stored = await readTokens(state);
    const refresh = stored.tokens!.refresh_token!;
    const out = await cli(['logout', 'remote', '--config', config, '--state', state]);
    assert.equal(out.code, 0, out.err);
    // oidc-provider revokes the grant with the refresh token; its JWT access tokens it cannot revoke (unsupported_token_type).
    assert.match(
      out.out,
      new RegExp(
        `Revoked the refresh token at ${as.issuer}/token/revocation\\.\\nThe authorization server cannot revoke the access token itself`,
      ),
    );
    await assert.rejects(stat(`${state}/oauth/remote.json`), { code: 'ENOENT' });
    const grant = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refresh, client_id: stored.client!.client_id }).toString(),
    });
    assert.equal(grant.status, 400, 'the revoked refresh token no longer works at the authorization server');
    assert.equal(((await grant.json()) as { error?: string }).error, 'invalid_grant');
    assert.ok(!out.out.includes(refresh) && !out.err.includes(refresh), 'no token in the output');

    // The revocation endpoint does not answer: reported (exit 1), and the local tokens are removed all the same.
    assert.equal((await login(as, config, state)).code, 0);
    const file = (await readTokens(state)) as unknown as { discovery: { authorizationServerMetadata: Record<string, unknown> } };
    file.discovery.authorizationServerMetadata.revocation_endpoint = 'http://127.0.0.1:9/revoke';
    await writeFile(`${state}/oauth/remote.json`, JSON.stringify(file));
    const failed = await cli(['logout', 'remote', '--config', config, '--state', state]);
    assert.equal(failed.code, 1);
    assert.match(
      failed.err,
      /could not revoke the tokens: the refresh token was not revoked at http:\/\/127\.0\.0\.1:9\/revoke: .*The local tokens are removed/,
    );
    await assert.rejects(stat(`${state}/oauth/remote.json`), { code: 'ENOENT' });
    const again = await cli(['logout', 'remote', '--config', config, '--state', state]);
    assert.equal(again.code, 1);
    assert.match(again.err, /no login is stored/);
  });
});

describe('mcpgate as an OAuth client: discovery from a 401, client credentials', { timeout: 120_000 }, () => {
  let as: AuthServer;
  let remote: Remote;
  let dir: TempDir;
  const gateways: GatewayProcess[] = [];

  before(async () => {
    as = await startAuthServer();
    remote = await startRemote(as.issuer);
    dir = await tempDir();
  });

  after(async () => {
    for (const gw of gateways) if (gw.child.exitCode === null) await gw.stop();
    await remote?.stop();
    await as?.close();
    await dir?.remove();
  });

  it('a server without "auth" that answers 401 with a Bearer challenge asks for a login, and works after it', async () => {
    const config = await writeConfig(dir, { plain: { url: remote.url } }, 'plain.json');
    const state = dir.file('plain-state');
    const gw = await startGateway({ config, args: ['--state', state] });
    gateways.push(gw);
    await gw.waitForLog((l) => String(l.msg).includes('needs login: run `mcpgate login plain`'));
    const result = await login(as, config, state, 'plain');
    assert.equal(result.code, 0, result.err);
    assert.ok(await until(async () => (await toolNames(gw)).includes('plain__echo'), 20_000), 'the gateway picked up the login');
    assert.equal(textOf(await gw.client.callTool({ name: 'plain__echo', arguments: { text: 'hi' } })), 'hi');
  });

  it("client credentials: no person, the entry's client id and secret (from ${VAR})", async () => {
    const config = await writeConfig(
      dir,
      {
        machine: {
          type: 'http',
          url: remote.url,
          auth: { type: 'oauth', grant: 'client_credentials', clientId: as.machine.clientId, clientSecret: '${MACHINE_SECRET}' },
        },
      },
      'machine.json',
    );
    const gw = await startGateway({
      config,
      args: ['--state', dir.file('machine-state')],
      env: { MACHINE_SECRET: as.machine.clientSecret },
    });
    gateways.push(gw);
    const answer = await gw.client.callTool({ name: 'machine__whoami', arguments: {} });
    assert.equal((JSON.parse(textOf(answer)) as { client_id: string }).client_id, as.machine.clientId);
    assert.ok(!JSON.stringify(gw.logs).includes(as.machine.clientSecret), 'the secret is not logged');
  });
});
