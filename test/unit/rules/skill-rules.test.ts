// The rules' skill globs (`allow.skills`, `deny.skills`, by server or `*`) and `skillOptions`
// (`dynamic`, `allowedTools`) compiled from the rules file and decided by `decideSkill`: a deny glob
// wins, an `allow.skills` entry for a server restricts it to the paths it names, a skill whose
// frontmatter names `allowed-tools` is shown only to an agent that may call them unless its
// options say "ignore", and no rules file shows no "dynamic" skill.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRules } from '../../../src/rules/load.js';
import { decideSkill } from '../../../src/rules/decide.js';
import { OPEN_RULES } from '../../../src/rules/compiled.js';

const parse = (raw: unknown) => parseRules(JSON.stringify(raw), '/rules.json', ['docs', 'other']);
const FM = { name: 'x', description: 'd' };

describe('skill rules', () => {
  const rules = parse({
    agents: {
      alice: { allow: { servers: ['*'], skills: { docs: ['acme/*/*', 'git-*'] } }, skillOptions: { dynamic: true } },
      bob: { allow: { servers: ['*'], tools: { other: ['read'] } }, deny: { skills: { '*': ['*refunds*'] } } },
      carol: { allow: { servers: ['*'], tools: { other: ['read'] } }, skillOptions: { allowedTools: 'ignore' } },
    },
  });

  it('an allow.skills entry restricts its server to the paths it names, other servers stay open', () => {
    assert.equal(decideSkill(rules, 'alice', 'docs', 'acme/billing/refunds', FM).allowed, true);
    assert.equal(decideSkill(rules, 'alice', 'docs', 'git-flow', FM).allowed, true);
    assert.equal(decideSkill(rules, 'alice', 'docs', 'refunds', FM).allowed, false);
    assert.equal(decideSkill(rules, 'alice', 'other', 'refunds', FM).allowed, true);
  });

  it('a deny glob for every server wins', () => {
    assert.equal(decideSkill(rules, 'bob', 'docs', 'acme/billing/refunds', FM).allowed, false);
    assert.equal(decideSkill(rules, 'bob', 'other', 'invoices', FM).allowed, true);
  });

  it('allowed-tools: shown only if the agent may call every tool it names, unless the options say ignore', () => {
    const wants = { ...FM, 'allowed-tools': 'read write(path:*)' };
    assert.equal(decideSkill(rules, 'bob', 'other', 'tooling', { ...FM, 'allowed-tools': 'read' }).allowed, true);
    const refused = decideSkill(rules, 'bob', 'other', 'tooling', wants);
    assert.equal(refused.allowed, false);
    assert.match(refused.reason, /allowed-tools "write"/);
    assert.equal(decideSkill(rules, 'carol', 'other', 'tooling', wants).allowed, true);
  });

  it('dynamic skills only where skillOptions.dynamic is true (none without a rules file)', () => {
    assert.equal(decideSkill(rules, 'alice', 'other', 'x', FM).dynamic, true);
    assert.equal(decideSkill(rules, 'bob', 'other', 'x', FM).dynamic, false);
    assert.equal(decideSkill(OPEN_RULES, 'anyone', 'other', 'x', FM).dynamic, false);
    assert.equal(decideSkill(OPEN_RULES, 'anyone', 'other', 'x', FM).allowed, true);
  });

  it('refuses a malformed skills section or skillOptions, naming the path', () => {
    assert.throws(() => parse({ agents: { a: { allow: { skills: ['x'] } } } }), /agents\.a\.allow\.skills/);
    assert.throws(() => parse({ agents: { a: { skillOptions: { allowedTools: 'maybe' } } } }), /skillOptions/);
  });
});
