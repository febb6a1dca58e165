// The `gateway-rules.json` format (docs/architecture.md "`gateway-rules.json` (agents)", seed 003) and its compiled form:
// validation of the parsed JSON (every error and warning collected with its JSON path), globs
// compiled to RegExps, and the deeply frozen Rules snapshot that decide.ts reads. No I/O here.

import type { Env } from '../config/expand.js';
import type { ConfigIssue } from '../config/types.js';
import { configInvalid, describeValue, isPlainObject, jsonPath } from '../config/issues.js';
import { compileAuth } from './auth-config.js';
import type { AuthConfig, KeyFileReader } from './auth-config.js';
import { readServerHeaders, type HeaderSet, type ServerRef } from './server-headers.js';

/** Names matched exactly (Set lookups) and globs (compiled RegExps), for one list of the rules file. */
export interface Matcher {
  readonly exact: ReadonlySet<string>;
  /** The globs as written (`list_*`), in file order. */
  readonly patterns: readonly string[];
  /**
   * The first glob (in file order) that matches `name`, if any: one RegExp run however many globs
   * there are. The RegExp stays inside this closure rather than in the frozen snapshot: a frozen
   * RegExp leaves V8's fast path (its lastIndex is not writable; runs are 2–6× slower), and an
   * exposed one could be changed in place (`compile()`).
   */
  readonly match: (name: string) => string | undefined;
}

/** One side (`allow` or `deny`) of an agent's rules. */
export interface CompiledSide {
  readonly servers: Matcher;
  /** Server name (exact) → the tools of that server this side names. */
  readonly tools: ReadonlyMap<string, Matcher>;
}

export interface CompiledAgent {
  readonly id: string;
  readonly allow: CompiledSide;
  readonly deny: CompiledSide;
  /** `sha256:<64 lowercase hex>` hashes of the agent's static bearer tokens (docs/architecture.md "Agent identity"). */
  readonly tokens: readonly string[];
  /**
   * The agent's own headers per remote server (`serverHeaders`, `${VAR}` expanded at load): sent
   * only on its own pooled connections. Secret: never logged nor shown.
   */
  readonly serverHeaders: ReadonlyMap<string, HeaderSet>;
}

/**
 * One condition of a grant's `when`: the token's claim `claim` holds one of `values` — a string
 * claim equal to one (for `scope` and `scp`, one of its space-separated words), an array claim
 * containing one. A dotted name (`realm_access.roles`) walks into objects when no claim has the
 * whole name.
 */
export interface ClaimTest {
  readonly claim: string;
  readonly values: readonly string[];
}

/**
 * A grant by claim (the `grants` section): rules for every agent whose OAuth/JWT token meets all of
 * `when`, added to its own entry's (or `default`'s); a deny from any of them wins (rules/decide.ts).
 */
export interface CompiledGrant {
  readonly id: string;
  readonly when: readonly ClaimTest[];
  readonly allow: CompiledSide;
  readonly deny: CompiledSide;
}

export interface Rules {
  /** True only for OPEN_RULES (no rules file): every agent may use every server. */
  readonly open: boolean;
  /** Absolute path of the rules file; undefined for OPEN_RULES. */
  readonly file: string | undefined;
  readonly agents: ReadonlyMap<string, CompiledAgent>;
  /** The grants by claim, in file order (`grants`); empty when the file has none. */
  readonly grants: readonly CompiledGrant[];
  readonly defaults: { readonly denyOnMissingAgent: boolean };
  /** `sha256:<hex>` → the agent it identifies (a hash may belong to one agent only). */
  readonly tokens: ReadonlyMap<string, string>;
  /** The compiled `auth` section (JWT verification, auth-config.ts); undefined when the file has none. */
  readonly auth: AuthConfig | undefined;
  /** `sha256:<hex>` → the console admin it identifies (the `admins` section); empty: no console. */
  readonly admins: ReadonlyMap<string, string>;
  readonly warnings: readonly ConfigIssue[];
  /** The validated JSON, deeply frozen, for status. It holds `auth` verbatim: redact before showing it. */
  readonly raw: unknown;
}

