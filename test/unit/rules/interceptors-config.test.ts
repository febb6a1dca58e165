// The rules file's `interceptors` section: without it there are no bindings (every interceptor
// server judges every call); each binding applies by agent, server and tool globs, narrows to some
// interceptors and events, and carries the invoker's policy; every mistake is an error with its JSON
// path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPEN_RULES, parseRules, type Rules } from '../../../src/rules/load.js';
import { GatewayError } from '../../../src/errors.js';

const FILE = '/tmp/gateway-rules.json';
const rules = (value: unknown): Rules => parseRules(JSON.stringify(value), FILE, ['github', 'fs']);

test('without the section (or a rules file) there are no bindings: every interceptor server judges every call', () => {
  assert.equal(OPEN_RULES.interceptors, undefined);
  assert.equal(rules({ agents: {} }).interceptors, undefined);
});

test('a binding applies by agent, server and tool globs; a tools glob names no resource or prompt', () => {
  const [all, some] = rules({
    agents: {},
    interceptors: [{ use: 'secrets' }, { use: 'policy', agents: 'ci-*', servers: ['github'], tools: 'create_*', events: ['tools/call'] }],
  }).interceptors!;
  assert.equal(all!.use, 'secrets');
  assert.ok(all!.applies('anyone', 'fs', undefined));
  assert.equal(all!.events, undefined);
  assert.ok(some!.applies('ci-7', 'github', 'create_issue'));
  assert.ok(!some!.applies('alice', 'github', 'create_issue'));
  assert.ok(!some!.applies('ci-7', 'fs', 'create_issue'));
  assert.ok(!some!.applies('ci-7', 'github', 'list_issues'));
  assert.ok(!some!.applies('ci-7', 'github', undefined));
  assert.deepEqual([...some!.events!], ['tools/call']);
});

test('the policy overrides what an interceptor declares', () => {
  const [binding] = rules({
    agents: {},
    interceptors: [{ use: 'p', interceptors: ['pii-*'], mode: 'audit', failOpen: true, priorityHint: -10, timeoutMs: 250 }],
  }).interceptors!;
  assert.deepEqual(binding!.policy, { mode: 'audit', failOpen: true, priorityHint: -10, timeoutMs: 250 });
  assert.ok(binding!.names!.match('pii-redactor'));
  assert.equal(binding!.names!.match('other'), undefined);
});

test('mistakes are errors with their JSON path', () => {
  try {
    rules({
      agents: {},
      interceptors: [{ agents: 'a' }, { use: 'x', mode: 'enforce', failOpen: 'yes', timeoutMs: 0, priorityHint: 1.5, tools: 3 }],
    });
    assert.fail('no error');
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    const issues = (err.detail?.issues as { path: string }[]).map((i) => i.path);
    assert.deepEqual(issues.sort(), [
      '$.interceptors[0].use',
      '$.interceptors[1].failOpen',
      '$.interceptors[1].mode',
      '$.interceptors[1].priorityHint',
      '$.interceptors[1].timeoutMs',
      '$.interceptors[1].tools',
    ]);
  }
  assert.throws(() => rules({ agents: {}, interceptors: { use: 'x' } }), /expected an array of bindings/);
});
