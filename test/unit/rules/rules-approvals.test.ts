// The rules' `approve` section (a person's approval of chosen calls): compiled per agent and per
// grant; a rule matches by server and tool (names or globs) and, with `when.args`, by arguments —
// a glob or a value, read as a lenient server would (argument-tests.ts has the cases); its timeout
// defaults to 5 minutes; malformed rules are errors naming their path. And the canonical JSON the
// approvals' digest is taken over: key order does not matter, values do.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRules } from '../../../src/rules/load.js';
import { approvalFor } from '../../../src/rules/approvals.js';
import { canonicalJson } from '../../../src/wire/canonical-json.js';
import { callDigest } from '../../../src/policy/approval-desk.js';
import { GatewayError } from '../../../src/errors.js';

/** A rule without `timeoutSeconds` waits 300 s (docs/rules-and-identity.md). */
const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;

const parse = (raw: unknown) => parseRules(JSON.stringify(raw), '/rules.json', ['github', 'fs']);

function errorOf(raw: unknown): string {
  try {
    parse(raw);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err.message;
  }
  return assert.fail('no error');
}

describe('rules: approve', () => {
  const rules = parse({
    agents: {
      bot: {
        allow: { servers: ['*'] },
        approve: {
          github: [
            'delete_*',
            { tool: 'push', when: { args: { branch: 'main', force: true } }, timeoutSeconds: 30 },
            { tool: 'merge', when: { args: { base: 'release-*' } } },
          ],
          '*': ['format_disk'],
        },
      },
      other: { allow: { servers: ['*'] } },
    },
    grants: { eng: { when: { groups: 'eng' }, approve: { fs: [{ tool: 'write', when: { args: { path: '/etc/*' } } }] } } },
  });

  it('says whether any agent or grant has an approve section (a call is looked up only then)', () => {
    assert.equal(rules.approves, true);
    assert.equal(
      parse({ agents: {}, grants: { eng: { when: { groups: 'eng' }, approve: { fs: ['write'] } } } }).approves,
      true,
      'a grant only',
    );
    assert.equal(parse({ agents: { bot: { allow: { servers: ['*'] } } } }).approves, false);
  });

  it('matches tools by name and glob, per server and for a server glob', () => {
    assert.deepEqual(approvalFor(rules, 'bot', 'github', 'delete_repo', {}), {
      timeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS,
      rule: 'agent "bot" approve["github"][0]',
    });
    assert.equal(approvalFor(rules, 'bot', 'github', 'list_repos', {}), undefined);
    assert.equal(approvalFor(rules, 'bot', 'fs', 'delete_repo', {}), undefined, 'another server');
    assert.equal(approvalFor(rules, 'bot', 'fs', 'format_disk', undefined)?.rule, 'agent "bot" approve["*"][0]');
    assert.equal(approvalFor(rules, 'other', 'github', 'delete_repo', {}), undefined, 'another agent');
  });

  it('matches arguments: values (as a lenient server reads them) and globs; every test must hold', () => {
    assert.equal(approvalFor(rules, 'bot', 'github', 'push', { branch: 'main', force: true })?.timeoutMs, 30_000);
    assert.equal(approvalFor(rules, 'bot', 'github', 'push', { branch: 'main', force: false }), undefined);
    assert.equal(approvalFor(rules, 'bot', 'github', 'push', { branch: 'main' }), undefined, 'a missing argument does not match');
    assert.notEqual(approvalFor(rules, 'bot', 'github', 'push', { branch: 'main', force: 'true' }), undefined, 'a server may read "true" as true');
    assert.notEqual(approvalFor(rules, 'bot', 'github', 'merge', { base: 'release-2.1' }), undefined);
    assert.equal(approvalFor(rules, 'bot', 'github', 'merge', { base: 'main' }), undefined);
    assert.notEqual(approvalFor(rules, 'bot', 'github', 'merge', { base: ['release-1'] }), undefined, 'a server may unwrap a one-element list');
    assert.equal(approvalFor(rules, 'bot', 'github', 'merge', { base: { name: 'release-1' } }), undefined, 'a glob matches scalars only');
  });

  it('reads grants for tokens whose claims meet them', () => {
    assert.equal(approvalFor(rules, 'other', 'fs', 'write', { path: '/etc/passwd' }), undefined, 'no claims');
    assert.equal(
      approvalFor(rules, 'other', 'fs', 'write', { path: '/etc/passwd' }, { groups: ['eng'] })?.rule,
      'grant "eng" approve["fs"][0]',
    );
    assert.equal(approvalFor(rules, 'other', 'fs', 'write', { path: '/tmp/x' }, { groups: ['eng'] }), undefined);
  });

  it('refuses malformed rules with their path', () => {
    assert.match(errorOf({ agents: { bot: { approve: ['x'] } } }), /agents\.bot\.approve.*expected an object/);
    assert.match(errorOf({ agents: { bot: { approve: { github: 'delete_*' } } } }), /agents\.bot\.approve\.github.*expected an array/);
    assert.match(errorOf({ agents: { bot: { approve: { github: [''] } } } }), /agents\.bot\.approve\.github\[0\].*non-empty string/);
    assert.match(errorOf({ agents: { bot: { approve: { github: [{ when: { args: { a: 1 } } }] } } } }), /approve\.github\[0\]\.tool/);
    assert.match(errorOf({ agents: { bot: { approve: { github: [{ tool: 'x', timeoutSeconds: 0 }] } } } }), /timeoutSeconds.*above 0/);
    assert.match(errorOf({ agents: { bot: { approve: { github: [{ tool: 'x', timeoutSeconds: 100_000 }] } } } }), /timeoutSeconds/);
    assert.match(
      errorOf({ agents: { bot: { approve: { github: [{ tool: 'x', when: { args: {} } }] } } } }),
      /when\.args.*non-empty object/,
    );
    assert.match(
      errorOf({ grants: { g: { when: { groups: 'x' }, approve: { github: [7] } } }, agents: {} }),
      /grants\.g\.approve\.github\[0\]/,
    );
  });

  it('warns of a server .mcp.json does not define, and of unknown keys', () => {
    const warned = parse({ agents: { bot: { approve: { gitlab: [{ tool: 'x', later: true }] } } } }).warnings.map(
      (w) => `${w.path}: ${w.message}`,
    );
    assert.ok(
      warned.some((w) => /approve\.gitlab.*does not define/.test(w)),
      warned.join('\n'),
    );
    assert.ok(
      warned.some((w) => /later/.test(w)),
      warned.join('\n'),
    );
  });
});

describe('canonical JSON and the call digest', () => {
  it('ignores key order, keeps every value', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } }), '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    assert.equal(canonicalJson('\u2028"'), JSON.stringify('\u2028"'));
    assert.equal(callDigest('bot', 'g', 't', { a: 1, b: 2 }), callDigest('bot', 'g', 't', { b: 2, a: 1 }));
    assert.notEqual(callDigest('bot', 'g', 't', { a: 1 }), callDigest('bot', 'g', 't', { a: '1' }));
    assert.notEqual(callDigest('bot', 'g', 't', { a: 1 }), callDigest('eve', 'g', 't', { a: 1 }));
    assert.match(callDigest('bot', 'g', 't', {}), /^[0-9a-f]{64}$/);
  });
});
