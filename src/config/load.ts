// Reading `.mcp.json` into the frozen ServersConfig snapshot: file I/O and JSON syntax errors here,
// validation and `${VAR}` expansion in mcp-json.ts. `parseServersConfig` is the pure half (used by
// tests and by reload, which has the text already).

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ServersConfig } from './types.js';
import type { Env } from './expand.js';
import { configInvalid } from './issues.js';
import { locateJsonError } from './json-error.js';
import { buildServersConfig } from './mcp-json.js';

export { formatIssues } from './issues.js';

export interface LoadOptions {
  readonly signal?: AbortSignal;
}

/** Reads, validates and expands `file`; throws `MCPG_CONFIG_INVALID` naming every problem. */
export async function loadServersConfig(file: string, env: Env = process.env, options: LoadOptions = {}): Promise<ServersConfig> {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = await readFile(abs, { encoding: 'utf8', signal: options.signal });
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err; // cancelled, not invalid
    throw readError(abs, err);
  }
  return parseServersConfig(text, abs, env);
}

/** Parses the text of a `.mcp.json`; `file` names it in messages and anchors relative `cwd`s. */
export function parseServersConfig(text: string, file: string, env: Env = process.env): ServersConfig {
  const abs = path.resolve(file);
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') {
    throw configInvalid(abs, [{ file: abs, path: '$', message: 'the file is empty; expected a JSON object with "mcpServers"' }]);
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
  return buildServersConfig(raw, abs, env);
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
  const message = code === 'ENOENT' ? `configuration file not found: ${file}` : `cannot read configuration file ${file}: ${reason}`;
  return configInvalid(file, [{ file, path: '$', message: reason }], { cause: err, message });
}
