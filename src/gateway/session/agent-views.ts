// What one agent may see, under the rules: each list filtered by the same pure functions that decide
// calls (rules/decide.ts), so what an agent is shown and what it may call can never disagree. Encoded
// once per (catalog version, rules snapshot, agent) as bytes, and those bytes are what every answer
// writes until either changes (an agent under open rules shares the catalog's own bytes). A session with
// catalogs of its own (a per-agent or per-session server's pooled connections, own-catalogs.ts) sees
// those servers as its own connections list them, encoded once per version of each and kept per session.

import type { Catalog, ItemRef } from '../../catalog/catalog.js';
import { decideServer, decideTool, matchedGrants, type Claims } from '../../rules/decide.js';
import type { Rules } from '../../rules/load.js';
import type { ListKind } from '../../servers/lists.js';
import { sameBytes } from '../../wire/encoded.js';
import type { CompiledView } from '../../rules/views.js';
import { viewList, type SeenItem } from '../../policy/curated-views.js';
import { ownsServer } from '../routing/own-catalogs.js';

interface Cached {
  catalogVersion: number;
  rules: Rules;
  lists: Partial<Record<ListKind, readonly Buffer[]>>;
}

/** A bound on remembered agents: views are cheap to rebuild, so old ones are simply dropped. */
const MAX_CACHED_AGENTS = 1024;

export class AgentViews {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly catalog: Catalog,
    private readonly rules: () => Rules,
  ) {}

  /**
   * `{"tools":[…]}` (or resources, resourceTemplates, prompts) as this agent may see it, in UTF-8; `claims`,
   * those of its token, for the rules' grants (the view is cached per agent and grants met).
   */
  encoded(agent: string, kind: ListKind, claims?: Claims): readonly Buffer[] {
    const rules = this.rules();
    if (rules.open) return this.catalog.encodedList(kind);
    const granted = matchedGrants(rules, claims);
    const key = granted.length === 0 ? agent : `${agent}\u0000${granted.join('\u0000')}`;
    let entry = this.cache.get(key);
    if (entry === undefined || entry.catalogVersion !== this.catalog.version || entry.rules !== rules) {
      if (entry === undefined && this.cache.size >= MAX_CACHED_AGENTS) this.cache.clear();
      entry = { catalogVersion: this.catalog.version, rules, lists: {} };
      this.cache.set(key, entry);
    }
    let bytes = entry.lists[kind];
    if (bytes === undefined) {
      const keep =
        kind === 'tools'
          ? (ref: { server: string; original?: string }) => decideTool(rules, agent, ref.server, ref.original!, claims).allowed
          : (ref: { server: string }) => decideServer(rules, agent, ref.server, claims).allowed;
      bytes = [Buffer.from(JSON.stringify({ [kind]: this.catalog.filteredList(kind, keep) }))];
      entry.lists[kind] = bytes;
    }
    return bytes;
  }

  /**
   * The agent's view with the servers its own catalogs list (a per-agent or per-session server's
   * pooled connections, own-catalogs.ts) taken from them instead of the shared catalog.
   */
  encodedWith(agent: string, kind: ListKind, own: readonly Catalog[], claims?: Claims): readonly Buffer[] {
    return [Buffer.from(JSON.stringify({ [kind]: this.items(agent, kind, own, claims).map((i) => i.item) }))];
  }

  /** The agent's view as a curated view presents it (curated-views.ts); `own` as for `encodedWith`. */
  encodedOn(
    view: CompiledView,
    kind: ListKind,
    seer: { readonly agent: string; readonly own: readonly Catalog[]; readonly claims?: Claims | undefined },
  ): readonly Buffer[] {
    const { agent, own, claims } = seer;
    return [Buffer.from(JSON.stringify({ [kind]: viewList(view, kind, this.items(agent, kind, own, claims)) }))];
  }

  /** What the rules let the agent see of one list, the shared catalog's with its own catalogs' servers taken from them. */
  private items(agent: string, kind: ListKind, own: readonly Catalog[], claims: Claims | undefined): SeenItem[] {
    const rules = this.rules();
    const allowed = rules.open
      ? undefined
      : kind === 'tools'
        ? (ref: ItemRef) => decideTool(rules, agent, ref.server, ref.original!, claims).allowed
        : (ref: ItemRef) => decideServer(rules, agent, ref.server, claims).allowed;
    const items = this.catalog.filteredItems(kind, (ref) => !ownsServer(own, ref.server) && (allowed === undefined || allowed(ref)));
    if (own.length === 0) return items;
    for (const catalog of own) items.push(...catalog.filteredItems(kind, allowed ?? (() => true)));
    // In server order, as the catalog lists them (a stable sort keeps each server's own order), so an
    // own view equal to the shared one encodes to the same text and announces nothing.
    items.sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
    return items;
  }

  /** A key that changes whenever `encodedWith` may answer differently for the same agent and kind. */
  ownVersion(own: readonly Catalog[], claims: Claims | undefined): OwnVersion {
    return { base: this.catalog.version, rules: this.rules(), claims, own, versions: own.map((c) => c.version) };
  }
}

