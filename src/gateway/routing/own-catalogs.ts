// Per-agent and per-session catalogs: what a pooled connection lists belongs to its
// owners only. Each pool scope (an agent identity, an agent session) whose pooled connections have listed their
// servers gets a small Catalog of its own holding only those servers' parts, named as the gateway's
// catalog names them (same prefixes, order and separator). A session's view is the gateway's catalog
// with those servers' parts replaced by its scopes' (agent-views.ts `ShownViews`), and the router
// looks a name up the same way (`seenEntry`), so one agent's tools are never shown to, nor
// callable by, another. Until a session's pooled connection has listed its server, the session sees
// the catalog connection's lists; sessions with no own catalog take the shared path unchanged.

import { Catalog, type CatalogOptions, type HeldInfo, type ServerNaming } from '../../catalog/catalog.js';
import type { ListKind, ServerLists } from '../../servers/lists.js';
import { scopeOf, type PoolScope, type ScopeOwner } from '../../servers/pool.js';

/** One scope's catalog, by the scope's key. */
interface OwnCatalog {
  readonly scope: PoolScope;
  readonly catalog: Catalog;
}

export class OwnCatalogs {
  private readonly byScope = new Map<string, OwnCatalog>();

  constructor(
    private servers: readonly ServerNaming[],
    private readonly options: CatalogOptions,
  ) {}

  /** How many scopes have an own catalog: a field, so a call path with no pooled servers reads one number. */
  size = 0;

  /**
   * The own catalogs of a session — its agent's (per-agent servers) and its own (per-session
   * servers, and per-agent ones for an agent with no identity) — or undefined when it has none.
   */
  of(session: ScopeOwner): readonly Catalog[] | undefined {
    if (this.byScope.size === 0) return undefined;
    const mine = this.byScope.get(scopeOf(session, 'per-session').key)?.catalog;
    const agents = session.identified ? this.byScope.get(scopeOf(session, 'per-agent').key)?.catalog : undefined;
    if (agents === undefined) return mine === undefined ? undefined : [mine];
    return mine === undefined ? [agents] : [agents, mine];
  }

  /** The catalog of one scope, if it has one. */
  get(scope: PoolScope): Catalog | undefined {
    return this.byScope.get(scope.key)?.catalog;
  }

  /** Replaces lists of one server in one scope's catalog; returns the kinds that changed. */
  set(scope: PoolScope, server: string, lists: Partial<ServerLists>, held?: ReadonlyMap<string, HeldInfo>): ListKind[] {
    let catalog = this.byScope.get(scope.key)?.catalog;
    if (catalog === undefined) {
      catalog = new Catalog(this.servers, this.options);
      this.byScope.set(scope.key, { scope, catalog });
      this.size = this.byScope.size;
    }
    return catalog.set(server, lists, held);
  }

  /** The scope's pooled connection to `server` is gone: its view of the server goes back to the shared one. */
  remove(scope: PoolScope, server: string): ListKind[] {
    const catalog = this.byScope.get(scope.key)?.catalog;
    if (catalog === undefined || !catalog.lists(server)) return [];
    catalog.remove(server);
    if (catalog.listedServers().length === 0) {
      this.byScope.delete(scope.key);
      this.size = this.byScope.size;
    }
    // Whatever the scope's view held of the server, the shared view may differ: every kind is re-checked.
    return ['tools', 'resources', 'resourceTemplates', 'prompts'];
  }

  /** A reload: prefixes and the order may change, as in the gateway's catalog. */
  setServers(servers: readonly ServerNaming[]): void {
    this.servers = servers;
    for (const { catalog } of this.byScope.values()) catalog.setServers(servers);
  }

  /** Every scope's catalog. */
  entries(): IterableIterator<OwnCatalog> {
    return this.byScope.values();
  }

  clear(): void {
    this.byScope.clear();
    this.size = 0;
  }
}

/** Whether one of the session's own catalogs lists `server` (then the shared view of it is not the session's). */
export function ownsServer(own: readonly Catalog[], server: string): boolean {
  for (const catalog of own) if (catalog.lists(server)) return true;
  return false;
}

/**
 * An entry by its public name as a session sees it — the shared catalog with its scopes' own
 * catalogs (`own`, undefined when it has none) replacing their servers' part: the own catalogs
 * first, then the shared one unless an own catalog lists that entry's server. `find` picks the kind
 * (`(c) => c.tool(name)`, `(c) => c.prompt(name)`).
 */
export function seenEntry<E extends { readonly server: string }>(
  base: Catalog,
  own: readonly Catalog[] | undefined,
  find: (catalog: Catalog) => E | undefined,
): E | undefined {
  if (own === undefined) return find(base);
  for (const catalog of own) {
    const entry = find(catalog);
    if (entry !== undefined) return entry;
  }
  const entry = find(base);
  return entry === undefined || ownsServer(own, entry.server) ? undefined : entry;
}
