// Access decisions (src/rules/decide.ts) over rules parsed from JSON: every precedence step of
// docs/architecture.md "`gateway-rules.json` (agents)" with its reason, conflicts between steps, the `default` agent,
// defaults.deny_on_missing_agent, globs, OPEN_RULES, and the policy scenarios of a shared team setup
// (researcher / backend / brave-search / postgres; evaluation stays correct while rules reload).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideServer, decideTool, effectiveAgent, serverVisible } from '../../../src/rules/decide.js';
import { OPEN_RULES, parseRules } from '../../../src/rules/load.js';
import type { Rules } from '../../../src/rules/load.js';
import { globToRegExp } from '../../../src/rules/globs.js';

const FILE = '/srv/project/gateway-rules.json';
const rules = (value: unknown, servers: readonly string[] = []): Rules => parseRules(JSON.stringify(value), FILE, servers);
const agentRules = (id: string, entry: unknown): Rules => rules({ agents: { [id]: entry } });

void describe('decideTool: precedence, most specific first', () => {
  void it('(1) a denied server beats an explicitly allowed tool and an allowed server', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['db'], tools: { db: ['query'] } }, deny: { servers: ['db'] } });
    assert.deepEqual(decideTool(r, 'a', 'db', 'query'), { allowed: false, reason: 'server "db" is denied to agent "a" by deny.servers' });
  });

  void it('(1) deny.servers "*" beats allow.servers "*" and allow.tools "*"', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['*'], tools: { db: ['*'] } }, deny: { servers: ['*'] } });
    assert.deepEqual(decideTool(r, 'a', 'db', 'query'), {
      allowed: false,
      reason: 'server "db" is denied to agent "a" by deny.servers pattern "*"',
    });
  });

  void it('(1) a deny.servers glob denies the servers it matches and no others', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['*'] }, deny: { servers: ['prod-*'] } });
    assert.deepEqual(decideTool(r, 'a', 'prod-db', 'query'), {
      allowed: false,
      reason: 'server "prod-db" is denied to agent "a" by deny.servers pattern "prod-*"',
    });
    assert.equal(decideTool(r, 'a', 'dev-db', 'query').allowed, true);
  });

  void it('(2) an explicitly denied tool beats allow.tools "*"', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['fs'], tools: { fs: ['*'] } }, deny: { tools: { fs: ['write_file'] } } });
    assert.deepEqual(decideTool(r, 'a', 'fs', 'write_file'), {
      allowed: false,
      reason: 'tool "write_file" of server "fs" is denied to agent "a" by deny.tools',
    });
    assert.deepEqual(decideTool(r, 'a', 'fs', 'read_file'), {
      allowed: true,
      reason: 'tool "read_file" of server "fs" is allowed to agent "a" by allow.tools pattern "*"',
    });
  });

  void it('(2) an explicitly denied tool beats the same name explicitly allowed', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { tools: { fs: ['write_file'] } }, deny: { tools: { fs: ['write_file'] } } });
    assert.deepEqual(decideTool(r, 'a', 'fs', 'write_file'), {
      allowed: false,
      reason: 'tool "write_file" of server "fs" is denied to agent "a" by deny.tools',
    });
  });

  void it('(3) a tool denied by a pattern beats an explicitly allowed tool', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['db'], tools: { db: ['drop_table', 'query'] } }, deny: { tools: { db: ['drop_*'] } } });
    assert.deepEqual(decideTool(r, 'a', 'db', 'drop_table'), {
      allowed: false,
      reason: 'tool "drop_table" of server "db" is denied to agent "a" by deny.tools pattern "drop_*"',
    });
    assert.deepEqual(decideTool(r, 'a', 'db', 'query'), {
      allowed: true,
      reason: 'tool "query" of server "db" is allowed to agent "a" by allow.tools',
    });
  });

  void it('(3) names the first deny pattern (in file order) that matches', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['db'] }, deny: { tools: { db: ['x_*', '*_table', 'drop_*'] } } });
    assert.deepEqual(decideTool(r, 'a', 'db', 'drop_table'), {
      allowed: false,
      reason: 'tool "drop_table" of server "db" is denied to agent "a" by deny.tools pattern "*_table"',
    });
  });

  void it(
    '(4) an explicitly allowed tool is allowed, even when a pattern also allows it, and without allow.servers',
    { timeout: 5000 },
    () => {
      const r = agentRules('a', { allow: { tools: { db: ['query', 'q*'] } } });
      assert.deepEqual(decideTool(r, 'a', 'db', 'query'), {
        allowed: true,
        reason: 'tool "query" of server "db" is allowed to agent "a" by allow.tools',
      });
    },
  );

  void it('(5) a tool allowed by a pattern', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { tools: { db: ['query', 'list_*'] } } });
    assert.deepEqual(decideTool(r, 'a', 'db', 'list_tables'), {
      allowed: true,
      reason: 'tool "list_tables" of server "db" is allowed to agent "a" by allow.tools pattern "list_*"',
    });
  });

  void it('(6) an allowed server with no allow.tools entry allows all its tools', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['fs'], tools: { other: ['x'] } } });
    assert.deepEqual(decideTool(r, 'a', 'fs', 'anything'), {
      allowed: true,
      reason:
        'tool "anything" of server "fs" is allowed to agent "a" by allow.servers, with no allow.tools entry for the server (all its tools)',
    });
  });

  void it('(6) allow.servers "*" and globs allow every matching server', { timeout: 5000 }, () => {
    const star = agentRules('a', { allow: { servers: ['*'] } });
    assert.deepEqual(decideTool(star, 'a', 'anything', 't'), {
      allowed: true,
      reason:
        'tool "t" of server "anything" is allowed to agent "a" by allow.servers pattern "*", with no allow.tools entry for the server (all its tools)',
    });
    const glob = agentRules('a', { allow: { servers: ['github-*'] } });
    assert.equal(decideTool(glob, 'a', 'github-enterprise', 't').allowed, true);
    assert.equal(decideTool(glob, 'a', 'gitlab', 't').allowed, false);
  });

  void it('(6 vs 4/5) an allowed server with an allow.tools entry is restricted to the listed tools', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['db'], tools: { db: ['query', 'list_*'] } } });
    assert.equal(decideTool(r, 'a', 'db', 'query').allowed, true);
    assert.equal(decideTool(r, 'a', 'db', 'list_schemas').allowed, true);
    assert.deepEqual(decideTool(r, 'a', 'db', 'drop_table'), {
      allowed: false,
      reason: 'tool "drop_table" of server "db" is not in allow.tools of agent "a"',
    });
  });

  void it('(6) the same holds for allow.servers "*": a tools entry restricts that one server', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['*'], tools: { db: ['query'] } } });
    assert.equal(decideTool(r, 'a', 'fs', 'write_file').allowed, true);
    assert.equal(decideTool(r, 'a', 'db', 'query').allowed, true);
    assert.equal(decideTool(r, 'a', 'db', 'drop_table').allowed, false);
  });

  void it('(6) an empty allow.tools entry is an entry: the server lends no tool', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['db'], tools: { db: [] } } });
    assert.deepEqual(decideTool(r, 'a', 'db', 'query'), {
      allowed: false,
      reason: 'tool "query" of server "db" is not in allow.tools of agent "a"',
    });
  });

  void it('(7) otherwise denied, also when only deny rules mention the server', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['fs'] }, deny: { tools: { db: ['drop_*'] } } });
    const reason = 'server "db" is not allowed to agent "a": neither allow.servers nor allow.tools names it';
    assert.deepEqual(decideTool(r, 'a', 'db', 'query'), { allowed: false, reason });
    assert.deepEqual(decideTool(agentRules('a', {}), 'a', 'db', 'query'), { allowed: false, reason });
  });

  void it('never throws, even when a caller passes names of the wrong type', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['*'], tools: { s: ['x*'] } }, deny: { tools: { s: ['y*'] } } });
    const odd = [undefined, null, 42, {}] as unknown as string[];
    for (const value of odd) {
      assert.doesNotThrow(() => decideTool(r, 'a', value, value));
      assert.doesNotThrow(() => decideTool(r, 'a', 's', value));
      assert.doesNotThrow(() => decideServer(r, value, value));
      assert.doesNotThrow(() => serverVisible(r, value, value));
    }
    assert.deepEqual(decideTool(r, 'a', 's', 42 as unknown as string), {
      allowed: false,
      reason: 'tool 42 of server "s" is not in allow.tools of agent "a"',
    });
  });

  void it('quotes and escapes names in reasons', { timeout: 5000 }, () => {
    const r = agentRules('a"b', { allow: { servers: ['*'] } });
    assert.deepEqual(decideTool(r, 'a"b', 's', 'x\ny'), {
      allowed: true,
      reason:
        'tool "x\\ny" of server "s" is allowed to agent "a\\"b" by allow.servers pattern "*", with no allow.tools entry for the server (all its tools)',
    });
  });
});

