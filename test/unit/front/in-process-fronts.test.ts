// A whole tools/call through each front, in-process (test/helpers/in-process.ts): the real HttpFront
// handler and the real stdio front, the real Gateway, real Connections to in-memory servers. Over
// HTTP: the gate (Host, Origin), initialize and its Mcp-Session-Id, the lists, the call, the GET
// stream read event by event, a 2026-07-28 request (the `_meta` envelope and its headers, no
// session), DELETE. Over stdio: the same call, and a modern one, as lines.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GATEWAY_INFO } from '../../../src/version.js';
import { SSE_RETRY_MS } from '../../../src/front/http/sse-replay.js';
import { FakeServer } from '../../helpers/fake-server.js';
import { httpFront, stdioFront, until } from '../../helpers/in-process.js';
import { JSON_HEADERS } from '../../helpers/requests.js';

const T = { timeout: 10_000 };
const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'in-process', version: '1' } },
};
/** A crashed in-memory server restarts at once: the tests that restart one wait for no backoff. */
const QUICK_RESTART = { gateway: { supervision: { backoffBaseMs: 1 } } };
const TOOLS = [
  { name: 'fs__read', description: 'read', inputSchema: { type: 'object' } },
  { name: 'fs__write', description: 'write', inputSchema: { type: 'object' } },
];

function fsServer(): FakeServer {
  return new FakeServer('fs', { tools: [{ name: 'read', text: (args) => `read ${String(args?.path)}` }, { name: 'write' }] });
}

