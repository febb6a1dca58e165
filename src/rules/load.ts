// Reading `gateway-rules.json` into the frozen Rules snapshot: file I/O and JSON syntax errors here,
// validation and compilation in schema.ts. `parseRules` is the pure half (tests, reload, `check`).

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { configInvalid } from '../config/issues.js';
import { locateJsonError } from '../config/json-error.js';
import { buildRules } from './schema.js';
import type { Rules } from './schema.js';

export { OPEN_RULES } from './schema.js';
export type { CompiledAgent, CompiledSide, Matcher, Rules } from './schema.js';

export interface LoadRulesOptions {
  readonly signal?: AbortSignal;
}

/**
 * Reads and validates `file` against the servers `.mcp.json` defines (`serverNames`); throws
 * `MCPG_CONFIG_INVALID` naming every problem. Rules naming unknown servers load, with warnings.
 */
export async function loadRules(file: string, serverNames: readonly string[], options: LoadRulesOptions = {}): Promise<Rules> {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = await readFile(abs, { encoding: 'utf8', signal: options.signal });
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err; // cancelled, not invalid
    throw readError(abs, err);
  }
  return parseRules(text, abs, serverNames);
}

/** Parses the text of a `gateway-rules.json`; `file` names it in messages. */
export function parseRules(text: string, file: string, serverNames: readonly string[]): Rules {
  const abs = path.resolve(file);
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') {
    throw configInvalid(abs, [{ file: abs, path: '$', message: 'the file is empty; expected a JSON object with "agents"' }]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const at = locateJsonError(body, err);
    const message = `invalid JSON at line ${at.line}, column ${at.column}: ${at.message}`;
    throw configInvalid(abs, [{ file: abs, path: '$', message }], { cause: err });
  }
  return buildRules(raw, abs, serverNames);
}

function readError(file: string, err: unknown): Error {
  const code = (err as { code?: unknown } | null)?.code;
  const reason =
    code === 'ENOENT'
      ? 'file not found'
      : code === 'EISDIR'
        ? 'is a directory, not a file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : err instanceof Error
            ? err.message
            : String(err);
  const message = code === 'ENOENT' ? `rules file not found: ${file}` : `cannot read rules file ${file}: ${reason}`;
  return configInvalid(file, [{ file, path: '$', message: reason }], { cause: err, message });
}