void describe('decideTool: agents the rules do not list', () => {
  const withDefault = {
    agents: {
      researcher: { allow: { servers: ['brave-search'] } },
      default: { allow: { servers: ['memory'] }, deny: { tools: { memory: ['delete_*'] } } },
    },
  };

  void it('gives an unlisted agent the rules of "default"', { timeout: 5000 }, () => {
    const r = rules(withDefault);
    assert.deepEqual(decideTool(r, 'stranger', 'memory', 'read_graph'), {
      allowed: true,
      reason:
        'tool "read_graph" of server "memory" is allowed to agent "stranger" (rules of agent "default") by allow.servers, with no allow.tools entry for the server (all its tools)',
    });
    assert.deepEqual(decideTool(r, 'stranger', 'memory', 'delete_entities'), {
      allowed: false,
      reason:
        'tool "delete_entities" of server "memory" is denied to agent "stranger" (rules of agent "default") by deny.tools pattern "delete_*"',
    });
    assert.equal(decideTool(r, 'stranger', 'brave-search', 'brave_web_search').allowed, false);
  });

  void it('does not merge "default" into a listed agent', { timeout: 5000 }, () => {
    const r = rules(withDefault);
    assert.equal(decideTool(r, 'researcher', 'memory', 'read_graph').allowed, false);
    assert.equal(decideTool(r, 'researcher', 'brave-search', 'brave_web_search').allowed, true);
  });

  void it('"default" wins over deny_on_missing_agent false, and applies to an agent with no id', { timeout: 5000 }, () => {
    const r = rules({ ...withDefault, defaults: { deny_on_missing_agent: false } });
    assert.equal(decideTool(r, 'stranger', 'brave-search', 'brave_web_search').allowed, false);
    assert.deepEqual(decideTool(r, undefined, 'memory', 'read_graph'), {
      allowed: true,
      reason:
        'tool "read_graph" of server "memory" is allowed to an agent with no id (rules of agent "default") by allow.servers, with no allow.tools entry for the server (all its tools)',
    });
  });

  void it('the agent named "default" is named plainly in its own reasons', { timeout: 5000 }, () => {
    assert.deepEqual(decideTool(rules(withDefault), 'default', 'memory', 'x'), {
      allowed: true,
      reason:
        'tool "x" of server "memory" is allowed to agent "default" by allow.servers, with no allow.tools entry for the server (all its tools)',
    });
  });

  void it('denies everything without "default" when deny_on_missing_agent is true (the default)', { timeout: 5000 }, () => {
    for (const r of [
      rules({ agents: { a: { allow: { servers: ['*'] } } } }),
      rules({ agents: {}, defaults: { deny_on_missing_agent: true } }),
    ]) {
      assert.deepEqual(decideTool(r, 'x', 's', 't'), {
        allowed: false,
        reason: 'agent "x" is not in the rules and deny_on_missing_agent is true',
      });
      assert.deepEqual(decideServer(r, 'x', 's'), {
        allowed: false,
        reason: 'agent "x" is not in the rules and deny_on_missing_agent is true',
      });
      assert.equal(serverVisible(r, 'x', 's'), false);
      assert.deepEqual(decideTool(r, undefined, 's', 't'), {
        allowed: false,
        reason: 'an agent with no id is not in the rules and deny_on_missing_agent is true',
      });
    }
  });

  void it('allows everything without "default" when deny_on_missing_agent is false', { timeout: 5000 }, () => {
    const r = rules({ agents: { a: {} }, defaults: { deny_on_missing_agent: false } });
    assert.deepEqual(decideTool(r, 'x', 's', 't'), {
      allowed: true,
      reason: 'agent "x" is not in the rules and deny_on_missing_agent is false',
    });
    assert.deepEqual(decideServer(r, 'x', 's'), {
      allowed: true,
      reason: 'agent "x" is not in the rules and deny_on_missing_agent is false',
    });
    assert.equal(serverVisible(r, 'x', 's'), true);
    // A listed agent keeps its own (empty) rules.
    assert.equal(decideTool(r, 'a', 's', 't').allowed, false);
  });

  void it('effectiveAgent names the entry that applies', { timeout: 5000 }, () => {
    const r = rules(withDefault);
    assert.equal(effectiveAgent(r, 'researcher'), 'researcher');
    assert.equal(effectiveAgent(r, 'stranger'), 'default');
    assert.equal(effectiveAgent(r, undefined), 'default');
    assert.equal(effectiveAgent(r, 'default'), 'default');
    const noDefault = rules({ agents: { researcher: {} } });
    assert.equal(effectiveAgent(noDefault, 'stranger'), undefined);
    assert.equal(effectiveAgent(noDefault, 'researcher'), 'researcher');
    assert.equal(effectiveAgent(OPEN_RULES, 'anyone'), undefined);
  });

  void it('never confuses agent ids with Object.prototype keys', { timeout: 5000 }, () => {
    const r = rules({ agents: { a: { allow: { servers: ['*'] } } } });
    for (const id of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      assert.equal(decideTool(r, id, 's', 't').allowed, false);
      assert.equal(effectiveAgent(r, id), undefined);
    }
    const proto = parseRules('{"agents":{"__proto__":{"allow":{"servers":["*"],"tools":{"__proto__":["constructor"]}}}}}', FILE, []);
    assert.equal(effectiveAgent(proto, '__proto__'), '__proto__');
    assert.equal(decideTool(proto, '__proto__', '__proto__', 'constructor').allowed, true);
    assert.equal(decideTool(proto, '__proto__', '__proto__', 'toString').allowed, false);
    assert.equal(decideTool(proto, '__proto__', 'constructor', 'toString').allowed, true);
  });
});

