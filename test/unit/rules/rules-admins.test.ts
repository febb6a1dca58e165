// The rules file's `admins` (the console): compiled to token hash → admin; an admin's
// token may not also be an agent's; a malformed entry is an error naming its path.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRules } from '../../../src/rules/load.js';
import { GatewayError } from '../../../src/errors.js';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;

const parse = (raw: unknown) => parseRules(JSON.stringify(raw), '/rules.json', ['web']);

describe('rules: admins', () => {
  it('maps each admin token hash to its admin; none means no console', () => {
    const rules = parse({ agents: { bot: { allow: { servers: ['web'] }, tokens: [A] } }, admins: { alice: { tokens: [B] } } });
    assert.equal(rules.admins.get(B), 'alice');
    assert.equal(rules.admins.get(A), undefined);
    assert.equal(rules.tokens.get(A), 'bot');
    assert.equal(rules.tokens.get(B), undefined, "an admin's token is not an agent's");
    assert.equal(parse({ agents: {} }).admins.size, 0);
  });

  it("refuses an admin token that is also an agent's, and malformed entries", () => {
    const errorOf = (raw: unknown): string => {
      try {
        parse(raw);
      } catch (err) {
        assert.ok(err instanceof GatewayError);
        return err.message;
      }
      return assert.fail('no error');
    };
    assert.match(
      errorOf({ agents: { bot: { tokens: [A] } }, admins: { alice: { tokens: [A] } } }),
      /admins\.alice\.tokens\[0\].*also listed under agent "bot"/,
    );
    assert.match(errorOf({ agents: {}, admins: { alice: {} } }), /admins\.alice\.tokens.*missing/);
    assert.match(errorOf({ agents: {}, admins: { alice: { tokens: ['plain-token'] } } }), /admins\.alice\.tokens\[0\]/);
    assert.match(errorOf({ agents: {}, admins: [] }), /admins/);
  });
});
