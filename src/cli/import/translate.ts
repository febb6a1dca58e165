// One client's server entry as an mcpgate `.mcp.json` entry. Every field is kept (the loader reports
// those mcpgate ignores); string values get mcpgate's `${VAR}` syntax: Claude Code's `${VAR}` and
// `${VAR:-default}` are mcpgate's own; Cursor's and VS Code's `${env:VAR}` become `${VAR}`, and
// their `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}`, `${pathSeparator}` and
// `${/}` the values those name (in a Claude file they would be environment variables); a VS Code `${input:ID}` (a value VS Code prompts for) becomes a variable named after
// it, which the user must set. Any other `${…}` cannot be carried: the server is not imported.
// A literal secret moves to the secrets file, and the entry refers to it as `${VAR}`: in `env` or
// `headers` a name like token, key, secret, password, PAT, DSN, cookie, or a value `Bearer …`, a
// URL holding credentials (a connection string) or a token of a known kind (ghp_…, sk-…); in `args`
// the value of a token-style flag (`--token X`, `--api-key=X`), a connection string with a password,
// or a token of a known kind; in `url` its password and the values of secret-named query
// parameters (`?api_key=…`).

import path from 'node:path';

interface TranslateContext {
  readonly home: string;
  readonly project: string;
  /** Whether `${userHome}`, `${workspaceFolder}`… are the editor's own variables (Cursor, VS Code), not environment variables. */
  readonly editorVariables: boolean;
  /** Secrets known so far (the secrets file's and this run's): variable → value. */
  readonly secrets: Map<string, string>;
}

interface Translated {
  /** The mcpgate entry, or undefined when the server cannot be imported (`notes` says why). */
  readonly entry?: Record<string, unknown>;
  /** Variables this run added to the secrets file. */
  readonly moved: readonly string[];
  /** Variables the user must set (VS Code inputs). */
  readonly inputs: readonly string[];
  readonly notes: readonly string[];
}

const SECRET_NAME =
  /(token|secret|passw(or)?d|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key|credential|auth|cookie|session|(^|[-_])(key|pat|dsn|sig|signature)$|^(key|pat|dsn)$)/i;
