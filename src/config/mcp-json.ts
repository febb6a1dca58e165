// The `.mcp.json` format (as Claude Desktop, Claude Code and Cursor write it): zod schemas for one
// raw server entry, and the conversion of the parsed file into the frozen ServersConfig of types.ts.
// Every error and warning is collected with its JSON path; nothing stops at the first problem.

import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_HEALTH_CHECK, DEFAULT_LIMITS, DEFAULT_POOL, DEFAULT_TIMEOUT_MS } from './types.js';
import type { ConfigIssue, HealthCheckSettings, InheritEnv, OAuthSettings, PoolSettings, RemoteServerConfig, ServerConfig, ServerEra, ServerLimits, ServersConfig, SessionScope, StdioServerConfig } from './types.js';
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
  sessions: z.enum(['shared', 'per-agent', 'per-session']).default('shared'),
  // Checked by readLimits (field by field, with the defaults from the top-level "limits").
  limits: z.unknown().optional(),
  // Checked by readPool (field by field); only for the pooled scopes.
  pool: z.unknown().optional(),
  // A string is checked against SAFE_NAME in readPrefix, so its error can say why.
  prefix: z.union([z.string(), z.literal(false)]).optional(),
  era: z.enum(['2025', '2026-07-28', 'auto']).optional(),
  // Checked by readRoots (each a file:// URI, bounded).
  roots: z.unknown().optional(),
};
// `inheritEnv`: true (everything but mcpgate's secrets), false (nothing), or names (`PREFIX_*` allowed).
const inheritEnvField = z.union([z.boolean(), z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/))]);
const stdioEntry = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  inheritEnv: inheritEnvField.optional(),
  ...common,
});
// `"auth": "oauth"`, or the object form with the client's settings (checked by readAuth).
const oauthObject = z.strictObject({
  type: z.literal('oauth'),
  grant: z.enum(['authorization_code', 'client_credentials']).default('authorization_code'),
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  clientMetadataUrl: z.string().min(1).optional(),
  scope: z.string().min(1).optional(),
});
const remoteEntry = z.looseObject({
  type: z.string().optional(),
  url: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  auth: z.unknown().optional(),
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
  inheritEnv: 'true, false, or an array of variable names (NAME or PREFIX_*)',
  'inheritEnv[]': 'a variable name (letters, digits, _; a trailing * matches a prefix)',
  url: 'a string (an http or https URL)',
  headers: 'an object whose values are strings',
  'headers{}': 'a string',
  disabled: 'true or false',
  timeout: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})`,
  sessions: '"shared", "per-agent" or "per-session"',
  prefix: 'a prefix (letters, digits, _ and -) or false (no prefix: the server\'s own names)',
  era: '"2025", "2026-07-28" or "auto"',
  auth: '"oauth" or {"type": "oauth", "grant", "clientId", "clientSecret", "clientMetadataUrl", "scope"}',
};

interface Context {
  readonly file: string;
  /** The top-level "limits" over the built-in defaults: what a server without its own gets. */
  limits: ServerLimits;
  readonly env: Env;
  readonly errors: ConfigIssue[];
  readonly warnings: ConfigIssue[];
  /** The file's top-level `inheritEnv` (the default for stdio entries); undefined: `safe`. */
  inheritEnv: InheritEnv | undefined;
}

/** Validates and expands a parsed `.mcp.json`; throws `MCPG_CONFIG_INVALID` listing every error. */
export function buildServersConfig(raw: unknown, file: string, env: Env): ServersConfig {
  const ctx: Context = { file, env, errors: [], warnings: [], limits: DEFAULT_LIMITS, inheritEnv: undefined };
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({ file, path: jsonPath(segments), message });
  const servers: ServerConfig[] = [];
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue([], `expected an object with a "mcpServers" key, got ${describeValue(raw)}`));
  } else {
    for (const key of Object.keys(raw)) {
      if (key !== 'mcpServers' && key !== 'limits' && key !== 'inheritEnv') ctx.warnings.push(issue([key], `unknown top-level key "${key}" is ignored`));
    }
    if (raw.inheritEnv !== undefined) {
      const parsed = inheritEnvField.safeParse(raw.inheritEnv);
      if (parsed.success) ctx.inheritEnv = toInheritEnv(parsed.data);
      else ctx.errors.push(issue(['inheritEnv'], `expected ${EXPECTED.inheritEnv}, got ${describeValue(raw.inheritEnv)}`));
    }
    ctx.limits = readLimits(raw.limits, DEFAULT_LIMITS, ['limits'], ctx);
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
  checkPrefixes(servers, ctx);
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
  // Set only when the file says so, so the snapshot of an entry without it is unchanged (`safe`).
  const inheritEnv = raw.inheritEnv === undefined ? ctx.inheritEnv : toInheritEnv(raw.inheritEnv);
  return Object.freeze({
    type: 'stdio',
    name,
    command,
    args: Object.freeze(args),
    env: Object.freeze(env),
    ...(inheritEnv !== undefined && { inheritEnv }),
    cwd,
    disabled: raw.disabled,
    timeout: raw.timeout,
    ...sessionsAndPool(name, raw.sessions, raw.pool, ctx),
    ...readPrefix(name, raw.prefix, ctx, issue),
    ...readRoots(name, raw.roots, expand, ctx, issue),
    limits: readLimits(raw.limits, ctx.limits, ['mcpServers', name, 'limits'], ctx),
    // Set only when the file says so, so the snapshot of an entry without it is unchanged.
    ...(raw.era !== undefined && { era: raw.era }),
  });
}

/** A remote entry's era: the legacy HTTP+SSE transport has no 2026-07-28 form. */
function readEra(name: string, type: 'http' | 'sse', era: ServerEra | undefined, ctx: Context, issue: (at: (string | number)[], message: string) => ConfigIssue): { era?: ServerEra } {
  if (era === undefined) return {};
  if (type === 'sse' && era !== '2025') {
    ctx.errors.push(issue(['era'], `expected "2025" for a "type": "sse" server, got "${era}": the legacy HTTP+SSE transport has no 2026-07-28 form (use "type": "http") (server "${name}")`));
    return {};
  }
  return { era };
}

/**
 * The session scope and, for the pooled scopes, the pool's settings (defaults where absent). A
 * `"pool"` on a shared server would be ignored, so it is a warning that says so.
 */
function sessionsAndPool(name: string, sessions: SessionScope, raw: unknown, ctx: Context): { sessions: SessionScope; pool?: PoolSettings } {
  const at = ['mcpServers', name, 'pool'];
  if (sessions === 'shared') {
    if (raw !== undefined) ctx.warnings.push({ file: ctx.file, path: jsonPath(at), message: `"pool" is ignored: server "${name}" has one shared session (set "sessions" to "per-agent" or "per-session" to pool them)` });
    return { sessions };
  }
  return { sessions, pool: readPool(raw, at, ctx) };
}

const POOL_FIELDS: Readonly<Record<'idleMs' | 'ttlMs' | 'max', { min: number; max: number; what: string }>> = {
  idleMs: { min: 1, max: MAX_TIMEOUT_MS, what: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
  ttlMs: { min: 1, max: MAX_TIMEOUT_MS, what: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
  max: { min: 1, max: 10_000, what: 'a whole number of connections from 1 to 10000' },
};

function readPool(raw: unknown, at: readonly PropertyKey[], ctx: Context): PoolSettings {
  if (raw === undefined) return DEFAULT_POOL;
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({ file: ctx.file, path: jsonPath([...at, ...segments]), message });
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue([], `expected an object such as {"idleMs": 600000, "ttlMs": 86400000, "max": 32}, got ${describeValue(raw)}`));
    return DEFAULT_POOL;
  }
  const out: Record<string, unknown> = { ...DEFAULT_POOL };
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'healthCheck') {
      const check = readHealthCheck(value, (segments, message) => ctx.errors.push(issue(['healthCheck', ...segments], message)), (segments, message) => ctx.warnings.push(issue(['healthCheck', ...segments], message)));
      if (check !== undefined) out.healthCheck = check;
      continue;
    }
    const field = Object.hasOwn(POOL_FIELDS, key) ? POOL_FIELDS[key as keyof typeof POOL_FIELDS] : undefined;
    if (field === undefined) {
      ctx.warnings.push(issue([key], `unknown pool setting "${key}" is ignored (known: ${[...Object.keys(POOL_FIELDS), 'healthCheck'].join(', ')})`));
      continue;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < field.min || value > field.max) {
      ctx.errors.push(issue([key], `expected ${field.what}, got ${describeValue(value)}`));
      continue;
    }
    out[key] = value;
  }
  return Object.freeze(out as unknown as PoolSettings);
}

type Report = (segments: readonly PropertyKey[], message: string) => void;

/** `pool.healthCheck`: `true` (the defaults), `false` (off), or `{"idleMs", "timeoutMs"}`. */
function readHealthCheck(raw: unknown, error: Report, warn: Report): HealthCheckSettings | undefined {
  if (raw === false) return undefined;
  if (raw === true) return DEFAULT_HEALTH_CHECK;
  if (!isPlainObject(raw)) {
    error([], `expected true, false or an object such as {"idleMs": ${DEFAULT_HEALTH_CHECK.idleMs}, "timeoutMs": ${DEFAULT_HEALTH_CHECK.timeoutMs}}, got ${describeValue(raw)}`);
    return undefined;
  }
  const out: Record<string, number> = { ...DEFAULT_HEALTH_CHECK };
  const fields: Record<string, { min: number; what: string }> = {
    idleMs: { min: 0, what: `a whole number of milliseconds from 0 (check before every reuse) to ${MAX_TIMEOUT_MS}` },
    timeoutMs: { min: 1, what: `a positive whole number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
  };
  for (const [key, value] of Object.entries(raw)) {
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (field === undefined) {
      warn([key], `unknown health check setting "${key}" is ignored (known: idleMs, timeoutMs)`);
      continue;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < field.min || value > MAX_TIMEOUT_MS) {
      error([key], `expected ${field.what}, got ${describeValue(value)}`);
      continue;
    }
    out[key] = value;
  }
  return Object.freeze(out as unknown as HealthCheckSettings);
}

