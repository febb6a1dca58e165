// The Streamable HTTP front end to end: the real gateway on 127.0.0.1 (random port), real stdio
// servers behind it, official SDK clients as agents, raw HTTP for what clients never send.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { fixtureServer, rpcError, tempDir, textOf, until, writeConfig, cli, type TempDir } from '../helpers/gateway.js';
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

describe('HTTP front: agents, identity and bad requests', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const alice = makeToken();
  const bob = makeToken();
  const ops = makeToken();

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      sink: fixtureServer('kitchen-sink-server'),
      echo: fixtureServer('echo-server'),
    });
    const rules = await writeRules(dir, {
      agents: {
        alice: { tokens: [alice.hash], allow: { servers: ['echo'] } },
        bob: { tokens: [bob.hash], allow: { servers: ['*'] } },
      },
      admins: { ops: { tokens: [ops.hash] } },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules, '--max-body', '4096'] });
  });

  after(async () => {
    const exit = await gate?.stop();
    assert.equal(exit?.code, 0, 'the gateway exits 0 on SIGTERM');
    await dir?.remove();
  });

  it('two agents with different tokens see different catalogs, and rules hold', async () => {
    const a = await connectAgent(gate.url, { token: alice.token });
    const b = await connectAgent(gate.url, { token: bob.token });
    try {
      const aTools = (await a.client.listTools()).tools.map((t) => t.name).sort();
      const bTools = (await b.client.listTools()).tools.map((t) => t.name);
      assert.ok(aTools.length > 0 && aTools.every((n) => n.startsWith('echo__')), `alice sees only echo's tools: ${aTools.join(', ')}`);
      assert.ok(bTools.some((n) => n.startsWith('sink__')) && bTools.some((n) => n.startsWith('echo__')), 'bob sees both servers');
      const denied = await rpcError(a.client.callTool({ name: 'sink__echo', arguments: { text: 'x' } }));
      assert.equal(denied.data.code, 'MCPG_POLICY_DENIED');
      const ok = await b.client.callTool({ name: 'sink__echo', arguments: { text: 'hi bob' } });
      assert.equal(textOf(ok), 'hi bob');
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it('no token, a wrong token or a malformed header get 401 with WWW-Authenticate', async () => {
    const none = await raw(gate.url, { headers: JSON_HEADERS, body: initializeBody() });
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Bearer realm="mcpgate"/);
    assert.equal((none.json?.error as { data: { code: string } }).data.code, 'MCPG_UNAUTHORIZED');
    const wrong = await raw(gate.url, {
      headers: { ...JSON_HEADERS, authorization: 'Bearer mcpg_not-a-real-token' },
      body: initializeBody(),
    });
    assert.equal(wrong.status, 401);
    assert.match(String(wrong.headers['www-authenticate']), /error="invalid_token"/);
    assert.doesNotMatch(wrong.body, /not-a-real-token/, 'the token is never echoed');
    const basic = await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: 'Basic YTpi' }, body: initializeBody() });
    assert.equal(basic.status, 401);
  });

  it('every bad request gets its status, and none disturbs another session', async () => {
    const b = await connectAgent(gate.url, { token: bob.token });
    const auth = { ...JSON_HEADERS, authorization: `Bearer ${bob.token}` };
    try {
      const session = await rawSession(gate.url, { authorization: `Bearer ${bob.token}` });
      const inSession = { ...auth, 'mcp-session-id': session };

      const malformed = await raw(gate.url, { headers: inSession, body: '{"jsonrpc":"2.0","id":1,' });
      assert.equal(malformed.status, 400);
      assert.equal((malformed.json?.error as { code: number }).code, -32700);

      const big = await raw(gate.url, {
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(5000) } }),
      });
      assert.equal(big.status, 413);
      const chunked = await raw(gate.url, {
        headers: { ...inSession, 'transfer-encoding': 'chunked' },
        chunked: true,
        body: 'x'.repeat(10_000),
      });
      assert.equal(chunked.status, 413, 'a chunked body is cut off at the limit too');

      const evil = await raw(gate.url, {
        headers: { ...inSession, origin: 'http://evil.example' },
        body: '{"jsonrpc":"2.0","id":3,"method":"ping"}',
      });
      assert.equal(evil.status, 403);
      const local = await raw(gate.url, {
        headers: { ...inSession, origin: 'http://localhost:6274' },
        body: '{"jsonrpc":"2.0","id":4,"method":"ping"}',
      });
      assert.equal(local.status, 200, 'a page on this machine (the MCP Inspector) is allowed');

      const unknown = await raw(gate.url, {
        headers: { ...auth, 'mcp-session-id': 'no-such-session' },
        body: '{"jsonrpc":"2.0","id":5,"method":"ping"}',
      });
      assert.equal(unknown.status, 404);
      const missing = await raw(gate.url, { headers: auth, body: '{"jsonrpc":"2.0","id":6,"method":"ping"}' });
      assert.equal(missing.status, 400);
      const put = await raw(gate.url, { method: 'PUT', headers: inSession, body: '{}' });
      assert.equal(put.status, 405);
      assert.equal(put.headers.allow, 'POST, GET, DELETE');
      const batch = await raw(gate.url, { headers: inSession, body: '[{"jsonrpc":"2.0","id":7,"method":"ping"}]' });
      assert.equal(batch.status, 400);
      const notRpc = await raw(gate.url, { headers: inSession, body: '{"hello":"world"}' });
      assert.equal(notRpc.status, 400);
      const badVersion = await raw(gate.url, {
        headers: { ...inSession, 'mcp-protocol-version': '1999-01-01' },
        body: '{"jsonrpc":"2.0","id":8,"method":"ping"}',
      });
      assert.equal(badVersion.status, 400);
      const text = await raw(gate.url, {
        headers: { ...inSession, 'content-type': 'text/plain' },
        body: '{"jsonrpc":"2.0","id":9,"method":"ping"}',
      });
      assert.equal(text.status, 415);
      const unknownTool = await raw(gate.url, {
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'nope__nothing', arguments: {} } }),
      });
      assert.equal(unknownTool.status, 200);
      assert.equal((unknownTool.json?.error as { data: { code: string } }).data.code, 'MCPG_TOOL_NOT_FOUND');

      // A request id still in flight on this session cannot be reused (the first call keeps its answer).
      const slow = raw(gate.url, {
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'sink__slow', arguments: { ms: 300 } } }),
      });
      assert.ok(
        await until(async () =>
          (await raw(`${gate.base}/metrics`, { method: 'GET' })).body.includes('mcpgate_calls_in_flight{server="sink"} 1'),
        ),
      );
      const dup = await raw(gate.url, { headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 'dup', method: 'ping' }) });
      assert.equal(dup.status, 409);
      assert.equal(((await slow).json?.result as { content: { text: string }[] }).content[0]?.text, 'slept');

      // Another agent's session id is just unknown to this one.
      const stolen = await raw(gate.url, {
        headers: { ...JSON_HEADERS, authorization: `Bearer ${alice.token}`, 'mcp-session-id': session },
        body: '{"jsonrpc":"2.0","id":11,"method":"ping"}',
      });
      assert.equal(stolen.status, 404);

      // The raw session and the SDK agent are both still fine.
      const ping = await raw(gate.url, { headers: inSession, body: '{"jsonrpc":"2.0","id":12,"method":"ping"}' });
      assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 12, result: {} });
      assert.equal(textOf(await b.client.callTool({ name: 'echo__echo', arguments: { text: 'still here' } })), 'still here');

      const ended = await raw(gate.url, { method: 'DELETE', headers: inSession });
      assert.equal(ended.status, 200);
      const after = await raw(gate.url, { headers: inSession, body: '{"jsonrpc":"2.0","id":13,"method":"ping"}' });
      assert.equal(after.status, 404, 'an ended session is gone');
    } finally {
      await b.client.close();
    }
  });

  it('200 concurrent calls on one session all come back right', async () => {
    const b = await connectAgent(gate.url, { token: bob.token });
    try {
      const texts = Array.from({ length: 200 }, (_, i) => `call-${i}`);
      const results = await Promise.all(
        texts.map((text, i) => b.client.callTool({ name: i % 2 === 0 ? 'echo__echo' : 'sink__echo', arguments: { text } })),
      );
      assert.deepEqual(
        results.map((r) => textOf(r)),
        texts,
      );
    } finally {
      await b.client.close();
    }
  });

  it('a list is answered from cached bytes: each answer carries its own id and an exact Content-Length', async () => {
    const session = await rawSession(gate.url, { authorization: `Bearer ${alice.token}` });
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${alice.token}`, 'mcp-session-id': session };
    const list = (id: string | number): Promise<Awaited<ReturnType<typeof raw>>> =>
      raw(gate.url, { headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }) });
    const first = await list('é-1 "quoted"');
    const second = await list(2);
    for (const [res, id] of [
      [first, 'é-1 "quoted"'],
      [second, 2],
    ] as const) {
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), 'Content-Length counts bytes, not characters');
      assert.equal(res.json?.id, id);
    }
    const tools = (first.json?.result as { tools: { name: string }[] }).tools.map((t) => t.name);
    assert.ok(tools.length > 0 && tools.every((n) => n.startsWith('echo__')), `alice's view under the rules: ${tools.join(', ')}`);
    assert.deepEqual(second.json?.result, first.json?.result, 'the same list, only the id differs');
  });

  it('a token added to the rules works as soon as the file is saved (hot reload), and a removed one stops', async () => {
    const carol = makeToken();
    const before = (await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${carol.token}` }, body: initializeBody() }))
      .status;
    assert.equal(before, 401);
    const reloads = gate.gw.logs.filter((l) => String(l.msg).startsWith('configuration reloaded')).length;
    await writeRules(dir, {
      agents: {
        alice: { tokens: [carol.hash], allow: { servers: ['echo'] } },
        bob: { tokens: [bob.hash], allow: { servers: ['*'] } },
      },
      admins: { ops: { tokens: [ops.hash] } },
    });
    await gate.gw.waitForLog(
      (l) =>
        String(l.msg).startsWith('configuration reloaded') &&
        gate.gw.logs.filter((x) => String(x.msg).startsWith('configuration reloaded')).length > reloads,
    );
    const now = await connectAgent(gate.url, { token: carol.token });
    try {
      assert.ok(
        (await now.client.listTools()).tools.every((t) => t.name.startsWith('echo__')),
        'the new token is alice',
      );
    } finally {
      await now.client.close();
    }
    const old = await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${alice.token}` }, body: initializeBody() });
    assert.equal(old.status, 401, "alice's old token no longer works");
  });

  it("the ops routes answer without a session; /status needs an admin's token; mcpgate status prints it", async () => {
    const health = await raw(`${gate.base}/healthz`, { method: 'GET' });
    assert.equal(health.status, 200);
    const ready = await raw(`${gate.base}/readyz`, { method: 'GET' });
    assert.equal(ready.status, 200);
    assert.deepEqual(
      (ready.json?.servers as { name: string; state: string }[]).map((s) => [s.name, s.state]),
      [
        ['sink', 'ready'],
        ['echo', 'ready'],
      ],
    );
    const metrics = await raw(`${gate.base}/metrics`, { method: 'GET' });
    assert.equal(metrics.status, 200);
    assert.match(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(metrics.body, /^mcpgate_tool_calls_total\{server="echo",tool="echo",outcome="ok"\} \d+$/m);
    assert.match(metrics.body, /^mcpgate_connection_state\{server="sink",state="ready"\} 1$/m);
    const status = await raw(`${gate.base}/status`, { method: 'GET' });
    assert.equal(status.status, 401);
    const nowhere = await raw(`${gate.base}/nowhere`, { method: 'GET' });
    assert.equal(nowhere.status, 404);
    const agentAsks = await cli(['status', '--url', gate.url, '--token', bob.token]);
    assert.equal(agentAsks.code, 1, "an agent's token does not read the operators' status");
    assert.match(agentAsks.err, /operators only: pass an admin's token/);
    const printed = await cli(['status', '--url', gate.url, '--token', ops.token]);
    assert.equal(printed.code, 0, printed.err);
    assert.match(printed.out, /servers: 2 of 2 ready/);
    assert.match(printed.out, /sink\s+ready/);
    const refused = await cli(['status', '--url', gate.base]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /--token or set MCPGATE_TOKEN/);
  });
});