void describe('decideServer and serverVisible', () => {
  const r = rules({
    agents: {
      a: {
        allow: { servers: ['fs', 'git*'], tools: { db: ['query'], kv: ['get'], cache: ['get', 'put'], web: ['fetch_*'] } },
        deny: { servers: ['github-prod'], tools: { kv: ['get'], cache: ['*'], fs: ['*'] } },
      },
    },
  });

  void it('allows a server matched by allow.servers, by name or glob', { timeout: 5000 }, () => {
    assert.deepEqual(decideServer(r, 'a', 'fs'), { allowed: true, reason: 'server "fs" is allowed to agent "a" by allow.servers' });
    assert.deepEqual(decideServer(r, 'a', 'gitlab'), {
      allowed: true,
      reason: 'server "gitlab" is allowed to agent "a" by allow.servers pattern "git*"',
    });
  });

  void it('denies a server deny.servers matches, even when allow.servers does', { timeout: 5000 }, () => {
    assert.deepEqual(decideServer(r, 'a', 'github-prod'), {
      allowed: false,
      reason: 'server "github-prod" is denied to agent "a" by deny.servers',
    });
    assert.equal(serverVisible(r, 'a', 'github-prod'), false);
  });

  void it('does not lend resources and prompts of a server granted only through allow.tools', { timeout: 5000 }, () => {
    assert.deepEqual(decideServer(r, 'a', 'db'), {
      allowed: false,
      reason: 'server "db" is not in allow.servers of agent "a": only the tools allow.tools lists may be called',
    });
    assert.equal(decideTool(r, 'a', 'db', 'query').allowed, true);
  });

  void it('denies a server nothing names', { timeout: 5000 }, () => {
    assert.deepEqual(decideServer(r, 'a', 'memory'), { allowed: false, reason: 'server "memory" is not in allow.servers of agent "a"' });
    assert.equal(serverVisible(r, 'a', 'memory'), false);
  });

  void it(
    'shows a server whose tools allow.tools may let through, and hides one whose every listed tool is denied',
    { timeout: 5000 },
    () => {
      assert.equal(serverVisible(r, 'a', 'fs'), true, 'allowed server, even with all tools denied: its resources remain');
      assert.equal(serverVisible(r, 'a', 'db'), true, 'allow.tools names a tool');
      assert.equal(serverVisible(r, 'a', 'web'), true, 'allow.tools has a pattern');
      assert.equal(serverVisible(r, 'a', 'kv'), false, 'the only listed tool is denied');
      assert.equal(serverVisible(r, 'a', 'cache'), false, 'deny.tools "*"');
      // What is shown and what may be called agree:
      assert.equal(decideTool(r, 'a', 'kv', 'get').allowed, false);
      assert.equal(decideTool(r, 'a', 'cache', 'put').allowed, false);
    },
  );

  void it('hides a server whose allow.tools entry is empty', { timeout: 5000 }, () => {
    assert.equal(serverVisible(agentRules('a', { allow: { tools: { db: [] } } }), 'a', 'db'), false);
  });
});

