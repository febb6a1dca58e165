// Reading a JSON configuration file (.mcp.json, gateway-rules.json): read it, strip a byte-order mark,
// parse it, and turn every failure into MCPG_CONFIG_INVALID naming the file — with the line and column
// of a syntax error — so each loader only validates the shape.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { configInvalid } from './issues.js';
import { locateJsonError } from './json-error.js';

/** `kind` names the file in messages ("configuration", "rules"); `expected` says what an empty file lacks. */
export interface JsonFileKind {
  kind: string;
  expected: string;
}

export async function readJsonFile(file: string, what: JsonFileKind, signal?: AbortSignal): Promise<{ abs: string; text: string }> {
  const abs = path.resolve(file);
  try {
    return { abs, text: await readFile(abs, { encoding: 'utf8', signal }) };
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err; // cancelled, not invalid
    throw readError(abs, err, what.kind);
  }
}

/** Parses the text; the result is raw JSON for the loader's schema. */
export function parseJsonText(text: string, abs: string, what: JsonFileKind): unknown {
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') {
    throw configInvalid(abs, [{ file: abs, path: '$', message: `the file is empty; expected ${what.expected}` }]);
  }
  try {
    return JSON.parse(body);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const at = locateJsonError(body, err);
    const message = `invalid JSON at line ${at.line}, column ${at.column}: ${at.message}`;
    throw configInvalid(abs, [{ file: abs, path: '$', message }], { cause: err });
  }
}

function readError(file: string, err: unknown, kind: string): Error {
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
  const message = code === 'ENOENT' ? `${kind} file not found: ${file}` : `cannot read ${kind} file ${file}: ${reason}`;
  return configInvalid(file, [{ file, path: '$', message: reason }], { cause: err, message });
}
