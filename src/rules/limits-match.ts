// Which limits of the rules apply to one call (limits.ts has their shape). Pure, never throws.
// Called only when the rules have limits at all (`Rules.limits`); a file without them costs a call
// one property read in the gateway.
// `limitsFor` lists the limits a call must pass (an exact name over the first glob in file order, as
// for access); `namedLimits` those the status shows before anyone called.

import { DEFAULT_AGENT, type Rules } from './compiled.js';
import { matchedGrants, type Claims } from './decide.js';
import type { LimitSet, LimitSpec, NamedLimits } from './limits.js';

/** The level of a limit: every call of its place, a server's, a tool's (metrics and messages). */
type LimitLevel = 'all' | 'server' | 'tool';

/** One limit a call must pass, and whose counter it counts on. */
export interface AppliedLimit {
  readonly spec: LimitSpec;
  readonly level: LimitLevel;
  /** Whose calls the counter counts: an agent id, or `*` for the top-level limits (every agent). */
  readonly subject: string;
}

/** The agent every agent is for the top-level limits' counters. */
const EVERY_AGENT = '*';

/**
 * The limits a call of `tool` on `server` by `agent` must pass: the top level's, the agent's entry's
 * (its own, else `default`'s) and those of every grant its claims meet. Empty when none applies.
 */
export function limitsFor(rules: Rules, agent: string, server: string, tool: string, claims?: Claims): AppliedLimit[] {
  const limits = rules.limits;
  const out: AppliedLimit[] = [];
  if (limits === undefined) return out;
  if (limits.gateway !== undefined) collect(limits.gateway, EVERY_AGENT, server, tool, out);
  const entry = rules.agents.has(agent) ? agent : rules.agents.has(DEFAULT_AGENT) ? DEFAULT_AGENT : undefined;
  const own = entry === undefined ? undefined : limits.agents.get(entry);
  if (own !== undefined) collect(own, agent, server, tool, out);
  if (limits.grants.size > 0 && claims !== undefined) {
    for (const grant of matchedGrants(rules, claims)) {
      const set = limits.grants.get(grant);
      if (set !== undefined) collect(set, agent, server, tool, out);
    }
  }
  return out;
}

/**
 * Every limit the rules name with the subject its counter counts, for status and the console: the
 * top level's (`*`) and each listed agent's own entry's (not `default`'s nor a grant's, whose
 * subjects are the agents that come, known only once they call).
 */
export function namedLimits(rules: Rules): AppliedLimit[] {
  const limits = rules.limits;
  const out: AppliedLimit[] = [];
  if (limits === undefined) return out;
  if (limits.gateway !== undefined) every(limits.gateway, EVERY_AGENT, out);
  for (const [agent, set] of limits.agents) if (agent !== DEFAULT_AGENT) every(set, agent, out);
  return out;
}

function every(set: LimitSet, subject: string, out: AppliedLimit[]): void {
  if (set.all !== undefined) out.push({ spec: set.all, level: 'all', subject });
  for (const spec of set.servers?.byName.values() ?? []) out.push({ spec, level: 'server', subject });
  for (const named of set.tools.values()) for (const spec of named.byName.values()) out.push({ spec, level: 'tool', subject });
}

function collect(set: LimitSet, subject: string, server: string, tool: string, out: AppliedLimit[]): void {
  if (set.all !== undefined) out.push({ spec: set.all, level: 'all', subject });
  const forServer = set.servers === undefined ? undefined : pick(set.servers, server);
  if (forServer !== undefined) out.push({ spec: forServer, level: 'server', subject });
  const tools = set.tools.get(server);
  const forTool = tools === undefined ? undefined : pick(tools, tool);
  if (forTool !== undefined) out.push({ spec: forTool, level: 'tool', subject });
}

/** The exact name's spec, else the first glob's (file order) that matches. */
function pick(named: NamedLimits, name: string): LimitSpec | undefined {
  if (named.matcher.exact.has(name)) return named.byName.get(name);
  const pattern = named.matcher.match(name);
  return pattern === undefined ? undefined : named.byName.get(pattern);
}
