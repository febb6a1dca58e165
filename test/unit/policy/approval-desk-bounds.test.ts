// One agent cannot fill the approval desk for all: its waiting calls are bounded well under the
// process's bound (another agent's call still waits), a call whose arguments are too large for a
// person to read is refused at once, and the listings — /approvals, `mcpgate approve-call`, the
// console — come a page at a time with long arguments folded (the call's own page and
// GET /approvals/ID have them whole). The desk directly, and the real HttpFront in process.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApprovalDesk } from '../../../src/policy/approval-desk.js';
import { GatewayError } from '../../../src/errors.js';
import { Logger } from '../../../src/observability/logger.js';
import { kitchenSink } from '../../helpers/fake-server.js';
import { httpFront, type InProcessHttp } from '../../helpers/in-process.js';
import { until } from '../../helpers/gateway.js';
import { JSON_HEADERS, makeToken } from '../../helpers/requests.js';

const log = new Logger('silent');
const input = (agent: string, args: Record<string, unknown>) => ({
  agent,
  session: 's1',
  server: 'g',
  tool: 'delete',
  publicName: 'g__delete',
  args,
  need: { timeoutMs: 60_000, rule: 'agent approve["g"][0]' },
});

describe('approval desk bounds', () => {
  it("bounds one agent's waiting calls, and another agent's call still waits", async () => {
    const desk = new ApprovalDesk({ audit: undefined, log, maxWaitingPerAgent: 3 });
    const mine = [1, 2, 3].map((i) => desk.wait(input('greedy', { i })));
    assert.ok(mine.every((w) => !(w instanceof GatewayError)));
    const fourth = desk.wait(input('greedy', { i: 4 }));
    assert.ok(fourth instanceof GatewayError);
    assert.match(fourth.message, /agent "greedy" already has 3 calls waiting/);
    const other = desk.wait(input('other', { i: 1 }));
    assert.ok(!(other instanceof GatewayError), "another agent's call waits");
    // One ends: the agent may post again.
    const first = mine[0];
    assert.ok(first !== undefined && !(first instanceof GatewayError));
    first.cancel('done');
    assert.ok(!(desk.wait(input('greedy', { i: 5 })) instanceof GatewayError));
    await desk.close();
  });

  it('refuses a call whose arguments are too large for a person to read (over 64 KiB)', async () => {
    const desk = new ApprovalDesk({ audit: undefined, log });
    const big = desk.wait(input('bot', { blob: 'x'.repeat(64 * 1024) }));
    assert.ok(big instanceof GatewayError);
    assert.equal(big.code, 'MCPG_APPROVAL_EXPIRED');
    assert.match(big.message, /more than a person can be asked to read/);
    assert.equal(desk.waiting, 0);
    await desk.close();
  });

  it('lists a page at a time, soonest to expire first', async () => {
    const desk = new ApprovalDesk({ audit: undefined, log });
    for (let i = 0; i < 7; i++) desk.wait(input(`a${i}`, { i }));
    const { calls, total } = await desk.page(5, 5);
    assert.equal(total, 7);
    assert.deepEqual(
      calls.map((c) => c.arguments.i),
      [5, 6],
    );
    await desk.close();
  });
});

describe('/approvals pages and folds', { timeout: 30_000 }, () => {
  let http: InProcessHttp;
  const admin = makeToken();
  const auth = { authorization: `Bearer ${admin.token}` };
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

  it('folds long arguments in the list, gives them whole for one call, and pages', async () => {
    const session = await http.session();
    const long = 'y'.repeat(10_000);
    const calls = [long, 'short', 'third'].map((text, i) =>
      http.inject({
        headers: { ...JSON_HEADERS, 'mcp-session-id': session },
        body: JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'sink__echo', arguments: { text } } }),
      }),
    );
    assert.ok(await until(() => http.gateway.approvals.waiting === 3));
    const first = await http.inject({ method: 'GET', url: '/approvals?limit=2' });
    assert.equal(first.status, 200, first.body);
    const page = first.json as { approvals: Record<string, unknown>[]; total: number; next: number | null };
    assert.equal(page.total, 3);
    assert.equal(page.approvals.length, 2);
    assert.equal(page.next, 2);
    const rest = await http.inject({ method: 'GET', url: '/approvals?offset=2&limit=2' });
    assert.equal((rest.json as { next: unknown }).next, null);
    const all = [...page.approvals, ...(rest.json as { approvals: Record<string, unknown>[] }).approvals];
    const folded = all.find((c) => c.arguments === null);
    assert.ok(folded !== undefined, 'the long call is folded');
    assert.ok(Number(folded.argumentsBytes) > 10_000);
    assert.ok(String(folded.argumentsPreview).length <= 4096);
    const whole = await http.inject({ method: 'GET', url: `/approvals/${String(folded.id)}` });
    assert.equal(whole.status, 200, whole.body);
    assert.equal((whole.json as { approval: { arguments: { text: string } } }).approval.arguments.text, long);
    assert.equal((await http.inject({ method: 'GET', url: '/approvals?limit=501' })).status, 400);
    assert.equal((await http.inject({ method: 'GET', url: '/approvals/nope' })).status, 404);
    for (const c of all)
      await http.inject({
        method: 'POST',
        url: `/approvals/${String(c.id)}`,
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ approve: false }),
      });
    await Promise.all(calls);
  });
});
