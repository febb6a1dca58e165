// A tools/call made from inside the gateway as an agent (AgentSession.callAsAgent, what code mode's
// inner calls use) takes the agent's own path, in process over the real stdio front and Gateway: the
// call gate holds it for a person's approval and counts it against the agent's limit, its answer
// comes back to the caller (not to the agent's channel), an unknown tool is the agent's error,
// aborting it withdraws it from the gate, and a session that ended makes none. One the caller gave up
// on while it waited for the servers to settle sends the agent nothing, whatever happens to it later.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer, fakeConnections, kitchenSink, stdioConfig } from '../../helpers/fake-server.js';
import { stdioFront, until, type InProcessStdio } from '../../helpers/in-process.js';
import { rpcCodeOf } from '../../../src/errors.js';
import type { AgentSession } from '../../../src/gateway/session/session.js';
import { Gateway } from '../../../src/gateway/gateway.js';
import { agentIdentity } from '../../../src/gateway/session/agent-identity.js';
import { silentLogger } from '../../../src/observability/logger.js';

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

describe('a call from inside that its caller gave up on while the servers settle', { timeout: TIMEOUT }, () => {
  interface Waiting {
    gateway: Gateway;
    slow: FakeServer;
    started: Promise<unknown>;
    session: AgentSession;
    /** Every line the agent's channel was sent. */
    sent: string[];
    /** Resolves with the line that answers the agent's request `id`. */
    answerTo: (id: string) => Promise<string>;
  }

  /** A gateway over one server that holds its start, and an agent session whose channel keeps every line it is sent. */
  function waitingGateway(): Waiting {
    const slow = new FakeServer('slow', { tools: [{ name: 'late' }], holdStart: true });
    const gateway = new Gateway({
      config: { file: '/x/.mcp.json', servers: [stdioConfig('slow')], warnings: [] },
      log: silentLogger,
      connect: fakeConnections([slow]),
    });
    const started = gateway.start();
    const sent: string[] = [];
    const awaited = new Map<unknown, (line: string) => void>();
    const session = gateway.openSession(
      {
        send: (line: string) => {
          sent.push(line);
          const id = (JSON.parse(line) as { id?: unknown }).id;
          awaited.get(id)?.(line);
        },
      },
      agentIdentity('a'),
    );
    const answerTo = (id: string): Promise<string> => new Promise((resolve) => awaited.set(id, resolve));
    return { gateway, slow, started, session, sent, answerTo };
  }

  /** Aborts a call from inside of a name no server has yet: it waits for the servers to settle. */
  async function abortWhileWaiting(session: AgentSession): Promise<void> {
    const controller = new AbortController();
    const answer = session.callAsAgent({ name: 'slow__nope' }, { signal: controller.signal });
    controller.abort();
    await assert.rejects(answer, { name: 'AbortError' });
  }

  it('sends the agent nothing once the servers settle and the name turns out unknown', async () => {
    const { gateway, slow, started, session, sent, answerTo } = waitingGateway();
    try {
      await abortWhileWaiting(session);
      // The agent's own call of the same name waits behind the given-up one: its answer shows both have run.
      const answered = answerTo('after');
      session.handleLine(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'slow__nope' } }));
      slow.release();
      await started;
      assert.match(await answered, /unknown tool: slow__nope/);
      assert.equal(sent.length, 1, `the agent never sent the call from inside, so it gets no answer to it: ${sent.join('\n')}`);
    } finally {
      await gateway.close();
    }
  });

  it('sends the agent nothing when the session closes first', async () => {
    const { gateway, slow, started, session, sent } = waitingGateway();
    await abortWhileWaiting(session);
    session.close();
    assert.deepEqual(sent, []);
    const closing = gateway.close();
    slow.release();
    await closing;
    await started;
  });
});
