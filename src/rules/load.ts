// Reading `gateway-rules.json` into the frozen Rules snapshot: file I/O and JSON syntax errors here,
// validation and compilation in schema.ts. `parseRules` is the pure half (tests, reload, `check`).

import path from 'node:path';
import type { Env } from '../config/expand.js';
import { parseJsonText, readJsonFile } from '../config/json-file.js';
import { buildRules } from './schema.js';
import type { Rules } from './schema.js';

export { OPEN_RULES } from './schema.js';
export type { CompiledAgent, CompiledSide, Matcher, Rules } from './schema.js';
export type { AuthConfig, JwtAlgorithm, JwtConfig } from './auth-config.js';

export interface LoadRulesOptions {
  readonly signal?: AbortSignal;
  /** For `${VAR}` in the `auth.jwt` key settings; process.env when not given. */
  readonly env?: Env;
}

const WHAT = { kind: 'rules', expected: 'a JSON object with "agents"' };

/**
 * Reads and validates `file` against the servers `.mcp.json` defines (`serverNames`); throws
 * `MCPG_CONFIG_INVALID` naming every problem. Rules naming unknown servers load, with warnings.
 */
export async function loadRules(file: string, serverNames: readonly string[], options: LoadRulesOptions = {}): Promise<Rules> {
  const { abs, text } = await readJsonFile(file, WHAT, options.signal);
  return parseRules(text, abs, serverNames, options.env);
}

/** Parses the text of a `gateway-rules.json`; `file` names it in messages. */
export function parseRules(text: string, file: string, serverNames: readonly string[], env?: Env): Rules {
  const abs = path.resolve(file);
  return buildRules(parseJsonText(text, abs, WHAT), abs, serverNames, env);
}