const SECRET_VALUE = /^(bearer|basic|token)\s+\S/i;
/** A URL with credentials in it: `scheme://user:password@` or `scheme://key@` (a DSN). */
const URL_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]+@/i;
/** A URL's password: `scheme://user:` then the password, up to `@`. */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*:)([^/@\s]+)(@)/i;
/** Tokens whose form says what they are (GitHub, GitLab, OpenAI/Anthropic-style, Slack, AWS access keys). */
const KNOWN_TOKEN = /^(gh[pousr]_[A-Za-z0-9]{8,}|github_pat_\w{8,}|glpat-[\w-]{8,}|sk-[\w-]{8,}|xox[abposr]-[\w-]{8,}|AKIA[0-9A-Z]{12,})$/;
/** A token-style flag: `--token`, `--api-key`, `-p`-free long options whose name says secret. */
const SECRET_FLAG = /^--?([A-Za-z][\w-]*)$/;
const SECRET_FLAG_VALUE = /^(--?[A-Za-z][\w-]*)=(.+)$/;
const REFERENCE = /\$\{([^}]*)\}/g;
const VAR = /^[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?$/;

/** A variable name made of what a person wrote (`github-token` → `GITHUB_TOKEN`). */
function variableName(text: string): string {
  const name = text
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toUpperCase();
  return /^[0-9]/.test(name) || name === '' ? `_${name}` : name;
}

/** Whether the entry starts mcpgate itself (importing the gateway into its own config would loop). */
function runsMcpgate(entry: Record<string, unknown>): boolean {
  const args: unknown[] = Array.isArray(entry.args) ? (entry.args as unknown[]) : [];
  const words = [entry.command, ...args].filter((w): w is string => typeof w === 'string');
  return words.some(
    (w) => path.basename(w) === 'mcpgate' || /(^|[/\\])mcpgate([/\\].*)?[/\\]cli[/\\]main\.js$/.test(w) || w === 'mcpgate@latest',
  );
}

export function translateEntry(name: string, raw: unknown, ctx: TranslateContext): Translated {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { moved: [], inputs: [], notes: [`"${name}" is not an object: not imported`] };
  const source = raw as Record<string, unknown>;
  if (runsMcpgate(source)) return { moved: [], inputs: [], notes: [`"${name}" runs mcpgate itself: not imported`] };
  const notes: string[] = [];
  const inputs = new Set<string>();
  const moved: string[] = [];
  let unsupported = false;
  const text = (value: string, where: string): string =>
    value.replace(REFERENCE, (whole, body: string) => {
      if (ctx.editorVariables) {
        if (body === 'userHome') return ctx.home;
        if (body === 'workspaceFolder') return ctx.project;
        if (body === 'workspaceFolderBasename') return path.basename(ctx.project);
        if (body === 'pathSeparator' || body === '/') return path.sep;
      }
      if (VAR.test(body)) return whole;
      if (body.startsWith('env:') && VAR.test(body.slice(4))) return `\${${body.slice(4)}}`;
      if (body.startsWith('input:')) {
        const variable = variableName(body.slice(6));
        inputs.add(variable);
        return `\${${variable}}`;
      }
      unsupported = true;
      notes.push(`"${name}" ${where}: \${${body}} has no mcpgate equivalent: not imported`);
      return whole;
    });
  const secret = (key: string, value: string, where: 'env' | 'headers'): string => {
    const translated = text(value, `${where}.${key}`);
    if (translated.includes('${') || translated === '') return translated;
    const scheme = SECRET_VALUE.exec(translated);
    if (scheme === null && !SECRET_NAME.test(key) && !URL_CREDENTIALS.test(translated) && !KNOWN_TOKEN.test(translated)) return translated;
    const secretValue = scheme === null ? translated : translated.slice(translated.indexOf(' ')).trimStart();
    const prefix = scheme === null ? '' : `${translated.slice(0, translated.indexOf(' '))} `;
    const variable = place(
      where === 'env' ? variableName(key) : variableName(`${name}_${key === 'Authorization' || key === 'authorization' ? 'token' : key}`),
      secretValue,
      name,
      ctx.secrets,
    );
    if (!moved.includes(variable) && ctx.secrets.get(variable) === secretValue) moved.push(variable);
    return `${prefix}\${${variable}}`;
  };
  /** `value` moved to the secrets file under a variable named after `label`: its `${VAR}`. */
  const move = (label: string, value: string): string => {
    const variable = place(variableName(`${name}_${label}`), value, name, ctx.secrets);
    if (!moved.includes(variable) && ctx.secrets.get(variable) === value) moved.push(variable);
    return `\${${variable}}`;
  };
  /** A URL with its password and secret query values moved. */
  const url = (value: string): string => {
    let out = value.replace(URL_PASSWORD, (_whole, head: string, password: string, at: string) =>
      password.includes('${') ? `${head}${password}${at}` : `${head}${move('password', password)}${at}`,
    );
    out = out.replace(/([?&])([^=&#]+)=([^&#]*)/g, (whole, sep: string, param: string, v: string) =>
      v === '' || v.includes('${') || !SECRET_NAME.test(param) ? whole : `${sep}${param}=${move(param, v)}`,
    );
    return out;
  };
  /** The args with token-style flag values, connection strings with a password and known tokens moved. */
  const args = (list: unknown[]): unknown[] =>
    list.map((a, i) => {
      if (typeof a !== 'string') return a;
      const value = text(a, `args[${i}]`);
      if (value.includes('${') || value === '') return value;
      const previous = i > 0 && typeof list[i - 1] === 'string' ? SECRET_FLAG.exec(list[i - 1] as string) : null;
      if (previous !== null && SECRET_NAME.test(previous[1]!) && !value.startsWith('-')) return move(previous[1]!, value);
      const inline = SECRET_FLAG_VALUE.exec(value);
      if (inline !== null && SECRET_NAME.test(inline[1]!.replace(/^-+/, '')))
        return `${inline[1]!}=${move(inline[1]!.replace(/^-+/, ''), inline[2]!)}`;
      if (KNOWN_TOKEN.test(value)) return move('token', value);
      if (URL_CREDENTIALS.test(value)) return URL_PASSWORD.test(value) ? url(value) : move('url', value);
      return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? url(value) : value;
    });
  const entry: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'url' && typeof value === 'string') entry[key] = url(text(value, key));
    else if ((key === 'command' || key === 'cwd') && typeof value === 'string') entry[key] = text(value, key);
    else if (key === 'args' && Array.isArray(value)) entry[key] = args(value as unknown[]);
    else if ((key === 'env' || key === 'headers') && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      entry[key] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? secret(k, v, key) : v]),
      );
    } else entry[key] = value;
  }
  if (unsupported) return { moved: [], inputs: [], notes };
  return { entry, moved, inputs: [...inputs], notes };
}

/** The variable a secret goes in: `wanted` if free or already holding it, else one made unique with the server's name. */
function place(wanted: string, value: string, server: string, secrets: Map<string, string>): string {
  const candidates = [wanted, variableName(`${server}_${wanted}`)];
  for (let n = 2; candidates.length < 100; n++) candidates.push(`${variableName(`${server}_${wanted}`)}_${n}`);
  for (const candidate of candidates) {
    const held = secrets.get(candidate);
    if (held === undefined) secrets.set(candidate, value);
    if (held === undefined || held === value) return candidate;
  }
  throw new Error(`no free variable name for a secret of server "${server}"`);
}
