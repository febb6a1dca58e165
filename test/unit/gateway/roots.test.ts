// A shared server's roots/list that mcpgate had to answer itself (no agent could be asked) is
// followed by roots/list_changed once an agent with roots can be asked, so the server asks again and
// gets that agent's roots. "Can be asked" is the channel's to say: an HTTP agent only once its GET
// stream is open, else the server's question would be dropped and it would keep no roots.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Gateway } from '../../../src/gateway/gateway.js';
import { agentIdentity } from '../../../src/gateway/session/agent-identity.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeServer, fakeConnections, stdioConfig } from '../../helpers/fake-server.js';

const T = { timeout: 10_000 };
const OWN_ROOTS = { roots: [{ uri: 'file:///work/agent-own', name: 'own' }] };

interface Message {
  id?: number | string;
  method?: string;
  result?: unknown;
}

async function until(done: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * An agent with the roots capability on a channel that can be asked only once `open` is set (an
 * HTTP agent's GET stream): it answers roots/list with its own roots.
 */
function rootsAgent(gateway: Gateway) {
  const waiting = new Map<number | string, (m: Message) => void>();
  const asked: string[] = [];
  let open = false;
  const channel = {
    get canBeAsked(): boolean {
      return open;
    },
    send: (line: string): boolean => {
      const msg = JSON.parse(line) as Message;
      if (msg.method === 'roots/list') {
        if (!open) return false;
        asked.push(msg.method);
        queueMicrotask(() => session.handleLine(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: OWN_ROOTS })));
        return true;
      }
      if (msg.id !== undefined) waiting.get(msg.id)?.(msg);
      return true;
    },
  };
  const session = gateway.openSession(channel, agentIdentity('ann'));
  let next = 1;
  const call = (method: string, params: Record<string, unknown> = {}): Promise<Message> => {
    const id = next++;
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      session.handleLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  };
  return {
    asked,
    call,
    async ready(): Promise<void> {
      await call('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: 't', version: '1' },
      });
      session.handleLine(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    },
    openStream(): void {
      open = true;
      session.canBeAsked();
    },
  };
}

/** A gateway over one in-memory server, `files`, shared. */
function filesGateway(): { files: FakeServer; gateway: Gateway } {
  const files = new FakeServer('files', { tools: [{ name: 'list' }] });
  const gateway = new Gateway({
    config: { file: '/x/.mcp.json', servers: [stdioConfig('files')], warnings: [] },
    log: silentLogger,
    connect: fakeConnections([files]),
  });
  return { files, gateway };
}

void describe("a server's roots/list with no agent to ask", () => {
  void it('is told again only once an agent with roots can be asked, then gets its roots', T, async () => {
    const { files, gateway } = filesGateway();
    try {
      await gateway.start();
      assert.deepEqual((await files.ask('roots/list')).result, { roots: [] }, 'no agent: mcpgate answers with no roots');

      const ann = rootsAgent(gateway);
      await ann.ready();
      // A call answered by the server after the agent's initialized: whatever mcpgate sent the server
      // at initialized reached it before this call did.
      await ann.call('tools/call', { name: 'files__list', arguments: {} });
      assert.ok(!files.notified.includes('notifications/roots/list_changed'), 'told before the agent could be asked');

      ann.openStream();
      await until(() => files.notified.includes('notifications/roots/list_changed'));
      assert.deepEqual((await files.ask('roots/list')).result, OWN_ROOTS, "the agent's own roots");
      assert.deepEqual(ann.asked, ['roots/list']);
    } finally {
      await gateway.close();
    }
  });

  void it('a question that cannot reach the agent is answered with no roots, and told again when it can', T, async () => {
    const { files, gateway } = filesGateway();
    try {
      await gateway.start();
      const ann = rootsAgent(gateway);
      await ann.ready();
      const answer = await files.ask('roots/list');
      assert.deepEqual(answer.result, { roots: [] }, `not an error: ${JSON.stringify(answer)}`);
      ann.openStream();
      await until(() => files.notified.includes('notifications/roots/list_changed'));
      assert.deepEqual((await files.ask('roots/list')).result, OWN_ROOTS);
    } finally {
      await gateway.close();
    }
  });
});
