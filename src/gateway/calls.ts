// One agent's calls in flight on servers: agent request id → (connection, id on that connection).
// Progress, cancellation and the routing of a server's questions to the call they belong to all
// read this table; the session writes it.

import type { Connection } from '../servers/connection.js';
import type { ServerCallSpan } from '../observability/tracing.js';
import type { RequestId } from '../wire/jsonrpc.js';

export interface Call {
  conn: Connection;
  /** The id the connection gave the forwarded request. */
  serverId: number;
  /** The server-call span (tracing on only). */
  trace: ServerCallSpan | undefined;
  /** Ends the call's hold on its calls-in-flight limits (quotas.ts); run once, when the call leaves this table. */
  release?: (() => void) | undefined;
}

export class Calls extends Map<RequestId, Call> {
  // However a call leaves the table (answered, failed, cancelled, its session closed), its hold on
  // its calls-in-flight limits ends with it. A call without one costs a lookup.
  override delete(id: RequestId): boolean {
    const call = this.get(id);
    if (call?.release !== undefined) {
      const release = call.release;
      call.release = undefined;
      release();
    }
    return super.delete(id);
  }

  override clear(): void {
    for (const call of this.values()) {
      const release = call.release;
      call.release = undefined;
      release?.();
    }
    super.clear();
  }

  /** True when the server's call `serverId` on `conn` is one of these. */
  owns(conn: Connection, serverId: number): boolean {
    for (const call of this.values()) if (call.conn === conn && call.serverId === serverId) return true;
    return false;
  }

  /** How many of these calls are on `conn`. */
  countOn(conn: Connection): number {
    let n = 0;
    for (const call of this.values()) if (call.conn === conn) n += 1;
    return n;
  }

  /**
   * The agent request a server's question on `conn` belongs to: the call the server named
   * (`related`, HTTP servers say), else the only call on that server; undefined when it is not
   * one call for sure.
   */
  owner(conn: Connection, related: number | undefined): RequestId | undefined {
    let found: RequestId | undefined;
    let candidates = 0;
    for (const [agentId, call] of this) {
      if (call.conn !== conn) continue;
      if (related !== undefined && call.serverId === related) return agentId;
      candidates += 1;
      found = agentId;
    }
    return candidates === 1 ? found : undefined;
  }
}
