// Quotas and rate limits (issue 32), end to end with real processes and SDK agents: the rules'
// `limits` per agent, per server and per tool (globs), from an agent's entry and from a grant, over
// stdio and over Streamable HTTP. The n+1th call of a window gets MCP's rate-limited error (-32023,
// SEP-3304 draft: data.retryAfterMs, limit, remaining; over HTTP status 429 with Retry-After and
// RateLimit-* headers), a calls-in-flight limit refuses a second call while the first runs and lets
// one through once it ends, the refusal is audited and counted in /metrics, /status shows the
// counters, and a reload changes a limit while the counter keeps its count.

import { createHmac } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeRig,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { JSON_HEADERS, connectAgent, makeToken, raw, rawSession, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 60_000;
const RATE_LIMITED = -32023;

async function save(file: string, value: unknown): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(value, null, 2));
  await rename(`${file}.tmp`, file);
}

const stdioRules = (echoCalls: number): unknown => ({
  agents: {
    tester: {
      allow: { servers: ['*'] },
      limits: { tools: { sink: { echo: { calls: echoCalls, per: '1h' }, 'slo*': { inFlight: 1 } } } },
    },
  },
});

describe('quotas over stdio', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let rules: string;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    rules = dir.file('gateway-rules.json');
    await save(rules, stdioRules(3));
    gw = await startGateway({ config, args: ['--rules', rules, '--audit', dir.file('audit.log')] });
  });

  after(() => closeRig(gw === undefined ? undefined : { gw, dir }));

  it("refuses the n+1th call of a window with the spec's rate-limited error, and only that tool", async () => {
    for (let i = 0; i < 3; i++)
      assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: `hi ${i}` } })), `hi ${i}`);
    const err = await rpcError(gw.client.callTool({ name: 'sink__echo', arguments: { text: 'one too many' } }));
    assert.equal(err.code, RATE_LIMITED);
    assert.equal(err.data.code, 'MCPG_RATE_LIMITED');
    assert.equal(err.data.server, 'sink');
    const wait = err.data.retryAfterMs as number;
    assert.ok(Number.isInteger(wait) && wait > 0 && wait <= 3_600_000, `retryAfterMs ${wait} is within the hour's window`);
    assert.equal(err.data.limit, 3);
    assert.equal(err.data.remaining, 0);
    assert.deepEqual(err.data.quota, {
      rule: '$.agents.tester.limits.tools.sink.echo',
      level: 'tool',
      kind: 'calls',
      subject: 'tester',
      per: '1h',
      limit: 3,
    });
    assert.match(
      err.message,
      /rate limited: agent "tester" reached the limit \$\.agents\.tester\.limits\.tools\.sink\.echo \(3 calls per 1h\)/,
    );
    // Another tool of the server has no limit.
    assert.deepEqual((await gw.client.callTool({ name: 'sink__structured', arguments: { a: 1, b: 2 } })).structuredContent, { sum: 3 });
  });

  it('a calls-in-flight limit (a tool glob) refuses a second call while the first runs, and lets one through once it ends', async () => {
    const abort = new AbortController();
    const first = gw.client.callTool({ name: 'sink__slow', arguments: { ms: 30_000 } }, { signal: abort.signal });
    const second = await rpcError(gw.client.callTool({ name: 'sink__slow', arguments: { ms: 1 } }));
    assert.equal(second.code, RATE_LIMITED);
    assert.equal(second.data.retryAfterMs, 1000);
    assert.equal(second.data.limit, undefined, 'limit and remaining describe a window');
    assert.deepEqual(second.data.quota, {
      rule: '$.agents.tester.limits.tools.sink["slo*"]',
      level: 'tool',
      kind: 'in_flight',
      subject: 'tester',
      limit: 1,
    });
    abort.abort();
    await assert.rejects(first);
    // The cancellation reached the gateway before this call (one pipe, in order): the slot is free.
    assert.match(textOf(await gw.client.callTool({ name: 'sink__slow', arguments: { ms: 1 } })), /./);
  });

  it('writes a refusal to the audit trail as "limited", naming the limit', async () => {
    const file = dir.file('audit.log');
    assert.ok(await until(async () => (await readFile(file, 'utf8')).includes('"decision":"limited"')));
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const limited = lines.filter((l) => l.decision === 'limited');
    assert.equal(limited.length, 2);
    assert.deepEqual(
      limited.map((l) => [l.tool, l.code, l.outcome, (l.limit as { rule: string }).rule, (l.limit as { kind: string }).kind]),
      [
        ['sink__echo', 'MCPG_RATE_LIMITED', 'failed', '$.agents.tester.limits.tools.sink.echo', 'calls'],
        ['sink__slow', 'MCPG_RATE_LIMITED', 'failed', '$.agents.tester.limits.tools.sink["slo*"]', 'in_flight'],
      ],
    );
  });

  it("a reload changes the limit from the next call; the window's count survives it", async () => {
    const reloaded = gw.logs.filter((l) => String(l.msg).startsWith('configuration reloaded')).length;
    await save(rules, stdioRules(5));
    assert.ok(await until(() => gw.logs.filter((l) => String(l.msg).startsWith('configuration reloaded')).length > reloaded));
    // 3 counted before (the refused call was not): 2 more pass, the 6th is refused against the new 5.
    for (let i = 0; i < 2; i++)
      assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: `again ${i}` } })), `again ${i}`);
    const err = await rpcError(gw.client.callTool({ name: 'sink__echo', arguments: { text: 'over' } }));
    assert.equal(err.code, RATE_LIMITED);
    assert.equal(err.data.limit, 5);
  });
});