const MAX_PREFIX_LENGTH = 32;
/** Roots one entry may list, and the length of one URI: what a `roots/list` answer may cost. */
export const MAX_ROOTS = 64;
const MAX_ROOT_LENGTH = 4096;

/**
 * `"roots"`: the `file://` URIs a server that asks `roots/list` is answered with when no agent can be
 * asked (or the agent has no roots capability). Set only when the file says so.
 */
function readRoots(name: string, raw: unknown, expand: Expand, ctx: Context, issue: Issue): { roots?: readonly string[] } {
  if (raw === undefined) return {};
  if (!Array.isArray(raw)) {
    ctx.errors.push(issue(['roots'], `expected an array of file:// URIs such as ["file:///home/me/project"], got ${describeValue(raw)} (server "${name}")`));
    return {};
  }
  if (raw.length > MAX_ROOTS) {
    ctx.errors.push(issue(['roots'], `${raw.length} roots: at most ${MAX_ROOTS} (server "${name}")`));
    return {};
  }
  const before = ctx.errors.length;
  const roots: string[] = [];
  raw.forEach((item: unknown, i) => {
    if (typeof item !== 'string') return void ctx.errors.push(issue(['roots', i], `expected a file:// URI, got ${describeValue(item)} (server "${name}")`));
    const at = ctx.errors.length;
    const uri = expand(item, ['roots', i]);
    if (ctx.errors.length > at) return;
    const parsed = uri.length <= MAX_ROOT_LENGTH && URL.canParse(uri) ? new URL(uri) : undefined;
    if (parsed === undefined) ctx.errors.push(issue(['roots', i], `expected a file:// URI of at most ${MAX_ROOT_LENGTH} characters, got ${describeValue(uri, true)} (server "${name}")`));
    else if (parsed.protocol !== 'file:') ctx.errors.push(issue(['roots', i], `expected a file:// URI (MCP roots are file:// URIs), got a "${parsed.protocol}" URI (server "${name}")`));
    else if (roots.includes(uri)) ctx.warnings.push(issue(['roots', i], `${describeValue(uri, true)} is listed twice (server "${name}")`));
    else roots.push(uri);
  });
  return ctx.errors.length > before ? {} : { roots: Object.freeze(roots) };
}

