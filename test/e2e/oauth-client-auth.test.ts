// How mcpgate authenticates itself at a real authorization server's token endpoint (oidc-provider on
// loopback, test/helpers/oidc.ts) with `private_key_jwt` (RFC 7523 §2.2): a client-credentials entry
// with a `privateKey` instead of a `clientSecret` gets its access token with a signed client
// assertion, and the remote server (test/fixtures/oauth-remote-server.ts) serves it as that client.
// A wrong key is refused by the authorization server, and the error says where it failed (the server
// is parked: retrying cannot help). A multi-line key in a `privateKeyFile` is used only when that file
// is the user's own and nobody else may read it (mode 0600), as ssh does.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import { exportPKCS8, generateKeyPair } from 'jose';
import { cli, textOf, writeConfig } from '../helpers/gateway.js';
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
    const failed = await gw.waitForLog((l) => /refused the .{0,4}client_credentials.{0,4} grant \(invalid_client/.test(JSON.stringify(l)));
    assert.match(JSON.stringify(failed), /robot/);
    assert.deepEqual((await gw.client.listTools()).tools, []);
  });

  it('reads a multi-line key from "privateKeyFile" only when nobody else may read it', async () => {
    const keyFile = rig.dir.file('robot-key.pem');
    await writeFile(keyFile, rig.as.keyRobot.privateKeyPem, { mode: 0o644 });
    await chmod(keyFile, 0o644);
    const config = await writeConfig(
      rig.dir,
      {
        robot: {
          type: 'http',
          url: rig.remote.url,
          auth: { type: 'oauth', grant: 'client_credentials', clientId: KEY_ROBOT_ID, privateKeyFile: 'robot-key.pem' },
        },
      },
      'key-file.json',
    );
    const open = await cli(['check', '--config', config]);
    assert.equal(open.code, 2, open.out);
    assert.match(open.err + open.out, /"privateKeyFile" \S+robot-key\.pem is readable or writable by others \(mode 644\); run chmod 600/);
    await chmod(keyFile, 0o600);
    const gw = await rig.gateway({ config, args: ['--state', rig.dir.file('state-file')] });
    const answer = await gw.client.callTool({ name: 'robot__whoami', arguments: {} });
    assert.equal((JSON.parse(textOf(answer)) as { client_id: string }).client_id, KEY_ROBOT_ID);
  });
});
