// `${VAR}` expansion in `.mcp.json` string values (command, args, env values, cwd, url, header
// values — never keys). Only `${` is special: a lone `$` or `$$` passes through untouched, so
// arguments that already contain `$` (regexes, shell snippets) keep working.

import type { ConfigIssue } from './types.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** Where a value sits, so an error can name the file, the JSON path and the server. */
interface ExpandWhere {
  readonly file: string;
  readonly path: string;
  readonly server: string;
}

type ExpandResult = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly reason: string };

// POSIX shell variable names; anything else inside `${…}` is far more likely a typo than intent.
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Expands `${NAME}` (an error if NAME is unset; set-but-empty gives "") and `${NAME:-default}`
 * (default when NAME is unset or empty, as in the shell). Stops at the first problem in the value.
 */
export function tryExpand(value: string, env: Env): ExpandResult {
  let out = '';
  let from = 0;
  for (;;) {
    const start = value.indexOf('${', from);
    if (start < 0) return { ok: true, value: out + value.slice(from) };
    out += value.slice(from, start);
    const end = value.indexOf('}', start + 2);
    if (end < 0) return { ok: false, reason: `unclosed "\${" at character ${start + 1}: expected "}"` };
    const body = value.slice(start + 2, end);
    const sep = body.indexOf(':-');
    const name = sep < 0 ? body : body.slice(0, sep);
    if (!NAME.test(name)) {
      const shown = body.length > 40 ? `${body.slice(0, 40)}…` : body;
      return {
        ok: false,
        reason: `invalid reference "\${${shown}}": expected \${NAME} or \${NAME:-default}, NAME made of letters, digits and _ and not starting with a digit`,
      };
    }
    const current = env[name];
    if (sep >= 0) {
      const fallback = body.slice(sep + 2);
      // `${A:-${B}}` would silently leave a stray "}" behind; say so instead.
      if (fallback.includes('${')) return { ok: false, reason: `nested reference in the default of \${${name}:-…} is not supported` };
      out += current === undefined || current === '' ? fallback : current;
    } else if (current === undefined) {
      return { ok: false, reason: `environment variable ${name} is not set` };
    } else {
      out += current;
    }
    from = end + 1;
  }
}

function issueAt(where: ExpandWhere, reason: string): ConfigIssue {
  return { file: where.file, path: where.path, message: `${reason} (server ${JSON.stringify(where.server)})` };
}

/** Expands one value, or records the problem in `issues` and returns "" so a caller can keep collecting. */
export function expandInto(value: string, env: Env, where: ExpandWhere, issues: ConfigIssue[]): string {
  const result = tryExpand(value, env);
  if (result.ok) return result.value;
  issues.push(issueAt(where, result.reason));
  return '';
}
