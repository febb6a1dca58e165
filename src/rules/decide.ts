// Access decisions over a compiled Rules snapshot (docs/architecture.md "`gateway-rules.json` (agents)"). Pure: no I/O,
// no throwing, no state; what an agent may call and what it is shown both come from here. A decision
// costs a few Map/Set lookups and, only for lists that have globs, one RegExp run per list.
// The functions: `decideTool`, `decideServer`, `serverVisible`, `effectiveAgent`, `matchedGrants`,
// `grantMayUse`. A reason names the rule that decided (`agent "x" (grant "eng")` when a grant did).
// Each takes the agent's token claims (`Claims`) as an optional last argument, for `grants`.

import { DEFAULT_AGENT } from './compiled.js';
import type { ClaimTest, CompiledAgent, CompiledSide, Rules, SkillOptions } from './compiled.js';
import type { Matcher } from './globs.js';

interface Decision {
  readonly allowed: boolean;
  /** One sentence naming the rule that decided, for errors, logs and status. */
  readonly reason: string;
}

/**
 * The verified claims of the token an agent's request came with (OAuth issuers and `auth.jwt`);
 * undefined for a static token, stdio, or no authentication. Only `grants` read them.
 */
export type Claims = Readonly<Record<string, unknown>>;

/** An agent's entry, or a grant its claims meet: what one decision weighs. */
interface Entry {
  readonly id: string;
  readonly allow: CompiledSide;
  readonly deny: CompiledSide;
  /** True for a grant (`grants`), false for an entry of `agents`. */
  readonly grant: boolean;
}

const OPEN: Decision = Object.freeze({ allowed: true, reason: 'there is no rules file: every agent may use every server' });

/** Which entry of the rules applies to `agent`: its own, else `default`, else none. */
export function effectiveAgent(rules: Rules, agent: string | undefined): string | undefined {
  if (agent !== undefined && rules.agents.has(agent)) return agent;
  if (rules.agents.has(DEFAULT_AGENT)) return DEFAULT_AGENT;
  return undefined;
}

/** The names of the grants whose `when` the claims meet, in file order. */
export function matchedGrants(rules: Rules, claims: Claims | undefined): string[] {
  if (claims === undefined || rules.grants.length === 0) return [];
  return rules.grants.filter((g) => meets(g.when, claims)).map((g) => g.id);
}

/**
 * May `agent` call `tool` of `server`? Most specific rule first: a denied server; an explicitly
 * denied tool; a tool denied by a pattern; an explicitly allowed tool; a tool allowed by a pattern;
 * an allowed server with no `allow.tools` entry for it (all its tools); otherwise denied. With
 * grants, each step looks at every entry that applies (the agent's own or `default`'s, then the
 * grants its claims meet): a deny in any of them wins over an allow in any.
 */
export function decideTool(rules: Rules, agent: string | undefined, server: string, tool: string, claims?: Claims): Decision {
  const found = lookup(rules, agent, claims);
  if (found.length === 0) return uncovered(rules, agent);
  const it = `tool ${q(tool)} of server ${q(server)}`;
  for (const entry of found) {
    const deniedServer = serverMatch(entry.deny.servers, server);
    if (deniedServer !== undefined)
      return deny(`server ${q(server)} is denied to ${subject(agent, entry)} by deny.servers${via(deniedServer)}`);
  }
  for (const entry of found) {
    const denied = entry.deny.tools.get(server);
    if (denied === undefined) continue;
    if (denied.exact.has(tool)) return deny(`${it} is denied to ${subject(agent, entry)} by deny.tools`);
    const pattern = denied.match(tool);
    if (pattern !== undefined) return deny(`${it} is denied to ${subject(agent, entry)} by deny.tools pattern ${q(pattern)}`);
  }
  let limited: Entry | undefined;
  for (const entry of found) {
    const allowed = entry.allow.tools.get(server);
    if (allowed === undefined) continue;
    if (allowed.exact.has(tool)) return allow(`${it} is allowed to ${subject(agent, entry)} by allow.tools`);
    const pattern = allowed.match(tool);
    if (pattern !== undefined) return allow(`${it} is allowed to ${subject(agent, entry)} by allow.tools pattern ${q(pattern)}`);
    limited ??= entry;
  }
  for (const entry of found) {
    if (entry.allow.tools.has(server)) continue; // that entry lends only the tools it lists
    const allowedServer = serverMatch(entry.allow.servers, server);
    if (allowedServer !== undefined) {
      return allow(
        `${it} is allowed to ${subject(agent, entry)} by allow.servers${via(allowedServer)}, with no allow.tools entry for the server (all its tools)`,
      );
    }
  }
  if (limited !== undefined) return deny(`${it} is not in allow.tools of ${subject(agent, limited)}`);
  return deny(`server ${q(server)} is not allowed to ${subjects(agent, found)}: neither allow.servers nor allow.tools names it`);
}

/**
 * May `agent` use `server` as a whole (its resources and prompts)? Only through `allow.servers`
 * (or `"*"`) and only if `deny.servers` does not match: a server granted through `allow.tools` alone
 * lends its listed tools, nothing else.
 */