/** The agent whose rules apply to agents the file does not list, when it exists. */
export const DEFAULT_AGENT = 'default';

// What must be escaped to be literal in a `u`-mode RegExp (any other escape is a syntax error there).
const SPECIAL = /[\\^$.*+?()[\]{}|/]/;
const TOKEN = /^sha256:[0-9a-f]{64}$/;
const TOKEN_ANY_CASE = /^sha256:[0-9a-fA-F]{64}$/;
const TOP_KEYS = new Set(['agents', 'grants', 'defaults', 'auth', 'admins']);
const GRANT_KEYS = new Set(['when', 'allow', 'deny']);
const MAX_GRANT_VALUES = 256;
const ADMIN_KEYS = new Set(['tokens']);
const AGENT_KEYS = new Set(['allow', 'deny', 'tokens', 'serverHeaders']);
const SIDE_KEYS = new Set(['servers', 'tools']);
const DEFAULTS_KEYS = new Set(['deny_on_missing_agent']);

// ---------------------------------------------------------------------------------------------
// Globs

/** True when `pattern` has a wildcard (`*` or `?`); anything else is an exact name. */
export function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** `*` any run of characters (also none), `?` exactly one; everything else literal. */
export function globSource(pattern: string): string {
  let out = '';
  let star = false;
  for (const char of pattern) {
    if (char === '*') {
      if (!star) out += '.*'; // `**` is `*`, without the extra backtracking
      star = true;
      continue;
    }
    star = false;
    if (char === '?') out += '.';
    else out += SPECIAL.test(char) ? `\\${char}` : char;
  }
  return out;
}

export function globToRegExp(pattern: string): RegExp {
  return sourceToRegExp(globSource(pattern));
}

// `s`: a wildcard matches any character, line breaks included; `u`: `?` is one code point.
function sourceToRegExp(source: string): RegExp {
  return new RegExp(`^(?:${source})$`, 'su');
}

const NO_MATCH = (): undefined => undefined;

/** Splits names from globs. The caller has checked that every entry is a non-empty string. */
export function compileMatcher(entries: readonly string[]): Matcher {
  const exact = entries.filter((entry) => !isGlob(entry));
  const patterns = [...new Set(entries.filter(isGlob))];
  return Object.freeze({ exact: frozenSet(exact), patterns: Object.freeze(patterns), match: compilePatterns(patterns) });
}

function compilePatterns(patterns: readonly string[]): (name: string) => string | undefined {
  const [first] = patterns;
  if (first === undefined) return NO_MATCH;
  if (patterns.length === 1) {
    const regex = globToRegExp(first);
    return (name) => (regex.test(name) ? first : undefined);
  }
  // One group per glob (globSource escapes every parenthesis, so the groups are exactly these);
  // alternation tries them in file order, so the first defined group names the first match.
  const regex = sourceToRegExp(patterns.map((p) => `(${globSource(p)})`).join('|'));
  return (name) => {
    const found = regex.exec(name);
    if (found === null) return undefined;
    for (let i = 1; i < found.length; i++) if (found[i] !== undefined) return patterns[i - 1];
    return undefined;
  };
}

// ---------------------------------------------------------------------------------------------
// Frozen collections: Object.freeze alone leaves a Map's or Set's contents mutable, so their mutators
// are replaced by ones that throw (only a deliberate `Map.prototype.set.call(…)` gets past that).

function refuse(): never {
  throw new TypeError('the rules snapshot is frozen');
}

export function frozenMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map<K, V>(entries);
  for (const method of ['set', 'delete', 'clear']) Object.defineProperty(map, method, { value: refuse });
  return Object.freeze(map);
}

