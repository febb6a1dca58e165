// Two authorization servers in one gateway's rules (docs/rules-and-identity.md "Sign in with your identity provider",
// several issuers): a corporate one (the first: bare agent ids, introspection of opaque tokens) and
// a partner's (`namespace: "partner"`). Both are real oidc-provider instances on loopback. A
// partner's token with `sub=alice` is the agent `partner:alice`, never the static-token agent
// `alice` nor her session; an opaque token goes to the corporate issuer's introspection only.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { cli, fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import {
  JSON_HEADERS,
  connectAgent,
  initializeBody,
  makeToken,
  raw,
  rawSession,
  startHttpGateway,
  writeRules,
  type HttpGateway,
} from '../helpers/http.js';
import { Idp, OPAQUE_ROBOT, ROBOT } from '../helpers/oidc.js';

const TIMEOUT = 90_000;

describe('two issuers: one agent namespace each, opaque tokens to one issuer only', { timeout: TIMEOUT }, () => {
  const corporate = new Idp();
  const partner = new Idp();
  const alice = makeToken();
  const ops = makeToken();
  let dir: TempDir;
  let gate: HttpGateway;

  before(async () => {
    await corporate.start();
    await partner.start();
    dir = await tempDir();
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server'), sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, {
      auth: {
        oauth: [
          {
            issuer: corporate.issuer,
            scopes: ['mcp'],
            introspection: { clientId: ROBOT.id, clientSecret: '${TEST_INTROSPECTION_SECRET}' },
          },
          { issuer: partner.issuer, namespace: 'partner', scopes: ['mcp'] },
        ],
      },
      agents: {
        alice: { tokens: [alice.hash], allow: { servers: ['echo', 'sink'] } },
        'partner:alice': { allow: { servers: ['echo'] } },
        [OPAQUE_ROBOT.id]: { allow: { servers: ['echo'] } },
      },
      admins: { ops: { tokens: [ops.hash] } },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules], env: { TEST_INTROSPECTION_SECRET: ROBOT.secret } });
  });

  after(async () => {
    await gate?.stop();
    await corporate.stop();
    await partner.stop();
    await dir?.remove();
  });

  /** A token the partner's authorization server signs for `sub`, for mcpgate's resource URI. */
  async function partnerToken(sub: string): Promise<string> {
    const [key] = partner.keys;
    assert.ok(key !== undefined);
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: partner.issuer, aud: gate.url, sub, scope: 'mcp', iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid })
      .sign(key.privateKey);
  }

  it("a partner's sub=alice is partner:alice: not the static agent alice, not her session, with partner:alice's rules", async () => {
    const session = await rawSession(gate.url, { authorization: `Bearer ${alice.token}` });
    const token = await partnerToken('alice');
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const intruder = await raw(gate.url, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': session },
      body: list,
    });
    assert.equal(intruder.status, 404, `the partner's alice used the static alice's session: ${intruder.body}`);
    const own = await raw(gate.url, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${alice.token}`, 'mcp-session-id': session },
      body: list,
    });
    assert.equal(own.status, 200, own.body);

    const agent = await connectAgent(gate.url, { token });
    try {
      const tools = (await agent.client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.length > 0 && tools.every((n) => n.startsWith('echo__')), `partner:alice's rules (echo only): ${tools.join(', ')}`);
      assert.equal(textOf(await agent.client.callTool({ name: 'echo__echo', arguments: { text: 'partner' } })), 'partner');
      const status = await raw(`${gate.base}/status`, { method: 'GET', headers: { authorization: `Bearer ${ops.token}` } });
      const byAgent = (status.json?.sessions as { by_agent: Record<string, number> }).by_agent;
      assert.equal(byAgent['partner:alice'], 1);
      assert.equal(byAgent.alice, 1);
    } finally {
      await agent.client.close();
    }
  });

  it('an opaque token goes to the introspecting issuer only: the partner never sees the corporate token', async () => {
    const opaque = await corporate.clientCredentials(gate.url, OPAQUE_ROBOT);
    assert.equal(opaque.split('.').length, 1);
    const [corporateBefore, partnerBefore] = [corporate.introspections, partner.introspections];
    const agent = await connectAgent(gate.url, { token: opaque });
    await agent.client.close();
    const unknown = await raw(gate.url, {
      headers: { ...JSON_HEADERS, authorization: 'Bearer made-up-opaque-token' },
      body: initializeBody(),
    });
    assert.equal(unknown.status, 401);
    assert.ok(corporate.introspections > corporateBefore, 'the corporate issuer was asked');
    assert.equal(partner.introspections, partnerBefore, 'the partner was never sent an opaque token');
  });

  it('a rules file where two issuers introspect, or a second issuer has no namespace, is refused at load with the reason', async () => {
    const other = await tempDir();
    try {
      const config = await writeConfig(other, { echo: fixtureServer('echo-server') });
      const introspection = { clientId: ROBOT.id, clientSecret: ROBOT.secret };
      const both = await writeRules(other, {
        auth: {
          oauth: [
            { issuer: corporate.issuer, introspection },
            { issuer: partner.issuer, namespace: 'partner', introspection },
          ],
        },
        agents: {},
      });
      const twice = await cli(['check', '--config', config, '--rules', both]);
      assert.notEqual(twice.code, 0, 'two introspecting issuers are refused');
      assert.match(twice.out + twice.err, /2 issuers have "introspection" .*an opaque token names no issuer, so it would be shown to each/);
      const bare = await writeRules(other, { auth: { oauth: [{ issuer: corporate.issuer }, { issuer: partner.issuer }] }, agents: {} });
      const unnamed = await cli(['check', '--config', config, '--rules', bare]);
      assert.notEqual(unnamed.code, 0, 'a second issuer without a namespace is refused');
      assert.match(
        unnamed.out + unnamed.err,
        /auth\.oauth\[1\]\.namespace: missing: with more than one issuer, each after the first needs a "namespace"/,
      );
    } finally {
      await other.remove();
    }
  });
});