/** `"prefix"`: a client-safe string (set only when the file says so, so other snapshots are unchanged) or false. */
function readPrefix(name: string, prefix: string | false | undefined, ctx: Context, issue: Issue): { prefix?: string | false } {
  if (prefix === undefined) return {};
  if (prefix !== false && (!SAFE_NAME.test(prefix) || prefix.length > MAX_PREFIX_LENGTH)) {
    ctx.errors.push(issue(['prefix'], `expected a prefix of 1 to ${MAX_PREFIX_LENGTH} letters, digits, _ or - (or false for none), got ${describeValue(prefix, true)} (server "${name}")`));
    return {};
  }
  return { prefix };
}

/**
 * Two prefixed servers must not share a prefix (a server without "prefix" uses its name): their
 * names would be one namespace. Unprefixed servers' clashes are per item, found by the catalog.
 */
function checkPrefixes(servers: readonly ServerConfig[], ctx: Context): void {
  const owner = new Map<string, string>();
  for (const server of servers) {
    if (server.prefix === false) continue;
    const prefix = server.prefix ?? server.name;
    const other = owner.get(prefix);
    if (other === undefined) owner.set(prefix, server.name);
    else {
      ctx.errors.push({ file: ctx.file, path: jsonPath(['mcpServers', server.name, 'prefix']),
        message: `servers "${other}" and "${server.name}" would both use the prefix "${prefix}" (a server without "prefix" uses its name); give "${server.name}" another "prefix"` });
    }
  }
}

