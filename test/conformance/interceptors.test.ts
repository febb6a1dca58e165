// The interceptors working group's conformance fixtures (SEP-2624; vendored data in
// test/fixtures/interceptors-conformance/, see its README) replayed against mcpgate through an
// adapter of this repository's own, per the suite's adapter contract: a session is mcpgate's
// connection (servers/connection.ts) to a real interceptor server process written with the MCP SDK
// (test/fixtures/interceptor-server.ts, hosting the fixture's interceptors) and the gate's
// `Interceptors` (policy/interceptors.ts) over it; `list` and `invoke` are what that connection
// gets on the wire, and one chain step is `Interceptors.intercept` — the same code a tools/call
// passes. Every fixture of both kinds (14 protocol, 10 behavior) must pass.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/errors.js';
import { parseServersConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/observability/logger.js';
import { Interceptors } from '../../src/policy/interceptors.js';
import { OPEN_RULES } from '../../src/rules/load.js';
import { Connection } from '../../src/servers/connection.js';
import { ROOT, fixture } from '../helpers/gateway.js';

const DIR = join(ROOT, 'test/fixtures/interceptors-conformance');

interface Step {
  op: 'list' | 'invoke' | 'chain' | 'apply';
  event?: string | null;
  phase?: 'request' | 'response';
  payload?: unknown;
  context?: { sessionId: string } | null;
  params?: { name: string; event: string; phase: string; payload: unknown };
  expect: {
    canonical?: string;
    errorCode?: number;
    decision?: 'allow' | 'deny';
    finalPayloadCanonical?: string;
    forbids?: string[];
    requires?: string[];
  };
}

interface Fixture {
  id: string;
  requirement: string;
  interceptors: unknown[];
  steps: Step[];
  volatile: string[];
}

/** RFC 8785 (JCS) for the values the fixtures hold: keys sorted by code unit, no whitespace. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function scrub(value: unknown, volatile: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => scrub(v, volatile));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !volatile.includes(k))
        .map(([k, v]) => [k, scrub(v, volatile)]),
    );
  return value;
}

/** The server a fixture's tool belongs to (the suite's scenarios: a filesystem server and a sqlite one); mcpgate knows it from its route. */
const SERVER_OF: Record<string, string> = { read_file: 'filesystem', write_file: 'filesystem', write_query: 'sqlite' };

/** One adapter session: an interceptor server process, mcpgate's connection to it and the gate's chain over it. */
class Session {
  private readonly lastServer = new Map<string, string>();

  private constructor(
    readonly conn: Connection,
    readonly interceptors: Interceptors,
  ) {}

  static async create(specs: unknown[]): Promise<Session> {
    const text = JSON.stringify({
      mcpServers: {},
      interceptors: { conformance: { command: process.execPath, args: [fixture('interceptor-server'), '--spec', JSON.stringify(specs)] } },
    });
    const config = parseServersConfig(text, join(DIR, '.mcp.json'), {});
    const interceptors = new Interceptors({ inForce: { rules: OPEN_RULES }, audit: undefined, log: silentLogger });
    const conn = new Connection(
      config.interceptors![0]!,
      {
        notification: () => undefined,
        serverRequest: () => undefined,
        ready: (c) => interceptors.ready(c.name),
        interrupted: (c) => interceptors.lost(c.name),
        lost: (c) => interceptors.lost(c.name),
      },
      silentLogger,
      { startupTimeoutMs: 20_000 },
    );
    interceptors.add(conn);
    assert.equal(await conn.start(), true, 'the interceptor server started');
    return new Session(conn, interceptors);
  }

  list(event: string | null): Promise<unknown> {
    return this.conn.request('interceptors/list', event === null ? {} : { event });
  }

  async invoke(params: Record<string, unknown>): Promise<{ ok: true; result: unknown } | { ok: false; errorCode: number }> {
    try {
      return { ok: true, result: await this.conn.request('interceptor/invoke', params) };
    } catch (err) {
      const code = err instanceof GatewayError ? (err.detail?.serverError as { code?: number } | undefined)?.code : undefined;
      if (code === undefined) throw err;
      return { ok: false, errorCode: code };
    }
  }

  async chain(
    event: string,
    phase: 'request' | 'response',
    payload: unknown,
    sessionId: string | null,
  ): Promise<{ decision: string; finalPayload: unknown }> {
    const session = sessionId ?? '';
    const tool = typeof (payload as { name?: unknown }).name === 'string' ? (payload as { name: string }).name : undefined;
    const server = phase === 'request' ? (SERVER_OF[tool ?? ''] ?? 'echo') : (this.lastServer.get(session) ?? 'echo');
    if (phase === 'request') this.lastServer.set(session, server);
    const subject = { agent: 'conformance', session, server, tool: phase === 'request' ? tool : undefined, name: tool ?? event, event };
    const judged = this.interceptors.intercept(subject, phase, payload);
    const out = judged === undefined ? payload : await judged;
    return out instanceof GatewayError ? { decision: 'deny', finalPayload: undefined } : { decision: 'allow', finalPayload: out };
  }

  close(): Promise<void> {
    return this.conn.close();
  }
}

/** Replays one step; the failure's description, or undefined when it passed. */
async function replay(session: Session, step: Step, volatile: readonly string[]): Promise<string | undefined> {
  const { expect } = step;
  if (step.op === 'list') {
    const actual = canonical(scrub(await session.list(step.event ?? null), volatile));
    return actual === expect.canonical ? undefined : `list: expected ${expect.canonical}, got ${actual}`;
  }
  if (step.op === 'invoke') {
    const outcome = await session.invoke(step.params!);
    if (expect.errorCode !== undefined)
      return !outcome.ok && outcome.errorCode === expect.errorCode
        ? undefined
        : `invoke: expected error ${expect.errorCode}, got ${JSON.stringify(outcome)}`;
    if (!outcome.ok) return `invoke: expected a result, got error ${outcome.errorCode}`;
    const actual = canonical(scrub(outcome.result, volatile));
    return actual === expect.canonical ? undefined : `invoke: expected ${expect.canonical}, got ${actual}`;
  }
  // `chain` (older fixtures) and `apply` are the same step: one chain run.
  const outcome = await session.chain(step.event!, step.phase!, step.payload, step.context?.sessionId ?? null);
  if (outcome.decision !== expect.decision) return `chain: expected decision ${expect.decision}, got ${outcome.decision}`;
  const final = outcome.finalPayload === undefined ? 'null' : canonical(scrub(outcome.finalPayload, volatile));
  if (expect.finalPayloadCanonical !== undefined && final !== expect.finalPayloadCanonical)
    return `chain: expected final payload ${expect.finalPayloadCanonical}, got ${final}`;
  const leaked = (expect.forbids ?? []).find((s) => final.includes(s));
  if (leaked !== undefined) return 'chain: a forbidden value is in the final payload';
  const missing = (expect.requires ?? []).find((s) => !final.includes(s));
  if (missing !== undefined) return `chain: ${missing} is missing from the final payload`;
  return undefined;
}

const fixtures: Fixture[] = ['protocol', 'behavior'].flatMap((kind) =>
  readdirSync(join(DIR, kind))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(DIR, kind, f), 'utf8')) as Fixture),
);

describe('interceptors conformance (SEP-2624 fixtures) through mcpgate', { timeout: 300_000 }, () => {
  const results: { id: string; requirement: string; passed: boolean }[] = [];
  after(() => {
    const passed = results.filter((r) => r.passed).length;
    process.stdout.write(`# interceptors conformance: ${passed}/${results.length} fixtures passed\n`);
  });

  it('holds every fixture of both kinds', () => {
    assert.equal(fixtures.filter((f) => f.id.startsWith('protocol/')).length, 14);
    assert.equal(fixtures.filter((f) => f.id.startsWith('behavior/')).length, 10);
  });

  for (const fx of fixtures) {
    it(`${fx.id} [${fx.requirement}]`, { timeout: 60_000 }, async () => {
      const session = await Session.create(fx.interceptors);
      const failures: string[] = [];
      try {
        for (const [i, step] of fx.steps.entries()) {
          const failed = await replay(session, step, fx.volatile);
          if (failed !== undefined) failures.push(`step ${i}: ${failed}`);
        }
      } finally {
        await session.close();
      }
      results.push({ id: fx.id, requirement: fx.requirement, passed: failures.length === 0 });
      assert.deepEqual(failures, []);
    });
  }
});
