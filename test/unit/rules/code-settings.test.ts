// The rules' code mode settings: `"mode": "code"`, `"codeMode": true` beside aggregate or search, and
// the `code` section — `allow` (which writes a program may call; read-only tools may by default),
// `approve` (calls from code that wait for a person), `limits` (checked names and bounds) — each
// mistake an error naming its path.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRules } from '../../../src/rules/load.js';
import { codeApprovalFor, codeMayCall, codeSettingsOf } from '../../../src/rules/code-settings.js';
import { GatewayError } from '../../../src/errors.js';

const parse = (raw: unknown) => parseRules(JSON.stringify(raw), '/rules.json', ['store', 'fs']);

function errorOf(raw: unknown): string {
  try {
    parse(raw);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    const issues = (err.detail as { issues: { path: string; message: string }[] }).issues;
    return issues.map((i) => `${i.path}: ${i.message}`).join('\n');
  }
  return assert.fail('no error');
}

describe('rules: code mode', () => {
  it('reads the mode, codeMode, allow, approve and limits', () => {
    const rules = parse({
      agents: {
        bot: {
          allow: { servers: ['*'] },
          mode: 'code',
          code: {
            allow: { store: ['write_*', { tool: 'delete_note', when: { args: { index: 0 } } }] },
            approve: { store: ['delete_*'] },
            limits: { wallMs: 5000, innerCalls: 3, runsInFlight: 1 },
          },
        },
        side: { allow: { servers: ['*'] }, codeMode: true },
      },
    });
    assert.equal(rules.agents.get('bot')?.modeSettings?.mode, 'code');
    assert.equal(rules.agents.get('side')?.modeSettings?.codeMode, true);
    assert.equal(rules.approves, true, 'a code.approve rule alone makes the rules hold approvals');
    const settings = codeSettingsOf(rules, 'bot');
    assert.deepEqual(settings?.limits, { wallMs: 5000, innerCalls: 3, runsInFlight: 1 });
    assert.equal(codeMayCall(settings, { server: 'store', tool: 'list_items', readOnly: true }), true, 'read-only: by default');
    assert.equal(codeMayCall(settings, { server: 'store', tool: 'write_note', readOnly: false }), true);
    assert.equal(codeMayCall(settings, { server: 'store', tool: 'delete_note', readOnly: false, args: { index: 1 } }), false);
    assert.equal(codeMayCall(settings, { server: 'store', tool: 'delete_note', readOnly: false, args: { index: 0 } }), true);
    assert.equal(
      codeMayCall(codeSettingsOf(rules, 'side'), { server: 'store', tool: 'write_note', readOnly: false }),
      false,
      'writes: only where allowed',
    );
    assert.ok(codeApprovalFor(rules, 'bot', { server: 'store', tool: 'delete_note', args: {} }));
    assert.equal(codeApprovalFor(rules, 'bot', { server: 'store', tool: 'write_note', args: {} }), undefined);
  });

  it('refuses a bad mode, codeMode, section, limit name and limit value, naming each path', () => {
    const message = errorOf({
      agents: {
        a: { mode: 'program' },
        b: { codeMode: 'yes' },
        c: { code: [] },
        d: { code: { limits: { wallTime: 5 } } },
        e: { code: { limits: { innerCalls: 0, memoryBytes: 1024, callsInFlight: 1.5 } } },
        f: { code: { allow: ['store'] } },
      },
    });
    assert.match(message, /agents\.a\.mode.*"code"/);
    assert.match(message, /agents\.b\.codeMode.*expected true or false/);
    assert.match(message, /agents\.c\.code.*expected an object/);
    assert.match(message, /agents\.d\.code\.limits\.wallTime.*unknown code limit/);
    assert.match(message, /agents\.e\.code\.limits\.innerCalls.*whole number from 1/);
    assert.match(message, /agents\.e\.code\.limits\.memoryBytes.*whole number from 4194304/);
    assert.match(message, /agents\.e\.code\.limits\.callsInFlight/);
    assert.match(message, /agents\.f\.code\.allow/);
  });
});
