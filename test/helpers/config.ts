// Shared helpers for the config tests: run a parse that must fail and hand back its issues.

import assert from 'node:assert/strict';
import { GatewayError } from '../../src/errors.js';
import type { ConfigIssue } from '../../src/config/types.js';

export interface Failure {
  readonly message: string;
  readonly issues: ConfigIssue[];
  readonly warnings: ConfigIssue[];
}

/** Asserts that `fn` throws MCPG_CONFIG_INVALID and returns what it carried. */
export async function failure(fn: () => unknown): Promise<Failure> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.code, 'MCPG_CONFIG_INVALID');
    const detail = err.detail as { issues: ConfigIssue[]; warnings: ConfigIssue[] };
    return { message: err.message, issues: detail.issues, warnings: detail.warnings };
  }
  assert.fail('expected MCPG_CONFIG_INVALID, but nothing was thrown');
}

/** `{ path: message }` of a list of issues, for compact exact assertions. */
export function byPath(issues: readonly ConfigIssue[]): Record<string, string> {
  return Object.fromEntries(issues.map((i) => [i.path, i.message]));
}
