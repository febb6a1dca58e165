// The call gate's order (policy/call-gate.ts), in process over the real stdio front and Gateway: a
// tool that needs a person's approval and has a limit is checked against its limit first, so a call
// the limit refuses now is refused at once and never queued for an admin; a call that passes waits,
// and is counted only once approved.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kitchenSink, type FakeServer } from '../../helpers/fake-server.js';
import { stdioFront, until, type InProcessStdio } from '../../helpers/in-process.js';
import { rpcCodeOf } from '../../../src/errors.js';

const TIMEOUT = 30_000;
const RATE_LIMITED = rpcCodeOf('MCPG_RATE_LIMITED');

const rules = {
  agents: {
    tester: {
      allow: { servers: ['*'] },
      approve: { sink: ['echo'] },
      limits: { tools: { sink: { echo: { calls: 1, per: '1h' } } } },
    },
  },
};

describe('call gate: limits before approvals', { timeout: TIMEOUT }, () => {
  let sink: FakeServer;
  let r: InProcessStdio;

  before(async () => {
    sink = kitchenSink('sink');
    r = await stdioFront({ servers: [sink], rules });
    await r.agent.initialize();
  });

  after(async () => {
    await r?.close();
  });

  it('queues a call within its limit for approval, and counts it once approved', async () => {
    const desk = r.gateway.approvals;
    const answer = r.agent.result('tools/call', { name: 'sink__echo', arguments: { text: 'first' } });
    assert.ok(await until(() => desk.waiting === 1), 'the call waits for an approval');
    const [pending] = await desk.list();
    assert.ok(pending !== undefined);
    await desk.decide(pending.id, { approved: true, by: 'operator', reason: '' });
    const result = await answer;
    assert.deepEqual(result.content, [{ type: 'text', text: 'first' }]);
    const status = await r.gateway.quotas.status();
    assert.equal(status?.limits.find((l) => l.kind === 'calls')?.used, 1);
  });

  it('refuses a call its limit would refuse at once, without queueing it for an admin', async () => {
    const desk = r.gateway.approvals;
    const answer = r.agent.error('tools/call', { name: 'sink__echo', arguments: { text: 'second' } });
    // The watch for a queued call ends with the race, so it keeps the test's file alive no longer.
    let raced = false;
    const first = await Promise.race([
      answer.then(() => 'answered'),
      until(() => raced || desk.waiting > 0, TIMEOUT).then(() => 'queued for approval'),
    ]);
    raced = true;
    assert.equal(first, 'answered');
    const err = await answer;
    assert.equal(err.code, RATE_LIMITED);
    assert.equal(err.data.code, 'MCPG_RATE_LIMITED');
    assert.equal(desk.waiting, 0);
    assert.deepEqual(await desk.list(), []);
  });
});
