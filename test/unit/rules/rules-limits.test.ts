// Quotas and rate limits in gateway-rules.json (`limits`, rules/limits.ts): the shape validated with
// JSON paths, and which limits apply to a call (rules/limits-match.ts) — the top level's, the agent's
// entry's (or default's), every grant met; the exact server/tool name over a glob.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRules } from '../../../src/rules/load.js';
import type { Rules } from '../../../src/rules/load.js';
import { limitsFor } from '../../../src/rules/limits-match.js';

import { GatewayError } from '../../../src/errors.js';

const FILE = '/srv/project/gateway-rules.json';
const SERVERS = ['github', 'fs', 'db'];
const rules = (value: unknown): Rules => parseRules(JSON.stringify(value), FILE, SERVERS);

function issues(value: unknown): { path: string; message: string }[] {
  try {
    parseRules(JSON.stringify(value), FILE, SERVERS);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return (err.detail?.issues as { path: string; message: string }[]).map(({ path, message }) => ({ path, message }));
  }
  assert.fail('expected the rules to be refused');
}

/** The window a top-level limit's `per` compiles to, or undefined when the rules refuse it. */
function parseWindow(per: string): number | undefined {
  let r: Rules;
  try {
    r = rules({ agents: { bot: { allow: { servers: ['*'] } } }, limits: { calls: 1, per } });
  } catch (err) {
    assert.ok(err instanceof GatewayError && /expected a window/.test(JSON.stringify(err.detail)), String(err));
    return undefined;
  }
  const [limit] = limitsFor(r, 'bot', 'fs', 'x');
  assert.ok(limit !== undefined && limit.spec.kind === 'window');
  return limit.spec.windowMs;
}

const applied = (r: Rules, agent: string, server: string, tool: string, claims?: Record<string, unknown>): string[] =>
  limitsFor(r, agent, server, tool, claims).map((l) => `${l.subject} ${l.level} ${l.spec.at}`);

void describe('limits: validation', () => {
  void it('compiles a file without limits to no limits (the hot path checks nothing)', { timeout: 5000 }, () => {
    assert.equal(rules({ agents: { a: { allow: { servers: ['*'] } } } }).limits, undefined);
  });

  void it('reads `per` in ms, s, m, h and d, from 100 ms to a day', { timeout: 5000 }, () => {
    assert.equal(parseWindow('500ms'), 500);
    assert.equal(parseWindow('10s'), 10_000);
    assert.equal(parseWindow('1m'), 60_000);
    assert.equal(parseWindow('2h'), 7_200_000);
    assert.equal(parseWindow('1d'), 86_400_000);
    assert.equal(parseWindow('50ms'), undefined);
    assert.equal(parseWindow('2d'), undefined);
    assert.equal(parseWindow('1 m'), undefined);
    assert.equal(parseWindow('0s'), undefined);
    assert.equal(parseWindow('1.5s'), undefined);
  });

  void it('names each wrong value by its JSON path', { timeout: 5000 }, () => {
    const found = issues({
      limits: { calls: 0, per: '1m' },
      agents: {
        a: { limits: { calls: 10 } },
        b: { limits: { per: '1m' } },
        c: { limits: { inFlight: 1.5 } },
        d: { limits: { servers: { github: { calls: 5, per: 'soon' } } } },
        e: { limits: { tools: { 'git*': { x: { inFlight: 1 } } } } },
        f: { limits: { tools: { github: { create_issue: {} } } } },
        g: { limits: 'lots' },
      },
      grants: { eng: { when: { groups: 'eng' }, limits: { inFlight: -1 } } },
    });
    assert.deepEqual(found, [
      { path: '$.limits.calls', message: 'expected a whole number of calls from 1 to 1000000000, got 0' },
      { path: '$.agents.a.limits', message: '"calls" needs "per", the window it counts in (e.g. {"calls": 10, "per": "1m"})' },
      { path: '$.agents.b.limits', message: '"per" needs "calls", how many calls its window allows' },
      { path: '$.agents.c.limits.inFlight', message: 'expected a whole number of calls in flight from 1 to 1000000, got 1.5' },
      {
        path: '$.agents.d.limits.servers.github.per',
        message: 'expected a window such as "500ms", "10s", "1m", "1h" or "1d" (from 100 ms to a day), got "soon"',
      },
      {
        path: '$.agents.e.limits.tools["git*"]',
        message: 'a server of "tools" is named exactly (as in allow.tools); use "servers" for a pattern such as "git*"',
      },
      {
        path: '$.agents.f.limits.tools.github.create_issue',
        message: 'a limit needs "calls" with "per", or "inFlight": {"calls": 100, "per": "1m"} and/or {"inFlight": 4}',
      },
      {
        path: '$.agents.g.limits',
        message:
          'expected an object such as {"calls": 100, "per": "1m"} and/or {"inFlight": 4}, optionally with "servers" and "tools", got a string',
      },
      { path: '$.grants.eng.limits.inFlight', message: 'expected a whole number of calls in flight from 1 to 1000000, got -1' },
    ]);
  });

  void it('warns of unknown keys and unknown servers, and loads', { timeout: 5000 }, () => {
    const r = rules({
      agents: {
        a: { limits: { calls: 1, per: '1s', burst: 3, servers: { nope: { inFlight: 1 } }, tools: { gone: { t: { inFlight: 1, x: 1 } } } } },
      },
    });
    assert.deepEqual(
      r.warnings.map((w) => w.path),
      ['$.agents.a.limits.burst', '$.agents.a.limits.servers.nope', '$.agents.a.limits.tools.gone', '$.agents.a.limits.tools.gone.t.x'],
    );
    assert.notEqual(r.limits, undefined);
  });
});

