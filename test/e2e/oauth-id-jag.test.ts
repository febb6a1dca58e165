// Enterprise-managed authorization (`"grant": "id_jag"`) where it cannot succeed, against a real
// authorization server (oidc-provider on loopback, test/helpers/oidc.ts) in front of the remote
// server (test/fixtures/oauth-remote-server.ts): an ID token file that cannot be read, and an "IdP"
// that refuses the token exchange. Either way the server gets no token, mcpgate says which step
// failed (MCPG_SERVER_UNAVAILABLE, logged with the server), and the ID token is never logged. The
// whole flow (exchange at an IdP, then the jwt-bearer grant) is run by the conformance suite's
// auth/enterprise-managed-authorization and auth/cross-app-access-complete-flow scenarios.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { startGateway, tempDir, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { startAuthServer, startOAuthRemote, type Idp, type OAuthRemote } from '../helpers/oidc.js';

const ID_TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW5vdC1jaGVja2VkLWhlcmU';

describe('mcpgate as an OAuth client: the id_jag grant when the exchange cannot happen', { timeout: 90_000 }, () => {
  let as: Idp;
  let remote: OAuthRemote;
  let dir: TempDir;
  const gateways: GatewayProcess[] = [];

  before(async () => {
    as = await startAuthServer();
    remote = await startOAuthRemote(as.issuer);
    dir = await tempDir();
  });

  after(async () => {
    for (const gw of gateways) if (gw.child.exitCode === null) await gw.stop();
    await remote?.stop();
    await as?.close();
    await dir?.remove();
  });

  const entry = (idTokenFile: string, idpTokenEndpoint: string): Record<string, unknown> => ({
    type: 'http',
    url: remote.url,
    auth: {
      type: 'oauth',
      grant: 'id_jag',
      clientId: as.machine.clientId,
      clientSecret: as.machine.clientSecret,
      idpTokenEndpoint,
      idpClientId: 'mcpgate-at-idp',
      idTokenFile,
    },
  });

  it('an ID token file that cannot be read: no token request, and the error names the file', async () => {
    const missing = dir.file('no-such-id-token');
    const config = await writeConfig(dir, { crm: entry(missing, `${as.issuer}/token`) }, 'missing.json');
    const gw = await startGateway({ config, args: ['--state', dir.file('state-missing')] });
    gateways.push(gw);
    const failed = JSON.stringify(await gw.waitForLog((l) => /could not get an access token/.test(JSON.stringify(l))));
    assert.match(failed, /crm/);
    assert.ok(failed.includes(`cannot read the ID token \\"idTokenFile\\" ${missing}: ENOENT`), failed);
    assert.deepEqual((await gw.client.listTools()).tools, []);
    assert.equal((await remote.stats()).accepted, 0);
  });

  it('an IdP that refuses the token exchange: the error says the exchange failed, and the ID token is never logged', async () => {
    const idTokenFile = dir.file('id-token');
    await writeFile(idTokenFile, `${ID_TOKEN}\n`, { mode: 0o600 });
    // oidc-provider's token endpoint does not know mcpgate's client at the IdP: an IdP that refuses the exchange.
    const config = await writeConfig(dir, { crm: entry(idTokenFile, `${as.issuer}/token`) }, 'refused.json');
    const gw = await startGateway({ config, args: ['--state', dir.file('state-refused')] });
    gateways.push(gw);
    const failed = JSON.stringify(await gw.waitForLog((l) => /could not get an access token/.test(JSON.stringify(l))));
    assert.ok(
      failed.includes(
        `the IdP's token exchange at ${as.issuer}/token (ID token for an ID-JAG) failed: Token exchange failed: invalid_client`,
      ),
      failed,
    );
    assert.deepEqual((await gw.client.listTools()).tools, []);
    assert.equal((await remote.stats()).accepted, 0);
    assert.ok(!gw.logs.some((l) => JSON.stringify(l).includes(ID_TOKEN)), 'the ID token is never logged');
  });
});
