// A tools/call made from inside the gateway as an agent (AgentSession.callAsAgent, what code mode's
// inner calls use) takes the agent's own path, in process over the real stdio front and Gateway: the
// call gate holds it for a person's approval and counts it against the agent's limit, its answer
// comes back to the caller (not to the agent's channel), an unknown tool is the agent's error,
// aborting it withdraws it from the gate, and a session that ended makes none.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kitchenSink, type FakeServer } from '../../helpers/fake-server.js';
import { stdioFront, until, type InProcessStdio } from '../../helpers/in-process.js';
import { rpcCodeOf } from '../../../src/errors.js';
import type { AgentSession } from '../../../src/gateway/session/session.js';

const TIMEOUT = 30_000;

const rules = {
  agents: {
    tester: {
      allow: { servers: ['*'] },
      approve: { sink: ['echo'] },
      limits: { tools: { sink: { echo: { calls: 5, per: '1h' } } } },
    },
  },
};

describe('calls from inside the gateway, as the agent', { timeout: TIMEOUT }, () => {
  let sink: FakeServer;
  let r: InProcessStdio;
  let session: AgentSession;

  before(async () => {
    sink = kitchenSink('sink');
    r = await stdioFront({ servers: [sink], rules });
    await r.agent.initialize();
    const [only] = [...r.gateway.agents];
    assert.ok(only !== undefined, 'the agent has a session');
    session = only;
  });

  after(async () => {
    await r?.close();
  });

  it('goes through the call gate: held for approval, then answered to the caller and counted', async () => {
    const desk = r.gateway.approvals;
    const answer = session.callAsAgent({ name: 'sink__echo', arguments: { text: 'inner' } });
    assert.ok(await until(() => desk.waiting === 1), 'the inner call waits for an approval');
    const [pending] = await desk.list();
    assert.ok(pending !== undefined);
    await desk.decide(pending.id, { approved: true, by: 'operator', reason: '' });
    const answered = await answer;
    assert.ok('result' in answered, JSON.stringify(answered));
    assert.deepEqual(answered.result.content, [{ type: 'text', text: 'inner' }]);
    const status = await r.gateway.quotas.status();
    assert.equal(status?.limits.find((l) => l.kind === 'calls')?.used, 1);
  });

  it('answers an unknown tool with the error the agent would get', async () => {
    const answered = await session.callAsAgent({ name: 'sink__nope' });
    assert.ok('error' in answered, JSON.stringify(answered));
    assert.equal(answered.error.code, rpcCodeOf('MCPG_TOOL_NOT_FOUND'));
  });

  it('is withdrawn from the gate when its signal aborts', async () => {
    const desk = r.gateway.approvals;
    const controller = new AbortController();
    const answer = session.callAsAgent({ name: 'sink__echo', arguments: { text: 'never' } }, { signal: controller.signal });
    assert.ok(await until(() => desk.waiting === 1), 'the inner call waits for an approval');
    controller.abort();
    await assert.rejects(answer, { name: 'AbortError' });
    assert.ok(await until(() => desk.waiting === 0), 'the held call was withdrawn');
  });

  it('is refused once the session has ended, as an agent request would be', async () => {
    session.close();
    const answered = await session.callAsAgent({ name: 'sink__echo', arguments: { text: 'late' } });
    assert.ok('error' in answered, JSON.stringify(answered));
    assert.equal(answered.error.code, rpcCodeOf('MCPG_SHUTTING_DOWN'));
    assert.equal(r.gateway.approvals.waiting, 0);
  });
});
