// A call an approval rule tests the arguments of cannot slip past the test by the type of a value:
// its arguments are checked against the tool's input schema first (MCPG_ARGUMENTS_INVALID), and a
// `when` test matches whatever a lenient server would read as the value written (`"true"`, `1`,
// `"yes"` for `true`; `"1000"` for 1000; `"Main"`, `"main "`, `["main"]` for `"main"`), so a tool
// whose schema says nothing of the types still waits. `unless` (the allow-form) lets a call run at
// once only with exactly the value written. In process over the real stdio front and Gateway.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer } from '../../helpers/fake-server.js';
import { stdioFront, until, type InProcessStdio } from '../../helpers/in-process.js';
import { rpcCodeOf } from '../../../src/errors.js';
import { argumentMismatch } from '../../../src/policy/argument-shape.js';
import { parseRules } from '../../../src/rules/load.js';
import { approvalFor } from '../../../src/rules/approvals.js';

const TIMEOUT = 30_000;

const PUSH_SCHEMA = {
  type: 'object',
  properties: { branch: { type: 'string' }, force: { type: 'boolean' }, amount: { type: 'number' } },
  required: ['branch'],
  additionalProperties: false,
};

describe('approval rules read arguments as a lenient server would', () => {
  const rules = parseRules(
    JSON.stringify({
      agents: {
        bot: {
          allow: { servers: ['*'] },
          approve: {
            g: [
              { tool: 'push', when: { args: { force: true } } },
              { tool: 'pay', when: { args: { amount: 1000 } } },
              { tool: 'merge', when: { args: { base: 'main' } } },
              { tool: 'tag', when: { args: { name: 'v*' } } },
              { tool: 'force_push', unless: { args: { force: false } } },
            ],
          },
        },
      },
    }),
    '/rules.json',
    ['g'],
  );
  const waits = (tool: string, args: Record<string, unknown>): boolean => approvalFor(rules, 'bot', 'g', tool, args) !== undefined;

  it('a when test matches the value written in any type a server may coerce', () => {
    for (const force of [true, 'true', 'TRUE', ' yes', 'on', '1', 1, [true], ['true']])
      assert.ok(waits('push', { force }), JSON.stringify(force));
    for (const force of [false, 'false', 0, 'no', 'maybe', 2, null, [true, true]])
      assert.ok(!waits('push', { force }), JSON.stringify(force));
    assert.ok(!waits('push', {}), 'absent: the test does not hold');
    for (const amount of [1000, '1000', ' 1000 ', '1e3', [1000]]) assert.ok(waits('pay', { amount }), JSON.stringify(amount));
    assert.ok(!waits('pay', { amount: 999 }));
    for (const base of ['main', 'Main', 'main ', ['main'], 'MAIN']) assert.ok(waits('merge', { base }), JSON.stringify(base));
    assert.ok(!waits('merge', { base: 'feature' }));
    for (const name of ['v1', 'V2', ' v3']) assert.ok(waits('tag', { name }), JSON.stringify(name));
  });

  it('an unless test lets the call run at once only with exactly the value written', () => {
    assert.ok(!waits('force_push', { force: false }));
    for (const force of ['false', 0, 'no', true, undefined])
      assert.ok(waits('force_push', force === undefined ? {} : { force }), JSON.stringify(force));
  });

  it('refuses a rule with a malformed unless, naming its path', () => {
    assert.throws(
      () => parseRules(JSON.stringify({ agents: { bot: { approve: { g: [{ tool: 'x', unless: { args: {} } }] } } } }), '/r.json', ['g']),
      /approve\.g\[0\]\.unless\.args.*exact values/s,
    );
  });
});

