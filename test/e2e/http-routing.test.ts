// Over HTTP, what belongs to one agent reaches that agent only: progress, a server's sampling
// request during a call (and an ambiguous one is refused, not guessed), list_changed by view, logs
// by level. Then the session limits, idle expiry and a graceful SIGTERM with a call in flight.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { cli, fixtureServer, rpcError, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
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

const TIMEOUT = 60_000;
const SAMPLING = { sampling: {} };

describe('HTTP front: per-agent routing', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const alice = makeToken();
  const bob = makeToken();

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, {
      agents: {
        alice: { tokens: [alice.hash], allow: { servers: ['sink'], tools: { sink: ['echo', 'progress', 'sample', 'slow', 'log'] } } },
        bob: { tokens: [bob.hash], allow: { servers: ['sink'] } },
      },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules, '--pins', 'off'] });
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  it('progress reaches the calling agent only', async () => {
    const aProgress: number[] = [];
    let bProgress = 0;
    const a = await connectAgent(gate.url, { token: alice.token });
    const b = await connectAgent(gate.url, {
      token: bob.token,
      setup: (c) => c.setNotificationHandler('notifications/progress', () => void (bProgress += 1)),
    });
    try {
      const result = await a.client.callTool(
        { name: 'sink__progress', arguments: { steps: 3 } },
        { onprogress: (p) => aProgress.push(p.progress) },
      );
      assert.ok(textOf(result).length > 0);
      assert.deepEqual(aProgress, [1, 2, 3]);
      // bob's session (with its GET stream open) saw none of it; a ping round trip orders the check.
      await b.client.ping();
      assert.equal(bProgress, 0);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it('a sampling request reaches the agent whose call is in flight; an ambiguous one is refused', async () => {
    const asked: string[] = [];
    const sampler = (who: string) => (c: Client) =>
      c.setRequestHandler('sampling/createMessage', () => {
        asked.push(who);
        return { model: `${who}-model`, role: 'assistant', content: { type: 'text', text: `${who} answers` } };
      });
    const a = await connectAgent(gate.url, { token: alice.token, capabilities: SAMPLING, setup: sampler('alice') });
    const b = await connectAgent(gate.url, { token: bob.token, capabilities: SAMPLING, setup: sampler('bob') });
    try {
      const sampled = await a.client.callTool({ name: 'sink__sample', arguments: { prompt: 'hello' } });
      assert.equal(textOf(sampled), 'sampled: alice answers');
      assert.deepEqual(asked, ['alice']);

      // bob has a call in flight on the same server: the server's request names no call, so it is refused.
      const slow = b.client.callTool({ name: 'sink__slow', arguments: { ms: 3000 } });
      await until(
        async () => (await raw(`${gate.base}/metrics`, { method: 'GET' })).body.includes('mcpgate_calls_in_flight{server="sink"} 1'),
        5000,
      );
      // The server passes the refusal on as its tool's failure (this SDK version as a JSON-RPC error).
      const ambiguous = await rpcError(a.client.callTool({ name: 'sink__sample', arguments: { prompt: 'who?' } }));
      assert.match(
        ambiguous.message,
        /cannot relay sampling\/createMessage: agents "(alice|bob)" and "(alice|bob)" have calls in flight on server "sink".*per-agent/,
      );
      assert.deepEqual(asked, ['alice'], 'nobody was asked');
      await slow;
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it("a server's question that cannot reach the agent is answered at once, not left waiting", async () => {
    // A raw agent that declares roots but accepts only JSON answers and opens no GET stream.
    const auth = { authorization: `Bearer ${bob.token}` };
    const init = await raw(gate.url, {
      headers: { ...JSON_HEADERS, ...auth },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { roots: {} }, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const session = String(init.headers['mcp-session-id']);
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...auth, 'mcp-session-id': session };
    assert.equal((await raw(gate.url, { headers, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).status, 202);
    const res = await raw(gate.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sink__roots', arguments: {} } }),
    });
    assert.equal(res.status, 200);
    assert.match(res.body, /has no open stream to receive roots\/list/);
    await raw(gate.url, { method: 'DELETE', headers });
  });

  it('a list_changed that found no GET stream open is delivered when the agent opens one', async () => {
    const auth = { authorization: `Bearer ${bob.token}` };
    const session = await rawSession(gate.url, auth);
    const headers = { ...JSON_HEADERS, ...auth, 'mcp-session-id': session };
    assert.equal((await raw(gate.url, { headers, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' })).status, 200);
    const b = await connectAgent(gate.url, { token: bob.token });
    try {
      await b.client.listTools();
      let changed = 0;
      b.client.setNotificationHandler('notifications/tools/list_changed', () => void (changed += 1));
      await b.client.callTool({ name: 'sink__change', arguments: {} });
      // The SDK agent (its GET stream open) hears of it; then the raw session opens its stream.
      assert.ok(await until(() => changed >= 1, 10_000));
    } finally {
      await b.client.close();
    }
    const first = await new Promise<string>((resolve, reject) => {
      const req = request(
        gate.url,
        { method: 'GET', headers: { accept: 'text/event-stream', ...auth, 'mcp-session-id': session } },
        (res) => {
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (chunk: string) => {
            text += chunk;
            if (text.split('\n\n').length > 2) {
              resolve(text);
              req.destroy();
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    // The priming event (an id, retry, no data: the stream is resumable), then the list_changed.
    assert.match(
      first,
      /^id: [\w-]{16}\.0\nretry: \d+\ndata: \n\nid: [\w-]{16}\.1\ndata: \{"jsonrpc":"2\.0","method":"notifications\/tools\/list_changed"\}\n\n/,
    );
    await raw(gate.url, { method: 'DELETE', headers });
  });

  it('list_changed reaches the agents whose view changed, and logs go by level', async () => {
    let aChanged = 0;
    let bChanged = 0;
    const aLogs: string[] = [];
    const bLogs: string[] = [];
    const a = await connectAgent(gate.url, {
      token: alice.token,
      setup: (c) => {
        c.setNotificationHandler('notifications/tools/list_changed', () => void (aChanged += 1));
        c.setNotificationHandler('notifications/message', (n) => void aLogs.push(String(n.params.level)));
      },
    });
    const b = await connectAgent(gate.url, {
      token: bob.token,
      setup: (c) => {
        c.setNotificationHandler('notifications/tools/list_changed', () => void (bChanged += 1));
        c.setNotificationHandler('notifications/message', (n) => void bLogs.push(String(n.params.level)));
      },
    });
    try {
      await a.client.listTools();
      await b.client.listTools();
      await a.client.setLoggingLevel('error');
      await b.client.setLoggingLevel('debug');
      // The new tool is outside alice's allowed list: only bob's view changes.
      await b.client.callTool({ name: 'sink__change', arguments: {} });
      assert.ok(await until(() => bChanged >= 1, 10_000), 'bob is told his tools changed');
      await a.client.callTool({ name: 'sink__log', arguments: { level: 'warning', message: 'w' } });
      await a.client.callTool({ name: 'sink__log', arguments: { level: 'error', message: 'e' } });
      assert.ok(
        await until(() => aLogs.length >= 1 && bLogs.length >= 2, 10_000),
        `logs arrive: alice ${aLogs.join()} bob ${bLogs.join()}`,
      );
      await a.client.ping();
      assert.deepEqual(aLogs, ['error'], 'alice gets only error and above');
      assert.deepEqual(bLogs, ['warning', 'error']);
      assert.equal(aChanged, 0, "alice's view did not change");
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});

describe('HTTP front: limits and shutdown', { timeout: TIMEOUT }, () => {
  let dir: TempDir;

  before(async () => {
    dir = await tempDir();
  });

  after(async () => {
    await dir?.remove();
  });

  it('caps sessions per agent and in total, and expires idle ones', async () => {
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const gate = await startHttpGateway({
      config,
      agent: 'me',
      args: ['--no-auth', '--max-sessions-per-agent', '2', '--max-sessions', '3', '--session-idle', '1000'],
    });
    try {
      const first = await rawSession(gate.url);
      await rawSession(gate.url);
      const third = await raw(gate.url, { headers: JSON_HEADERS, body: initializeBody() });
      assert.equal(third.status, 429);
      assert.equal((third.json?.error as { data: { code: string } }).data.code, 'MCPG_SESSION_LIMIT');
      await rawSession(gate.url, { 'x-mcpgate-agent': 'other' });
      const total = await raw(gate.url, { headers: { ...JSON_HEADERS, 'x-mcpgate-agent': 'third' }, body: initializeBody() });
      assert.equal(total.status, 503);
      // Idle sessions expire (no request, no open POST, no GET stream), which frees room.
      // (Polling it would keep it alive: wait for the sweep to say so.)
      await gate.gw.waitForLog((l) => l.msg === 'session expired after being idle' && l.session === first);
      const gone = await raw(gate.url, {
        headers: { ...JSON_HEADERS, 'mcp-session-id': first },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      assert.equal(gone.status, 404, 'the idle session expired');
      assert.equal((await raw(gate.url, { headers: JSON_HEADERS, body: initializeBody() })).status, 200);
    } finally {
      assert.equal((await gate.stop()).code, 0);
    }
  });

  it('SIGTERM lets a call in flight finish, refuses new work, and exits 0', async () => {
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') }, 'sigterm.mcp.json');
    const gate = await startHttpGateway({ config, agent: 'me', args: ['--no-auth'] });
    const a = await connectAgent(gate.url);
    const call = a.client.callTool({ name: 'sink__slow', arguments: { ms: 800 } });
    await until(
      async () => (await raw(`${gate.base}/metrics`, { method: 'GET' })).body.includes('mcpgate_calls_in_flight{server="sink"} 1'),
      5000,
    );
    gate.gw.child.kill('SIGTERM');
    await gate.gw.waitForLog((l) => String(l.msg).startsWith('shutting down'));
    const result = await call;
    assert.equal(textOf(result), 'slept');
    const exit = await gate.gw.exited;
    assert.equal(exit.code, 0);
    await a.client.close().catch(() => {});
  });

  it('/readyz is 503 until every server has settled, then 200 with each state', async () => {
    const config = await writeConfig(
      dir,
      { slow: fixtureServer('slow-start-server', ['--delay', '1500']), echo: fixtureServer('echo-server') },
      'ready.mcp.json',
    );
    const gate = await startHttpGateway({ config, agent: 'me', args: ['--no-auth'] });
    try {
      const early = await raw(`${gate.base}/readyz`, { method: 'GET' });
      assert.equal(early.status, 503);
      assert.equal(early.json?.ready, false);
      assert.notEqual((early.json?.servers as { name: string; state: string }[]).find((s) => s.name === 'slow')?.state, 'ready');
      assert.equal((await raw(`${gate.base}/healthz`, { method: 'GET' })).status, 200, 'alive while not ready');
      await gate.gw.waitForLog((l) => String(l.msg).startsWith('mcpgate ready on'));
      const ready = await raw(`${gate.base}/readyz`, { method: 'GET' });
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.json?.servers, [
        { name: 'slow', state: 'ready' },
        { name: 'echo', state: 'ready' },
      ]);
    } finally {
      assert.equal((await gate.stop()).code, 0);
    }
  });

  it('refuses --no-auth on an address other machines can reach', async () => {
    const config = await writeConfig(dir, {}, 'empty.mcp.json');
    const out = await cli(['serve', '--config', config, '--http', '0.0.0.0:0', '--no-auth']);
    assert.equal(out.code, 2);
    assert.match(out.err, /--no-auth is allowed only on a loopback address/);
  });

  it('reports a port already in use and exits 1', async () => {
    const config = await writeConfig(dir, {}, 'busy.mcp.json');
    const { createServer } = await import('node:net');
    const blocker = createServer();
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const port = (blocker.address() as AddressInfo).port;
    try {
      const out = await cli(['serve', '--config', config, '--http', `127.0.0.1:${port}`, '--no-auth']);
      assert.equal(out.code, 1);
      assert.match(out.err, /cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });
});
