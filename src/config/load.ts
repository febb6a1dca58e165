// Reading `.mcp.json` into the frozen ServersConfig snapshot: file I/O and JSON syntax errors here,
// validation and `${VAR}` expansion in mcp-json.ts. `parseServersConfig` is the pure half (used by
// tests and by reload, which has the text already).

import path from 'node:path';
import type { ServersConfig } from './types.js';
import type { Env } from './expand.js';
import { parseJsonText, readJsonFile } from './json-file.js';
import { buildServersConfig } from './mcp-json.js';

export { formatIssues } from './issues.js';

interface LoadOptions {
  readonly signal?: AbortSignal;
}

const WHAT = { kind: 'configuration', expected: 'a JSON object with "mcpServers"' };

/** Reads, validates and expands `file`; throws `MCPG_CONFIG_INVALID` naming every problem. */
export async function loadServersConfig(file: string, env: Env = process.env, options: LoadOptions = {}): Promise<ServersConfig> {
  const { abs, text } = await readJsonFile(file, WHAT, options.signal);
  return parseServersConfig(text, abs, env);
}

/** Parses the text of a `.mcp.json`; `file` names it in messages and anchors relative `cwd`s. */
export function parseServersConfig(text: string, file: string, env: Env = process.env): ServersConfig {
  const abs = path.resolve(file);
  return buildServersConfig(parseJsonText(text, abs, WHAT), abs, env);
}
