// The `.mcp.json` format (as Claude Desktop, Claude Code and Cursor write it): zod schemas for one
// raw server entry, and the conversion of the parsed file into the frozen ServersConfig of types.ts.
// Every error and warning is collected with its JSON path; nothing stops at the first problem.

import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_TIMEOUT_MS } from './types.js';
import type { ConfigIssue, RemoteServerConfig, ServerConfig, ServersConfig, StdioServerConfig } from './types.js';
import { expandInto } from './expand.js';
import type { Env } from './expand.js';
import { configInvalid, describeValue, isPlainObject, jsonPath } from './issues.js';

// setTimeout fires immediately (with only a warning) for delays past 2^31-1 ms.
const MAX_TIMEOUT_MS = 2_147_483_647;
// What the catalog can use verbatim in `SERVER__TOOL` names (docs/architecture.md "Names").
const SAFE_NAME = /^[A-Za-z0-9_-]+$/;
const TYPES = new Map<string, 'stdio' | 'http' | 'sse'>([
  ['stdio', 'stdio'],
  ['http', 'http'],
  ['sse', 'sse'],
  // Spellings other clients write for Streamable HTTP.
  ['streamable-http', 'http'],
  ['streamableHttp', 'http'],
]);

const common = {
  disabled: z.boolean().default(false),
  timeout: z.number().int().positive().max(MAX_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
  sessions: z.enum(['shared', 'per-agent']).default('shared'),
};
const stdioEntry = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  ...common,
});
const remoteEntry = z.looseObject({
  type: z.string().optional(),
  url: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  ...common,
});