describe('HTTP front: JWT identities and mcpgate token', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';
  let minted = '';

  /** An HS256 JWT, signed here the way an identity provider would. */
  function jwt(claims: Record<string, unknown>, secret = SECRET): string {
    const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
    return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
  }

  before(async () => {
    dir = await tempDir();
    const made = await cli(['token', 'ci-bot']);
    assert.equal(made.code, 0, made.err);
    minted = made.out.trim();
    const hash = /"tokens": \["(sha256:[0-9a-f]{64})"\]/.exec(made.err)?.[1];
    assert.ok(minted.startsWith('mcpg_') && hash !== undefined, `token printed with its rules line: ${made.err}`);
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const rules = await writeRules(dir, {
      auth: { jwt: { secret: '${TEST_JWT_SECRET}', issuer: 'https://idp.test', audience: 'mcpgate' } },
      agents: { carol: { allow: { servers: ['echo'] } }, 'ci-bot': { tokens: [hash], allow: { servers: ['echo'] } } },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules], env: { TEST_JWT_SECRET: SECRET } });
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  it('a valid JWT names the agent by its sub claim; a bad one is refused with the reason', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = jwt({ sub: 'carol', iss: 'https://idp.test', aud: 'mcpgate', exp: now + 300 });
    const carol = await connectAgent(gate.url, { token: good });
    try {
      assert.equal(textOf(await carol.client.callTool({ name: 'echo__echo', arguments: { text: 'jwt' } })), 'jwt');
    } finally {
      await carol.client.close();
    }
    const cases: [string, RegExp][] = [
      [jwt({ sub: 'carol', iss: 'https://idp.test', aud: 'mcpgate', exp: now - 600 }), /expired/],
      [jwt({ sub: 'carol', iss: 'https://evil.test', aud: 'mcpgate', exp: now + 300 }), /issuer/],
      [jwt({ sub: 'carol', iss: 'https://idp.test', aud: 'other', exp: now + 300 }), /audience/],
      [
        jwt({ sub: 'carol', iss: 'https://idp.test', aud: 'mcpgate', exp: now + 300 }, 'another-secret-of-at-least-32-bytes!!'),
        /signature/,
      ],
    ];
    for (const [token, reason] of cases) {
      const res = await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` }, body: initializeBody() });
      assert.equal(res.status, 401);
      assert.match((res.json?.error as { message: string }).message, reason);
    }
  });

  it('a token made by mcpgate token identifies its agent', async () => {
    const bot = await connectAgent(gate.url, { token: minted });
    try {
      assert.equal(textOf(await bot.client.callTool({ name: 'echo__echo', arguments: { text: 'bot' } })), 'bot');
    } finally {
      await bot.client.close();
    }
  });
});