export function decideServer(rules: Rules, agent: string | undefined, server: string, claims?: Claims): Decision {
  const found = lookup(rules, agent, claims);
  if (found.length === 0) return uncovered(rules, agent);
  for (const entry of found) {
    const deniedServer = serverMatch(entry.deny.servers, server);
    if (deniedServer !== undefined)
      return deny(`server ${q(server)} is denied to ${subject(agent, entry)} by deny.servers${via(deniedServer)}`);
  }
  for (const entry of found) {
    const allowedServer = serverMatch(entry.allow.servers, server);
    if (allowedServer !== undefined)
      return allow(`server ${q(server)} is allowed to ${subject(agent, entry)} by allow.servers${via(allowedServer)}`);
  }
  const limited = found.find((entry) => entry.allow.tools.has(server));
  if (limited !== undefined) {
    return deny(
      `server ${q(server)} is not in allow.servers of ${subject(agent, limited)}: only the tools allow.tools lists may be called`,
    );
  }
  return deny(`server ${q(server)} is not in allow.servers of ${subjects(agent, found)}`);
}

/** What an agent is shown of one skill: whether at all, and whether a "dynamic" one (no digests to pin). */
interface SkillDecision extends Decision {
  readonly dynamic: boolean;
}

/** The tools a skill's frontmatter `allowed-tools` names (a space-separated string or a list), without their argument patterns. */
function allowedToolsOf(frontmatter: Readonly<Record<string, unknown>>): string[] {
  const value = frontmatter['allowed-tools'];
  const items = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
  return items.map((item) => item.replace(/\(.*$/s, '')).filter((item) => item !== '');
}

/**
 * May `agent` see the skill at `path` (its skill path on the server, `acme/refunds`) of `server`?
 * The server must be allowed (decideServer). Then, across every entry that applies: a `deny.skills`
 * glob for the server (or `*`) that matches denies; where some entry has `allow.skills` for the
 * server (or `*`), one of them must match. A skill whose frontmatter names `allowed-tools` is shown
 * only if the agent may call each of those tools of the server, unless its `skillOptions.allowedTools`
 * is `"ignore"`. `dynamic`: its `skillOptions.dynamic` (false without a rules file).
 */
export function decideSkill(
  rules: Rules,
  agent: string | undefined,
  server: string,
  path: string,
  frontmatter: Readonly<Record<string, unknown>>,
  claims?: Claims,
): SkillDecision {
  if (rules.open) return { ...OPEN, dynamic: false };
  const found = lookup(rules, agent, claims);
  const options = skillOptionsOf(rules, agent);
  const dynamic = options?.dynamic === true;
  const server_ = decideServer(rules, agent, server, claims);
  if (!server_.allowed) return { ...server_, dynamic };
  const it = `skill ${q(path)} of server ${q(server)}`;
  for (const entry of found) {
    for (const key of [server, '*']) {
      const pattern = entry.deny.skills.get(key);
      if (pattern !== undefined && (pattern.exact.has(path) || pattern.match(path) !== undefined))
        return { allowed: false, reason: `${it} is denied to ${subject(agent, entry)} by deny.skills`, dynamic };
    }
  }
  const limiting = found.filter((entry) => entry.allow.skills.has(server) || entry.allow.skills.has('*'));
  if (limiting.length > 0) {
    const allowed = limiting.some((entry) =>
      [server, '*'].some((key) => {
        const pattern = entry.allow.skills.get(key);
        return pattern !== undefined && (pattern.exact.has(path) || pattern.match(path) !== undefined);
      }),
    );
    if (!allowed) return { allowed: false, reason: `${it} is not in allow.skills of ${subjects(agent, limiting)}`, dynamic };
  }
  if (options?.allowedTools !== 'ignore') {
    for (const tool of allowedToolsOf(frontmatter)) {
      if (!decideTool(rules, agent, server, tool, claims).allowed)
        return {
          allowed: false,
          reason: `${it} names allowed-tools ${q(tool)}, which ${agent === undefined ? 'the agent' : q(agent)} may not call`,
          dynamic,
        };
    }
  }
  return { allowed: true, reason: `${it} is allowed`, dynamic };
}

/** The `skillOptions` of the entry that applies to `agent` (its own, else `default`'s). */
function skillOptionsOf(rules: Rules, agent: string | undefined): SkillOptions | undefined {
  const id = effectiveAgent(rules, agent);
  return id === undefined ? undefined : rules.agents.get(id)?.skillOptions;
}

/**
 * Is `server` shown to `agent` at all (e.g. by discovery's `list_servers`)? When decideServer
 * allows it, or when some entry's `allow.tools` could let some tool of it through every `deny.tools`.
 */
export function serverVisible(rules: Rules, agent: string | undefined, server: string, claims?: Claims): boolean {
  const found = lookup(rules, agent, claims);
  if (found.length === 0) return uncovered(rules, agent).allowed;
  if (found.some((entry) => serverMatch(entry.deny.servers, server) !== undefined)) return false;
  if (found.some((entry) => serverMatch(entry.allow.servers, server) !== undefined)) return true;
  const denials = found.map((entry) => entry.deny.tools.get(server)).filter((d): d is Matcher => d !== undefined);
  if (denials.some((denied) => denied.patterns.some((p) => /^\*+$/.test(p)))) return false;
  for (const entry of found) {
    const allowed = entry.allow.tools.get(server);
    if (allowed === undefined) continue;
    if (allowed.patterns.length > 0) return true; // which names a glob admits is unknown here; assume some
    for (const name of allowed.exact)
      if (denials.every((denied) => !denied.exact.has(name) && denied.match(name) === undefined)) return true;
  }
  return false;
}

/**
 * Whether some grant, for some token, could let an agent use `server` (its `allow.servers` or
 * `allow.tools` name it, its `deny.servers` does not): what a reload keeps a pooled connection for
 * when the connection's agent's claims are not at hand (every call is decided again anyway).
 */
export function grantMayUse(rules: Rules, server: string): boolean {
  return rules.grants.some(
    (g) =>
      serverMatch(g.deny.servers, server) === undefined &&
      (serverMatch(g.allow.servers, server) !== undefined || g.allow.tools.has(server)),
  );
}

/**
 * The entries that apply to `agent`: its own, else those of `default` (none for OPEN_RULES), then
 * every grant its token's claims meet.
 */
function lookup(rules: Rules, agent: string | undefined, claims: Claims | undefined): readonly Entry[] {
  if (rules.open) return NONE;
  const own = (agent === undefined ? undefined : rules.agents.get(agent)) ?? rules.agents.get(DEFAULT_AGENT);
  const base = own === undefined ? NONE : single(own);
  if (claims === undefined || rules.grants.length === 0) return base;
  const grants = rules.grants.filter((g) => meets(g.when, claims)).map((g) => ({ id: g.id, allow: g.allow, deny: g.deny, grant: true }));
  return grants.length === 0 ? base : [...base, ...grants];
}

const NONE: readonly Entry[] = Object.freeze([]);
// One frozen list per compiled agent, made once: a decision without grants allocates nothing.
const SINGLE = new WeakMap<CompiledAgent, readonly Entry[]>();

function single(agent: CompiledAgent): readonly Entry[] {
  let list = SINGLE.get(agent);
  if (list === undefined) {
    list = Object.freeze([Object.freeze({ id: agent.id, allow: agent.allow, deny: agent.deny, grant: false })]);
    SINGLE.set(agent, list);
  }
  return list;
}

/** Every test of `when` holds for `claims`. */
function meets(when: readonly ClaimTest[], claims: Claims): boolean {
  return when.every((test) => {
    const value = claimValue(claims, test.claim);
    if (typeof value === 'string') {
      if (test.claim === 'scope' || test.claim === 'scp') return value.split(' ').some((word) => test.values.includes(word));
      return test.values.includes(value);
    }
    return Array.isArray(value) && value.some((item) => typeof item === 'string' && test.values.includes(item));
  });
}

/** The claim named `name`, else (a dotted name) the value at that path through nested objects. */
export function claimValue(claims: Claims, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  if (!name.includes('.')) return undefined;
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The decision for an agent no entry of the rules covers. */
function uncovered(rules: Rules, agent: string | undefined): Decision {
  if (rules.open) return OPEN;
  const deny = rules.defaults.denyOnMissingAgent;
  return { allowed: !deny, reason: `${name(agent)} is not in the rules and deny_on_missing_agent is ${String(deny)}` };
}

function name(agent: string | undefined): string {
  return agent === undefined ? 'an agent with no id' : `agent ${q(agent)}`;
}

function subject(agent: string | undefined, entry: Entry): string {
  if (entry.grant) return `${name(agent)} (grant ${q(entry.id)})`;
  return entry.id === agent ? name(agent) : `${name(agent)} (rules of agent ${q(entry.id)})`;
}

/** The subject of every entry that applied: one as before, several as "agent X (rules of …, grant …)". */
function subjects(agent: string | undefined, found: readonly Entry[]): string {
  if (found.length === 1) return subject(agent, found[0]!);
  const parts = found.map((e) => (e.grant ? `grant ${q(e.id)}` : e.id === agent ? 'its own rules' : `rules of agent ${q(e.id)}`));
  return `${name(agent)} (${parts.join(', ')})`;
}

/** '' for an exact name, the glob for a pattern, undefined when the list does not match. */
function serverMatch(matcher: Matcher, server: string): string | undefined {
  return matcher.exact.has(server) ? '' : matcher.match(server);
}

function via(pattern: string): string {
  return pattern === '' ? '' : ` pattern ${q(pattern)}`;
}

/** Names from the file or the agent, quoted and escaped: a name may hold quotes or control characters. */
function q(value: string): string {
  if (typeof value !== 'string') return String(value); // a caller's type error must not make a decision throw
  // Decisions are hot and names are almost always plain: only call JSON.stringify when it would
  // escape something (controls, `"`, `\\`, surrogates, which it escapes when unpaired).
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

function allow(reason: string): Decision {
  return { allowed: true, reason };
}

function deny(reason: string): Decision {
  return { allowed: false, reason };
}
