// The `.mcp.json` format (as Claude Desktop, Claude Code and Cursor write it): the conversion of the
// parsed file into the frozen ServersConfig of types.ts, entry by entry. Every error and warning is
// collected with its JSON path; nothing stops at the first problem. The entry's schemas are in
// mcp-json-schema.ts, the readers of its fields in entry-fields.ts and pool-and-limits.ts.

import path from 'node:path';
import type { z } from 'zod';
import { DEFAULT_LIMITS } from './types.js';
import type { ConfigIssue, RemoteServerConfig, ServerConfig, ServersConfig, StdioServerConfig } from './types.js';
import { expandInto } from './expand.js';
import type { Env } from './expand.js';
import { configInvalid, describeValue, isPlainObject, jsonPath } from './issues.js';
import { EXPECTED, inheritEnvField, remoteEntry, reportZodIssues, SAFE_NAME, stdioEntry, TYPES } from './mcp-json-schema.js';
import type { Context, Expand, Issue } from './read-context.js';
import { readAuth, readEra, readPrefix, readRoots, readStart, toInheritEnv } from './entry-fields.js';
import { readLimits, sessionsAndPool } from './pool-and-limits.js';
import { NO_SANDBOX_DEFAULT, readSandbox, readSandboxDefault } from './sandbox-fields.js';

/** Validates and expands a parsed `.mcp.json`; throws `MCPG_CONFIG_INVALID` listing every error. */
export function buildServersConfig(raw: unknown, file: string, env: Env): ServersConfig {
  const ctx: Context = { file, env, errors: [], warnings: [], limits: DEFAULT_LIMITS, inheritEnv: undefined, sandbox: NO_SANDBOX_DEFAULT };
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({ file, path: jsonPath(segments), message });
  const servers: ServerConfig[] = [];
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue([], `expected an object with a "mcpServers" key, got ${describeValue(raw)}`));
  } else {
    for (const key of Object.keys(raw)) {
      // "registries": the MCP Registries `mcpgate add` asks (read by the CLI, not the gateway).
      // "interceptors": interceptor servers (docs/guardrails.md), entries of the same shape as servers'.
      if (!['mcpServers', 'limits', 'inheritEnv', 'sandbox', 'registries', 'interceptors'].includes(key))
        ctx.warnings.push(issue([key], `unknown top-level key "${key}" is ignored`));
    }
    if (raw.inheritEnv !== undefined) {
      const parsed = inheritEnvField.safeParse(raw.inheritEnv);
      if (parsed.success) ctx.inheritEnv = toInheritEnv(parsed.data);
      else ctx.errors.push(issue(['inheritEnv'], `expected ${EXPECTED.inheritEnv}, got ${describeValue(raw.inheritEnv)}`));
    }
    ctx.limits = readLimits(raw.limits, DEFAULT_LIMITS, ['limits'], ctx);
    ctx.sandbox = readSandboxDefault(raw.sandbox, ctx, issue);
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
  const interceptors = isPlainObject(raw) ? readInterceptors(raw.interceptors, ctx, issue) : [];
  checkPrefixes(servers, ctx);
  if (ctx.errors.length > 0) throw configInvalid(file, ctx.errors, { warnings: ctx.warnings });
  return Object.freeze({
    file,
    servers: Object.freeze(servers),
    ...(interceptors.length > 0 && { interceptors: Object.freeze(interceptors) }),
    warnings: Object.freeze(ctx.warnings.map((w) => Object.freeze(w))),
  });
}

/** The `interceptors` section: interceptor servers by name, each entry read as a server's is. */
function readInterceptors(
  raw: unknown,
  ctx: Context,
  issue: (segments: readonly PropertyKey[], message: string) => ConfigIssue,
): ServerConfig[] {
  if (raw === undefined) return [];
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue(['interceptors'], `expected an object mapping names to interceptor servers, got ${describeValue(raw)}`));
    return [];
  }
  const list: ServerConfig[] = [];
  for (const [name, entry] of Object.entries(raw)) {
    const server = convertEntry(name, entry, ctx, 'interceptors');
    if (server) list.push(server);
  }
  return list;
}

function convertEntry(name: string, entry: unknown, ctx: Context, section = 'mcpServers'): ServerConfig | undefined {
  const base = [section, name];
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({
    file: ctx.file,
    path: jsonPath([...base, ...segments]),
    message,
  });
  if (name === '') {
    ctx.errors.push(issue([], 'a server name must not be empty'));
    return undefined;
  }
  if (!SAFE_NAME.test(name)) {
    ctx.warnings.push(
      issue([], `server name "${name}" has characters other than A-Z a-z 0-9 _ -; its tool names will use a sanitized form`),
    );
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
  else if (entry.url !== undefined)
    kind = 'http'; // Claude Code reads a bare `url` as Streamable HTTP
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
    if (isPlainObject(map) && Object.hasOwn(map, '__proto__'))
      ctx.errors.push(issue([field, '__proto__'], 'the key "__proto__" is not allowed'));
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
    ...readStart(name, raw.start, raw.idleStop, raw.sessions, ctx, issue),
    ...readSandbox(name, raw.sandbox, command, expand, ctx, issue),
  });
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
      ctx.errors.push({
        file: ctx.file,
        path: jsonPath(['mcpServers', server.name, 'prefix']),
        message: `servers "${other}" and "${server.name}" would both use the prefix "${prefix}" (a server without "prefix" uses its name); give "${server.name}" another "prefix"`,
      });
    }
  }
}

function toRemote(
  name: string,
  type: 'http' | 'sse',
  raw: z.output<typeof remoteEntry>,
  expand: Expand,
  ctx: Context,
  issue: Issue,
): RemoteServerConfig {
  const before = ctx.errors.length;
  const url = expand(raw.url, ['url']);
  if (ctx.errors.length === before) {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    // The URL itself is not echoed: it may carry a token in its query.
    if (parsed === undefined)
      ctx.errors.push(issue(['url'], `expected an http or https URL, got a string that is not a URL (server "${name}")`));
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
    ...readStart(name, raw.start, raw.idleStop, raw.sessions, ctx, issue),
  });
}
