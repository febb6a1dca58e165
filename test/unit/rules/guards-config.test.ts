// The rules file's `guards` section: defaults without it (and without a rules file), `false` turns
// every guard off, `where` entries change the plan for the agents, servers and tools their globs
// name, and every mistake is an error with its JSON path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPEN_RULES, parseRules, type Rules } from '../../../src/rules/load.js';
import { GatewayError } from '../../../src/errors.js';

const FILE = '/tmp/gateway-rules.json';
const rules = (value: unknown): Rules => parseRules(JSON.stringify(value), FILE, ['github', 'fs']);

test('without the section (or a rules file) the defaults hold: secrets blocked in arguments, redacted in results', () => {
  for (const r of [OPEN_RULES, rules({ agents: {} })]) {
    const settings = r.guards!.planFor('a', 'github', 'create_issue').settings;
    assert.equal(settings.secrets.arguments, 'block');
    assert.equal(settings.secrets.results, 'redact');
    assert.equal(settings.secrets.entropy, true);
    assert.deepEqual(settings.pii.presets, []);
    assert.equal(settings.injection.results, 'flag');
  }
});

test('"guards": false turns every guard off', () => {
  assert.equal(rules({ agents: {}, guards: false }).guards, undefined);
});

test('where entries apply by agent, server and tool globs, later ones over earlier ones', () => {
  const r = rules({
    agents: {},
    guards: {
      secrets: { results: 'block' },
      pii: { presets: ['email'] },
      where: [
        { servers: 'github', tools: ['create_*'], secrets: { arguments: 'audit' } },
        { agents: ['ci-*'], servers: 'github', secrets: { arguments: 'redact', formats: { jwt: 'off' } } },
      ],
    },
  });
  const book = r.guards!;
  assert.equal(book.planFor('a', 'fs', 'read').settings.secrets.arguments, 'block');
  assert.equal(book.planFor('a', 'fs', 'read').settings.secrets.results, 'block');
  assert.equal(book.planFor('a', 'github', 'create_issue').settings.secrets.arguments, 'audit');
  assert.equal(book.planFor('a', 'github', 'list_issues').settings.secrets.arguments, 'block');
  const ci = book.planFor('ci-7', 'github', 'create_issue').settings;
  assert.equal(ci.secrets.arguments, 'redact');
  assert.equal(ci.secrets.formats.jwt, 'off');
  assert.deepEqual(ci.pii.presets, ['email']);
  assert.equal(book.planFor('ci-7', 'github', undefined).settings.secrets.arguments, 'redact', 'a prompt or resource of the server');
  assert.equal(book.planFor('a', 'github', undefined).settings.secrets.arguments, 'block', 'a tools glob names no resource');
  assert.equal(book.planFor('ci-7', 'github', 'create_issue'), book.planFor('ci-7', 'github', 'create_issue'), 'plans are kept');
});

test('mistakes are errors with their JSON path', () => {
  try {
    rules({
      agents: {},
      guards: { secrets: { arguments: 'drop', formats: { nope: 'off' } }, pii: { presets: ['dna'] }, where: [{ agents: 3 }] },
    });
    assert.fail('no error');
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    const issues = (err.detail?.issues as { path: string }[]).map((i) => i.path);
    assert.deepEqual(issues.sort(), [
      '$.guards.pii.presets',
      '$.guards.secrets.arguments',
      '$.guards.secrets.formats.nope',
      '$.guards.where[0].agents',
    ]);
  }
});