void describe('globs', () => {
  const cases: [pattern: string, matches: string[], misses: string[]][] = [
    ['get_*', ['get_', 'get_user', 'get_user_by_id'], ['get', 'xget_user', 'GET_user']],
    ['*_read', ['_read', 'file_read', 'a_b_read'], ['file_read2', 'file_write']],
    ['*', ['', 'x', 'anything at all', 'line\nbreak'], []],
    ['?', ['a', '😀', 'é'], ['', 'ab']],
    ['get_?', ['get_a'], ['get_', 'get_ab']],
    ['a.b', ['a.b'], ['axb', 'a.bc']],
    ['**x', ['x', 'aax'], ['xa']],
    ['(x)+[y]{2}|z^$\\/', ['(x)+[y]{2}|z^$\\/'], ['xyyz', 'x', '(x)+[y]{2}']],
    ['list-*.v?', ['list-tables.v1'], ['list-tables.v10', 'list-tablesxv1']],
  ];
  for (const [pattern, matches, misses] of cases) {
    void it(`"${pattern}" matches what it should and nothing else`, { timeout: 5000 }, () => {
      const regex = globToRegExp(pattern);
      for (const name of matches) assert.equal(regex.test(name), true, `${pattern} should match ${JSON.stringify(name)}`);
      for (const name of misses) assert.equal(regex.test(name), false, `${pattern} should not match ${JSON.stringify(name)}`);
    });
  }

  void it('applies the same matching in decisions, regex specials literal', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { tools: { s: ['get_*', '*_read', 'a.b', 'v?'] } } });
    const allowed = (tool: string): boolean => decideTool(r, 'a', 's', tool).allowed;
    assert.deepEqual(['get_x', 'file_read', 'a.b', 'v1', 'axb', 'v12', 'read'].map(allowed), [true, true, true, true, false, false, false]);
    assert.equal(decideTool(r, 'a', 's', 'a.b').reason, 'tool "a.b" of server "s" is allowed to agent "a" by allow.tools');
    assert.equal(decideTool(r, 'a', 's', 'v1').reason, 'tool "v1" of server "s" is allowed to agent "a" by allow.tools pattern "v?"');
  });

  void it('treats a name without * or ? as exact, and a server name with regex specials literally', { timeout: 5000 }, () => {
    const r = agentRules('a', { allow: { servers: ['my.server'] } });
    assert.equal(decideTool(r, 'a', 'my.server', 't').allowed, true);
    assert.equal(decideTool(r, 'a', 'myxserver', 't').allowed, false);
  });
});

