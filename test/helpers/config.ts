// Shared helpers for the config tests: run a parse that must fail and hand back its issues, and
// read a rules file as the gateway does.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../../src/errors.js';
import type { Env } from '../../src/config/expand.js';
import type { ConfigIssue } from '../../src/config/types.js';
import { loadBoth } from '../../src/reload.js';
import type { Rules } from '../../src/rules/load.js';

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

/**
 * What the rules file `file` compiles to, read the way `serve`, a reload and `check` read it
 * (src/reload.ts `loadBoth`), next to a `.mcp.json` that defines `servers`.
 */
export async function loadRulesFile(file: string, servers: readonly string[], env: Env = process.env): Promise<Rules> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-rules-config-'));
  try {
    const config = join(dir, '.mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: Object.fromEntries(servers.map((name) => [name, { command: 'node' }])) }));
    return (await loadBoth(config, file, env)).rules;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