function toInheritEnv(value: boolean | string[]): InheritEnv {
  if (value === true) return 'all';
  if (value === false) return 'none';
  return Object.freeze([...value]);
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
    ...sessionsAndPool(name, raw.sessions, raw.pool, ctx),
    ...readPrefix(name, raw.prefix, ctx, issue),
    ...readRoots(name, raw.roots, expand, ctx, issue),
    limits: readLimits(raw.limits, ctx.limits, ['mcpServers', name, 'limits'], ctx),
    ...readEra(name, type, raw.era, ctx, issue),
    ...readAuth(name, type, raw.auth, headers, expand, ctx, issue),
  });
}

/** A remote entry's `auth`: only `oauth`, only over Streamable HTTP, never beside a configured Authorization header. */
function readAuth(name: string, type: 'http' | 'sse', raw: unknown, headers: Record<string, string>, expand: Expand, ctx: Context, issue: Issue): { auth?: OAuthSettings } {
  if (raw === undefined) return {};
  const parsed = oauthObject.safeParse(raw === 'oauth' ? { type: 'oauth' } : raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = typeof raw !== 'object' || raw === null ? `, got ${describeValue(raw, true)}`
      : first === undefined ? '' : ` (${first.path.length > 0 ? `at "${first.path.join('.')}": ` : ''}${first.message})`;
    ctx.errors.push(issue(['auth'], `expected ${EXPECTED.auth}${where} (server "${name}")`));
    return {};
  }
  if (type === 'sse') {
    ctx.errors.push(issue(['auth'], `OAuth is supported for Streamable HTTP servers only, not the legacy "sse" transport (server "${name}")`));
    return {};
  }
  if (Object.keys(headers).some((key) => key.toLowerCase() === 'authorization')) {
    ctx.errors.push(issue(['auth'], `server "${name}" has both "auth" and an Authorization header; keep one`));
    return {};
  }
  const o = parsed.data;
  const auth: { -readonly [K in keyof OAuthSettings]: OAuthSettings[K] } = { grant: o.grant };
  if (o.clientId !== undefined) auth.clientId = expand(o.clientId, ['auth', 'clientId']);
  if (o.clientSecret !== undefined) auth.clientSecret = expand(o.clientSecret, ['auth', 'clientSecret']);
  if (o.scope !== undefined) auth.scope = o.scope;
  if (auth.clientSecret !== undefined && auth.clientId === undefined) ctx.errors.push(issue(['auth', 'clientSecret'], `a client secret needs its "clientId" (server "${name}")`));
  if (auth.grant === 'client_credentials' && (auth.clientId === undefined || auth.clientSecret === undefined)) {
    ctx.errors.push(issue(['auth', 'grant'], `"client_credentials" needs "clientId" and "clientSecret" (server "${name}")`));
  }
  if (o.clientMetadataUrl !== undefined) {
    const url = expand(o.clientMetadataUrl, ['auth', 'clientMetadataUrl']);
    auth.clientMetadataUrl = url;
    // What the SDK and authorization servers accept as a client id (draft-ietf-oauth-client-id-metadata-document).
    let parsedUrl: URL | null = null;
    try {
      parsedUrl = new URL(url);
    } catch {
      // reported below
    }
    if (parsedUrl === null || parsedUrl.protocol !== 'https:' || parsedUrl.pathname === '/' || parsedUrl.hash !== '' || parsedUrl.username !== '' || parsedUrl.password !== '') {
      ctx.errors.push(issue(['auth', 'clientMetadataUrl'], `"clientMetadataUrl" must be an https URL with a path (the client id an authorization server fetches the document from), e.g. https://example.com/mcpgate/client.json (server "${name}")`));
    }
    if (auth.grant === 'client_credentials') ctx.errors.push(issue(['auth', 'clientMetadataUrl'], `a client ID metadata document names a client that signs in people; "client_credentials" uses "clientId" and "clientSecret" (server "${name}")`));
  }
  return { auth: Object.freeze(auth) };
}