/** The versions an own view was encoded at (the catalogs' identities and versions, the rules snapshot). */
interface OwnVersion {
  base: number;
  rules: Rules;
  claims: Claims | undefined;
  own: readonly Catalog[];
  versions: number[];
}

function sameVersion(a: OwnVersion, b: OwnVersion): boolean {
  return (
    a.base === b.base &&
    a.rules === b.rules &&
    a.claims === b.claims &&
    a.own.length === b.own.length &&
    a.own.every((c, i) => c === b.own[i] && a.versions[i] === b.versions[i])
  );
}

/** What one session last showed its agent of each list, so a change is announced only if it differs. */
export class ShownViews {
  private readonly last = new Map<ListKind, readonly Buffer[]>();
  /** The session's own view, encoded per kind, and the versions it was encoded at. */
  private ownCache: { version: OwnVersion; lists: Partial<Record<ListKind, readonly Buffer[]>> } | undefined;

  /** The session's curated view, encoded per kind, and the versions it was encoded at. */
  private viewCache: { view: CompiledView; version: OwnVersion; lists: Partial<Record<ListKind, readonly Buffer[]>> } | undefined;

  /** The session's own catalogs (undefined while it has none: the shared view, cached per agent). */
  private readonly own: () => readonly Catalog[] | undefined;
  /** The claims of the agent's token, for the rules' grants. */
  private readonly claims: () => Claims | undefined;
  /** The curated view the session is on (undefined: none, the agent's whole view). */
  private readonly view: () => CompiledView | undefined;
  /** The mode's own tools list (search mode's, search-session.ts); undefined: the ordinary view. */
  private readonly searchTools: () => readonly Buffer[] | undefined;

  constructor(
    private readonly views: AgentViews,
    private readonly agent: string,
    session: {
      readonly own?: () => readonly Catalog[] | undefined;
      readonly claims?: () => Claims | undefined;
      readonly view?: () => CompiledView | undefined;
      readonly searchTools?: () => readonly Buffer[] | undefined;
    } = {},
  ) {
    const none = (): undefined => undefined;
    this.own = session.own ?? none;
    this.claims = session.claims ?? none;
    this.view = session.view ?? none;
    this.searchTools = session.searchTools ?? none;
  }

  /** The list to send now (remembered as shown). */
  serve(kind: ListKind): readonly Buffer[] {
    const bytes = this.current(kind);
    this.last.set(kind, bytes);
    return bytes;
  }

  /** Whether the agent's view differs from what it was last shown (and remember the new one). */
  changed(kind: ListKind): boolean {
    const bytes = this.current(kind);
    const last = this.last.get(kind);
    this.last.set(kind, bytes);
    return last === undefined || !sameBytes(last, bytes);
  }

  private current(kind: ListKind): readonly Buffer[] {
    if (kind === 'tools') {
      const search = this.searchTools();
      if (search !== undefined) return search;
    }
    return this.ordinary(kind);
  }

  /** The agent's own view of a list (its curated view's, or the catalog under its rules), whatever its mode lists. */
  ordinary(kind: ListKind): readonly Buffer[] {
    const own = this.own();
    const view = this.view();
    if (view !== undefined) {
      // The rules snapshot holds the view, so a reload that changes it changes the version too.
      const version = this.views.ownVersion(own ?? [], this.claims());
      if (this.viewCache === undefined || this.viewCache.view !== view || !sameVersion(this.viewCache.version, version))
        this.viewCache = { view, version, lists: {} };
      return (this.viewCache.lists[kind] ??= this.views.encodedOn(view, kind, {
        agent: this.agent,
        own: own ?? [],
        claims: this.claims(),
      }));
    }
    if (own === undefined) {
      this.ownCache = undefined;
      return this.views.encoded(this.agent, kind, this.claims());
    }
    const claims = this.claims();
    const version = this.views.ownVersion(own, claims);
    if (this.ownCache === undefined || !sameVersion(this.ownCache.version, version)) this.ownCache = { version, lists: {} };
    return (this.ownCache.lists[kind] ??= this.views.encodedWith(this.agent, kind, own, claims));
  }
}