export function frozenSet<T>(values: Iterable<T>): ReadonlySet<T> {
  const set = new Set<T>(values);
  for (const method of ['add', 'delete', 'clear']) Object.defineProperty(set, method, { value: refuse });
  return Object.freeze(set);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

const EMPTY_MATCHER = compileMatcher([]);
const EMPTY_SIDE: CompiledSide = Object.freeze({ servers: EMPTY_MATCHER, tools: frozenMap<string, Matcher>([]) });

/** What applies without a rules file: every agent may use every server (docs/architecture.md "Command line"). */
export const OPEN_RULES: Rules = Object.freeze({
  open: true,
  file: undefined,
  agents: frozenMap<string, CompiledAgent>([]),
  grants: Object.freeze([]),
  defaults: Object.freeze({ denyOnMissingAgent: false }),
  tokens: frozenMap<string, string>([]),
  auth: undefined,
  admins: frozenMap<string, string>([]),
  warnings: Object.freeze([]),
  raw: undefined,
});

// ---------------------------------------------------------------------------------------------
// Validation and compilation

interface Context {
  readonly file: string;
  readonly servers: ReadonlySet<string>;
  /** The servers by name, with their kind when the caller gave it (serverHeaders needs it). */
  readonly refs: ReadonlyMap<string, ServerRef>;
  readonly env: Env;
  readonly errors: ConfigIssue[];
  readonly warnings: ConfigIssue[];
  /** token hash → the agent it was first listed under. */
  readonly tokens: Map<string, string>;
}

/**
 * Validates a parsed rules file against the servers `.mcp.json` defines (names, or configs: an
 * agent's `serverHeaders` need each server's kind); throws `MCPG_CONFIG_INVALID` listing every error.
 * `env` expands `${VAR}` in the `auth.jwt` key settings and in `serverHeaders`; `readKeyFile` reads
 * `auth.jwt.publicKeyFile` (none: compiled from text alone, and a key file is an error).
 */
export function buildRules(raw: unknown, file: string, servers: readonly ServerRef[], env: Env = process.env, readKeyFile?: KeyFileReader): Rules {
  const refs = new Map(servers.map((ref) => [typeof ref === 'string' ? ref : ref.name, ref] as const));
  const ctx: Context = { file, servers: new Set(refs.keys()), refs, env, errors: [], warnings: [], tokens: new Map() };
  const agents = new Map<string, CompiledAgent>();
  const grants: CompiledGrant[] = [];
  let denyOnMissingAgent = true;
  let auth: AuthConfig | undefined;
  const admins = new Map<string, string>();
  if (!isPlainObject(raw)) {
    error(ctx, [], `expected an object with an "agents" key, got ${describeValue(raw)}`);
  } else {
    for (const key of Object.keys(raw)) if (!TOP_KEYS.has(key)) warn(ctx, [key], `unknown top-level key ${q(key)} is ignored`);
    denyOnMissingAgent = readDefaults(raw.defaults, ctx);
    auth = compileAuth(raw.auth, { file, env, readKeyFile, error: (at, message) => error(ctx, at, message), warn: (at, message) => warn(ctx, at, message) });
    const entries = raw.agents;
    if (entries === undefined) error(ctx, ['agents'], 'missing; expected an object mapping agent ids to their rules');
    else if (!isPlainObject(entries)) error(ctx, ['agents'], `expected an object mapping agent ids to their rules, got ${describeValue(entries)}`);
    else {
      for (const [id, entry] of Object.entries(entries)) {
        const agent = compileAgent(id, entry, ctx);
        if (agent !== undefined) agents.set(id, agent);
      }
      if (Object.keys(entries).length === 0 && denyOnMissingAgent && raw.grants === undefined) {
        warn(ctx, ['agents'], 'no agents are listed and defaults.deny_on_missing_agent is true: every agent is denied everything');
      }
    }
    readGrants(raw.grants, ctx, grants);
    readAdmins(raw.admins, ctx, admins);
  }
  if (ctx.errors.length > 0) throw configInvalid(file, ctx.errors, { warnings: ctx.warnings });
  return Object.freeze({
    open: false,
    file,
    agents: frozenMap(agents),
    grants: Object.freeze(grants),
    defaults: Object.freeze({ denyOnMissingAgent }),
    tokens: frozenMap(ctx.tokens),
    auth,
    admins: frozenMap(admins),
    warnings: Object.freeze(ctx.warnings.map((w) => Object.freeze(w))),
    raw: deepFreeze(raw),
  });
}

/** Names from the file, quoted and escaped as JSON (a key may hold quotes or control characters). */
function q(value: string): string {
  return JSON.stringify(value);
}

function error(ctx: Context, segments: readonly PropertyKey[], message: string): void {
  ctx.errors.push({ file: ctx.file, path: jsonPath(segments), message });
}

function warn(ctx: Context, segments: readonly PropertyKey[], message: string): void {
  ctx.warnings.push({ file: ctx.file, path: jsonPath(segments), message });
}

function readDefaults(defaults: unknown, ctx: Context): boolean {
  if (defaults === undefined) return true;
  if (!isPlainObject(defaults)) {
    error(ctx, ['defaults'], `expected an object, got ${describeValue(defaults)}`);
    return true;
  }
  for (const key of Object.keys(defaults)) if (!DEFAULTS_KEYS.has(key)) warn(ctx, ['defaults', key], `unknown key ${q(key)} in defaults is ignored`);
  const value = defaults.deny_on_missing_agent;
  if (value === undefined) return true;
  if (typeof value !== 'boolean') {
    error(ctx, ['defaults', 'deny_on_missing_agent'], `expected true or false, got ${describeValue(value)}`);
    return true;
  }
  return value;
}

function compileAgent(id: string, entry: unknown, ctx: Context): CompiledAgent | undefined {
  const base = ['agents', id];
  const before = ctx.errors.length;
  if (id === '') {
    error(ctx, base, 'an agent id must not be empty');
    return undefined;
  }
  if (!isPlainObject(entry)) {
    error(ctx, base, `expected an object with "allow", "deny", "tokens" or "serverHeaders" (agent ${q(id)}), got ${describeValue(entry)}`);
    return undefined;
  }
  for (const key of Object.keys(entry)) if (!AGENT_KEYS.has(key)) warn(ctx, [...base, key], `unknown key ${q(key)} in agent ${q(id)} is ignored`);
  const allow = compileSide(id, 'allow', entry.allow, ctx);
  const deny = compileSide(id, 'deny', entry.deny, ctx);
  const tokens = readTokens(id, entry.tokens, ctx);
  const serverHeaders = readServerHeaders(id, entry.serverHeaders, {
    servers: ctx.refs, env: ctx.env, error: (at, message) => error(ctx, at, message), warn: (at, message) => warn(ctx, at, message),
  }, id === DEFAULT_AGENT);
  if (ctx.errors.length > before) return undefined;
  return Object.freeze({ id, allow, deny, tokens, serverHeaders: frozenMap(serverHeaders) });
}

function compileSide(id: string, side: 'allow' | 'deny', value: unknown, ctx: Context, section: 'agents' | 'grants' = 'agents'): CompiledSide {
  const base = [section, id, side];
  if (value === undefined) return EMPTY_SIDE;
  if (!isPlainObject(value)) {
    error(ctx, base, `expected an object with "servers" and/or "tools", got ${describeValue(value)}`);
    return EMPTY_SIDE;
  }
  const owner = `${section === 'agents' ? 'agent' : 'grant'} ${q(id)}`;
  for (const key of Object.keys(value)) if (!SIDE_KEYS.has(key)) warn(ctx, [...base, key], `unknown key ${q(key)} in ${side} of ${owner} is ignored`);

  let servers = EMPTY_MATCHER;
  const list = readNames(value.servers, [...base, 'servers'], 'server', ctx);
  if (list !== undefined) {
    list.forEach((name, i) => checkServerNamed(owner, name, [...base, 'servers', i], ctx));
    servers = compileMatcher(list);
  }

  const tools = new Map<string, Matcher>();
  const map = value.tools;
  if (map !== undefined && !isPlainObject(map)) {
    error(ctx, [...base, 'tools'], `expected an object mapping server names to arrays of tool names or patterns, got ${describeValue(map)}`);
  } else if (map !== undefined) {
    for (const [server, names] of Object.entries(map)) {
      const at = [...base, 'tools', server];
      if (server === '') {
        error(ctx, at, 'a server name must not be empty');
        continue;
      }
      checkServerNamed(owner, server, at, ctx);
      const toolList = readNames(names, at, 'tool', ctx);
      if (toolList !== undefined) tools.set(server, compileMatcher(toolList));
    }
  }
  return Object.freeze({ servers, tools: frozenMap(tools) });
}

/** An array of non-empty strings, or undefined (with errors recorded) when it is not one. */
function readNames(value: unknown, at: readonly PropertyKey[], what: 'server' | 'tool', ctx: Context): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    error(ctx, at, `expected an array of ${what} names or patterns, got ${describeValue(value)}`);
    return undefined;
  }
  const names: string[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item === 'string' && item !== '') names.push(item);
    else error(ctx, [...at, i], `expected a ${what} name or pattern (a non-empty string), got ${describeValue(item)}`);
  });
  return names.length === value.length ? names : undefined;
}

