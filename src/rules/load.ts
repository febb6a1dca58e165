// The entrance to rules/: the text of `gateway-rules.json` in, the frozen Rules snapshot out. JSON
// syntax errors here, validation and compilation in schema.ts. rules/ reads no files (the lint
// forbids node:fs here): the caller reads the rules file (src/reload.ts `loadRules`) and gives the
// reader for a JWT key file (`KeyFileReader`).
// `parseRules(text, file, servers, { env, readKeyFile })` gives a deeply frozen `Rules` snapshot (its
// Maps and Sets refuse `set`/`add`/`delete`/`clear`, frozen.ts); with no rules file the gateway uses
// `OPEN_RULES` (everything allowed). `file` names the rules in messages and anchors a relative
// `publicKeyFile`.

import path from 'node:path';
import type { Env } from '../config/expand.js';
import { parseJsonText, type JsonFileKind } from '../config/json-file.js';
import type { KeyFileReader } from './auth-config.js';
import { buildRules } from './schema.js';
import type { Rules } from './compiled.js';
import type { ServerRef } from './server-headers.js';

export { OPEN_RULES } from './compiled.js';
export type { Rules, RulesInForce } from './compiled.js';
export type { KeyFileReader } from './auth-config.js';
export type { ServerRef } from './server-headers.js';

/** How a rules file is named in messages (for the caller's `readJsonFile` too). */
export const RULES_FILE: JsonFileKind = Object.freeze({ kind: 'rules', expected: 'a JSON object with "agents"' });

interface ParseRulesOptions {
  /** For `${VAR}` in the `auth.jwt` key settings; process.env when not given. */
  readonly env?: Env;
  /** Reads `auth.jwt.publicKeyFile`; without it a key file is an error (give `publicKey` instead). */
  readonly readKeyFile?: KeyFileReader;
}

/**
 * Parses and validates the text of a `gateway-rules.json` against the servers `.mcp.json` defines
 * (`servers`: their configs, or bare names when no agent has `serverHeaders`); `file` names it in
 * messages and anchors `publicKeyFile`. Throws `MCPG_CONFIG_INVALID` naming every problem; rules
 * naming unknown servers load, with warnings.
 */
export function parseRules(text: string, file: string, servers: readonly ServerRef[], options: ParseRulesOptions = {}): Rules {
  const abs = path.resolve(file);
  return buildRules(parseJsonText(text, abs, RULES_FILE), abs, servers, options.env, options.readKeyFile);
}