// What each field should be, worded for a person; `[]` is an element, `{}` a value of a map.
const EXPECTED: Readonly<Record<string, string>> = {
  command: 'a non-empty string',
  args: 'an array of strings',
  'args[]': 'a string',
  env: 'an object whose values are strings',
  'env{}': 'a string',
  cwd: 'a string (a directory)',
  url: 'a string (an http or https URL)',
  headers: 'an object whose values are strings',
  'headers{}': 'a string',
  disabled: 'true or false',
  timeout: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})`,
  sessions: '"shared" or "per-agent"',
};

interface Context {
  readonly file: string;
  readonly env: Env;
  readonly errors: ConfigIssue[];
  readonly warnings: ConfigIssue[];
}

/** Validates and expands a parsed `.mcp.json`; throws `MCPG_CONFIG_INVALID` listing every error. */
export function buildServersConfig(raw: unknown, file: string, env: Env): ServersConfig {
  const ctx: Context = { file, env, errors: [], warnings: [] };
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({ file, path: jsonPath(segments), message });
  const servers: ServerConfig[] = [];
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue([], `expected an object with a "mcpServers" key, got ${describeValue(raw)}`));
  } else {
    for (const key of Object.keys(raw)) {
      if (key !== 'mcpServers') ctx.warnings.push(issue([key], `unknown top-level key "${key}" is ignored`));
    }
    const entries = raw.mcpServers;
    if (entries === undefined) ctx.errors.push(issue(['mcpServers'], 'missing; expected an object mapping server names to servers'));
    else if (!isPlainObject(entries)) {
      ctx.errors.push(issue(['mcpServers'], `expected an object mapping server names to servers, got ${describeValue(entries)}`));
    } else {
      // The raw object, not a zod record: it keeps every key in file order (a record drops "__proto__").
      const list = Object.entries(entries);
      if (list.length === 0) ctx.warnings.push(issue(['mcpServers'], 'no servers configured'));
      for (const [name, entry] of list) {
        const server = convertEntry(name, entry, ctx);
        if (server) servers.push(server);
      }
    }
  }
  if (ctx.errors.length > 0) throw configInvalid(file, ctx.errors, { warnings: ctx.warnings });
  return Object.freeze({ file, servers: Object.freeze(servers), warnings: Object.freeze(ctx.warnings.map((w) => Object.freeze(w))) });
}

function convertEntry(name: string, entry: unknown, ctx: Context): ServerConfig | undefined {
  const base = ['mcpServers', name];
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({ file: ctx.file, path: jsonPath([...base, ...segments]), message });
  if (name === '') {
    ctx.errors.push(issue([], 'a server name must not be empty'));
    return undefined;
  }
  if (!SAFE_NAME.test(name)) {
    ctx.warnings.push(issue([], `server name "${name}" has characters other than A-Z a-z 0-9 _ -; its tool names will use a sanitized form`));
  }
  if (!isPlainObject(entry)) {
    ctx.errors.push(issue([], `expected an object describing server "${name}", got ${describeValue(entry)}`));
    return undefined;
  }
  let kind: 'stdio' | 'http' | 'sse';
  const type = entry.type;
  if (type !== undefined) {
    const known = typeof type === 'string' ? TYPES.get(type) : undefined;
    if (known === undefined) {
      ctx.errors.push(issue(['type'], `expected "stdio", "http" or "sse" (or "streamable-http"), got ${describeValue(type, true)}`));
      return undefined;
    }
    kind = known;
  } else if (entry.command !== undefined) kind = 'stdio';
  else if (entry.url !== undefined) kind = 'http'; // Claude Code reads a bare `url` as Streamable HTTP
  else {
    ctx.errors.push(issue([], `server "${name}" has neither "command" (a stdio server) nor "url" (a remote server)`));
    return undefined;
  }
  const shape = kind === 'stdio' ? stdioEntry.shape : remoteEntry.shape;
  for (const key of Object.keys(entry)) {
    if (!Object.hasOwn(shape, key)) ctx.warnings.push(issue([key], `unknown key "${key}" in server "${name}" is ignored`));
  }
  for (const field of ['env', 'headers']) {
    // zod's record (like any plain object) would silently drop this key rather than keep it.
    const map = entry[field];
    if (isPlainObject(map) && Object.hasOwn(map, '__proto__')) ctx.errors.push(issue([field, '__proto__'], 'the key "__proto__" is not allowed'));
  }
  const expand = (value: string, segments: readonly PropertyKey[]): string =>
    expandInto(value, ctx.env, { file: ctx.file, path: jsonPath([...base, ...segments]), server: name }, ctx.errors);
  const before = ctx.errors.length;
  let server: ServerConfig | undefined;
  if (kind === 'stdio') {
    const parsed = stdioEntry.safeParse(entry);
    if (parsed.success) server = toStdio(name, parsed.data, expand, ctx, issue);
    else reportZodIssues(parsed.error.issues, entry, ctx, issue);
  } else {
    const parsed = remoteEntry.safeParse(entry);
    if (parsed.success) server = toRemote(name, kind, parsed.data, expand, ctx, issue);
    else reportZodIssues(parsed.error.issues, entry, ctx, issue);
  }
  return ctx.errors.length > before ? undefined : server;
}

type Expand = (value: string, segments: readonly PropertyKey[]) => string;
type Issue = (segments: readonly PropertyKey[], message: string) => ConfigIssue;

function toStdio(name: string, raw: z.output<typeof stdioEntry>, expand: Expand, ctx: Context, issue: Issue): StdioServerConfig {
  const before = ctx.errors.length;
  const command = expand(raw.command, ['command']);
  if (command === '' && ctx.errors.length === before) {
    ctx.errors.push(issue(['command'], `expected a non-empty string, got "" after \${VAR} expansion (server "${name}")`));
  }
  const args = raw.args.map((arg, i) => expand(arg, ['args', i]));
  const env = Object.fromEntries(Object.entries(raw.env).map(([key, value]) => [key, expand(value, ['env', key])]));
  const dir = path.dirname(ctx.file);
  const cwd = raw.cwd === undefined ? dir : path.resolve(dir, expand(raw.cwd, ['cwd']));
  return Object.freeze({
    type: 'stdio',
    name,
    command,
    args: Object.freeze(args),
    env: Object.freeze(env),
    cwd,
    disabled: raw.disabled,
    timeout: raw.timeout,
    sessions: raw.sessions,
  });
}

function toRemote(name: string, type: 'http' | 'sse', raw: z.output<typeof remoteEntry>, expand: Expand, ctx: Context, issue: Issue): RemoteServerConfig {
  const before = ctx.errors.length;
  const url = expand(raw.url, ['url']);
  if (ctx.errors.length === before) {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    // The URL itself is not echoed: it may carry a token in its query.
    if (parsed === undefined) ctx.errors.push(issue(['url'], `expected an http or https URL, got a string that is not a URL (server "${name}")`));
    else if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      ctx.errors.push(issue(['url'], `expected an http or https URL, got a "${parsed.protocol}" URL (server "${name}")`));
    }
  }
  const headers = Object.fromEntries(Object.entries(raw.headers).map(([key, value]) => [key, expand(value, ['headers', key])]));
  return Object.freeze({
    type,
    name,
    url,
    headers: Object.freeze(headers),
    disabled: raw.disabled,
    timeout: raw.timeout,
    sessions: raw.sessions,
  });
}

/** zod's issues, reworded as "expected X, got Y" against the value actually in the file. */
function reportZodIssues(issues: readonly z.core.$ZodIssue[], entry: Record<string, unknown>, ctx: Context, issue: Issue): void {
  const seen = new Set<string>();
  for (const zi of issues) {
    const [field, inner] = zi.path;
    const key = String(field) + (zi.path.length > 1 ? (typeof inner === 'number' ? '[]' : '{}') : '');
    const at = issue(zi.path, '').path;
    if (seen.has(at)) continue;
    seen.add(at);
    let actual: unknown = entry;
    for (const segment of zi.path) {
      actual = isPlainObject(actual) || Array.isArray(actual) ? (actual as Record<PropertyKey, unknown>)[segment] : undefined;
    }
    const expected = EXPECTED[key];
    let message = zi.message; // only for a field EXPECTED lacks, which would be a bug here
    if (expected !== undefined) {
      message = actual === undefined ? `missing; expected ${expected}` : `expected ${expected}, got ${describeValue(actual, key === 'sessions')}`;
    }
    ctx.errors.push(issue(zi.path, message));
  }
}
