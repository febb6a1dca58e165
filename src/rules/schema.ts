// The `gateway-rules.json` format (docs/architecture.md "`gateway-rules.json` (agents)"):
// validation of the parsed JSON (every error and warning collected with its JSON path) and its
// compilation into the Rules snapshot (compiled.ts; globs in globs.ts). No I/O here.
// The problems are thrown at once as `MCPG_CONFIG_INVALID`, with `detail.issues` and
// `detail.warnings`. `limits` values go to limits.ts's `LimitsBuilder`, `approve` to approvals.ts,
// `views` to views.ts.

import type { Env } from '../config/expand.js';
import type { ConfigIssue } from '../config/types.js';
import { configInvalid, describeValue, isPlainObject, jsonPath } from '../config/issues.js';
import { compileAuth } from './auth-config.js';
import type { AuthConfig, KeyFileReader } from './auth-config.js';
import {
  DEFAULT_AGENT,
  EMPTY_MATCHER,
  EMPTY_SIDE,
  type ClaimTest,
  type CompiledAgent,
  type CompiledGrant,
  type CompiledSide,
  type Rules,
  type SkillOptions,
} from './compiled.js';
import { deepFreeze, frozenMap } from './frozen.js';
import { compileMatcher, globToRegExp, isGlob, type Matcher } from './globs.js';
import { readServerHeaders, type ServerRef } from './server-headers.js';
import { LimitsBuilder } from './limits.js';
import { compileViews, type CompiledView } from './views.js';
import { compileApprovals, type ApprovalReport } from './approvals.js';
import { AGENT_MODE_KEYS, readModeSettings } from './agent-mode.js';
import { readCodeSettings } from './code-settings.js';
import { compileGuards, DEFAULT_GUARDS } from './guards-config.js';
import { compileInterceptors, type InterceptorBinding } from './interceptors-config.js';
import type { GuardBook } from '../guards/guard-plan.js';

// auth/auth.ts reads the snapshot's type from here.
export type { Rules } from './compiled.js';

const TOKEN = /^sha256:[0-9a-f]{64}$/;
const TOKEN_ANY_CASE = /^sha256:[0-9a-fA-F]{64}$/;
const TOP_KEYS = new Set(['agents', 'grants', 'defaults', 'auth', 'admins', 'views', 'limits', 'guards', 'interceptors']);
const GRANT_KEYS = new Set(['when', 'allow', 'deny', 'limits', 'approve']);
const MAX_GRANT_VALUES = 256;
const ADMIN_KEYS = new Set(['tokens']);
const AGENT_KEYS = new Set(['allow', 'deny', 'tokens', 'serverHeaders', 'limits', 'approve', 'code', 'skillOptions', ...AGENT_MODE_KEYS]);
const SIDE_KEYS = new Set(['servers', 'tools', 'skills']);
const DEFAULTS_KEYS = new Set(['deny_on_missing_agent']);

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
  /** Quotas and rate limits (`limits`, limits.ts), from every place they may sit. */
  readonly limits: LimitsBuilder;
}

/**
 * Validates a parsed rules file against the servers `.mcp.json` defines (names, or configs: an
 * agent's `serverHeaders` need each server's kind); throws `MCPG_CONFIG_INVALID` listing every error.
 * `env` expands `${VAR}` in the `auth.jwt` key settings and in `serverHeaders`; `readKeyFile` reads
 * `auth.jwt.publicKeyFile` (none: compiled from text alone, and a key file is an error).
 */
