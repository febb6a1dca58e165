// Who an agent session serves, as the front knows it when the session opens: the agent's id, whether
// the id is the agent's own or only the default, whether the agent has an identity of its own for a
// per-agent server, and the front it came through. One value, so a caller names each fact rather
// than passing a row of booleans in order.

export interface AgentIdentity {
  /** The agent's id: configured, authenticated, named, or the default. */
  readonly agent: string;
  /** False when the identity is only the default: then discovery tools may name the agent (agent_id). */
  readonly explicit: boolean;
  /**
   * Whether the agent has an identity of its own (configured, authenticated or named): if not, a
   * per-agent server gives its session a connection of its own rather than one every unnamed agent shares.
   */
  readonly identified: boolean;
  /** The front the agent came through (metrics count sessions by it). */
  readonly transport: 'stdio' | 'http';
}

/** An identity with the defaults filled in: explicit, over stdio, identified when explicit. */
export function agentIdentity(agent: string, facts: Partial<Omit<AgentIdentity, 'agent'>> = {}): AgentIdentity {
  const explicit = facts.explicit ?? true;
  return { agent, explicit, identified: facts.identified ?? explicit, transport: facts.transport ?? 'stdio' };
}
