// Remote servers through the real gateway (test/fixtures/remote-server.ts, a v1-SDK server over HTTP):
// a Streamable HTTP server (answers as event streams or as JSON) and a legacy HTTP+SSE server are
// fronted — their tools listed as SERVER__tool and callable, progress and sampling relayed both ways,
// server-initiated list_changed on the GET stream, an answer stream cut mid-call resumed with
// Last-Event-ID; the configured headers (with ${VAR}) reach the server and the agent's own credentials
// never do; a server that forgets our session is re-initialized behind the agent's back; a server that
// dies fails its calls clearly and is reconnected when it comes back on its port; an unreachable URL at
// start is reported by name without holding up the other servers, and joins once it is up; shutdown
// ends each session with DELETE.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixture,
  fixtureServer,
  jsonOf,
  Notifications,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  yieldBetweenMessages,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

interface Remote {
  child: ChildProcess;
  url: string;
  sse: string;
  base: string;
  port: number;
  stats(): Promise<{ initializations: number; deletes: number; sessions: number }>;
  stop(): Promise<void>;
}

/** Starts the remote fixture and reads the URLs it prints first. */
async function startRemote(args: string[] = []): Promise<Remote> {
  const child = spawn(process.execPath, [fixture('remote-server'), ...args], {
    stdio: ['ignore', 'pipe', process.env.MCPGATE_TEST_VERBOSE !== undefined ? 'inherit' : 'ignore'],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error('the remote fixture exited before listening');
    }),
  ])) as [string];
  lines.close();
  const { url, sse, base } = JSON.parse(first) as { url: string; sse: string; base: string };
  return {
    child,
    url,
    sse,
    base,
    port: Number(new URL(base).port),
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { initializations: number; deletes: number; sessions: number },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** A port nobody listens on (listened on once, then closed). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const KEY = 'k3y-from-env';
const call = async (gw: GatewayProcess, name: string, args: Record<string, unknown> = {}): Promise<string> =>
  textOf(await gw.client.callTool({ name, arguments: args }));
const toolNames = async (gw: GatewayProcess): Promise<string[]> => (await gw.client.listTools()).tools.map((t) => t.name);
const logged = (gw: GatewayProcess, server: string, pattern: RegExp): Promise<unknown> =>
  gw.waitForLog((l) => l.server === server && pattern.test(String(l.msg)));

describe('remote servers: Streamable HTTP and legacy SSE behind the gateway', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let web: Remote;
  let plain: Remote;
  const sampled: unknown[] = [];

  before(async () => {
    [web, plain] = await Promise.all([
      startRemote(['--resumable', '--require-header', `x-api-key=${KEY}`]),
      startRemote(['--json', '--stale-400']),
    ]);
    dir = await tempDir();
    const headers = { 'X-Api-Key': '${MCPG_T_REMOTE_KEY}' };
    const config = await writeConfig(dir, {
      web: { type: 'http', url: web.url, headers },
      plain: { type: 'streamable-http', url: plain.url },
      legacy: { type: 'sse', url: web.sse, headers },
      locked: { type: 'http', url: web.url },
    });
    gw = await startGateway({
      config,
      env: { MCPG_T_REMOTE_KEY: KEY },
      args: ['--pins', 'off', '--retries', '0'],
      capabilities: { sampling: {} },
      setup: (client) =>
        client.setRequestHandler('sampling/createMessage', (req) => {
          sampled.push(req.params);
          return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'a haiku' } };
        }),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([web?.stop(), plain?.stop()]);
    await dir?.remove();
  });

  it('lists every remote tool as SERVER__tool and calls them over each transport', { timeout: 10_000 }, async () => {
    const names = await toolNames(gw);
    for (const server of ['web', 'plain', 'legacy']) {
      for (const tool of ['echo', 'progress', 'sample', 'headers'])
        assert.ok(names.includes(`${server}__${tool}`), `${server}__${tool} in ${names.join(', ')}`);
      assert.equal(await call(gw, `${server}__echo`, { text: `via ${server}` }), `via ${server}`);
    }
    assert.ok(!names.some((n) => n.startsWith('locked__')));
  });

  it('a server that refuses the gateway (no configured header) is reported with its HTTP status', { timeout: 10_000 }, async () => {
    const line = await gw.waitForLog((l) => l.server === 'locked' && l.level === 'warn');
    assert.match(String(line.msg), /^server "locked" answered HTTP 401 Unauthorized/);
    await logged(
      gw,
      'locked',
      /^server "locked" answered HTTP 401 Unauthorized; its body \(for the operator only\): missing or wrong x-api-key header$/,
    );
  });

  it(
    "a server's error body never reaches the agent (it may echo the operator's headers); the operator's log has it, redacted",
    { timeout: 10_000 },
    async () => {
      assert.equal((await fetch(`${web.base}/fail-next`, { method: 'POST' })).status, 200);
      const error = await rpcError(gw.client.callTool({ name: 'web__echo', arguments: { text: 'x' } }));
      assert.match(error.message, /server "web" answered HTTP 502 Bad Gateway$/);
      assert.ok(!JSON.stringify(error).includes(KEY), 'the shared header reached the agent');
      const line = (await logged(gw, 'web', /answered HTTP 502 Bad Gateway; its body \(for the operator only\): /)) as { msg: string };
      assert.match(line.msg, /"x-api-key":"\[redacted\]"/);
      assert.ok(!JSON.stringify(gw.logs).includes(KEY), 'the shared header was logged');
    },
  );

  it('progress of a remote call reaches the agent, over an event stream and over legacy SSE', { timeout: 10_000 }, async () => {
    const restore = yieldBetweenMessages(gw);
    try {
      for (const server of ['web', 'legacy']) {
        const seen: number[] = [];
        const result = await gw.client.callTool(
          { name: `${server}__progress`, arguments: { steps: 3 } },
          { onprogress: (p) => void seen.push(p.progress) },
        );
        assert.equal(textOf(result), 'done');
        assert.deepEqual(seen, [1, 2, 3], server);
      }
    } finally {
      restore();
    }
  });

  it("a remote server's sampling request reaches the agent and the answer goes back", { timeout: 10_000 }, async () => {
    // (In JSON-answer mode a server cannot send requests during a call: its SDK drops them.)
    for (const server of ['web', 'legacy']) {
      assert.equal(await call(gw, `${server}__sample`, { prompt: `write a haiku for ${server}` }), 'sampled: a haiku');
    }
    assert.deepEqual(
      sampled.map((p) => (p as { messages: { content: { text: string } }[] }).messages[0]!.content.text),
      ['write a haiku for web', 'write a haiku for legacy'],
    );
  });

  it("the configured headers (with ${VAR}) reach the server; nothing else of the gateway's does", { timeout: 10_000 }, async () => {
    for (const server of ['web', 'legacy']) {
      const seen = jsonOf(await gw.client.callTool({ name: `${server}__headers`, arguments: {} })) as Record<string, string>;
      assert.equal(seen['x-api-key'], KEY, server);
      assert.equal(seen.authorization, undefined, server);
    }
    const seen = jsonOf(await gw.client.callTool({ name: 'web__headers', arguments: {} })) as Record<string, string>;
    assert.equal(seen['mcp-protocol-version'], '2025-11-25');
    assert.equal(typeof seen['mcp-session-id'], 'string');
  });

  it('an answer stream the server closes mid-call is resumed with Last-Event-ID', { timeout: 10_000 }, async () => {
    assert.equal(await call(gw, 'web__interrupt'), 'resumed');
    await logged(gw, 'web', /^resuming an answer stream/);
  });

  it('a list_changed sent on the GET stream reaches the agent, and the new tool is callable', { timeout: 10_000 }, async () => {
    const notes = new Notifications(gw);
    assert.equal(await call(gw, 'web__grow'), 'grown_1');
    await notes.until('tools', 1);
    assert.ok(await until(async () => (await toolNames(gw)).includes('web__grown_1')), 'web__grown_1 never listed');
  });

  it('a server that forgets our session is re-initialized transparently: the next call succeeds', { timeout: 15_000 }, async () => {
    const before_ = await web.stats();
    await fetch(`${web.base}/forget`, { method: 'POST' });
    assert.equal(await call(gw, 'web__echo', { text: 'still here' }), 'still here');
    await logged(gw, 'web', /ended our session \(HTTP 404\); starting a new one/);
    await logged(gw, 'web', /new session started/);
    assert.equal((await web.stats()).initializations, before_.initializations + 1, 'exactly one new session');
    assert.equal(await call(gw, 'web__progress', { steps: 1 }), 'done');
  });

  it('a server that answers a forgotten session with 400 naming it (not 404) is re-initialized too', { timeout: 15_000 }, async () => {
    const before_ = await plain.stats();
    await fetch(`${plain.base}/forget`, { method: 'POST' });
    assert.equal(await call(gw, 'plain__echo', { text: 'after a restart' }), 'after a restart');
    await logged(gw, 'plain', /ended our session \(HTTP 400 naming the session\); starting a new one/);
    assert.equal((await plain.stats()).initializations, before_.initializations + 1, 'exactly one new session');
    assert.equal(await call(gw, 'plain__echo', { text: 'and again' }), 'and again');
  });

  it('shutdown ends each Streamable HTTP session with DELETE and closes the SSE stream', { timeout: 15_000 }, async () => {
    const [w, p] = await Promise.all([web.stats(), plain.stats()]);
    assert.deepEqual(await gw.stop(), { code: 0, signal: null });
    assert.ok(
      await until(async () => (await web.stats()).sessions === 0 && (await plain.stats()).sessions === 0, 5000),
      'sessions left open',
    );
    assert.equal((await web.stats()).deletes, w.deletes + 1);
    assert.equal((await plain.stats()).deletes, p.deletes + 1);
  });
});