const LIMIT_FIELDS: Readonly<Record<keyof ServerLimits, { min: number; max: number; what: string }>> = {
  maxTools: { min: 0, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of tools, 0 or more' },
  maxResources: { min: 0, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of resources, 0 or more' },
  maxPrompts: { min: 0, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of prompts, 0 or more' },
  maxSchemaBytes: { min: 1, max: Number.MAX_SAFE_INTEGER, what: 'a positive whole number of bytes' },
  maxCallMs: { min: 1, max: MAX_TIMEOUT_MS, what: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
};

/**
 * A `"limits"` object (top level: gateway-wide; in a server: that server's) over `base`; absent
 * fields keep `base`. Wrong values are errors, unknown keys warnings, like every other field.
 */
function readLimits(raw: unknown, base: ServerLimits, at: readonly PropertyKey[], ctx: Context): ServerLimits {
  if (raw === undefined) return base;
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({ file: ctx.file, path: jsonPath([...at, ...segments]), message });
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue([], `expected an object such as {"maxTools": 1000, "maxSchemaBytes": 262144}, got ${describeValue(raw)}`));
    return base;
  }
  const out: Record<string, number> = { ...base };
  for (const [key, value] of Object.entries(raw)) {
    const field = Object.hasOwn(LIMIT_FIELDS, key) ? LIMIT_FIELDS[key as keyof ServerLimits] : undefined;
    if (field === undefined) {
      ctx.warnings.push(issue([key], `unknown limit "${key}" is ignored (known: ${Object.keys(LIMIT_FIELDS).join(', ')})`));
      continue;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < field.min || value > field.max) {
      ctx.errors.push(issue([key], `expected ${field.what}, got ${describeValue(value)}`));
      continue;
    }
    out[key] = value;
  }
  return Object.freeze(out as unknown as ServerLimits);
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