describe('argument shape against an input schema', () => {
  it('names what does not fit, and accepts what does', () => {
    assert.equal(argumentMismatch(PUSH_SCHEMA, { branch: 'main', force: true }), undefined);
    assert.match(argumentMismatch(PUSH_SCHEMA, { branch: 'main', force: 'true' }) ?? '', /arguments\.force: expected boolean, got string/);
    assert.match(argumentMismatch(PUSH_SCHEMA, { branch: 'main', amount: '1000' }) ?? '', /arguments\.amount: expected number/);
    assert.match(argumentMismatch(PUSH_SCHEMA, { branch: ['main'] }) ?? '', /arguments\.branch: expected string, got array/);
    assert.match(argumentMismatch(PUSH_SCHEMA, { branch: 'main', Force: true }) ?? '', /arguments\.Force: not a property/);
    assert.match(argumentMismatch(PUSH_SCHEMA, { force: true }) ?? '', /arguments\.branch: required/);
    assert.equal(argumentMismatch(undefined, { anything: 1 }), undefined, 'no schema: nothing to check');
  });

  it('follows local refs, anyOf, enum, const and array items, and never runs a pattern', () => {
    const schema = {
      type: 'object',
      $defs: { mode: { enum: ['fast', 'safe'] } },
      properties: {
        mode: { $ref: '#/$defs/mode' },
        ids: { type: 'array', items: { type: 'integer' } },
        either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        kind: { const: 'x' },
        name: { type: 'string', pattern: '(a+)+$' },
      },
    };
    assert.equal(argumentMismatch(schema, { mode: 'fast', ids: [1, 2], either: null, kind: 'x', name: 'a'.repeat(50) + '!' }), undefined);
    assert.match(argumentMismatch(schema, { mode: 'other' }) ?? '', /arguments\.mode: expected one of "fast", "safe"/);
    assert.match(argumentMismatch(schema, { ids: [1, 1.5] }) ?? '', /arguments\.ids\[1\]: expected integer, got number/);
    assert.match(argumentMismatch(schema, { either: 3 }) ?? '', /arguments\.either: expected string/);
    assert.match(argumentMismatch(schema, { kind: 'y' }) ?? '', /arguments\.kind: expected "x"/);
  });

  it('bounds its work on a schema that branches without end', () => {
    const schema: Record<string, unknown> = {
      $defs: { node: { anyOf: [{ $ref: '#/$defs/node' }, { $ref: '#/$defs/node' }] } },
      $ref: '#/$defs/node',
    };
    assert.match(argumentMismatch(schema, { a: 1 }) ?? '', /too complex to check/);
  });
});

describe('call gate: arguments are checked against the schema before an approval rule reads them', { timeout: TIMEOUT }, () => {
  let server: FakeServer;
  let r: InProcessStdio;

  before(async () => {
    server = new FakeServer('g', {
      tools: [
        { name: 'push', inputSchema: PUSH_SCHEMA, text: () => 'pushed' },
        { name: 'loose', text: () => 'ran' },
        { name: 'other', inputSchema: PUSH_SCHEMA, text: () => 'other ran' },
      ],
    });
    r = await stdioFront({
      servers: [server],
      rules: {
        agents: {
          tester: {
            allow: { servers: ['*'] },
            approve: {
              g: [
                { tool: 'push', when: { args: { force: true } } },
                { tool: 'loose', when: { args: { force: true } } },
              ],
            },
          },
        },
      },
    });
    await r.agent.initialize();
  });

  after(async () => {
    await r?.close();
  });

  it('refuses a value of another type than the schema says, and the server is not called', async () => {
    for (const force of ['true', 1, 'yes', 'on']) {
      const err = await r.agent.error('tools/call', { name: 'g__push', arguments: { branch: 'main', force } });
      assert.equal(err.code, rpcCodeOf('MCPG_ARGUMENTS_INVALID'), JSON.stringify(force));
      assert.match(String(err.message), /g__push: arguments\.force: expected boolean/);
      assert.deepEqual(err.data.code, 'MCPG_ARGUMENTS_INVALID');
    }
    const extra = await r.agent.error('tools/call', { name: 'g__push', arguments: { branch: 'main', force: false, Force: true } });
    assert.match(String(extra.message), /arguments\.Force: not a property the tool accepts/);
    assert.equal(server.calls.length, 0);
  });

  it('lets a well-typed call the test does not match run at once, and holds one it matches', async () => {
    const ran = await r.agent.result('tools/call', { name: 'g__push', arguments: { branch: 'dev', force: false } });
    assert.deepEqual(ran.content, [{ type: 'text', text: 'pushed' }]);
    const held = r.agent.result('tools/call', { name: 'g__push', arguments: { branch: 'main', force: true } });
    assert.ok(await until(() => r.gateway.approvals.waiting === 1));
    const [pending] = await r.gateway.approvals.list();
    await r.gateway.approvals.decide(pending!.id, { approved: true, by: 'operator', reason: '' });
    assert.deepEqual((await held).content, [{ type: 'text', text: 'pushed' }]);
  });

  it('a tool whose schema is silent on types still waits for a value a lenient server reads as the tested one', async () => {
    const held = r.agent.error('tools/call', { name: 'g__loose', arguments: { force: 'yes' } });
    assert.ok(await until(() => r.gateway.approvals.waiting === 1), '"yes" waits like true');
    const [pending] = await r.gateway.approvals.list();
    await r.gateway.approvals.decide(pending!.id, { approved: false, by: 'operator', reason: 'no' });
    assert.equal((await held).code, rpcCodeOf('MCPG_CALL_DENIED'));
    assert.equal(server.calls.filter((c) => c.name === 'loose').length, 0);
  });

  it('a tool no approval rule tests is not checked', async () => {
    const ran = await r.agent.result('tools/call', { name: 'g__other', arguments: { branch: 1 } });
    assert.deepEqual(ran.content, [{ type: 'text', text: 'other ran' }]);
  });
});
