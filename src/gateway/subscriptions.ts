// Resource subscriptions across agents: each namespaced URI is subscribed on its server once, while
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
