// The pooled connections' side of the gateway: what a per-agent or per-session server's
// pooled connection tells the gateway goes to its owners only, and what it lists is put in its
// scope's own catalog (own-catalogs.ts), reviewed by the pins, refreshed on its debounced
// list_changed and dropped when it goes. Its owners' log level is set on it.

import type { Logger } from '../observability/logger.js';
import { Refresher } from '../catalog/refresher.js';
import type { Connection, ConnectionHooks } from '../servers/connection.js';
import { LIST_KINDS, fetchLists, type ListKind } from '../servers/lists.js';
import { isOwner, scopeOf, type ConnectionPool, type PoolScope } from '../servers/pool.js';
import type { PinKeeper } from '../pins/keeper.js';
import type { Agents } from './open-agents.js';
import { MCP_LOG_LEVELS } from './method-tables.js';
import type { OwnCatalogs } from './own-catalogs.js';
import type { ServerEvents } from './server-events.js';
import type { AgentSession } from './session.js';
import type { Subscriptions } from './subscriptions.js';

/** The key of one scope's view of one server (the own refresher's and `ownConns`'). */
function ownKey(server: string, scope: PoolScope): string {
  return `${server}\u0000${scope.key}`;
}

/** What the pooled connections' side reads and changes (the Gateway makes each of these). */
export interface OwnListingParts {
  readonly agents: Agents;
  readonly pool: ConnectionPool;
  readonly own: OwnCatalogs;
  readonly pins: PinKeeper;
  readonly subscriptions: Subscriptions<AgentSession>;
  readonly serverEvents: ServerEvents;
  readonly log: Logger;
}

export class OwnListing {
  /** Debounced refreshes of a pooled connection's lists (its list_changed), keyed `server\0scope`. */
  private readonly ownRefresher: Refresher;
  /** The pooled connection each own catalog's part was listed from, by the same key. */
  private readonly ownConns = new Map<string, Connection>();

  constructor(private readonly parts: OwnListingParts) {
    this.ownRefresher = new Refresher((key, kinds) => this.refreshOwn(key, kinds), parts.log);
  }

  /** A pooled connection's list_changed: a debounced refresh of its owners' view, if it is the one listed. */
  requestRefresh(conn: Connection, kind: ListKind): void {
    const scope = this.parts.pool.entryOf(conn)?.scope;
    const key = scope === undefined ? undefined : ownKey(conn.name, scope);
    if (key !== undefined && this.ownConns.get(key) === conn) this.ownRefresher.request(key, kind);
  }

  /** The sessions a pool scope's connections belong to. */
  ownersOf(scope: PoolScope): Set<AgentSession> {
    const owners = new Set<AgentSession>();
    for (const session of this.parts.agents) if (isOwner(session, scope)) owners.add(session);
    return owners;
  }

  /**
   * What a pooled connection tells the gateway: its messages go to its owners only; what it lists
   * is its owners' view of the server (own-catalogs.ts), never the catalog every agent sees.
   */
  pooledHooks(scope: PoolScope): ConnectionHooks {
    return {
      notification: (conn, msg) => this.parts.serverEvents.notification(conn, msg, this.ownersOf(scope)),
      serverRequest: (conn, msg, related) => this.parts.serverEvents.serverRequest(conn, msg, related, this.ownersOf(scope)),
      // A new pooled connection is listed for its owners and gets their log level before it serves them.
      ready: async (conn) => {
        this.ownConns.set(ownKey(conn.name, scope), conn);
        await Promise.all([this.listOwn(conn, scope, LIST_KINDS), this.setPooledLogLevel(conn, this.ownersOf(scope))]);
      },
      // Lost while serving (not closed by us): its state is gone, so it is not restarted in place but
      // reaped, and the next call makes a fresh one. Its owners meanwhile see the shared view of the
      // server (the catalog connection's lists, kept through its own restarts): the same tools unless
      // their own lists differed, so a crash is no list change for them either.
      interrupted: (conn) => this.pooledLost(conn, scope, true),
      lost: (conn, reason) => this.pooledLost(conn, scope, reason !== undefined),
    };
  }

  private pooledLost(conn: Connection, scope: PoolScope, reap: boolean): void {
    this.dropOwn(conn, scope);
    this.parts.subscriptions.forget(conn);
    for (const session of this.parts.agents) session.connectionLost(conn);
    if (reap) this.parts.pool.reap(conn);
  }

  /**
   * Lists a pooled connection (all kinds when it becomes ready, the changed ones on its
   * list_changed), reviews its tools against the pins as a shared server's are (a new tool is
   * pinned or held the same way), and tells the owners whose view changed.
   */
  private async listOwn(conn: Connection, scope: PoolScope, kinds: readonly ListKind[]): Promise<void> {
    const key = ownKey(conn.name, scope);
    const { lists } = await fetchLists(conn, kinds);
    if (this.ownConns.get(key) !== conn || conn.state !== 'ready') return;
    const review = lists.tools === undefined ? undefined : await this.parts.pins.check(conn.name, lists.tools, undefined, scope.key);
    if (this.ownConns.get(key) !== conn || conn.state !== 'ready') return;
    const changed = this.parts.own.set(scope, conn.name, lists, review?.held);
    if (changed.length > 0) this.parts.log.debug('own catalog listed', { server: conn.name, scope: scope.key, changed });
    this.parts.agents.announce(changed, this.ownersOf(scope));
  }

  private async refreshOwn(key: string, kinds: ListKind[]): Promise<void> {
    const conn = this.ownConns.get(key);
    const scope = conn === undefined ? undefined : this.parts.pool.entryOf(conn)?.scope;
    if (conn?.state !== 'ready' || scope === undefined) return;
    await this.listOwn(conn, scope, kinds);
  }

  /** A pooled connection is gone: its owners' view of the server is the shared one again. */
  private dropOwn(conn: Connection, scope: PoolScope): void {
    const key = ownKey(conn.name, scope);
    if (this.ownConns.get(key) !== conn) return;
    this.ownConns.delete(key);
    this.ownRefresher.forget(key);
    this.parts.pins.forget(conn.name, scope.key);
    this.parts.agents.announce(this.parts.own.remove(scope, conn.name), this.ownersOf(scope));
  }

  /** The pooled connections `session` owns get their owners' level (the most verbose any of them asked). */
  async setOwnLogLevel(session: AgentSession): Promise<void> {
    const mine = this.parts.pool.list().filter((e) => e.started && e.scope.key === scopeOf(session, e.conn.config.sessions).key);
    await Promise.allSettled(mine.map((e) => this.setPooledLogLevel(e.conn, this.ownersOf(e.scope))));
  }

  private async setPooledLogLevel(conn: Connection, owners: ReadonlySet<AgentSession>): Promise<void> {
    let rank: number | undefined;
    for (const session of owners) if (session.logRank !== undefined) rank = Math.min(rank ?? Infinity, session.logRank);
    const level = rank === undefined ? undefined : MCP_LOG_LEVELS[rank];
    if (level === undefined || conn.state !== 'ready' || conn.info?.capabilities.logging === undefined) return;
    await conn
      .request('logging/setLevel', { level })
      .catch((err: unknown) => this.parts.log.debug('a pooled connection refused logging/setLevel', { server: conn.name, error: err }));
  }

  /** Shutdown: no refresh starts any more. */
  close(): void {
    this.ownRefresher.close();
  }

  /** Shutdown, once every connection is closed. */
  clear(): void {
    this.ownConns.clear();
  }
}