describe('quotas over HTTP', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';
  const admin = makeToken();

  /** An HS256 JWT, signed here the way an identity provider would. */
  function jwt(sub: string, extra: Record<string, unknown> = {}): string {
    const now = Math.floor(Date.now() / 1000);
    const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub, iss: 'https://idp.test', aud: 'mcpgate', exp: now + 600, ...extra })}`;
    return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
  }

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, {
      auth: { jwt: { secret: '${TEST_JWT_SECRET}', issuer: 'https://idp.test', audience: 'mcpgate' } },
      admins: { ops: { tokens: [admin.hash] } },
      agents: {
        carol: { allow: { servers: ['sink'] }, limits: { calls: 2, per: '1h' } },
        default: { allow: { servers: ['sink'] } },
      },
      grants: { eng: { when: { groups: 'eng' }, limits: { tools: { sink: { structured: { calls: 1, per: '1h' } } } } } },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules], env: { TEST_JWT_SECRET: SECRET } });
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  it("an SDK agent's n+1th call is refused; the POST carrying it gets 429 with Retry-After and the spec's error", async () => {
    const token = jwt('carol');
    const carol = await connectAgent(gate.url, { token });
    try {
      for (let i = 0; i < 2; i++)
        assert.equal(textOf(await carol.client.callTool({ name: 'sink__echo', arguments: { text: `c${i}` } })), `c${i}`);
      // The SDK surfaces a 429 as an HTTP error of its transport, with the body: the spec's error.
      await assert.rejects(
        carol.client.callTool({ name: 'sink__echo', arguments: { text: 'c2' } }),
        (err: Error & { status?: number }) => err.status === 429 && err.message.includes('"code":-32023'),
      );
    } finally {
      await carol.client.close();
    }
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${token}` };
    const session = await rawSession(gate.url, headers);
    const res = await raw(gate.url, {
      headers: { ...headers, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'sink__echo', arguments: { text: 'raw' } } }),
    });
    assert.equal(res.status, 429);
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600, `Retry-After ${String(res.headers['retry-after'])}`);
    assert.equal(res.headers['ratelimit-limit'], '2');
    assert.equal(res.headers['ratelimit-remaining'], '0');
    const error = res.json?.error as { code: number; data: Record<string, unknown> };
    assert.equal(res.json?.id, 7);
    assert.equal(error.code, RATE_LIMITED);
    assert.equal(Math.ceil((error.data.retryAfterMs as number) / 1000), retryAfter);
    assert.equal(error.data.limit, 2);
    assert.equal((error.data.quota as { subject: string }).subject, 'carol');
    // A 2026-07-28 request (no session) is refused the same way: 429 with Retry-After.
    const modern = await raw(gate.url, {
      headers: { ...headers, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'sink__echo' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: {
          name: 'sink__echo',
          arguments: { text: 'modern' },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    assert.equal(modern.status, 429, modern.body);
    assert.ok(Number(modern.headers['retry-after']) >= 1);
    assert.equal(modern.headers['ratelimit-limit'], '2');
    assert.equal((modern.json?.error as { code: number }).code, RATE_LIMITED);
  });

  it("a grant's limit applies to the agents whose claims meet it, and to no other", async () => {
    const dave = await connectAgent(gate.url, { token: jwt('dave', { groups: ['eng'] }) });
    const erin = await connectAgent(gate.url, { token: jwt('erin') });
    try {
      assert.deepEqual((await dave.client.callTool({ name: 'sink__structured', arguments: { a: 1, b: 1 } })).structuredContent, { sum: 2 });
      await assert.rejects(
        dave.client.callTool({ name: 'sink__structured', arguments: { a: 1, b: 1 } }),
        (err: Error & { status?: number }) => err.status === 429 && err.message.includes('$.grants.eng.limits.tools.sink.structured'),
      );
      for (let i = 0; i < 3; i++)
        assert.deepEqual((await erin.client.callTool({ name: 'sink__structured', arguments: { a: i, b: 1 } })).structuredContent, {
          sum: i + 1,
        });
      // Dave's other tools are not limited.
      assert.equal(textOf(await dave.client.callTool({ name: 'sink__echo', arguments: { text: 'free' } })), 'free');
    } finally {
      await dave.client.close();
      await erin.client.close();
    }
  });

  it('counts refusals in /metrics and shows the counters in /status', async () => {
    const metrics = await (await fetch(`${gate.base}/metrics`)).text();
    assert.match(metrics, /^mcpgate_quota_refused_total\{level="all",kind="calls"\} 3$/m);
    assert.match(metrics, /^mcpgate_quota_refused_total\{level="tool",kind="calls"\} 1$/m);
    const status = (await (await fetch(`${gate.base}/status`, { headers: { authorization: `Bearer ${admin.token}` } })).json()) as {
      quotas: { counters: string; limits: Record<string, unknown>[] };
    };
    assert.equal(status.quotas.counters, 'local');
    const carol = status.quotas.limits.find((l) => l.subject === 'carol');
    assert.deepEqual(carol, { subject: 'carol', rule: '$.agents.carol.limits', level: 'all', kind: 'calls', limit: 2, per: '1h', used: 2 });
    const dave = status.quotas.limits.find((l) => l.subject === 'dave');
    assert.deepEqual(dave, {
      subject: 'dave',
      rule: '$.grants.eng.limits.tools.sink.structured',
      level: 'tool',
      kind: 'calls',
      limit: 1,
      per: '1h',
      used: 1,
    });
  });
});
