// The Gateway end to end without a process: real Connections made by the injected factory
// over in-memory servers (fake-server.ts), an agent session driven through a channel that records
// what it is sent. Covers the routing decisions the e2e tests prove with real children — allowed,
// denied, unknown, a call waiting until the servers settle (or cancelled meanwhile: never sent, its
// trace span ended as cancelled), and discovery mode's meta-tools; and that a shared server's
// list_changed and a pooled connection's take the one listing path.

import { describe, it } from 'node:test';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gateway, type GatewayOptions } from '../../../src/gateway/gateway.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { parseRules } from '../../../src/rules/load.js';
import { Tracing } from '../../../src/observability/tracing.js';
import { FakeServer, fakeConnections, stdioConfig } from '../../helpers/fake-server.js';
import { agentIdentity } from '../../../src/gateway/session/agent-identity.js';

const T = { timeout: 10_000 };

interface Answer {
  id: number;
  method?: string;
  result?: { content?: { text: string }[]; tools?: { name: string }[] };
  error?: { code: number; message: string; data?: { code?: string; retryable?: boolean; state?: string } };
}

/** An agent: sends requests on a session and resolves each with the answer sent back for its id. */
function agent(gateway: Gateway, name = 'a') {
  const waiting = new Map<number, (answer: Answer) => void>();
  /** The notifications it was sent, by method. */
  const notes: string[] = [];
  const session = gateway.openSession(
    {
      send: (line: string) => {
        const msg = JSON.parse(line) as Answer;
        if (msg.method !== undefined) notes.push(msg.method);
        waiting.get(msg.id)?.(msg);
        waiting.delete(msg.id);
      },
    },
    agentIdentity(name),
  );
  let next = 1;
  return {
    session,
    notes,
    call(method: string, params: Record<string, unknown> = {}): Promise<Answer> {
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        session.handleLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    },
  };
}

function gatewayOver(servers: FakeServer[], options: Partial<GatewayOptions> = {}): Gateway {
  return new Gateway({
    config: { file: '/x/.mcp.json', servers: servers.map((s) => stdioConfig(s.name)), warnings: [] },
    log: silentLogger,
    connect: fakeConnections(servers, options.supervision),
    ...options,
  });
}

