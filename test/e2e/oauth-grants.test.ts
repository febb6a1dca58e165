// Rules grant by claim ("rules may also grant by a claim ... so a new employee needs no
// rules edit"): two people sign in at a real authorization server (oidc-provider on loopback,
// test/helpers/oidc.ts) whose access tokens carry their `groups`; neither is listed under `agents`.
// Each sees the catalog its group's grant gives, a call outside it is refused, and a reload of the
// rules file changes what they see and may call without a new token.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { cli, fixtureServer, rpcError, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { agentSignIn, Idp } from '../helpers/oidc.js';

const TIMEOUT = 90_000;

describe('grants by claim: two IdP users with different groups (oidc-provider on loopback)', { timeout: TIMEOUT }, () => {
  const idp = new Idp();
  let dir: TempDir;
  let rulesFile: string;
  let config: string;
  let gate: HttpGateway;
  const rulesWith = (grants: unknown): unknown => ({
    auth: { oauth: { issuer: idp.issuer, scopes: ['mcp'] } },
    agents: {},
    grants,
  });

  before(async () => {
    await idp.start();
    idp.accountClaims.set('alice', { groups: ['staff', 'eng'] });
    idp.accountClaims.set('bob', { groups: ['staff', 'sales'] });
    dir = await tempDir();
    config = await writeConfig(dir, { code: fixtureServer('echo-server'), crm: fixtureServer('echo-server') });
    rulesFile = await writeRules(
      dir,
      rulesWith({
        engineering: { when: { groups: 'eng' }, allow: { servers: ['code'] } },
        sales: { when: { groups: 'sales' }, allow: { servers: ['crm'] } },
      }),
    );
    gate = await startHttpGateway({ config, args: ['--rules', rulesFile] });
  });

  after(async () => {
    await gate?.stop();
    await idp.stop();
    await dir?.remove();
  });

  it('mcpgate check lists each grant and whom it applies to', async () => {
    const checked = await cli(['check', '--config', config, '--rules', rulesFile]);
    assert.equal(checked.code, 0, checked.err);
    assert.match(checked.out, /gateway-rules\.json: OK, 0 agent\(s\), 2 grant\(s\) by claim\n/);
    assert.match(
      checked.out,
      /\n {2}grant "engineering": agents whose token's groups has "eng"\n {2}grant "sales": agents whose token's groups has "sales"\n/,
    );
  });

  it("each sees its group's servers, calls outside are refused, and a reload changes it", async () => {
    const alice = await agentSignIn(idp, gate.url, 'alice');
    const bob = await agentSignIn(idp, gate.url, 'bob');
    const groupsOf = (token: string | undefined): unknown =>
      JSON.parse(Buffer.from((token ?? '').split('.')[1] ?? '', 'base64url').toString()).groups;
    assert.deepEqual(groupsOf(alice.tokens()?.access_token), ['staff', 'eng'], 'the IdP puts the groups in the access token');
    const a = await connectAgent(gate.url, { token: alice.tokens()!.access_token });
    const b = await connectAgent(gate.url, { token: bob.tokens()!.access_token });
    try {
      const names = async (agent: typeof a): Promise<string[]> =>
        (await agent.client.listTools()).tools
          .map((t) => t.name)
          .filter((n) => n.endsWith('__echo'))
          .sort();
      assert.deepEqual(await names(a), ['code__echo']);
      assert.deepEqual(await names(b), ['crm__echo']);
      assert.equal(textOf(await a.client.callTool({ name: 'code__echo', arguments: { text: 'from alice' } })), 'from alice');
      assert.equal(textOf(await b.client.callTool({ name: 'crm__echo', arguments: { text: 'from bob' } })), 'from bob');
      const refused = await rpcError(a.client.callTool({ name: 'crm__echo', arguments: { text: 'no' } }));
      assert.equal(refused.data?.code, 'MCPG_POLICY_DENIED', JSON.stringify(refused));
      assert.match(refused.message, /agent "alice" may not use tool "echo" of server "crm"/);
      assert.equal((await rpcError(b.client.callTool({ name: 'code__echo', arguments: { text: 'no' } }))).data?.code, 'MCPG_POLICY_DENIED');

      // Staff may now use the CRM, and sales loses it to a deny: no token changes, no agent listed.
      const reloads = gate.gw.logs.filter((l) => String(l.msg).startsWith('configuration reloaded (')).length;
      await writeFile(
        rulesFile,
        JSON.stringify(
          rulesWith({
            engineering: { when: { groups: 'eng' }, allow: { servers: ['code'] } },
            staff: { when: { groups: ['staff'] }, allow: { servers: ['crm'] } },
            'no-crm-for-sales': { when: { groups: 'sales' }, deny: { servers: ['crm'] } },
          }),
        ),
      );
      await gate.gw.waitForLog(
        (l) =>
          String(l.msg).startsWith('configuration reloaded (') &&
          gate.gw.logs.filter((x) => String(x.msg).startsWith('configuration reloaded (')).length > reloads,
      );
      assert.deepEqual(await names(a), ['code__echo', 'crm__echo']);
      assert.deepEqual(await names(b), []);
      assert.equal(textOf(await a.client.callTool({ name: 'crm__echo', arguments: { text: 'now allowed' } })), 'now allowed');
      const denied = await rpcError(b.client.callTool({ name: 'crm__echo', arguments: { text: 'no' } }));
      assert.equal(denied.data?.code, 'MCPG_POLICY_DENIED');
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});
