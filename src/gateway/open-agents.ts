// The open agent sessions, and who among them is told what: which agents' views of the lists changed,
// which agent a server's question belongs to, the most verbose log level any agent asked for, and
// how many calls the agents have in flight on a server. Holds the sessions; knows nothing of servers.
// The class is `Agents` (`Gateway.agents`).

import type { ListKind } from '../servers/lists.js';
import type { Connection } from '../servers/connection.js';
import type { AgentSession } from './session/session.js';

/** The session a server→agent request goes to, or why there is none. */
export type ServerRequestTarget =
  | {
      readonly session: AgentSession;
      readonly none?: undefined;
      /** The session has a call in flight on the server. */ readonly busy: boolean;
    }
  | { readonly session?: undefined; readonly none: 'no-agent' }
  | { readonly session?: undefined; readonly none: 'several-busy' | 'several-idle'; readonly agents: readonly string[] };

export class Agents implements Iterable<AgentSession> {
  private readonly sessions = new Set<AgentSession>();

  get size(): number {
    return this.sessions.size;
  }

  [Symbol.iterator](): Iterator<AgentSession> {
    return this.sessions[Symbol.iterator]();
  }

  add(session: AgentSession): void {
    this.sessions.add(session);
  }

  delete(session: AgentSession): void {
    this.sessions.delete(session);
  }

  /**
   * Some server's skills changed (listed again, held or released by the pins): skills are resources
   * (the Skills extension has no list_changed of its own), so every agent is told its resources changed.
   */
  announceSkills(): void {
    for (const session of this.sessions) session.listChanged('notifications/resources/list_changed');
  }

  /**
   * Tells each agent whose view of these lists changed (templates belong to the resources list).
   * `among`: the sessions that may be concerned (a pooled connection's owners); default all.
   */
  announce(kinds: readonly ListKind[], among: Iterable<AgentSession> = this.sessions): void {
    if (kinds.length === 0) return;
    for (const session of among) {
      const methods = new Set<string>();
      for (const kind of kinds) if (session.shown.changed(kind)) methods.add(kind === 'resourceTemplates' ? 'resources' : kind);
      for (const method of methods) session.listChanged(`notifications/${method}/list_changed`);
    }
  }

  /**
   * Whom a server→agent request goes to: the session whose call it says it belongs to (HTTP servers
   * say), else — among the sessions with a call in flight on `conn`, or every session when none has
   * one — the only agent there is. Sessions of one identified agent are one agent (its HTTP sessions,
   * each modern request's own session): they share its identity and its answer. Two agents there,
   * and nothing in the request naming one, is the one ambiguous case: `ambiguous` names them.
   * `among`: the sessions that may be asked (a pooled connection's owners); default all.
   */
  forServerRequest(conn: Connection, related: number | undefined, among: ReadonlySet<AgentSession> = this.sessions): ServerRequestTarget {
    if (related !== undefined) {
      for (const session of among) if (session.ownsCall(conn, related)) return { session, busy: true };
    }
    const busy = [...among].filter((s) => s.callsOn(conn) > 0);
    const candidates = busy.length > 0 ? busy : [...among];
    if (candidates.length === 0) return { none: 'no-agent' };
    const first = candidates[0]!;
    if (candidates.every((s) => s === first || (s.identified && first.identified && s.agent === first.agent)))
      return { session: first, busy: busy.length > 0 };
    const agents = [...new Set(candidates.map((s) => (s.identified ? s.agent : `${s.agent} (session ${s.id})`)))];
    return { none: busy.length > 0 ? 'several-busy' : 'several-idle', agents };
  }

  /** The most verbose log level (lowest rank) any agent asked for; undefined if none asked. */
  lowestLogRank(): number | undefined {
    let rank: number | undefined;
    for (const session of this.sessions)
      if (session.declared.logRank !== undefined) rank = Math.min(rank ?? Infinity, session.declared.logRank);
    return rank;
  }

  /** Every agent's calls in flight on `conn`. */
  callsOn(conn: Connection): number {
    let n = 0;
    for (const session of this.sessions) n += session.callsOn(conn);
    return n;
  }
}