/** A rule naming a server `.mcp.json` lacks is a warning (seed 003): the file may be mid-edit. */
function checkServerNamed(owner: string, name: string, at: readonly PropertyKey[], ctx: Context): void {
  if (name === '*' || ctx.servers.has(name)) return;
  if (!isGlob(name)) {
    warn(ctx, at, `${owner} names server ${q(name)}, which .mcp.json does not define`);
    return;
  }
  const regex = globToRegExp(name);
  for (const server of ctx.servers) if (regex.test(server)) return;
  warn(ctx, at, `${owner} names server pattern ${q(name)}, which matches no server .mcp.json defines`);
}

/**
 * `grants`: `{NAME: {"when": {CLAIM: VALUE | [VALUE, …], …}, "allow": {…}, "deny": {…}}}`, rules by
 * the claims of an agent's OAuth/JWT token (docs/architecture.md "`gateway-rules.json` (agents)").
 * Every condition of `when` must hold; a grant without one would apply to every token, so it is an
 * error (that is what `default` is for).
 */
function readGrants(value: unknown, ctx: Context, grants: CompiledGrant[]): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) return error(ctx, ['grants'], `expected an object mapping grant names to {"when": {CLAIM: VALUE}, "allow": …, "deny": …}, got ${describeValue(value)}`);
  for (const [id, entry] of Object.entries(value)) {
    const base = ['grants', id];
    const before = ctx.errors.length;
    if (id === '') {
      error(ctx, base, 'a grant name must not be empty');
      continue;
    }
    if (!isPlainObject(entry)) {
      error(ctx, base, `expected an object with "when" and "allow" and/or "deny" (grant ${q(id)}), got ${describeValue(entry)}`);
      continue;
    }
    for (const key of Object.keys(entry)) {
      if (GRANT_KEYS.has(key)) continue;
      if (key === 'tokens' || key === 'serverHeaders') error(ctx, [...base, key], `a grant has no ${q(key)}: it names no agent; put ${key} under the agent in "agents"`);
      else warn(ctx, [...base, key], `unknown key ${q(key)} in grant ${q(id)} is ignored`);
    }
    const when = readWhen(id, entry.when, ctx);
    const allow = compileSide(id, 'allow', entry.allow, ctx, 'grants');
    const deny = compileSide(id, 'deny', entry.deny, ctx, 'grants');
    if (entry.allow === undefined && entry.deny === undefined) warn(ctx, base, `grant ${q(id)} has neither "allow" nor "deny": it changes nothing`);
    if (ctx.errors.length === before) grants.push(Object.freeze({ id, when, allow, deny }));
  }
}