void describe('the HTTP front in-process: a whole tools/call, front to server session', () => {
  void it('initialize, initialized, tools/list, tools/call on a session; DELETE ends it', T, async () => {
    const fs = fsServer();
    const http = await httpFront({ servers: [fs] });
    try {
      const init = await http.inject({ headers: JSON_HEADERS, body: JSON.stringify(INITIALIZE) });
      assert.equal(init.status, 200, init.body);
      assert.equal(init.headers['content-type'], 'application/json');
      const session = init.headers['mcp-session-id'];
      assert.ok(typeof session === 'string' && /^[0-9a-f-]{36}$/.test(session), `a session id: ${String(session)}`);
      assert.equal(init.json?.id, 1);
      const result = init.json?.result as Record<string, unknown>;
      assert.equal(result.protocolVersion, '2025-11-25');
      assert.deepEqual(result.serverInfo, GATEWAY_INFO);
      assert.deepEqual(Object.keys(result.capabilities as object).sort(), ['completions', 'logging', 'prompts', 'resources', 'tools']);

      const inSession = { ...JSON_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
      const initialized = await http.inject({
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      assert.deepEqual([initialized.status, initialized.body], [202, '']);

      const list = await http.inject({ headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
      assert.equal(list.status, 200, list.body);
      assert.deepEqual(list.json, { jsonrpc: '2.0', id: 2, result: { tools: TOOLS } });

      const call = await http.inject({
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fs__read', arguments: { path: '/a' } } }),
      });
      assert.equal(call.status, 200, call.body);
      assert.deepEqual(call.json, { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'read /a' }] } });
      assert.deepEqual(fs.calls, [{ name: 'read', arguments: { path: '/a' } }], 'the server got the call under its own name');
      assert.equal(http.front.sessionCount, 1);

      const ended = await http.inject({ method: 'DELETE', headers: { 'mcp-session-id': session } });
      assert.equal(ended.status, 200, ended.body);
      assert.equal(http.front.sessionCount, 0);
      const after = await http.inject({ headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }) });
      assert.equal(after.status, 404, after.body);
      assert.deepEqual(fs.calls.length, 1);
    } finally {
      await http.close();
    }
  });

  void it('the gate answers first: a foreign Host or Origin is refused before any session or server', T, async () => {
    const fs = fsServer();
    const http = await httpFront({ servers: [fs] });
    try {
      const host = await http.inject({ headers: { ...JSON_HEADERS, host: 'attacker.example:8808' }, body: JSON.stringify(INITIALIZE) });
      assert.equal(host.status, 403);
      assert.equal((host.json?.error as { data: { code: string } }).data.code, 'MCPG_HOST_FORBIDDEN');
      const origin = await http.inject({ headers: { ...JSON_HEADERS, origin: 'http://evil.example' }, body: JSON.stringify(INITIALIZE) });
      assert.equal(origin.status, 403);
      assert.equal((origin.json?.error as { data: { code: string } }).data.code, 'MCPG_ORIGIN_FORBIDDEN');
      const local = await http.inject({
        headers: { ...JSON_HEADERS, origin: 'http://localhost:3000', host: 'localhost:8808' },
        body: JSON.stringify(INITIALIZE),
      });
      assert.equal(local.status, 200, 'a loopback page and Host are served');
      assert.equal(http.front.sessionCount, 1, 'only the admitted request opened a session');
    } finally {
      await http.close();
    }
  });

  void it('the GET stream is read event by event: priming, a list change, the retry when the session ends', T, async () => {
    const fs = fsServer();
    const http = await httpFront({ servers: [fs], ...QUICK_RESTART });
    try {
      const init = await http.inject({ headers: JSON_HEADERS, body: JSON.stringify(INITIALIZE) });
      const session = init.headers['mcp-session-id'] as string;
      const inSession = { ...JSON_HEADERS, 'mcp-session-id': session };
      await http.inject({ headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
      await http.inject({ headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });

      const stream = http.open({ method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': session } });
      const head = await stream.head;
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-type'], 'text/event-stream');
      const priming = await stream.next();
      assert.equal(priming?.data, '');
      assert.equal(priming?.retry, SSE_RETRY_MS);
      assert.match(priming?.id ?? '', /^[\w-]+\.\d+$/);

      // The server restarts with one more tool: the news reaches the open stream while it is open.
      fs.crash();
      fs.spec.tools.push({ name: 'delete' });
      fs.release();
      const changed = await stream.nextMessage();
      assert.deepEqual(changed, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      assert.equal(stream.res.writableEnded, false, 'the stream stays open');

      await http.inject({ method: 'DELETE', headers: { 'mcp-session-id': session } });
      const last = await stream.next();
      assert.deepEqual([last?.retry, last?.data], [SSE_RETRY_MS, ''], 'mcpgate ends the stream with a retry: field');
      assert.equal(await stream.next(), undefined, 'then the stream is closed');
    } finally {
      await http.close();
    }
  });

  void it('a GET stream whose agent stops reading is dropped past --max-agent-buffer; the session lives on', T, async () => {
    const fs = fsServer();
    const http = await httpFront({ servers: [fs], front: { maxAgentBuffer: 64 }, ...QUICK_RESTART });
    try {
      const session = await http.session();
      const inSession = { ...JSON_HEADERS, 'mcp-session-id': session };
      await http.inject({ headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
      const stream = http.open({ method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': session } });
      assert.equal((await stream.next())?.data, '', 'primed while the agent reads');
      stream.res.pause();
      const change = async (tool: string): Promise<void> => {
        fs.crash();
        fs.spec.tools.push({ name: tool });
        fs.release();
        assert.ok(await until(() => http.gateway.connections.get('fs')?.state === 'ready'), 'restarted with the new tool');
      };
      await change('one');
      assert.ok(await until(() => stream.res.writableLength > 64), 'the list change waits in the buffer, unread');
      assert.equal(stream.res.destroyed, false, 'one message is let through, however large');
      await change('two');
      const done = await stream.done;
      assert.equal(stream.res.destroyed, true, 'the next one finds the buffer over the bound: the stream is dropped');
      assert.equal(done.body.includes('list_changed'), false, 'what was never read never arrived');
      assert.ok(
        http.lines.some((l) => l.code === 'MCPG_AGENT_TOO_SLOW' && String(l.msg).startsWith('dropped the GET stream')),
        'logged',
      );
      const list = await http.inject({ headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) });
      assert.deepEqual(
        (list.json?.result as { tools: { name: string }[] }).tools.map((t) => t.name),
        ['fs__read', 'fs__write', 'fs__one', 'fs__two'],
        'the session is fine',
      );
    } finally {
      await http.close();
    }
  });

  void it('a 2026-07-28 request: the envelope in _meta, the standard headers, no session', T, async () => {
    const fs = fsServer();
    const http = await httpFront({ servers: [fs] });
    try {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'fs__read', arguments: { path: '/m' }, _meta: ENVELOPE },
      });
      const headers = { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'fs__read' };
      const call = await http.inject({ headers, body });
      assert.equal(call.status, 200, call.body);
      assert.equal(call.headers['mcp-session-id'], undefined, 'no session');
      assert.deepEqual(call.json, {
        jsonrpc: '2.0',
        id: 7,
        result: { content: [{ type: 'text', text: 'read /m' }], resultType: 'complete' },
      });
      assert.deepEqual(fs.calls, [{ name: 'read', arguments: { path: '/m' } }]);
      // A header that disagrees with the body is refused before anything runs (-32020).
      const wrong = await http.inject({ headers: { ...headers, 'mcp-name': 'fs__write' }, body });
      assert.equal(wrong.status, 400);
      assert.equal((wrong.json?.error as { code: number }).code, -32020);
      assert.equal(fs.calls.length, 1);
      assert.equal(http.front.sessionCount, 0);
    } finally {
      await http.close();
    }
  });

  void it('a call the agent cancels: its POST ends with no answer, and the server is told', T, async () => {
    const fs = new FakeServer('fs', { tools: [{ name: 'wait', holds: true }] });
    const http = await httpFront({ servers: [fs] });
    try {
      const init = await http.inject({ headers: JSON_HEADERS, body: JSON.stringify(INITIALIZE) });
      const inSession = { ...JSON_HEADERS, 'mcp-session-id': init.headers['mcp-session-id'] as string };
      await http.inject({ headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
      const call = http.open({
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'fs__wait', arguments: { n: 1 } } }),
      });
      while (fs.calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const cancel = await http.inject({
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'w' } }),
      });
      assert.equal(cancel.status, 202);
      const done = await call.done;
      assert.deepEqual(
        [done.status, done.headers['content-type'], done.body],
        [200, 'text/event-stream', ''],
        'an empty event stream: no answer',
      );
      while (fs.cancelled.length === 0) await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(fs.cancelled, [{ name: 'wait', arguments: { n: 1 } }]);
    } finally {
      await http.close();
    }
  });
});

void describe('the stdio front in-process: a whole tools/call as lines', () => {
  void it('initialize, initialized, tools/list, tools/call; a modern request beside; stdin closed ends the front', T, async () => {
    const fs = fsServer();
    const stdio = await stdioFront({ servers: [fs] });
    try {
      const { agent } = stdio;
      const init = await agent.request(1, 'initialize', INITIALIZE.params);
      assert.equal(init.id, 1);
      assert.equal(init.result?.protocolVersion, '2025-11-25');
      assert.deepEqual(init.result?.serverInfo, GATEWAY_INFO);
      agent.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      assert.deepEqual(await agent.request(2, 'tools/list'), { jsonrpc: '2.0', id: 2, result: { tools: TOOLS } });
      assert.deepEqual(await agent.request(3, 'tools/call', { name: 'fs__read', arguments: { path: '/s' } }), {
        jsonrpc: '2.0',
        id: 3,
        result: { content: [{ type: 'text', text: 'read /s' }] },
      });
      assert.deepEqual(await agent.request('m', 'tools/call', { name: 'fs__read', arguments: { path: '/sm' }, _meta: ENVELOPE }), {
        jsonrpc: '2.0',
        id: 'm',
        result: { content: [{ type: 'text', text: 'read /sm' }], resultType: 'complete' },
      });
      assert.deepEqual(fs.calls, [
        { name: 'read', arguments: { path: '/s' } },
        { name: 'read', arguments: { path: '/sm' } },
      ]);
      agent.input.end();
      assert.deepEqual(await stdio.front.ended, { reason: 'stdin closed', failed: false });
      assert.equal(agent.all.length, 4, 'one line per request, nothing else');
    } finally {
      await stdio.close();
    }
  });
});
