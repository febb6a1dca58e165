// What an unauthenticated client can make mcpgate ask the authorization server (docs/rules-and-identity.md "Sign in
// with your identity provider", opaque tokens): a real oidc-provider on loopback counting the calls
// to its introspection endpoint, the real gateway with its issuer in the rules. A flood of made-up
// opaque tokens costs at most the issuer's `maxPerSecond` calls (the rest get 503, not a call);
// a refused token asked again is answered from the negative cache; mcpgate's own tokens (`mcpg_…`,
// an admin's) are never introspected; an agent already known keeps working through the flood.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import {
  JSON_HEADERS,
  connectAgent,
  initializeBody,
  makeToken,
  messageOf,
  raw,
  startHttpGateway,
  writeRules,
  type HttpGateway,
} from '../helpers/http.js';
import { Idp, OPAQUE_ROBOT, ROBOT } from '../helpers/oidc.js';

const TIMEOUT = 90_000;
const RATE = 5;

describe('introspection of opaque tokens is bounded (oidc-provider counting its introspection calls)', { timeout: TIMEOUT }, () => {
  const idp = new Idp();
  const admin = makeToken();
  let dir: TempDir;
  let gate: HttpGateway;

  before(async () => {
    await idp.start();
    dir = await tempDir();
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const rules = await writeRules(dir, {
      auth: {
        oauth: {
          issuer: idp.issuer,
          scopes: ['mcp'],
          introspection: { clientId: ROBOT.id, clientSecret: '${TEST_INTROSPECTION_SECRET}', maxPerSecond: RATE },
        },
      },
      agents: { [OPAQUE_ROBOT.id]: { allow: { servers: ['echo'] } } },
      admins: { ops: { tokens: [admin.hash] } },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules], env: { TEST_INTROSPECTION_SECRET: ROBOT.secret } });
  });

  after(async () => {
    await gate?.stop();
    await idp.stop();
    await dir?.remove();
  });

  const send = (token: string) => raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` }, body: initializeBody() });

  it("mcpgate's own tokens (an unlisted mcpg_… one, an admin's) are refused without an introspection call", async () => {
    const before = idp.introspections;
    for (let i = 0; i < 30; i++) {
      const res = await send(makeToken().token);
      assert.equal(res.status, 401, res.body);
      assert.match(messageOf(res.json), /an mcpgate token that the rules do not list/);
    }
    const res = await send(admin.token);
    assert.equal(res.status, 401);
    assert.match(messageOf(res.json), /admin's token/);
    assert.equal(idp.introspections, before, 'no mcpgate token reached the issuer');
  });

  it('a flood of made-up opaque tokens makes at most maxPerSecond calls; past it 503 without a call; a refused token asked again is not asked again; a known agent keeps working', async () => {
    const opaque = await idp.clientCredentials(gate.url, OPAQUE_ROBOT);
    const known = await connectAgent(gate.url, { token: opaque });
    await known.client.close();
    const start = idp.introspections;
    const began = Date.now();
    const tokens = Array.from({ length: 300 }, () => randomBytes(24).toString('base64url'));
    const answers: Awaited<ReturnType<typeof send>>[] = [];
    for (let i = 0; i < tokens.length; i += 50) answers.push(...(await Promise.all(tokens.slice(i, i + 50).map(send))));
    const seconds = (Date.now() - began) / 1000;
    const calls = idp.introspections - start;
    // The bucket holds RATE calls and refills at RATE a second.
    assert.ok(
      calls <= RATE + Math.ceil(seconds * RATE) + 1,
      `${calls} introspection calls for 300 made-up tokens in ${seconds.toFixed(1)} s`,
    );
    const limited = answers.filter((a) => a.status === 503);
    const inactive = answers.filter((a) => a.status === 401);
    assert.equal(limited.length + inactive.length, tokens.length);
    assert.ok(limited.length >= tokens.length - calls, `${limited.length} refused at the limit`);
    assert.match(
      messageOf(limited[0]?.json),
      new RegExp(
        `^more than ${RATE} introspection calls a second to issuer http://127\\.0\\.0\\.1:\\d+ \\(introspection\\.maxPerSecond\\): the token was not checked; try again shortly$`,
      ),
    );
    assert.match(messageOf(inactive[0]?.json), /^unknown token \(not active at /);

    // The known agent's token is answered from the cache while the budget is spent.
    const during = idp.introspections;
    const again = await connectAgent(gate.url, { token: opaque });
    try {
      assert.equal(textOf(await again.client.callTool({ name: 'echo__echo', arguments: { text: 'still here' } })), 'still here');
    } finally {
      await again.client.close();
    }
    // A token the issuer called inactive, sent again: the negative cache answers.
    const refused = tokens[answers.findIndex((a) => a.status === 401)]!;
    const repeat = await send(refused);
    assert.equal(repeat.status, 401);
    assert.equal(idp.introspections, during, 'neither the known token nor the refused one was introspected again');
  });
});
