// Which authorization server mcpgate trusts, end to end against real parts: two oidc-provider
// instances on loopback (test/helpers/oidc.ts), the v2-SDK resource server fixture
// (test/fixtures/oauth-remote-server.ts), the built `mcpgate login` and `serve`.
// - Issuer check (RFC 9207): a redirect back to `mcpgate login` whose `iss` names another issuer (a
//   mix-up attack) is refused before the code is redeemed; no tokens are stored.
// - Migration: the resource moves to another authorization server; its old tokens are refused, the
//   gateway says "needs login", and the next login discovers the new server and registers there (the
//   client registered at the old one is never shown to the new one). The gateway then serves again.

import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, tempDir, textOf, until, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { runLogin, startAuthServer, startOAuthRemote, type Idp, type OAuthRemote } from '../helpers/oidc.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface TokenFile {
  client?: { client_id: string; issuer?: string };
  tokens?: { access_token: string };
}

describe('mcpgate as an OAuth client: issuers', { timeout: 120_000 }, () => {
  let first: Idp;
  let second: Idp;
  let remote: OAuthRemote;
  let dir: TempDir;
  let gw: GatewayProcess | undefined;
  let config: string;
  let state: string;
  const stored = async (): Promise<TokenFile> => JSON.parse(await readFile(`${state}/oauth/remote.json`, 'utf8')) as TokenFile;

  before(async () => {
    first = await startAuthServer();
    second = await startAuthServer();
    remote = await startOAuthRemote(first.issuer);
    dir = await tempDir();
    state = dir.file('state');
    config = await writeConfig(dir, { remote: { type: 'http', url: remote.url, auth: 'oauth' } });
  });

  after(async () => {
    if (gw !== undefined && gw.child.exitCode === null) await gw.stop();
    await remote?.stop();
    await first?.close();
    await second?.close();
    await dir?.remove();
  });

  it('refuses an authorization response whose iss names another issuer, and stores no tokens', async () => {
    const result = await runLogin(first, {
      config,
      state,
      callback: async (url) => {
        url.searchParams.set('iss', second.issuer);
        await (await fetch(url)).body?.cancel();
      },
    });
    assert.equal(result.code, 1, result.out);
    assert.match(result.err, /issuer/i);
    const file: TokenFile = await stored().catch(() => ({}));
    assert.equal(file.tokens, undefined, 'no tokens were stored');
  });

  it('re-registers at the new authorization server when the resource moves there', async () => {
    // One fixed port for both logins: the client registered for that redirect would be used again.
    const port = await freePort();
    const signedIn = await runLogin(first, { config, state, port });
    assert.equal(signedIn.code, 0, signedIn.err);
    const before = await stored();
    assert.equal(before.client?.issuer, first.issuer);
    gw = await startGateway({ config, args: ['--state', state] });
    assert.equal(textOf(await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'one' } })), 'one');

    await remote.move(second.issuer);
    await assert.rejects(
      gw.client.callTool({ name: 'remote__echo', arguments: { text: 'two' } }),
      // What happened, not "the access token expired": the server moved, and no refresh at the old one helps.
      new RegExp(
        `needs login: run \`mcpgate login remote\` \\(it refused the access token: the server moved to the authorization server ${second.issuer.replace(/\./g, '\\.')}, and the stored login is from ${first.issuer.replace(/\./g, '\\.')}\\)`,
      ),
    );

    const moved = await runLogin(second, { config, state, port });
    assert.equal(moved.code, 0, moved.err);
    const after = await stored();
    assert.equal(after.client?.issuer, second.issuer, 'registered at the new authorization server');
    assert.notEqual(after.client?.client_id, before.client?.client_id, 'the old client id is not presented there');
    let answer: unknown;
    assert.ok(
      await until(async () => {
        try {
          answer = await gw!.client.callTool({ name: 'remote__echo', arguments: { text: 'three' } });
          return true;
        } catch {
          return false;
        }
      }, 20_000),
      'the gateway serves again with the new login',
    );
    assert.equal(textOf(answer), 'three');
  });
});