void describe('limits: which apply to a call', () => {
  const r = rules({
    limits: { servers: { db: { calls: 1000, per: '1m' } } },
    agents: {
      bot: {
        allow: { servers: ['*'] },
        limits: {
          calls: 100,
          per: '1m',
          inFlight: 4,
          servers: { 'git*': { calls: 50, per: '1h' }, github: { calls: 10, per: '1s' } },
          tools: { github: { 'create_*': { calls: 5, per: '1h' }, create_issue: { inFlight: 1 } } },
        },
      },
      default: { allow: { servers: ['*'] }, limits: { calls: 20, per: '1m' } },
    },
    grants: { eng: { when: { groups: 'eng' }, limits: { tools: { fs: { write: { calls: 3, per: '1m' } } } } } },
  });

  void it("takes the entry's own, its exact server over a glob, its exact tool over a glob", { timeout: 5000 }, () => {
    assert.deepEqual(applied(r, 'bot', 'github', 'create_issue'), [
      'bot all $.agents.bot.limits',
      'bot server $.agents.bot.limits.servers.github',
      'bot tool $.agents.bot.limits.tools.github.create_issue',
    ]);
    assert.deepEqual(applied(r, 'bot', 'github', 'create_pr'), [
      'bot all $.agents.bot.limits',
      'bot server $.agents.bot.limits.servers.github',
      'bot tool $.agents.bot.limits.tools.github["create_*"]',
    ]);
    assert.deepEqual(applied(r, 'bot', 'gitlab', 'x'), ['bot all $.agents.bot.limits', 'bot server $.agents.bot.limits.servers["git*"]']);
  });

  void it("counts the top level over every agent, default's per agent, a grant's only with its claims", { timeout: 5000 }, () => {
    assert.deepEqual(applied(r, 'bot', 'db', 'q'), ['* server $.limits.servers.db', 'bot all $.agents.bot.limits']);
    assert.deepEqual(applied(r, 'stranger', 'db', 'q'), ['* server $.limits.servers.db', 'stranger all $.agents.default.limits']);
    assert.deepEqual(applied(r, 'stranger', 'fs', 'write'), ['stranger all $.agents.default.limits']);
    assert.deepEqual(applied(r, 'stranger', 'fs', 'write', { groups: ['eng'] }), [
      'stranger all $.agents.default.limits',
      'stranger tool $.grants.eng.limits.tools.fs.write',
    ]);
  });

  void it("keeps a spec's numbers and window", { timeout: 5000 }, () => {
    const [all] = limitsFor(r, 'bot', 'fs', 'x');
    assert.deepEqual(
      { calls: all!.spec.calls, windowMs: all!.spec.windowMs, per: all!.spec.per, inFlight: all!.spec.inFlight },
      { calls: 100, windowMs: 60_000, per: '1m', inFlight: 4 },
    );
  });
});
