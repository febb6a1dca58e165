// Quotas and rate limits in-process (test/helpers/in-process.ts): the real stdio and HTTP
// fronts and Gateway over an in-memory kitchen sink (test/helpers/fake-server.ts), the rules' `limits`
// per agent, per server and per tool (globs), from an agent's entry and from a grant. The n+1th call
// of a window gets mcpgate's rate-limited error (-31023, with the SEP-3304 draft's data.retryAfterMs, limit,
// remaining; over HTTP status 429 with Retry-After and RateLimit-* headers), a calls-in-flight limit
// refuses a second call while the first runs and lets one through once it ends, the refusal is
// audited and counted in /metrics, /status shows the counters, and a reload changes a limit while the
// counter keeps its count. The counters shared by a cluster (Redis) are test/e2e/cluster-quotas.

import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AuditLog } from '../../../src/observability/audit.js';
import { kitchenSink, type FakeServer } from '../../helpers/fake-server.js';
import { httpFront, reloadRules, stdioFront, until, type InProcessHttp, type InProcessStdio } from '../../helpers/in-process.js';
import { JSON_HEADERS, makeToken } from '../../helpers/requests.js';

const TIMEOUT = 30_000;
const RATE_LIMITED = -31023;

/** The text of a result's first block (fails unless it is text). */
function textOf(result: Record<string, unknown>): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`expected a text result, got ${JSON.stringify(result)}`);
  return first.text;
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
  let dir: string;
  let audit: AuditLog;
  let sink: FakeServer;
  let r: InProcessStdio;
  const call = (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> =>
    r.agent.result('tools/call', { name, arguments: args });
  const refused = (name: string, args: Record<string, unknown>) => r.agent.error('tools/call', { name, arguments: args });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcpgate-quotas-'));
    audit = new AuditLog({ target: join(dir, 'audit.log') });
    sink = kitchenSink('sink');
    r = await stdioFront({ servers: [sink], rules: stdioRules(3), gateway: { audit } });
    await r.agent.initialize();
  });

  after(async () => {
    await r?.close();
    await audit?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses the n+1th call of a window with the spec's rate-limited error, and only that tool", async () => {
    for (let i = 0; i < 3; i++) assert.equal(textOf(await call('sink__echo', { text: `hi ${i}` })), `hi ${i}`);
    const err = await refused('sink__echo', { text: 'one too many' });
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
    assert.deepEqual((await call('sink__structured', { a: 1, b: 2 })).structuredContent, { sum: 3 });
  });

  it('a calls-in-flight limit (a tool glob) refuses a second call while the first runs, and lets one through once it ends', async () => {
    r.agent.send({ jsonrpc: '2.0', id: 'first', method: 'tools/call', params: { name: 'sink__slow', arguments: { ms: 30_000 } } });
    const second = await refused('sink__slow', { ms: 1 });
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
    // The agent cancels the first call: the server is told, and the call is never answered.
    r.agent.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'first', reason: 'aborted' } });
    assert.ok(await until(() => sink.cancelled.some((c) => c.name === 'slow')), 'the server never saw the cancellation');
    // The server may still be working on it: its place is held until the server answers it or a grace
    // (5 s) passes (servers/abandoned-calls.ts). This server stops silently, so the grace frees it.
    assert.equal((await refused('sink__slow', { ms: 1 })).data.code, 'MCPG_RATE_LIMITED');
    const deadline = Date.now() + 10_000;
    let passed = false;
    while (!passed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      passed = await call('sink__slow', { ms: 1 }).then(
        () => true,
        () => false,
      );
    }
    assert.ok(passed, 'the held place was never freed');
    assert.ok(!r.agent.all.some((m) => m.id === 'first'), 'a cancelled call is not answered');
  });

  it('writes a refusal to the audit trail as "limited", naming the limit', async () => {
    const file = join(dir, 'audit.log');
    const text = async (): Promise<string> => readFile(file, 'utf8').catch(() => '');
    const wanted = async (): Promise<boolean> => ((await text()).match(/"decision":"limited"/g) ?? []).length >= 2;
    const deadline = Date.now() + 5000;
    while (!(await wanted()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const lines = (await text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Past the first two: the refusals while the cancelled slow call's place was held (each the same).
    const limited = lines.filter((l) => l.decision === 'limited');
    assert.ok(limited.length >= 2, String(limited.length));
    assert.deepEqual(
      limited.slice(0, 2).map((l) => [l.tool, l.code, l.outcome, (l.limit as { rule: string }).rule, (l.limit as { kind: string }).kind]),
      [
        ['sink__echo', 'MCPG_RATE_LIMITED', 'failed', '$.agents.tester.limits.tools.sink.echo', 'calls'],
        ['sink__slow', 'MCPG_RATE_LIMITED', 'failed', '$.agents.tester.limits.tools.sink["slo*"]', 'in_flight'],
      ],
    );
    for (const l of limited.slice(2)) assert.deepEqual([l.tool, (l.limit as { kind: string }).kind], ['sink__slow', 'in_flight']);
  });

  it("a reload changes the limit from the next call; the window's count survives it", async () => {
    await reloadRules(r.gateway, stdioRules(5));
    // 3 counted before (the refused call was not): 2 more pass, the 6th is refused against the new 5.
    for (let i = 0; i < 2; i++) assert.equal(textOf(await call('sink__echo', { text: `again ${i}` })), `again ${i}`);
    const err = await refused('sink__echo', { text: 'over' });
    assert.equal(err.code, RATE_LIMITED);
    assert.equal(err.data.limit, 5);
  });
});

describe('quotas over HTTP', { timeout: TIMEOUT }, () => {
  let http: InProcessHttp;
  const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';
  const admin = makeToken();

  /** An HS256 JWT, signed here the way an identity provider would. */
  function jwt(sub: string, extra: Record<string, unknown> = {}): string {
    const now = Math.floor(Date.now() / 1000);
    const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub, iss: 'https://idp.test', aud: 'mcpgate', exp: now + 600, ...extra })}`;
    return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
  }

  /** An agent's session, as an SDK client opens it with its bearer token; `call` POSTs one tools/call. */
  async function agent(token: string) {
    const headers = { authorization: `Bearer ${token}` };
    const session = await http.session(headers);
    let id = 1;
    return {
      call: (name: string, args: Record<string, unknown>) =>
        http.inject({
          headers: { ...JSON_HEADERS, ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }),
        }),
    };
  }
  const resultOf = (res: { status: number; body: string; json?: Record<string, unknown> }): Record<string, unknown> => {
    assert.equal(res.status, 200, res.body);
    return res.json?.result as Record<string, unknown>;
  };

  before(async () => {
    http = await httpFront({
      servers: [kitchenSink('sink')],
      // The secret is written in the rules here: reading it from a variable is the loader's (test/config).
      rules: {
        auth: { jwt: { secret: SECRET, issuer: 'https://idp.test', audience: 'mcpgate' } },
        admins: { ops: { tokens: [admin.hash] } },
        agents: {
          carol: { allow: { servers: ['sink'] }, limits: { calls: 2, per: '1h' } },
          default: { allow: { servers: ['sink'] } },
        },
        grants: { eng: { when: { groups: 'eng' }, limits: { tools: { sink: { structured: { calls: 1, per: '1h' } } } } } },
      },
      front: { auth: 'on' },
    });
  });

  after(async () => {
    await http?.close();
  });

  it("an agent's n+1th call is refused; the POST carrying it gets 429 with Retry-After and the spec's error", async () => {
    const token = jwt('carol');
    const carol = await agent(token);
    for (let i = 0; i < 2; i++) assert.equal(textOf(resultOf(await carol.call('sink__echo', { text: `c${i}` }))), `c${i}`);
    // What an SDK client surfaces as an HTTP error of its transport: the status, and the spec's error in the body.
    const third = await carol.call('sink__echo', { text: 'c2' });
    assert.equal(third.status, 429);
    assert.ok(third.body.includes('"code":-31023'), third.body);
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${token}` };
    const session = await http.session({ authorization: `Bearer ${token}` });
    const res = await http.inject({
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
    const modern = await http.inject({
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
    const dave = await agent(jwt('dave', { groups: ['eng'] }));
    const erin = await agent(jwt('erin'));
    assert.deepEqual(resultOf(await dave.call('sink__structured', { a: 1, b: 1 })).structuredContent, { sum: 2 });
    const refused = await dave.call('sink__structured', { a: 1, b: 1 });
    assert.equal(refused.status, 429);
    assert.ok(refused.body.includes('$.grants.eng.limits.tools.sink.structured'), refused.body);
    for (let i = 0; i < 3; i++)
      assert.deepEqual(resultOf(await erin.call('sink__structured', { a: i, b: 1 })).structuredContent, { sum: i + 1 });
    // Dave's other tools are not limited.
    assert.equal(textOf(resultOf(await dave.call('sink__echo', { text: 'free' }))), 'free');
  });

  it('counts refusals in /metrics and shows the counters in /status', async () => {
    const metrics = (await http.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^mcpgate_quota_refused_total\{level="all",kind="calls"\} 3$/m);
    assert.match(metrics, /^mcpgate_quota_refused_total\{level="tool",kind="calls"\} 1$/m);
    const status = (await http.inject({ method: 'GET', url: '/status', headers: { authorization: `Bearer ${admin.token}` } })).json as {
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