export function buildRules(
  raw: unknown,
  file: string,
  servers: readonly ServerRef[],
  env: Env = process.env,
  readKeyFile?: KeyFileReader,
): Rules {
  const refs = new Map(servers.map((ref) => [typeof ref === 'string' ? ref : ref.name, ref] as const));
  const errors: ConfigIssue[] = [];
  const warnings: ConfigIssue[] = [];
  const serverNames = new Set(refs.keys());
  const limits = new LimitsBuilder({
    servers: serverNames,
    error: (at, message) => errors.push({ file, path: jsonPath(at), message }),
    warn: (at, message) => warnings.push({ file, path: jsonPath(at), message }),
  });
  const ctx: Context = { file, servers: serverNames, refs, env, errors, warnings, tokens: new Map(), limits };
  const agents = new Map<string, CompiledAgent>();
  const grants: CompiledGrant[] = [];
  let denyOnMissingAgent = true;
  let auth: AuthConfig | undefined;
  const admins = new Map<string, string>();
  let views: ReadonlyMap<string, CompiledView> = new Map();
  let guards: GuardBook | undefined = DEFAULT_GUARDS;
  let interceptors: readonly InterceptorBinding[] | undefined;
  if (!isPlainObject(raw)) {
    error(ctx, [], `expected an object with an "agents" key, got ${describeValue(raw)}`);
  } else {
    for (const key of Object.keys(raw)) if (!TOP_KEYS.has(key)) warn(ctx, [key], `unknown top-level key ${q(key)} is ignored`);
    denyOnMissingAgent = readDefaults(raw.defaults, ctx);
    limits.read({ kind: 'gateway' }, ['limits'], raw.limits);
    auth = compileAuth(raw.auth, {
      file,
      env,
      readKeyFile,
      error: (at, message) => error(ctx, at, message),
      warn: (at, message) => warn(ctx, at, message),
    });
    const entries = raw.agents;
    if (entries === undefined) error(ctx, ['agents'], 'missing; expected an object mapping agent ids to their rules');
    else if (!isPlainObject(entries))
      error(ctx, ['agents'], `expected an object mapping agent ids to their rules, got ${describeValue(entries)}`);
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
    views = compileViews(raw.views, {
      servers: ctx.servers,
      error: (at, message) => error(ctx, at, message),
      warn: (at, message) => warn(ctx, at, message),
    });
    guards = compileGuards(raw.guards, { error: (at, message) => error(ctx, at, message), warn: (at, message) => warn(ctx, at, message) });
    interceptors = compileInterceptors(raw.interceptors, {
      error: (at, message) => error(ctx, at, message),
      warn: (at, message) => warn(ctx, at, message),
    });
    // A static token's agent in an issuer's namespace would be that issuer's agent of the same name.
    for (const issuer of auth?.oauth ?? []) {
      if (issuer.namespace === undefined) continue;
      for (const agent of agents.values()) {
        if (agent.tokens.length > 0 && agent.id.startsWith(`${issuer.namespace}:`))
          error(
            ctx,
            ['agents', agent.id, 'tokens'],
            `agent ids "${issuer.namespace}:…" are issuer ${q(issuer.issuer)}'s (its "namespace"); a static token's agent needs another id`,
          );
      }
    }
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
    limits: limits.build(),
    approves:
      [...agents.values()].some((agent) => agent.approve.length > 0 || (agent.code?.approve.length ?? 0) > 0) ||
      grants.some((grant) => grant.approve.length > 0),
    views,
    guards,
    interceptors,
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
  for (const key of Object.keys(defaults))
    if (!DEFAULTS_KEYS.has(key)) warn(ctx, ['defaults', key], `unknown key ${q(key)} in defaults is ignored`);
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
  for (const key of Object.keys(entry))
    if (!AGENT_KEYS.has(key)) warn(ctx, [...base, key], `unknown key ${q(key)} in agent ${q(id)} is ignored`);
  const allow = compileSide(id, 'allow', entry.allow, ctx);
  const deny = compileSide(id, 'deny', entry.deny, ctx);
  const tokens = readTokens(id, entry.tokens, ctx);
  const serverHeaders = readServerHeaders(
    id,
    entry.serverHeaders,
    {
      servers: ctx.refs,
      env: ctx.env,
      error: (at, message) => error(ctx, at, message),
      warn: (at, message) => warn(ctx, at, message),
    },
    id === DEFAULT_AGENT,
  );
  const approve = compileApprovals(entry.approve, [...base, 'approve'], `agent ${q(id)}`, approvalReport(ctx));
  ctx.limits.read({ kind: 'agent', id }, [...base, 'limits'], entry.limits);
  const modeSettings = readModeSettings(id, entry, {
    error: (at, message) => error(ctx, at, message),
    warn: (at, message) => warn(ctx, at, message),
  });
  const code = readCodeSettings(id, entry.code, approvalReport(ctx));
  const skillOptions = readSkillOptions(id, entry.skillOptions, ctx);
  if (ctx.errors.length > before) return undefined;
  return Object.freeze({
    id,
    allow,
    deny,
    tokens,
    serverHeaders: frozenMap(serverHeaders),
    approve,
    modeSettings,
    skillOptions,
    ...(code && { code }),
  });
}

function compileSide(
  id: string,
  side: 'allow' | 'deny',
  value: unknown,
  ctx: Context,
  section: 'agents' | 'grants' = 'agents',
): CompiledSide {
  const base = [section, id, side];
  if (value === undefined) return EMPTY_SIDE;
  if (!isPlainObject(value)) {
    error(ctx, base, `expected an object with "servers" and/or "tools", got ${describeValue(value)}`);
    return EMPTY_SIDE;
  }
  const owner = `${section === 'agents' ? 'agent' : 'grant'} ${q(id)}`;
  for (const key of Object.keys(value))
    if (!SIDE_KEYS.has(key)) warn(ctx, [...base, key], `unknown key ${q(key)} in ${side} of ${owner} is ignored`);

  let servers = EMPTY_MATCHER;
  const list = readNames(value.servers, [...base, 'servers'], 'server', ctx);
  if (list !== undefined) {
    list.forEach((name, i) => checkServerNamed(owner, name, [...base, 'servers', i], ctx));
    servers = compileMatcher(list);
  }

  const tools = new Map<string, Matcher>();
  const map = value.tools;
  if (map !== undefined && !isPlainObject(map)) {
    error(
      ctx,
      [...base, 'tools'],
      `expected an object mapping server names to arrays of tool names or patterns, got ${describeValue(map)}`,
    );
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
  const skills = new Map<string, Matcher>();
  const skillMap = value.skills;
  if (skillMap !== undefined && !isPlainObject(skillMap)) {
    error(
      ctx,
      [...base, 'skills'],
      `expected an object mapping server names (or "*") to arrays of skill paths or patterns, got ${describeValue(skillMap)}`,
    );
  } else if (skillMap !== undefined) {
    for (const [server, names] of Object.entries(skillMap)) {
      const at = [...base, 'skills', server];
      if (server === '') {
        error(ctx, at, 'a server name must not be empty');
        continue;
      }
      checkServerNamed(owner, server, at, ctx);
      const pathList = readNames(names, at, 'skill', ctx);
      if (pathList !== undefined) skills.set(server, compileMatcher(pathList));
    }
  }
  return Object.freeze({ servers, tools: frozenMap(tools), skills: frozenMap(skills) });
}

/** An agent's `skillOptions`: `{"dynamic": boolean, "allowedTools": "check" | "ignore"}`. */
function readSkillOptions(id: string, value: unknown, ctx: Context): SkillOptions | undefined {
  const at = ['agents', id, 'skillOptions'];
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    error(ctx, at, `expected an object with "dynamic" and/or "allowedTools", got ${describeValue(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value))
    if (key !== 'dynamic' && key !== 'allowedTools') warn(ctx, [...at, key], `unknown key ${q(key)} in skillOptions is ignored`);
  const { dynamic = false, allowedTools = 'check' } = value;
  if (typeof dynamic !== 'boolean') error(ctx, [...at, 'dynamic'], `expected true or false, got ${describeValue(dynamic)}`);
  if (allowedTools !== 'check' && allowedTools !== 'ignore')
    error(ctx, [...at, 'allowedTools'], `expected "check" or "ignore", got ${describeValue(allowedTools)}`);
  return Object.freeze({ dynamic: dynamic === true, allowedTools: allowedTools === 'ignore' ? 'ignore' : 'check' });
}

/** An array of non-empty strings, or undefined (with errors recorded) when it is not one. */
function readNames(value: unknown, at: readonly PropertyKey[], what: 'server' | 'tool' | 'skill', ctx: Context): string[] | undefined {
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

/** How approvals.ts reports into this file's context. */
function approvalReport(ctx: Context): ApprovalReport {
  return {
    error: (at, message) => error(ctx, at, message),
    warn: (at, message) => warn(ctx, at, message),
    checkServer: (owner, name, at) => checkServerNamed(owner, name, at, ctx),
  };
}

/** A rule naming a server `.mcp.json` lacks is a warning: the file may be mid-edit. */
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
  if (!isPlainObject(value))
    return error(
      ctx,
      ['grants'],
      `expected an object mapping grant names to {"when": {CLAIM: VALUE}, "allow": …, "deny": …}, got ${describeValue(value)}`,
    );
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
      if (key === 'tokens' || key === 'serverHeaders')
        error(ctx, [...base, key], `a grant has no ${q(key)}: it names no agent; put ${key} under the agent in "agents"`);
      else warn(ctx, [...base, key], `unknown key ${q(key)} in grant ${q(id)} is ignored`);
    }
    const when = readWhen(id, entry.when, ctx);
    const allow = compileSide(id, 'allow', entry.allow, ctx, 'grants');
    const deny = compileSide(id, 'deny', entry.deny, ctx, 'grants');
    ctx.limits.read({ kind: 'grant', id }, [...base, 'limits'], entry.limits);
    const approve = compileApprovals(entry.approve, [...base, 'approve'], `grant ${q(id)}`, approvalReport(ctx));
    if (entry.allow === undefined && entry.deny === undefined && entry.limits === undefined && entry.approve === undefined)
      warn(ctx, base, `grant ${q(id)} has neither "allow" nor "deny": it changes nothing`);
    if (ctx.errors.length === before) grants.push(Object.freeze({ id, when, allow, deny, approve }));
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
    error(
      ctx,
      at,
      `expected a non-empty object ${shape}, got ${isPlainObject(value) ? 'an empty object (a grant for every token is what "default" is for)' : describeValue(value)}`,
    );
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
      error(
        ctx,
        [...at, claim],
        `expected a non-empty string or an array of 1 to ${MAX_GRANT_VALUES} of them (any one matches), got ${describeValue(wanted)}`,
      );
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
  if (!isPlainObject(value))
    return error(ctx, ['admins'], `expected an object mapping admin names to {"tokens": [...]}, got ${describeValue(value)}`);
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
      if (agentTokens.has(hash))
        error(
          ctx,
          at,
          `token hash is also listed under agent ${q(agentTokens.get(hash)!)}; an admin's token must be its own (make one with 'mcpgate token ${name}')`,
        );
      else if (admins.has(hash) && admins.get(hash) !== name)
        error(ctx, at, `token hash is also listed under admin ${q(admins.get(hash)!)}`);
      else admins.set(hash, name);
    });
    if (entry.tokens === undefined)
      error(ctx, ['admins', name, 'tokens'], 'missing; an admin signs in to the console with a token (make one with `mcpgate token NAME`)');
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
    } else if (TOKEN_ANY_CASE.test(item))
      error(ctx, at, 'expected "sha256:" followed by 64 lowercase hex digits, got uppercase hex digits');
    else if (!item.startsWith('sha256:')) {
      error(
        ctx,
        at,
        'expected "sha256:" followed by 64 lowercase hex digits, got a string without the "sha256:" prefix (list the hash `mcpgate token` prints, never the token)',
      );
    } else if (item.length !== 71) {
      error(ctx, at, `expected "sha256:" followed by 64 lowercase hex digits, got ${item.length - 7} characters after "sha256:"`);
    } else error(ctx, at, 'expected "sha256:" followed by 64 lowercase hex digits, got characters other than 0-9 a-f after "sha256:"');
  });
  return Object.freeze(tokens);
}