void describe('OPEN_RULES (no rules file)', () => {
  void it('allows every agent every server and tool', { timeout: 5000 }, () => {
    const reason = 'there is no rules file: every agent may use every server';
    assert.deepEqual(decideTool(OPEN_RULES, 'anyone', 'any-server', 'any_tool'), { allowed: true, reason });
    assert.deepEqual(decideTool(OPEN_RULES, undefined, 's', 't'), { allowed: true, reason });
    assert.deepEqual(decideServer(OPEN_RULES, 'anyone', 's'), { allowed: true, reason });
    assert.equal(serverVisible(OPEN_RULES, 'anyone', 's'), true);
  });

  void it('is open, fileless, empty and frozen', { timeout: 5000 }, () => {
    assert.equal(OPEN_RULES.open, true);
    assert.equal(OPEN_RULES.file, undefined);
    assert.equal(OPEN_RULES.agents.size, 0);
    assert.deepEqual(OPEN_RULES.warnings, []);
    assert.ok(Object.isFrozen(OPEN_RULES));
    assert.throws(() => (OPEN_RULES.agents as Map<string, unknown>).set('x', {}), TypeError);
  });

  void it('a parsed file is never open', { timeout: 5000 }, () => {
    assert.equal(rules({ agents: {} }).open, false);
  });
});

