// On a gateway without tokens (`serve --http --no-auth`) any local process is any agent: an agent
// must not approve its own call held by the rules' `approve` through /approvals. Deciding needs an
// admin's token there too; the listing stays open, as /status is. The real HttpFront in-process.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kitchenSink } from '../../helpers/fake-server.js';
import { httpFront, type InProcessHttp } from '../../helpers/in-process.js';
import { until } from '../../helpers/gateway.js';
import { JSON_HEADERS, makeToken } from '../../helpers/requests.js';

describe('/approvals with --no-auth', { timeout: 30_000 }, () => {
  let http: InProcessHttp;
  const admin = makeToken();
  before(async () => {
    http = await httpFront({
      servers: [kitchenSink('sink')],
      rules: { admins: { ops: { tokens: [admin.hash] } }, agents: { tester: { allow: { servers: ['*'] }, approve: { sink: ['echo'] } } } },
      front: { auth: 'off' },
    });
  });
  after(async () => {
    await http?.close();
  });

  it("refuses the agent's own decision, and takes an admin's", async () => {
    const session = await http.session();
    const call = http.inject({
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'sink__echo', arguments: { text: 'held' } } }),
    });
    let id: string | undefined;
    assert.ok(
      await until(async () => {
        const list = await http.inject({ method: 'GET', url: '/approvals' });
        id = (list.json?.approvals as { id: string }[] | undefined)?.[0]?.id;
        return id !== undefined;
      }),
      'the call waits, listed without a token',
    );
    const decide = (headers: Record<string, string>) =>
      http.inject({
        method: 'POST',
        url: `/approvals/${id!}`,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ approve: true }),
      });
    const byAgent = await decide({});
    assert.equal(byAgent.status, 403, byAgent.body);
    assert.equal((byAgent.json?.error as { data: { code: string } }).data.code, 'MCPG_OPERATORS_ONLY');
    const byAgentHeader = await decide({ 'x-mcpgate-agent': 'tester' });
    assert.equal(byAgentHeader.status, 403);
    const byAdmin = await decide({ authorization: `Bearer ${admin.token}` });
    assert.equal(byAdmin.status, 200, byAdmin.body);
    const answer = await call;
    assert.match(answer.body, /held/);
  });
});
