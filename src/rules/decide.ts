// Access decisions over a compiled Rules snapshot (docs/architecture.md "`gateway-rules.json` (agents)"). Pure: no I/O,
// no throwing, no state; what an agent may call and what it is shown both come from here. A decision
// costs a few Map/Set lookups and, only for lists that have globs, one RegExp run per list.

import { DEFAULT_AGENT } from './schema.js';
import type { CompiledAgent, Matcher, Rules } from './schema.js';

export interface Decision {
  readonly allowed: boolean;
  /** One sentence naming the rule that decided, for errors, logs and status. */
  readonly reason: string;
}

const OPEN: Decision = Object.freeze({ allowed: true, reason: 'there is no rules file: every agent may use every server' });

/** Which entry of the rules applies to `agent`: its own, else `default`, else none. */
export function effectiveAgent(rules: Rules, agent: string | undefined): string | undefined {
  if (agent !== undefined && rules.agents.has(agent)) return agent;
  if (rules.agents.has(DEFAULT_AGENT)) return DEFAULT_AGENT;
  return undefined;
}

/**
 * May `agent` call `tool` of `server`? Most specific rule first: a denied server; an explicitly
 * denied tool; a tool denied by a pattern; an explicitly allowed tool; a tool allowed by a pattern;
 * an allowed server with no `allow.tools` entry for it (all its tools); otherwise denied.
 */
export function decideTool(rules: Rules, agent: string | undefined, server: string, tool: string): Decision {
  const found = lookup(rules, agent);
  if (found === undefined) return uncovered(rules, agent);
  const who = subject(agent, found);
  const deniedServer = serverMatch(found.deny.servers, server);
  if (deniedServer !== undefined) return deny(`server ${q(server)} is denied to ${who} by deny.servers${via(deniedServer)}`);
  const it = `tool ${q(tool)} of server ${q(server)}`;
  const denied = found.deny.tools.get(server);
  if (denied !== undefined) {
    if (denied.exact.has(tool)) return deny(`${it} is denied to ${who} by deny.tools`);
    const pattern = denied.match(tool);
    if (pattern !== undefined) return deny(`${it} is denied to ${who} by deny.tools pattern ${q(pattern)}`);
  }
  const allowed = found.allow.tools.get(server);
  if (allowed !== undefined) {
    if (allowed.exact.has(tool)) return allow(`${it} is allowed to ${who} by allow.tools`);
    const pattern = allowed.match(tool);
    if (pattern !== undefined) return allow(`${it} is allowed to ${who} by allow.tools pattern ${q(pattern)}`);
    return deny(`${it} is not in allow.tools of ${who}`);
  }
  const allowedServer = serverMatch(found.allow.servers, server);
  if (allowedServer !== undefined) {
    return allow(`${it} is allowed to ${who} by allow.servers${via(allowedServer)}, with no allow.tools entry for the server (all its tools)`);
  }
  return deny(`server ${q(server)} is not allowed to ${who}: neither allow.servers nor allow.tools names it`);
}

/**
 * May `agent` use `server` as a whole (its resources and prompts)? Only through `allow.servers`
 * (or `"*"`) and only if `deny.servers` does not match: a server granted through `allow.tools` alone
 * lends its listed tools, nothing else.
 */
export function decideServer(rules: Rules, agent: string | undefined, server: string): Decision {
  const found = lookup(rules, agent);
  if (found === undefined) return uncovered(rules, agent);
  const who = subject(agent, found);
  const deniedServer = serverMatch(found.deny.servers, server);
  if (deniedServer !== undefined) return deny(`server ${q(server)} is denied to ${who} by deny.servers${via(deniedServer)}`);
  const allowedServer = serverMatch(found.allow.servers, server);
  if (allowedServer !== undefined) return allow(`server ${q(server)} is allowed to ${who} by allow.servers${via(allowedServer)}`);
  if (found.allow.tools.has(server)) {
    return deny(`server ${q(server)} is not in allow.servers of ${who}: only the tools allow.tools lists may be called`);
  }
  return deny(`server ${q(server)} is not in allow.servers of ${who}`);
}

/**
 * Is `server` shown to `agent` at all (e.g. by discovery's `list_servers`)? When decideServer
 * allows it, or when `allow.tools` could let some tool of it through `deny.tools`.
 */
export function serverVisible(rules: Rules, agent: string | undefined, server: string): boolean {
  const found = lookup(rules, agent);
  if (found === undefined) return uncovered(rules, agent).allowed;
  if (serverMatch(found.deny.servers, server) !== undefined) return false;
  if (serverMatch(found.allow.servers, server) !== undefined) return true;
  const allowed = found.allow.tools.get(server);
  if (allowed === undefined) return false;
  const denied = found.deny.tools.get(server);
  if (denied === undefined) return allowed.exact.size > 0 || allowed.patterns.length > 0;
  if (denied.patterns.some((p) => /^\*+$/.test(p))) return false;
  if (allowed.patterns.length > 0) return true; // which names a glob admits is unknown here; assume some
  for (const name of allowed.exact) if (!denied.exact.has(name) && denied.match(name) === undefined) return true;
  return false;
}

/** The compiled rules that apply to `agent`: its own, else those of `default`; none for OPEN_RULES. */
function lookup(rules: Rules, agent: string | undefined): CompiledAgent | undefined {
  if (rules.open) return undefined;
  return (agent === undefined ? undefined : rules.agents.get(agent)) ?? rules.agents.get(DEFAULT_AGENT);
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

function subject(agent: string | undefined, rules: CompiledAgent): string {
  return rules.id === agent ? name(agent) : `${name(agent)} (rules of agent ${q(rules.id)})`;
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