void describe('policy scenarios', () => {
  const researcher = { allow: { servers: ['brave-search'], tools: { 'brave-search': ['*'] } } };
  const backend = { allow: { servers: ['postgres'], tools: { postgres: ['query', 'list_*'] } } };

  void it('researcher may use every brave-search tool until a deny rule for brave_local_search is added', { timeout: 5000 }, () => {
    const before = rules({ agents: { researcher }, defaults: { deny_on_missing_agent: true } }, ['brave-search']);
    assert.equal(decideTool(before, 'researcher', 'brave-search', 'brave_web_search').allowed, true);
    assert.equal(decideTool(before, 'researcher', 'brave-search', 'brave_local_search').allowed, true);
    const after = rules({ agents: { researcher: { ...researcher, deny: { tools: { 'brave-search': ['brave_local_search'] } } } } }, [
      'brave-search',
    ]);
    assert.deepEqual(decideTool(after, 'researcher', 'brave-search', 'brave_web_search'), {
      allowed: true,
      reason: 'tool "brave_web_search" of server "brave-search" is allowed to agent "researcher" by allow.tools pattern "*"',
    });
    assert.deepEqual(decideTool(after, 'researcher', 'brave-search', 'brave_local_search'), {
      allowed: false,
      reason: 'tool "brave_local_search" of server "brave-search" is denied to agent "researcher" by deny.tools',
    });
    // The snapshot taken before the reload is unchanged: an in-flight call keeps its rules.
    assert.equal(decideTool(before, 'researcher', 'brave-search', 'brave_local_search').allowed, true);
  });

  void it("backend's rules for postgres (absent from .mcp.json) load and are evaluated as written", { timeout: 5000 }, () => {
    const r = rules({ agents: { backend }, defaults: { deny_on_missing_agent: true } }, ['brave-search']);
    assert.equal(r.warnings.length, 2);
    assert.deepEqual(decideServer(r, 'backend', 'postgres'), {
      allowed: true,
      reason: 'server "postgres" is allowed to agent "backend" by allow.servers',
    });
    assert.equal(
      decideTool(r, 'backend', 'postgres', 'query').reason,
      'tool "query" of server "postgres" is allowed to agent "backend" by allow.tools',
    );
    assert.equal(
      decideTool(r, 'backend', 'postgres', 'list_tables').reason,
      'tool "list_tables" of server "postgres" is allowed to agent "backend" by allow.tools pattern "list_*"',
    );
    assert.equal(decideTool(r, 'backend', 'postgres', 'drop_table').allowed, false);
    assert.equal(decideTool(r, 'backend', 'brave-search', 'brave_web_search').allowed, false);
    assert.equal(decideTool(r, 'researcher', 'brave-search', 'brave_web_search').allowed, false, 'researcher is not listed: denied');
  });

  void it('evaluation stays correct and exception-free while rules are reloaded between decisions', { timeout: 5000 }, () => {
    let current = rules({ agents: { test: { allow: { servers: ['api'], tools: { api: ['get_*'] } } } } });
    const results: boolean[] = [];
    for (let i = 0; i < 10; i++) {
      const held = current; // what an in-flight call captured
      current = rules({ agents: { test: { allow: { servers: ['api'], tools: { api: ['get_*', `method_${i}`] } } } } });
      results.push(decideTool(held, 'test', 'api', 'get_user').allowed, decideTool(current, 'test', 'api', 'get_user').allowed);
      assert.equal(decideTool(current, 'test', 'api', `method_${i}`).allowed, true);
      assert.equal(decideTool(held, 'test', 'api', `method_${i}`).allowed, false);
    }
    assert.equal(results.length, 20);
    assert.ok(results.every((r) => r));
  });

  void it('a reload replacing every agent leaves exactly the new agents', { timeout: 5000 }, () => {
    const first = rules({ agents: { test: { allow: { servers: ['api'] } } } });
    const reloads = [0, 1, 2, 3, 4].map((i) => rules({ agents: { [`agent_${i}`]: { allow: { servers: ['api'] } } } }));
    const last = reloads.at(-1)!;
    assert.deepEqual([...last.agents.keys()], ['agent_4']);
    assert.equal(decideTool(last, 'agent_4', 'api', 'x').allowed, true);
    assert.equal(decideTool(last, 'test', 'api', 'x').allowed, false);
    assert.equal(decideTool(first, 'test', 'api', 'x').allowed, true);
  });

  void it('decides the same for the same inputs, with both agents of the combined scenario', { timeout: 5000 }, () => {
    const r = rules({ agents: { researcher, backend: { allow: { servers: ['postgres'], tools: { postgres: ['query'] } } } } }, [
      'brave-search',
    ]);
    assert.deepEqual([...r.agents.keys()], ['researcher', 'backend']);
    assert.equal(decideServer(r, 'researcher', 'brave-search').allowed, true);
    assert.equal(decideTool(r, 'researcher', 'brave-search', 'brave_web_search').allowed, true);
    assert.equal(decideTool(r, 'backend', 'postgres', 'query').allowed, true);
    assert.equal(decideTool(r, 'backend', 'postgres', 'method_0').allowed, false);
  });
});