function readWhen(id: string, value: unknown, ctx: Context): readonly ClaimTest[] {
  const at = ['grants', id, 'when'];
  const shape = '{CLAIM: VALUE or [VALUE, …]}, e.g. {"groups": "eng"} or {"scope": "tools:read"}';
  if (value === undefined) {
    error(ctx, at, `missing; a grant applies to the tokens whose claims match ${shape}`);
    return [];
  }
  if (!isPlainObject(value) || Object.keys(value).length === 0) {
    error(ctx, at, `expected a non-empty object ${shape}, got ${isPlainObject(value) ? 'an empty object (a grant for every token is what "default" is for)' : describeValue(value)}`);
    return [];
  }
  const tests: ClaimTest[] = [];
  for (const [claim, wanted] of Object.entries(value)) {
    if (claim === '') {
      error(ctx, at, 'a claim name must not be empty');
      continue;
    }
    const list: unknown[] = Array.isArray(wanted) ? wanted : [wanted];
    if (list.length === 0 || list.length > MAX_GRANT_VALUES || list.some((v) => typeof v !== 'string' || v === '')) {
      error(ctx, [...at, claim], `expected a non-empty string or an array of 1 to ${MAX_GRANT_VALUES} of them (any one matches), got ${describeValue(wanted)}`);
      continue;
    }
    tests.push(Object.freeze({ claim, values: Object.freeze([...new Set(list as string[])]) }));
  }
  return Object.freeze(tests);
}

