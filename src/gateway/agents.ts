// The open agent sessions, and who among them is told what: which agents' views of the lists changed,
// which agent a server's question belongs to, the most verbose log level any agent asked for, and
// how many calls the agents have in flight on a server. Holds the sessions; knows nothing of servers.

import type { ListKind } from '../servers/lists.js';
import type { Connection } from '../servers/connection.js';
import type { AgentSession } from './session.js';

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
   * The agent a server→agent request belongs to: the one whose call it says it belongs to (HTTP
   * servers say), else the only session, else the only one with a call in flight on that server.
   * `among`: the sessions that may be asked (a pooled connection's owners); default all.
   */
  forServerRequest(conn: Connection, related: number | undefined, among: ReadonlySet<AgentSession> = this.sessions): AgentSession | undefined {
    if (related !== undefined) {
      for (const session of among) if (session.ownsCall(conn, related)) return session;
    }
    if (among.size === 1) return among.values().next().value;
    const busy = [...among].filter((s) => s.callsOn(conn) > 0);
    return busy.length === 1 ? busy[0] : undefined;
  }

  /** The most verbose log level (lowest rank) any agent asked for; undefined if none asked. */
  lowestLogRank(): number | undefined {
    let rank: number | undefined;
    for (const session of this.sessions) if (session.logRank !== undefined) rank = Math.min(rank ?? Infinity, session.logRank);
    return rank;
  }

  /** Every agent's calls in flight on `conn`. */
  callsOn(conn: Connection): number {
    let n = 0;
    for (const session of this.sessions) n += session.callsOn(conn);
    return n;
  }
}