void describe('decideTool cost', () => {
  void it('decides for an agent with 20 exact and 10 pattern rules in well under a microsecond', { timeout: 30_000 }, (t) => {
    const exact = Array.from({ length: 20 }, (_, i) => `tool_${i}`);
    const patterns = Array.from({ length: 10 }, (_, i) => `family${i}_*`);
    const r = agentRules('bench', {
      allow: { servers: ['s0', 's1'], tools: { s0: [...exact.slice(0, 10), ...patterns.slice(0, 5)] } },
      deny: { servers: ['blocked'], tools: { s0: [...exact.slice(10), ...patterns.slice(5)] } },
    });
    // A mix of outcomes: explicit deny, pattern deny, explicit allow, pattern allow, not listed, all-tools server.
    const calls: [string, string][] = [
      ['s0', 'tool_15'],
      ['s0', 'family7_x'],
      ['s0', 'tool_3'],
      ['s0', 'family2_list'],
      ['s0', 'other'],
      ['s1', 'anything'],
    ];
    const expected = [false, false, true, true, false, true];
    assert.deepEqual(
      calls.map(([s, tool]) => decideTool(r, 'bench', s, tool).allowed),
      expected,
    );
    const rounds = 100_000;
    let allowed = 0;
    for (let i = 0; i < 20_000; i++) for (const [s, tool] of calls) if (decideTool(r, 'bench', s, tool).allowed) allowed++;
    allowed = 0;
    const start = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) for (const [s, tool] of calls) if (decideTool(r, 'bench', s, tool).allowed) allowed++;
    const ns = Number(process.hrtime.bigint() - start) / (rounds * calls.length);
    assert.equal(allowed, rounds * 3);
    t.diagnostic(`decideTool: ${ns.toFixed(0)} ns per call (20 exact + 10 pattern rules, mixed outcomes)`);
    assert.ok(ns < 20_000, `${ns} ns per call`); // generous: a loaded CI machine must not fail this
  });
});