describe('remote servers: a server that dies and comes back on its port', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let remote: Remote;

  before(async () => {
    remote = await startRemote();
    dir = await tempDir();
    const config = await writeConfig(dir, { web: { type: 'http', url: remote.url }, legacy: { type: 'sse', url: remote.sse } });
    gw = await startGateway({ config, args: ['--pins', 'off', '--retries', '1000', '--backoff-cap', '200'] });
  });

  after(async () => {
    await gw?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  it('calls in flight fail clearly, the loss is reported, and the gateway reconnects once it is back', { timeout: 30_000 }, async () => {
    assert.equal(await call(gw, 'web__echo', { text: 'up' }), 'up');
    const inFlight = ['web', 'legacy'].map((server) =>
      rpcError(gw.client.callTool({ name: `${server}__slow`, arguments: { ms: 20_000 } })),
    );
    await call(gw, 'web__echo', { text: 'the slow calls are out' });
    remote.child.kill('SIGKILL');
    await once(remote.child, 'exit');
    for (const err of await Promise.all(inFlight)) {
      assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.match(err.message, /^server "(web|legacy)" /);
    }
    await logged(gw, 'web', /ready → backoff: server "web" at http:\/\/127\.0\.0\.1:\d+\/mcp is unreachable: ECONNREFUSED/);
    await logged(
      gw,
      'legacy',
      /ready → backoff: server "legacy" at http:\/\/127\.0\.0\.1:\d+\/sse (closed its event stream|is unreachable)/,
    );
    const err = await rpcError(gw.client.callTool({ name: 'web__echo', arguments: { text: 'down' } }));
    // Its tools stay listed while it reconnects: the call is refused as retryable, never "unknown tool".
    assert.equal(err.data.code, 'MCPG_SERVER_UNAVAILABLE', JSON.stringify(err));
    assert.equal(err.data.retryable, true, JSON.stringify(err));

    remote = await startRemote(['--port', String(remote.port)]);
    await logged(gw, 'web', /is back/);
    await logged(gw, 'legacy', /is back/);
    assert.ok(
      await until(async () => {
        const names = await toolNames(gw);
        return names.includes('web__echo') && names.includes('legacy__echo');
      }),
      'tools not restored',
    );
    assert.equal(await call(gw, 'web__echo', { text: 'back' }), 'back');
    assert.equal(await call(gw, 'legacy__echo', { text: 'back too' }), 'back too');
  });
});

describe('remote servers: unreachable at start', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let port: number;
  let remote: Remote | undefined;

  before(async () => {
    port = await freePort();
    dir = await tempDir();
    const config = await writeConfig(dir, {
      down: { type: 'http', url: `http://127.0.0.1:${port}/mcp?token=secret-in-url` },
      local: fixtureServer('echo-server'),
    });
    gw = await startGateway({ config, args: ['--pins', 'off', '--retries', '0'] });
  });

  after(async () => {
    await gw?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  it('is reported by name and URL (without its query), and does not hold up the other servers', { timeout: 10_000 }, async () => {
    const line = await gw.waitForLog((l) => l.server === 'down' && l.level === 'warn');
    assert.match(
      String(line.msg),
      new RegExp(
        `^server "down" at http://127\\.0\\.0\\.1:${port}/mcp is unreachable: ECONNREFUSED \\(before completing server\\/discover\\); parked`,
      ),
    );
    assert.doesNotMatch(String(line.msg), /secret-in-url/);
    await gw.waitForLog((l) => l.msg === `mcpgate ready on stdio: 1 of 2 servers, 1 tools`);
    assert.equal(await call(gw, 'local__echo', { text: 'fine' }), 'fine');
  });

  it('joins once the server is up (SIGHUP revives it)', { timeout: 20_000 }, async () => {
    remote = await startRemote(['--port', String(port)]);
    gw.child.kill('SIGHUP');
    await logged(gw, 'down', /is back/);
    assert.ok(await until(async () => (await toolNames(gw)).includes('down__echo')), 'down__echo never listed');
    assert.equal(await call(gw, 'down__echo', { text: 'joined' }), 'joined');
  });
});

describe("remote servers: an agent's credentials never reach a server (HTTP front)", { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let remote: Remote;
  const agent = makeToken();

  before(async () => {
    remote = await startRemote();
    dir = await tempDir();
    const config = await writeConfig(dir, { web: { type: 'http', url: remote.url, headers: { 'X-Api-Key': '${MCPG_T_REMOTE_KEY}' } } });
    const rules = await writeRules(dir, { agents: { alice: { tokens: [agent.hash], allow: { servers: ['web'] } } } });
    gate = await startHttpGateway({ config, env: { MCPG_T_REMOTE_KEY: KEY }, args: ['--rules', rules, '--pins', 'off'] });
  });

  after(async () => {
    await gate?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  it("the server sees the configured headers, not the agent's token, cookies or headers", { timeout: 15_000 }, async () => {
    const { client, transport } = await connectAgent(gate.url, {
      token: agent.token,
      headers: { 'x-agent-secret': 'agent-only', cookie: 'sid=agent' },
    });
    try {
      const seen = jsonOf(await client.callTool({ name: 'web__headers', arguments: {} })) as Record<string, string>;
      assert.equal(seen['x-api-key'], KEY);
      for (const name of ['authorization', 'x-agent-secret', 'cookie']) assert.equal(seen[name], undefined, name);
      assert.ok(!JSON.stringify(seen).includes(agent.token), 'the token appears in what the server received');
      assert.notEqual(seen['mcp-session-id'], transport.sessionId, "the agent's session id went through");
    } finally {
      await client.close();
    }
  });
});