/**
 * `admins`: the console's operators, `{NAME: {"tokens": ["sha256:…"]}}`. An admin's token is not an
 * agent's: a hash listed under both is an error (one token, one meaning).
 */
function readAdmins(value: unknown, ctx: Context, admins: Map<string, string>): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) return error(ctx, ['admins'], `expected an object mapping admin names to {"tokens": [...]}, got ${describeValue(value)}`);
  for (const [name, entry] of Object.entries(value)) {
    if (!isPlainObject(entry)) {
      error(ctx, ['admins', name], `expected an object with "tokens", got ${describeValue(entry)}`);
      continue;
    }
    for (const key of Object.keys(entry)) if (!ADMIN_KEYS.has(key)) warn(ctx, ['admins', name, key], `unknown key ${q(key)} is ignored`);
    const agentTokens = new Map(ctx.tokens);
    ctx.tokens.clear();
    const hashes = readTokens(name, entry.tokens, ctx, ['admins', name, 'tokens']);
    ctx.tokens.clear();
    for (const [hash, agent] of agentTokens) ctx.tokens.set(hash, agent);
    hashes.forEach((hash, i) => {
      const at = ['admins', name, 'tokens', i];
      if (agentTokens.has(hash)) error(ctx, at, `token hash is also listed under agent ${q(agentTokens.get(hash)!)}; an admin's token must be its own (make one with 'mcpgate token ${name}')`);
      else if (admins.has(hash) && admins.get(hash) !== name) error(ctx, at, `token hash is also listed under admin ${q(admins.get(hash)!)}`);
      else admins.set(hash, name);
    });
    if (entry.tokens === undefined) error(ctx, ['admins', name, 'tokens'], 'missing; an admin signs in to the console with a token (make one with `mcpgate token NAME`)');
  }
}

function readTokens(id: string, value: unknown, ctx: Context, base: readonly PropertyKey[] = ['agents', id, 'tokens']): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) {
    error(ctx, base, `expected an array of "sha256:<64 hex digits>" token hashes, got ${describeValue(value)}`);
    return Object.freeze([]);
  }
  const tokens: string[] = [];
  value.forEach((item: unknown, i) => {
    const at = [...base, i];
    // The value is never echoed: a raw token pasted here by mistake is a secret.
    if (typeof item !== 'string') error(ctx, at, `expected "sha256:" followed by 64 lowercase hex digits, got ${describeValue(item)}`);
    else if (TOKEN.test(item)) {
      const owner = ctx.tokens.get(item);
      if (owner === undefined) ctx.tokens.set(item, id);
      else if (owner === id) warn(ctx, at, `token hash is listed twice for agent ${q(id)}`);
      else error(ctx, at, `token hash is also listed under agent ${q(owner)}; a token must identify one agent`);
      tokens.push(item);
    } else if (TOKEN_ANY_CASE.test(item)) error(ctx, at, 'expected "sha256:" followed by 64 lowercase hex digits, got uppercase hex digits');
    else if (!item.startsWith('sha256:')) {
      error(ctx, at, 'expected "sha256:" followed by 64 lowercase hex digits, got a string without the "sha256:" prefix (list the hash `mcpgate token` prints, never the token)');
    } else if (item.length !== 71) {
      error(ctx, at, `expected "sha256:" followed by 64 lowercase hex digits, got ${item.length - 7} characters after "sha256:"`);
    } else error(ctx, at, 'expected "sha256:" followed by 64 lowercase hex digits, got characters other than 0-9 a-f after "sha256:"');
  });
  return Object.freeze(tokens);
}
