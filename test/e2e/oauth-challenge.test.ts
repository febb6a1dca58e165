// What a remote server's challenge tells mcpgate as an OAuth client, end to end against real parts:
// oidc-provider as the authorization server (test/helpers/oidc.ts), the v2-SDK resource server
// fixture (test/fixtures/oauth-remote-server.ts), the built `mcpgate login` and `serve`.
// - Challenge-announced metadata: the server serves its resource metadata at a path of its own and
//   names it only in the 401's `WWW-Authenticate: … resource_metadata="…"`; `login` asks for that
//   challenge (an unauthenticated request) and uses it, where the well-known locations find nothing.
// - Step-up: a tool needs a scope the login was not granted (403 `insufficient_scope`). That call fails
//   with MCPG_SERVER_NEEDS_LOGIN naming the union of scopes and the server parks until then; the next `login` asks
//   for the union, and the call then succeeds with no restart.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rpcError, textOf, until, type GatewayProcess } from '../helpers/gateway.js';
import { oauthRig } from '../helpers/oauth-rig.js';

async function toolNames(gw: GatewayProcess): Promise<string[]> {
  return (await gw.client.listTools()).tools.map((t) => t.name);
}

interface TokenFile {
  discovery?: { resourceMetadataUrl?: string };
  tokens?: { scope?: string };
  stepUpScope?: string;
}

describe("mcpgate as an OAuth client: what the server's challenge says", { timeout: 120_000 }, () => {
  const rig = oauthRig({
    idp: { extraScopes: ['mcp:write'] },
    remote: ['--prm-path', '/meta/resource.json', '--write-scope', 'mcp:write'],
  });
  let gw: GatewayProcess;

  it('finds the resource metadata the 401 challenge announces (no well-known document)', async () => {
    assert.equal((await fetch(`${rig.remote.base}/.well-known/oauth-protected-resource/mcp`)).status, 404);
    const result = await rig.login();
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /Logged in to server "remote"/);
    const stored = await rig.tokenFile<TokenFile>();
    assert.equal(stored.discovery?.resourceMetadataUrl, `${rig.remote.base}/meta/resource.json`);
    assert.equal(stored.tokens?.scope, 'mcp');

    gw = await rig.gateway();
    assert.ok(
      await until(async () => (await toolNames(gw)).includes('remote__whoami'), 20_000),
      'the gateway serves the server with the login',
    );
  });

  it('a call that needs a wider scope says which; the next login asks for the union and the call then works', async () => {
    const refused = await rpcError(gw.client.callTool({ name: 'remote__write', arguments: {} }));
    assert.match(refused.message, /server "remote" needs login \(scope "mcp mcp:write"\): run `mcpgate login remote`/);
    // A person is needed: the server parks, saying so, until the login is stored.
    const parked = await gw.waitForLog((l) => l.state === 'parked' && String(l.msg).includes('needs login (scope "mcp mcp:write")'));
    assert.match(String(parked.msg), /parked until a login is stored/);
    assert.ok(await until(async () => !(await toolNames(gw)).includes('remote__echo'), 10_000), 'the parked server is withdrawn');
    const stored = await rig.tokenFile<TokenFile>();
    assert.equal(stored.stepUpScope, 'mcp mcp:write');

    const result = await rig.login();
    assert.equal(result.code, 0, result.err);
    // The union (the SDK adds offline_access where the authorization server offers refresh tokens).
    const asked = new URL(/^\s+(http:\/\/\S+)$/m.exec(result.out)![1]!).searchParams.get('scope')?.split(' ') ?? [];
    assert.ok(asked.includes('mcp') && asked.includes('mcp:write'), `login asked for ${asked.join(' ')}`);
    const after = await rig.tokenFile<TokenFile>();
    assert.equal(after.stepUpScope, undefined, 'the login granted it: nothing is pending');
    assert.ok(after.tokens?.scope?.split(' ').includes('mcp:write'), `granted: ${after.tokens?.scope}`);

    let answer: unknown;
    assert.ok(
      await until(async () => {
        try {
          answer = await gw.client.callTool({ name: 'remote__write', arguments: {} });
          return true;
        } catch {
          return false;
        }
      }, 20_000),
      'the gateway picked up the wider login',
    );
    assert.equal(textOf(answer), 'written');
  });
});
