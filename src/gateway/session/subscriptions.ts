// Resource subscriptions, one implementation for shared and pooled connections: a subscription is
// held on a connection for a set of agent sessions, subscribed on the server while one of them holds
// it and unsubscribed by the last, and its updates go to its holders. A shared connection is held
// under its server's name, so the subscriptions outlive a reconnect or a reload that replaces the
// connection and are renewed on the new session (it has forgotten them). A pooled connection (a
// per-agent or per-session server's) is held as itself: it is not reconnected in place (its state is
// gone), so its subscriptions are forgotten with it rather than renewed.

import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';

/** What a subscription is held on: a shared server's name, or the pooled connection itself. */
type Holder = string | Connection;

function holderOf(conn: Connection): Holder {
  return conn.config.sessions === 'shared' ? conn.name : conn;
}

export class Subscriptions<Subscriber> {
  /** Holder → server-side URI → the agent sessions that hold it. */
  private readonly byHolder = new Map<Holder, Map<string, Set<Subscriber>>>();

  constructor(
    private readonly connections: ReadonlyMap<string, Connection>,
    private readonly log: Logger,
  ) {}

  /** Who holds `uri` on `conn` (for `resources/updated` from it). */
  holders(conn: Connection, uri: string): Iterable<Subscriber> {
    return this.byHolder.get(holderOf(conn))?.get(uri) ?? [];
  }

  async subscribe(subscriber: Subscriber, conn: Connection, uri: string): Promise<void> {
    const holder = holderOf(conn);
    const held = this.byHolder.get(holder)?.get(uri);
    if (held === undefined || held.size === 0) await conn.request('resources/subscribe', { uri });
    let uris = this.byHolder.get(holder);
    if (uris === undefined) this.byHolder.set(holder, (uris = new Map<string, Set<Subscriber>>()));
    let subscribers = uris.get(uri);
    if (subscribers === undefined) uris.set(uri, (subscribers = new Set()));
    subscribers.add(subscriber);
  }

  async unsubscribe(subscriber: Subscriber, conn: Connection, uri: string): Promise<void> {
    const holder = holderOf(conn);
    const uris = this.byHolder.get(holder);
    const subscribers = uris?.get(uri);
    if (subscribers?.delete(subscriber) !== true || subscribers.size > 0) return;
    uris!.delete(uri);
    if (uris!.size === 0) this.byHolder.delete(holder);
    await conn.request('resources/unsubscribe', { uri });
  }

  /** A session ended: what only it held is unsubscribed on the server. */
  drop(subscriber: Subscriber): void {
    for (const [holder, uris] of this.byHolder) {
      const conn = typeof holder === 'string' ? this.connections.get(holder) : holder;
      for (const [uri, subscribers] of uris) {
        if (!subscribers.delete(subscriber) || subscribers.size > 0) continue;
        uris.delete(uri);
        if (conn?.state === 'ready')
          conn
            .request('resources/unsubscribe', { uri })
            .catch((err: unknown) =>
              this.log.debug('could not unsubscribe a resource no session holds any more', { server: conn.name, error: err }),
            );
      }
      if (uris.size === 0) this.byHolder.delete(holder);
    }
  }

  /** A shared connection has a new session: subscribe again to what agents still hold there. */
  renew(conn: Connection): void {
    for (const [uri, subscribers] of this.byHolder.get(holderOf(conn)) ?? []) {
      if (subscribers.size === 0) continue;
      conn
        .request('resources/subscribe', { uri })
        .catch((err: unknown) =>
          this.log.warn('could not renew a resource subscription after reconnecting', { server: conn.name, uri, error: err }),
        );
    }
  }

  /** A pooled connection closed or died: its subscriptions went with its session. */
  forget(conn: Connection): void {
    this.byHolder.delete(holderOf(conn));
  }

  clear(): void {
    this.byHolder.clear();
  }
}
