// Per-agent upstream accounts: a `"sessions": "per-agent"` remote server with `"auth": "oauth"`,
// end to end against real parts — oidc-provider on loopback (test/helpers/oidc.ts), the
// OAuth remote fixture (it verifies the JWTs and its `whoami` tool names the token's subject), the
// built `mcpgate login --agent`, `logout --agent` and `serve --http`. Three HTTP agents with static
// tokens: alice and bob each logged in upstream as a different person, carol not at all. Verified:
// each agent's calls carry its own upstream identity; carol gets MCPG_SERVER_NEEDS_LOGIN naming
// `mcpgate login remote --agent carol` (never the shared login, which only lists the server); the
// agents' files are their own (0600, beside the shared one); a refresh of alice's expired token
// leaves bob's file as it was; no agent's token to mcpgate reaches the server; `logout --agent alice`
// revokes and removes alice's login only (bob keeps working, alice then needs login); `--agent` on a
// server that is not per-agent is refused.

import { readFile, stat } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import { cli, rpcError, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { runLogin, startAuthServer, startOAuthRemote, type Idp as AuthServer, type OAuthRemote } from '../helpers/oidc.js';

interface TokenFile {
  client?: { client_id: string };
  tokens?: { access_token: string; refresh_token?: string; expires_at?: number };
}

describe('per-agent upstream accounts: mcpgate login SERVER --agent A', { timeout: 120_000 }, () => {
  let as: AuthServer;
  let remote: OAuthRemote;
  let dir: TempDir;
  let config: string;
  let state: string;
  let gate: HttpGateway;
  const alice = makeToken();
  const bob = makeToken();
  const carol = makeToken();
  const agents = new Map<string, Client>();

  const tokenFile = (name: string): string => `${state}/oauth/${name}.json`;
  const readTokens = async (name: string): Promise<TokenFile> => JSON.parse(await readFile(tokenFile(name), 'utf8')) as TokenFile;
  const whoami = async (agent: string): Promise<string> =>
    (JSON.parse(textOf(await agents.get(agent)!.callTool({ name: 'remote__whoami', arguments: {} }))) as { sub: string }).sub;

  before(async () => {
    as = await startAuthServer({ accessTokenTtl: 4 });
    remote = await startOAuthRemote(as.issuer);
    dir = await tempDir();
    state = dir.file('state');
    config = await writeConfig(dir, {
      remote: { type: 'http', url: remote.url, auth: 'oauth', sessions: 'per-agent' },
      together: { type: 'http', url: remote.url, auth: 'oauth' },
    });
    const allow = { allow: { servers: ['remote'] } };
    const rules = await writeRules(dir, {
      agents: {
        alice: { tokens: [alice.hash], ...allow },
        bob: { tokens: [bob.hash], ...allow },
        carol: { tokens: [carol.hash], ...allow },
      },
    });
    // The shared login lists the server for the catalog; each agent's calls go with its own.
    for (const [agent, user] of [
      [undefined, 'operator'],
      ['alice', 'alice-upstream'],
      ['bob', 'bob-upstream'],
    ] as const) {
      const result = await runLogin(as, { config, state, user, ...(agent !== undefined && { agent }) });
      assert.equal(result.code, 0, result.err);
      if (agent !== undefined) assert.match(result.out, new RegExp(`Logged in to server "remote" for agent "${agent}"`));
    }
    gate = await startHttpGateway({ config, args: ['--rules', rules, '--state', state, '--pins', 'off'] });
    for (const [agent, token] of [
      ['alice', alice],
      ['bob', bob],
      ['carol', carol],
    ] as const)
      agents.set(agent, (await connectAgent(gate.url, { token: token.token })).client);
  });

  after(async () => {
    for (const client of agents.values()) await client.close().catch(() => {});
    await gate?.stop();
    await remote?.stop();
    await as?.close();
    await dir?.remove();
  });

  it("stores each agent's login in a file of its own (0600), beside the shared one", async () => {
    for (const name of ['remote', 'remote@alice', 'remote@bob']) assert.equal((await stat(tokenFile(name))).mode & 0o777, 0o600, name);
    const tokens = await Promise.all(
      ['remote', 'remote@alice', 'remote@bob'].map(async (name) => (await readTokens(name)).tokens!.access_token),
    );
    assert.equal(new Set(tokens).size, 3, 'three accounts, three tokens');
  });

  it("each agent's calls carry its own upstream identity; an agent without a login gets needs-login, not the shared account", async () => {
    // Carol first, more often than the pool's creation breaker allows failures: hers must not shut the others out.
    for (let i = 0; i < 7; i++) {
      const err = await rpcError(agents.get('carol')!.callTool({ name: 'remote__whoami', arguments: {} }));
      assert.equal(err.code, -31033, err.message);
      assert.match(err.message, /server "remote" needs login: run `mcpgate login remote --agent carol`/);
    }
    assert.equal(await whoami('alice'), 'alice-upstream');
    assert.equal(await whoami('bob'), 'bob-upstream');
    const seen = await remote.seen();
    for (const token of [alice, bob, carol])
      assert.ok(!seen.some((value) => value.includes(token.token)), "no agent's token to mcpgate reaches the server");
  });

  it("refreshes one agent's expired token without touching another's", async () => {
    const aliceBefore = await readTokens('remote@alice');
    const bobBefore = await readTokens('remote@bob');
    assert.ok(await until(() => Date.now() > aliceBefore.tokens!.expires_at!, 10_000));
    assert.equal(await whoami('alice'), 'alice-upstream');
    const aliceAfter = await readTokens('remote@alice');
    assert.notEqual(aliceAfter.tokens!.access_token, aliceBefore.tokens!.access_token, "alice's token was refreshed");
    assert.deepEqual(await readTokens('remote@bob'), bobBefore, "bob's login is untouched by alice's refresh");
    // Bob signed in after alice: his token may outlive hers by the time between the two logins.
    assert.ok(await until(() => Date.now() > bobBefore.tokens!.expires_at!, 10_000));
    assert.equal(await whoami('bob'), 'bob-upstream');
    assert.notEqual(
      (await readTokens('remote@bob')).tokens!.access_token,
      bobBefore.tokens!.access_token,
      "bob's own token was refreshed on his call",
    );
    const log = JSON.stringify(gate.gw.logs);
    for (const file of [aliceAfter, bobBefore])
      assert.ok(!log.includes(file.tokens!.access_token) && !log.includes(file.tokens!.refresh_token!), 'no token in the log');
  });

  it("logout --agent alice revokes and removes alice's login only: bob keeps working, alice needs login again", async () => {
    const out = await cli(['logout', 'remote', '--agent', 'alice', '--config', config, '--state', state]);
    assert.equal(out.code, 0, out.err);
    assert.match(out.out, /Logged out of server "remote" for agent "alice": removed .*remote@alice\.json/);
    assert.match(out.out, /Revoked the refresh token at /);
    await assert.rejects(stat(tokenFile('remote@alice')), { code: 'ENOENT' });
    await stat(tokenFile('remote'));
    await stat(tokenFile('remote@bob'));
    assert.ok(
      await until(async () => {
        const err = await rpcError(agents.get('alice')!.callTool({ name: 'remote__whoami', arguments: {} })).catch(() => undefined);
        return err?.code === -31033 && err.message.includes('mcpgate login remote --agent alice');
      }, 20_000),
      'alice needs login once her tokens are gone',
    );
    assert.equal(await whoami('bob'), 'bob-upstream');
    const again = await cli(['logout', 'remote', '--agent', 'alice', '--config', config, '--state', state]);
    assert.equal(again.code, 1);
    assert.match(again.err, /no login is stored for server "remote" for agent "alice"/);
  });

  it('refuses --agent for a server whose connection every agent shares', async () => {
    const out = await cli(['login', 'together', '--agent', 'alice', '--config', config, '--state', state, '--no-browser']);
    assert.notEqual(out.code, 0);
    assert.match(out.err, /server "together" is "sessions": "shared".*"sessions": "per-agent"/);
  });
});
