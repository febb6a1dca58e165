// An answer that retrying cannot change must not be retried in a loop: counted as requests to the
// remote server and to the token endpoint in the 10 s after it, against real parts (oidc-provider as
// the authorization server, test/helpers/oidc.ts; the v2-SDK resource server fixture; built `serve`).
// Four servers park side by side, and one window of 10 s measures all four:
// - step-up for a login: `tools/list` needs a scope the login lacks (403 `insufficient_scope`); the
//   server parks until a login is stored, and nothing reaches it before (the scope it records in its own
//   token file is no login); the next login asks for the union and the server is listed again;
// - step-up for a machine grant beyond the entry's scope: not asked for (`maxScope` defaults to
//   `scope`), MCPG_SERVER_AUTH_REFUSED, parked;
// - a client secret the authorization server refuses (`invalid_client`): parked, no more token requests;
// - the server moves to another authorization server: the machine grant's secret is pinned to the first
//   one (trust on first use) and never presented to the new one; the error says what happened.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { rpcError, until, type GatewayProcess } from '../helpers/gateway.js';
import { oauthRig, type OAuthRig } from '../helpers/oauth-rig.js';
import { ROBOT, startAuthServer, type Idp } from '../helpers/oidc.js';

const WINDOW_MS = 10_000;
/** The most requests to the server, and to the token endpoint, in the window after such an answer. */
const MOST = 3;

const tokenRequests = (as: Idp): number => as.tokenRequests.plain + as.tokenRequests.dpop;

async function toolNames(gw: GatewayProcess): Promise<string[]> {
  return (await gw.client.listTools()).tools.map((t) => t.name);
}

describe('mcpgate as an OAuth client: answers that retrying cannot change park the server', { timeout: 120_000 }, () => {
  const person = oauthRig({ idp: { extraScopes: ['mcp:list'] }, remote: ['--list-scope', 'mcp:list'] });
  const robot = { type: 'oauth', grant: 'client_credentials', clientId: ROBOT.id, clientSecret: ROBOT.secret, scope: 'mcp' };
  const stepUp = oauthRig({ idp: { extraScopes: ['mcp:list'] }, remote: ['--list-scope', 'mcp:list'], entry: { auth: robot } });
  const refused = oauthRig({ entry: { auth: { ...robot, clientSecret: 'not-the-secret' } } });
  const moving = oauthRig({ entry: { auth: robot } });

  it('each parks at once and stays quiet for 10 s; a login revives the one waiting for it', async () => {
    const other = await startAuthServer();
    try {
      const login = await person.login();
      assert.equal(login.code, 0, login.err);

      // The server that moves serves first (its authorization server is pinned then), and then moves.
      const gwMoving = await moving.gateway();
      assert.ok(await until(async () => (await toolNames(gwMoving)).includes('remote__echo'), 20_000), 'served before the move');
      await access(`${moving.state}/oauth/remote.issuer`);
      await moving.remote.move(other.issuer);

      const counts = async (rig: OAuthRig): Promise<{ server: number; token: number }> => ({
        server: (await rig.remote.stats()).requests,
        token: tokenRequests(rig.as),
      });
      const parkedWith = async (gw: GatewayProcess, text: string, rig: OAuthRig): Promise<{ server: number; token: number }> => {
        const parked = gw.waitForLog((l) => String(l.msg).includes(text) && String(l.msg).includes('parked'));
        const late = new Promise<never>((_, reject) => {
          setTimeout(
            () =>
              reject(
                new Error(
                  `not parked with "${text}"; log: ${gw.logs
                    .slice(-12)
                    .map((l) => String(l.msg))
                    .join(' | ')}`,
                ),
              ),
            30_000,
          ).unref();
        });
        await Promise.race([parked, late]);
        return counts(rig);
      };
      const [gwPerson, gwStepUp, gwRefused] = await Promise.all([person.gateway(), stepUp.gateway(), refused.gateway()]);
      const moved = await rpcError(gwMoving.client.callTool({ name: 'remote__echo', arguments: { text: 'x' } }));
      assert.equal(moved.data?.code, 'MCPG_SERVER_AUTH_REFUSED', JSON.stringify(moved));
      assert.match(moved.message, new RegExp(`now names the authorization server ${other.issuer}`));
      const baseline = await Promise.all([
        parkedWith(gwPerson, 'needs login (scope "mcp mcp:list")', person),
        parkedWith(gwStepUp, 'beyond the entry\'s "scope" "mcp"', stepUp),
        parkedWith(gwRefused, 'invalid_client', refused),
        parkedWith(gwMoving, `now names the authorization server ${other.issuer}`, moving),
      ]);

      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      const rigs = [person, stepUp, refused, moving];
      const names = ['step-up for a login', 'step-up beyond the scope', 'invalid_client', 'moved'];
      for (const [i, rig] of rigs.entries()) {
        const now = await counts(rig);
        const server = now.server - baseline[i]!.server;
        const token = now.token - baseline[i]!.token;
        assert.ok(server <= MOST && token <= MOST, `${names[i]}: ${server} requests to the server, ${token} to the token endpoint in 10 s`);
      }
      const quiet = (await counts(person)).server - baseline[0].server;
      assert.equal(quiet, 0, 'nothing reaches a server waiting for a login');
      assert.equal(tokenRequests(other), 0, 'the client secret never went to the authorization server the server moved to');

      // The login asks for the union; the gateway uses it at once: the server is listed with no further wait.
      const again = await person.login();
      assert.equal(again.code, 0, again.err);
      assert.match(
        again.out,
        /the gateway running with --state \S+ uses them now/,
        'the gateway acknowledged the tokens before login said so',
      );
      assert.ok(await until(async () => (await toolNames(gwPerson)).includes('remote__echo'), 20_000), 'listed after the login');
    } finally {
      await other.close();
    }
  });
});
