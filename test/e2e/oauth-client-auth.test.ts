// How mcpgate authenticates itself at a real authorization server's token endpoint (oidc-provider on
// loopback, test/helpers/oidc.ts) with `private_key_jwt` (RFC 7523 §2.2): a client-credentials entry
// with a `privateKey` instead of a `clientSecret` gets its access token with a signed client
// assertion, and the remote server (test/fixtures/oauth-remote-server.ts) serves it as that client.
// A wrong key is refused by the authorization server, and the error says where it failed.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exportPKCS8, generateKeyPair } from 'jose';
import { textOf, writeConfig } from '../helpers/gateway.js';
import { oauthRig } from '../helpers/oauth-rig.js';
import { KEY_ROBOT_ID } from '../helpers/oidc.js';

describe('mcpgate as an OAuth client: private_key_jwt client authentication', { timeout: 90_000 }, () => {
  const rig = oauthRig({ entry: null });

  it('gets a client-credentials token with a signed client assertion, no secret', async () => {
    const config = await writeConfig(
      rig.dir,
      {
        robot: {
          type: 'http',
          url: rig.remote.url,
          auth: {
            type: 'oauth',
            grant: 'client_credentials',
            clientId: KEY_ROBOT_ID,
            privateKey: '${ROBOT_KEY}',
            signingAlgorithm: 'ES256',
          },
        },
      },
      'good.json',
    );
    const gw = await rig.gateway({
      config,
      args: ['--state', rig.dir.file('state-good')],
      env: { ROBOT_KEY: rig.as.keyRobot.privateKeyPem },
    });
    const answer = await gw.client.callTool({ name: 'robot__whoami', arguments: {} });
    assert.equal((JSON.parse(textOf(answer)) as { client_id: string }).client_id, KEY_ROBOT_ID);
    assert.ok(!gw.logs.some((l) => JSON.stringify(l).includes('PRIVATE KEY')), 'the key is never logged');
  });

  it('a key the authorization server does not know is refused, and the error says so', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const config = await writeConfig(
      rig.dir,
      {
        robot: {
          type: 'http',
          url: rig.remote.url,
          auth: { type: 'oauth', grant: 'client_credentials', clientId: KEY_ROBOT_ID, privateKey: '${ROBOT_KEY}' },
        },
      },
      'bad.json',
    );
    const gw = await rig.gateway({
      config,
      args: ['--state', rig.dir.file('state-bad')],
      env: { ROBOT_KEY: await exportPKCS8(privateKey) },
    });
    const failed = await gw.waitForLog((l) => /could not get an access token/.test(JSON.stringify(l)));
    assert.match(JSON.stringify(failed), /robot/);
    assert.deepEqual((await gw.client.listTools()).tools, []);
  });
});
