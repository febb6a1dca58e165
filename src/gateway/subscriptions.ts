// Resource subscriptions across agents (and, in OwnSubscriptions, on pooled connections): each namespaced URI is subscribed on its server once, while
// at least one agent holds it, unsubscribed by the last, and renewed when the server reconnects
// (a new session has forgotten them).

import type { Catalog } from '../catalog/catalog.js';
import type { Logger } from '../observability/logger.js';
import type { Connection } from '../servers/connection.js';

export class Subscriptions<Subscriber> {
  /** Namespaced URI → the agent sessions subscribed to it. */
  private readonly byUri = new Map<string, Set<Subscriber>>();

  constructor(private readonly catalog: Catalog, private readonly connections: ReadonlyMap<string, Connection>, private readonly log: Logger) {}

  /** Who is subscribed to `publicUri` (for `resources/updated`). */
  subscribers(publicUri: string): Iterable<Subscriber> {
    return this.byUri.get(publicUri) ?? [];
  }

  async subscribe(subscriber: Subscriber, conn: Connection, uri: string, publicUri: string): Promise<void> {
    let subscribers = this.byUri.get(publicUri);
    if (subscribers === undefined || subscribers.size === 0) await conn.request('resources/subscribe', { uri });
    if (subscribers === undefined) this.byUri.set(publicUri, (subscribers = new Set()));
    subscribers.add(subscriber);
  }

  async unsubscribe(subscriber: Subscriber, conn: Connection, uri: string, publicUri: string): Promise<void> {
    const subscribers = this.byUri.get(publicUri);
    if (subscribers?.delete(subscriber) !== true || subscribers.size > 0) return;
    this.byUri.delete(publicUri);
    await conn.request('resources/unsubscribe', { uri });
  }

  /** A session ended: what only it held is unsubscribed on the server. */
  drop(subscriber: Subscriber): void {
    for (const [publicUri, subscribers] of this.byUri) {
      if (!subscribers.delete(subscriber) || subscribers.size > 0) continue;
      this.byUri.delete(publicUri);
      const route = this.catalog.resolveUri(publicUri);
      const conn = route === undefined ? undefined : this.connections.get(route.server);
      if (conn?.state === 'ready') conn.request('resources/unsubscribe', { uri: route!.uri }).catch(() => {});
    }
  }

  /** `conn` has a new session: subscribe again to what agents still hold there. */
  renew(conn: Connection): void {
    for (const [publicUri, subscribers] of this.byUri) {
      const route = this.catalog.resolveUri(publicUri);
      if (subscribers.size === 0 || route?.server !== conn.name) continue;
      conn.request('resources/subscribe', { uri: route.uri }).catch((err: unknown) => this.log.warn('could not renew a resource subscription after reconnecting', { server: conn.name, uri: publicUri, error: err }));
    }
  }

  clear(): void {
    this.byUri.clear();
  }
}

/**
 * Resource subscriptions on pooled connections (per-agent and per-session servers): each
 * connection is one agent's (or one agent session's), so a URI is subscribed on that connection
 * while one of its owner's sessions holds it, and its updates go to those sessions only. A pooled
 * connection that dies is not reconnected in place (its state is gone), so its subscriptions are
 * forgotten with it rather than renewed.
 */
export class OwnSubscriptions<Subscriber> {
  /** Pooled connection → server-side URI → the sessions that hold it. */
  private readonly byConn = new Map<Connection, Map<string, Set<Subscriber>>>();

  constructor(private readonly log: Logger) {}

  /** Who holds `uri` on `conn` (for `resources/updated` from it). */
  holders(conn: Connection, uri: string): Iterable<Subscriber> {
    return this.byConn.get(conn)?.get(uri) ?? [];
  }

  async subscribe(subscriber: Subscriber, conn: Connection, uri: string): Promise<void> {
    const held = this.byConn.get(conn)?.get(uri);
    if (held === undefined || held.size === 0) await conn.request('resources/subscribe', { uri });
    let uris = this.byConn.get(conn);
    if (uris === undefined) this.byConn.set(conn, (uris = new Map<string, Set<Subscriber>>()));
    let subscribers = uris.get(uri);
    if (subscribers === undefined) uris.set(uri, (subscribers = new Set()));
    subscribers.add(subscriber);
  }

  async unsubscribe(subscriber: Subscriber, conn: Connection, uri: string): Promise<void> {
    const uris = this.byConn.get(conn);
    const subscribers = uris?.get(uri);
    if (subscribers?.delete(subscriber) !== true || subscribers.size > 0) return;
    uris!.delete(uri);
    if (uris!.size === 0) this.byConn.delete(conn);
    await conn.request('resources/unsubscribe', { uri });
  }

  /** A session ended: what only it held is unsubscribed on its connections. */
  drop(subscriber: Subscriber): void {
    for (const [conn, uris] of this.byConn) {
      for (const [uri, subscribers] of uris) {
        if (!subscribers.delete(subscriber) || subscribers.size > 0) continue;
        uris.delete(uri);
        if (conn.state === 'ready') conn.request('resources/unsubscribe', { uri }).catch((err: unknown) => this.log.debug('could not unsubscribe on a pooled connection', { server: conn.name, error: err }));
      }
      if (uris.size === 0) this.byConn.delete(conn);
    }
  }

  /** A pooled connection closed or died: its subscriptions went with its session. */
  forget(conn: Connection): void {
    this.byConn.delete(conn);
  }

  clear(): void {
    this.byConn.clear();
  }
}