/** Waits (bounded) until `done` holds, checking after each turn of the event loop's timers. */
async function until(done: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An initialized agent that has seen the tools list once (so a list change would be announced). */
async function listingAgent(gateway: Gateway): Promise<ReturnType<typeof agent>> {
  const a = agent(gateway);
  await a.call('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
  a.session.handleLine(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  await a.call('tools/list');
  return a;
}

const names = (answer: Answer): string[] | undefined => answer.result?.tools?.map((t) => t.name);

const errorCode = (answer: Answer): string | undefined => answer.error?.data?.code;

void describe('Gateway routing over in-memory servers', () => {
  void it("allowed: the call reaches its server under the server's own name and the answer comes back", T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }] });
    const gateway = gatewayOver([fs]);
    try {
      await gateway.start();
      const answer = await agent(gateway).call('tools/call', { name: 'fs__read', arguments: { path: '/a' } });
      assert.equal(answer.result?.content?.[0]?.text, 'fs:read');
      assert.deepEqual(fs.calls, [{ name: 'read', arguments: { path: '/a' } }]);
    } finally {
      await gateway.close();
    }
  });

  void it('denied: MCPG_POLICY_DENIED, and the server never sees the call', T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }, { name: 'write' }] });
    const rules = parseRules(
      JSON.stringify({ agents: { a: { allow: { servers: ['fs'] }, deny: { tools: { fs: ['write'] } } } } }),
      '/x/rules.json',
      ['fs'],
    );
    const gateway = gatewayOver([fs], { rules });
    try {
      await gateway.start();
      const answer = await agent(gateway).call('tools/call', { name: 'fs__write', arguments: {} });
      assert.equal(errorCode(answer), 'MCPG_POLICY_DENIED');
      assert.deepEqual(fs.calls, []);
    } finally {
      await gateway.close();
    }
  });

  void it('unknown: MCPG_TOOL_NOT_FOUND once the servers have settled', T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }] });
    const gateway = gatewayOver([fs]);
    try {
      await gateway.start();
      assert.equal(errorCode(await agent(gateway).call('tools/call', { name: 'fs__nope' })), 'MCPG_TOOL_NOT_FOUND');
    } finally {
      await gateway.close();
    }
  });

  void it('a call to a tool not listed yet waits until the servers settle, then goes through', T, async () => {
    const slow = new FakeServer('slow', { tools: [{ name: 'late' }], holdStart: true });
    const gateway = gatewayOver([slow]);
    try {
      const started = gateway.start();
      const a = agent(gateway);
      let answered = false;
      const pending = a.call('tools/call', { name: 'slow__late' }).then((answer) => ((answered = true), answer));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(answered, false, 'answered before the server had started');
      slow.release();
      await started;
      assert.equal((await pending).result?.content?.[0]?.text, 'slow:late');
    } finally {
      await gateway.close();
    }
  });

  void it('a call or a read the agent cancels while it waits for the servers is never sent, nor answered', T, async () => {
    const slow = new FakeServer('slow', { tools: [{ name: 'late' }], prompts: [{ name: 'hello', text: () => 'hi' }], holdStart: true });
    const gateway = gatewayOver([slow]);
    try {
      const started = gateway.start();
      const a = agent(gateway);
      const answered: number[] = [];
      const cancelled = [a.call('tools/call', { name: 'slow__late' }), a.call('prompts/get', { name: 'slow__hello' })];
      cancelled.forEach((answer, i) => void answer.then(() => answered.push(i + 1)));
      for (const requestId of [1, 2])
        a.session.handleLine(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } }));
      // Two more of the same wait behind them: once they are answered, the cancelled ones have had their turn.
      const kept = [a.call('tools/call', { name: 'slow__late' }), a.call('prompts/get', { name: 'slow__hello' })];
      slow.release();
      await started;
      const [call, prompt] = await Promise.all(kept);
      assert.equal(call!.result?.content?.[0]?.text, 'slow:late');
      assert.equal(prompt!.error, undefined);
      assert.deepEqual(slow.calls, [{ name: 'late', arguments: undefined }], 'only the call the agent kept reached the server');
      assert.deepEqual(answered, [], 'a cancelled request is not answered');
    } finally {
      await gateway.close();
    }
  });

  void it('a request cancelled while it waits for the servers ends its trace span as cancelled', T, async () => {
    // A real OTLP/HTTP receiver on 127.0.0.1 keeps the exported spans.
    const exported: { name: string; attributes: { key: string; value: { stringValue?: string } }[] }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: { scopeSpans: { spans: (typeof exported)[number][] }[] }[];
        };
        for (const r of body.resourceSpans) for (const scope of r.scopeSpans) exported.push(...scope.spans);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const tracing = new Tracing({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces` });
    const slow = new FakeServer('slow', { tools: [{ name: 'late' }], prompts: [{ name: 'hello', text: () => 'hi' }], holdStart: true });
    const gateway = gatewayOver([slow], { tracing });
    try {
      const started = gateway.start();
      const a = agent(gateway);
      void a.call('tools/call', { name: 'slow__late' });
      void a.call('prompts/get', { name: 'slow__hello' });
      for (const requestId of [1, 2])
        a.session.handleLine(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } }));
      slow.release();
      await started;
      await gateway.close();
      await tracing.close();
      const outcome = (name: string): string | undefined =>
        exported.find((span) => span.name === name)?.attributes.find((a) => a.key === 'mcpgate.outcome')?.value.stringValue;
      assert.equal(outcome('tools/call slow__late'), 'cancelled', JSON.stringify(exported.map((span) => span.name)));
      assert.equal(outcome('prompts/get slow__hello'), 'cancelled');
    } finally {
      await gateway.close();
      await tracing.close();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  void it('a call waiting for the servers is answered MCPG_SHUTTING_DOWN when the gateway closes first', T, async () => {
    const slow = new FakeServer('slow', { tools: [{ name: 'late' }], holdStart: true });
    const gateway = gatewayOver([slow]);
    const started = gateway.start();
    const pending = agent(gateway).call('tools/call', { name: 'slow__late' });
    const closing = gateway.close();
    assert.equal(errorCode(await pending), 'MCPG_SHUTTING_DOWN');
    slow.release(); // the connection's close waits for its start to finish
    await closing;
    await started;
  });

  void it('discovery mode: tools/list is the meta-tools; execute_tool takes the normal path under the rules', T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }, { name: 'write' }] });
    const rules = parseRules(
      JSON.stringify({ agents: { a: { allow: { servers: ['fs'] }, deny: { tools: { fs: ['write'] } } } } }),
      '/x/rules.json',
      ['fs'],
    );
    const gateway = gatewayOver([fs], { mode: 'discovery', rules });
    try {
      await gateway.start();
      const a = agent(gateway);
      const list = await a.call('tools/list');
      assert.deepEqual(
        list.result?.tools?.map((t) => t.name),
        ['list_servers', 'get_server_tools', 'execute_tool'],
      );
      const tools = await a.call('tools/call', { name: 'get_server_tools', arguments: { server: 'fs' } });
      assert.deepEqual(
        JSON.parse(tools.result!.content![0]!.text).tools.map((t: { name: string }) => t.name),
        ['read'],
      );
      const ran = await a.call('tools/call', { name: 'execute_tool', arguments: { server: 'fs', tool: 'read', args: { x: 1 } } });
      assert.equal(ran.result?.content?.[0]?.text, 'fs:read');
      const refused = await a.call('tools/call', { name: 'execute_tool', arguments: { server: 'fs', tool: 'write' } });
      assert.equal(errorCode(refused), 'MCPG_POLICY_DENIED');
      assert.deepEqual(fs.calls, [{ name: 'read', arguments: { x: 1 } }]);
      assert.equal(
        errorCode(await a.call('tools/call', { name: 'get_gateway_status' })),
        'MCPG_TOOL_NOT_FOUND',
        'the status tool needs --debug',
      );
    } finally {
      await gateway.close();
    }
  });

  // A server restarting after a crash keeps its tools listed; only parking withdraws them.
  void it(
    'a crashed server stays listed while it restarts: a call gets the retryable error, and no list change is announced',
    T,
    async () => {
      const fs = new FakeServer('fs', { tools: [{ name: 'read' }] });
      const gateway = gatewayOver([fs]);
      try {
        await gateway.start();
        const a = await listingAgent(gateway);
        const conn = gateway.connections.get('fs')!;
        fs.crash();
        assert.notEqual(conn.state, 'ready');
        assert.deepEqual(names(await a.call('tools/list')), ['fs__read'], 'still listed while it restarts');
        const refused = await a.call('tools/call', { name: 'fs__read' });
        assert.equal(errorCode(refused), 'MCPG_SERVER_UNAVAILABLE');
        assert.equal(refused.error?.data?.retryable, true);
        assert.match(
          refused.error?.message ?? '',
          /^server "fs" is restarting: server "fs" was killed by SIGKILL; (it restarts in \d+ s|it is starting again now), retry the call then$/,
        );
        await until(() => conn.state === 'connecting');
        fs.release();
        await until(() => conn.state === 'ready');
        assert.equal((await a.call('tools/call', { name: 'fs__read' })).result?.content?.[0]?.text, 'fs:read');
        assert.deepEqual(a.notes, [], 'a restart with the same tools is no list change');
      } finally {
        fs.release();
        await gateway.close();
      }
    },
  );

  void it('a restarted server with other tools: the normal list change', T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }] });
    const gateway = gatewayOver([fs]);
    try {
      await gateway.start();
      const a = await listingAgent(gateway);
      const conn = gateway.connections.get('fs')!;
      fs.crash();
      fs.spec.tools.push({ name: 'write' });
      await until(() => conn.state === 'connecting');
      assert.deepEqual(a.notes, []);
      fs.release();
      await until(() => a.notes.length > 0);
      assert.deepEqual(a.notes, ['notifications/tools/list_changed']);
      assert.deepEqual(names(await a.call('tools/list')), ['fs__read', 'fs__write']);
    } finally {
      fs.release();
      await gateway.close();
    }
  });

  void it('a server that parks is withdrawn, with one list change', T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }] });
    const other = new FakeServer('other', { tools: [{ name: 'echo' }] });
    // One attempt in the budget: the crash of a session that never proved itself parks at once.
    const gateway = gatewayOver([fs, other], { supervision: { retries: 1 } });
    try {
      await gateway.start();
      const a = await listingAgent(gateway);
      fs.crash();
      assert.equal(gateway.connections.get('fs')!.state, 'parked');
      assert.deepEqual(a.notes, ['notifications/tools/list_changed']);
      assert.deepEqual(names(await a.call('tools/list')), ['other__echo']);
      assert.equal(errorCode(await a.call('tools/call', { name: 'fs__read' })), 'MCPG_TOOL_NOT_FOUND');
    } finally {
      fs.release();
      await gateway.close();
    }
  });

  void it('discovery mode: a restarting server is still listed with its tools; execute_tool gets the retryable error', T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }] });
    const gateway = gatewayOver([fs], { mode: 'discovery' });
    try {
      await gateway.start();
      const a = agent(gateway);
      fs.crash();
      const servers = await a.call('tools/call', { name: 'list_servers' });
      assert.match(servers.result!.content![0]!.text, /"name":\s*"fs"[^}]*"tools":\s*1/);
      const tools = await a.call('tools/call', { name: 'get_server_tools', arguments: { server: 'fs' } });
      assert.deepEqual(
        JSON.parse(tools.result!.content![0]!.text).tools.map((t: { name: string }) => t.name),
        ['read'],
      );
      const ran = await a.call('tools/call', { name: 'execute_tool', arguments: { server: 'fs', tool: 'read' } });
      assert.equal(errorCode(ran), 'MCPG_SERVER_UNAVAILABLE');
      assert.equal(ran.error?.data?.retryable, true);
    } finally {
      fs.release();
      await gateway.close();
    }
  });

  // Shared and pooled servers share one listing (catalog-listing.ts): the same debounce, the same
  // pins review, each into its scope's catalog and announced to that scope's audience only.
  void it("a shared server's list_changed and a pooled connection's: one refresh per burst each, pin-reviewed alike", T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'read' }] });
    const mine = new FakeServer('mine', { tools: [{ name: 'note' }] });
    const dir = await mkdtemp(join(tmpdir(), 'mcpgate-listing-'));
    const gateway = new Gateway({
      config: { file: '/x/.mcp.json', servers: [stdioConfig('fs'), { ...stdioConfig('mine'), sessions: 'per-session' }], warnings: [] },
      log: silentLogger,
      connect: fakeConnections([fs, mine]),
      pins: { mode: 'tofu', dir },
    });
    try {
      await gateway.start();
      const a = await listingAgent(gateway);
      const b = await listingAgent(gateway);
      assert.deepEqual(names(await a.call('tools/list')), ['fs__read', 'mine__note']);
      // a's first call makes its own pooled connection to mine (the second transport), listed for a.
      assert.equal((await a.call('tools/call', { name: 'mine__note' })).result?.content?.[0]?.text, 'mine:note');
      assert.deepEqual(mine.toolLists, [1, 1], 'the catalog connection and the pooled one each listed once');
      const [own] = [...gateway.own.entries()];
      assert.ok(own !== undefined && own.catalog.lists('mine'), "a's own catalog lists mine");
      a.notes.length = 0;
      b.notes.length = 0;

      // Both change a definition (tofu: held until approved) and say so three times in a row.
      fs.spec.tools[0]!.description = 'read, now also deletes';
      mine.spec.tools[0]!.description = 'note, now also sends';
      for (let i = 0; i < 3; i++) {
        fs.notify('notifications/tools/list_changed');
        mine.notify('notifications/tools/list_changed', 1);
      }
      await until(() => gateway.catalog.heldTools('fs').has('read') && own.catalog.heldTools('mine').has('note'));
      assert.deepEqual(fs.toolLists, [2], "one refresh for the shared server's burst");
      assert.deepEqual(mine.toolLists, [1, 2], "one refresh for the pooled connection's burst, on it alone");
      assert.equal(gateway.catalog.heldTools('mine').size, 0, "the pooled connection's review holds nothing in the shared catalog");

      // a sees both held (its own view of mine); b, not an owner, still sees the catalog connection's mine.
      await until(() => a.notes.length > 0 && b.notes.length > 0);
      assert.deepEqual(names(await a.call('tools/list')), []);
      assert.deepEqual(names(await b.call('tools/list')), ['mine__note']);
      // a may hear of each change apart; b only of the shared one (mine's refresh was a's alone).
      assert.ok(a.notes.every((note) => note === 'notifications/tools/list_changed'));
      assert.deepEqual(b.notes, ['notifications/tools/list_changed']);
    } finally {
      await gateway.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
