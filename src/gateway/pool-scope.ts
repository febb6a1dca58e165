// Which pooled connection a session's call goes to: its pool scope, and the agent's own
// headers for the server (part of the pool key).

import type { SessionScope } from '../config/types.js';
import type { Rules } from '../rules/load.js';

/**
 * The pool scope of a session for a pooled server: its agent's identity (`agent:ID`) for
 * per-agent, itself (`session:N`) for per-session. An agent with no identity of its own (stdio
 * without --agent) gets its session's scope even on a per-agent server: never one shared by accident.
 */
export function scopeOf(session: { readonly agent: string; readonly identified: boolean; readonly serial: number }, mode: SessionScope): string {
  return mode === 'per-agent' && session.identified ? `agent:${session.agent}` : `session:${session.serial}`;
}

/**
 * The agent's own headers for a remote server (the rules' `serverHeaders`): only for a verified
 * identity, only from the agent's own entry (never `default`'s, which the rules refuse anyway).
 */
export function agentHeaders(rules: Rules, owner: { readonly agent: string; readonly identified: boolean }, server: string): Readonly<Record<string, string>> | undefined {
  if (!owner.identified) return undefined;
  return rules.agents.get(owner.agent)?.serverHeaders.get(server);
}
