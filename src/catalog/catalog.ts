// The catalog: every server's tools, resources, templates and prompts merged under namespaced names.
// Each server's part is replaced whole (on connect and on a debounced refresh); the merged views and
// the name → server routes are rebuilt then and cached, so listing and routing cost a map lookup, and
// a rebuild lays out again only the server that changed (and those whose names it affects). When two
// servers expose the same name or URI, the one listed later in .mcp.json has that item withheld, with
// one warning naming both servers and the fix (never a silent shadowing). A server's results name
// its URIs too: their rewrite into the public namespace is at the end of this file. What a rebuild
// keeps: the room's README.

import { createHash } from 'node:crypto';
import type { Tool } from '../wire/protocol.js';
import type { ListKind, ServerLists } from '../servers/lists.js';
import { nameKey, namespaceUri, sanitize, splitUri, DEFAULT_SEPARATOR } from './names.js';
import { NameOwners, type WantedNames } from './name-owners.js';
import { ItemViews, joinLayouts, layOut, listPieces, type Layout } from './layout.js';
import { PublicNames } from './public-names.js';
import { renameUiPointers } from './ui-pointers.js';
import type { CatalogCounts, CatalogOptions, HeldInfo, ItemRef, PromptEntry, ServerNaming, ToolEntry } from './types.js';

export type { CatalogOptions, HeldInfo, ItemRef, ServerNaming, ToolEntry } from './types.js';

type Part = Partial<ServerLists>;

export class Catalog {
  private readonly parts = new Map<string, Part>();
  private readonly held = new Map<string, ReadonlyMap<string, HeldInfo>>();
  private readonly separator: string;
  /**
   * sha256 of each server's list of each kind, to tell a real change from a repeat (not the JSON
   * itself); until a second list of that kind arrives, the first list itself (the part holds it
   * anyway): its digest is taken only when there is something to compare it with, not at start-up.
   */
  private readonly fingerprints = new Map<string, string | readonly unknown[]>();
  /** Servers' keys, order and prefixes, and their tools' and prompts' public names. */
  private readonly names: PublicNames;
  /** The same objects as `names`' (routing reads them directly). */
  private readonly keyOf: ReadonlyMap<string, string>;
  private readonly serverOfKey: ReadonlyMap<string, string>;
  /** Servers with `"prefix": false`. */
  private readonly unprefixed: ReadonlySet<string>;
  /** Unprefixed servers' resource URIs and templates → server, to route their own URIs. */
  private uriOwner = new Map<string, string>();
  private templateOwners: { server: string; match: RegExp }[] = [];
  private readonly onWarning: ((warning: string) => void) | undefined;
  private warned = new Set<string>();
  private toolsByName = new Map<string, ToolEntry>();
  private publicNames = new Map<string, string>();
  private promptsByName = new Map<string, PromptEntry>();
  /** Each list's result as bytes (`{"tools":[…]}`, in pieces), made once per change and written as is by every answer. */
  private readonly encoded = new Map<ListKind, readonly Buffer[]>();
  /** Each item's view (renamed and sanitized) by the server's own item object, while its public name stays. */
  private readonly itemViews: ItemViews;
  /** Each server's share of the catalog, rebuilt only when that server, or who owns its names, changes. */
  private readonly layouts = new Map<string, Layout>();
  /** Per kind, each public name → the servers whose items want it: the earliest keeps it. */
  private readonly claimants: NameOwners;
  /** Per kind, the servers' encoded slices in list order (empty slices left out). */
  private listFragments: Record<ListKind, Buffer[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  /** Which server (and original name) each item of the views came from, index for index. */
  private refs: Record<ListKind, ItemRef[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  /** Bumped on every rebuild: caches of per-agent views compare it. */
  version = 0;
  private views: { tools: unknown[]; resources: unknown[]; resourceTemplates: unknown[]; prompts: unknown[] } = {
    tools: [],
    resources: [],
    resourceTemplates: [],
    prompts: [],
  };
  /** Names that had to be sanitized, shortened or de-collided, for the log and `check`. */
  warnings: string[] = [];

  constructor(servers: readonly ServerNaming[], options: CatalogOptions | string = {}) {
    const opts = typeof options === 'string' ? { separator: options } : options;
    this.separator = opts.separator ?? DEFAULT_SEPARATOR;
    this.itemViews = new ItemViews(opts.sanitize ?? true);
    this.onWarning = opts.onWarning;
    this.names = new PublicNames(this.separator);
    this.keyOf = this.names.keyOf;
    this.serverOfKey = this.names.serverOfKey;
    this.unprefixed = this.names.unprefixed;
    this.claimants = new NameOwners(this.names.byOrder);
    this.setServers(servers);
  }

  /** Sets the configured servers (their keys, prefixes and order: `PublicNames.setServers`) and lays every server out again. */
  setServers(servers: readonly ServerNaming[]): void {
    this.names.setServers(servers);
    // Keys, prefixes and order may all have changed: every server is laid out again.
    this.claimants.clear();
    const all = new Set([...this.parts.keys(), ...this.layouts.keys()]);
    this.layouts.clear();
    this.toolsByName.clear();
    this.promptsByName.clear();
    this.publicNames.clear();
    this.uriOwner.clear();
    this.rebuild([...all]);
  }

  /**
   * Replaces the given kinds of one server's part, and (pins) which of its tools are held, in one
   * step so agents never see an unreviewed tool; returns the kinds whose visible content changed.
   */
  set(server: string, lists: Part, held?: ReadonlyMap<string, HeldInfo>): ListKind[] {
    const part = this.parts.get(server) ?? {};
    const changed: ListKind[] = [];
    for (const kind of Object.keys(lists) as ListKind[]) {
      const items = lists[kind];
      const fkey = `${server}\u0000${kind}`;
      const before = this.fingerprints.get(fkey);
      const list = items ?? [];
      if (before !== undefined) {
        if (before === list) continue;
        const fingerprint = fingerprintOf(list);
        if ((typeof before === 'string' ? before : fingerprintOf(before)) === fingerprint) {
          this.fingerprints.set(fkey, fingerprint);
          continue;
        }
        this.fingerprints.set(fkey, fingerprint);
      } else {
        // A server's first list: nothing to compare with yet, so its fingerprint waits for its next one.
        this.fingerprints.set(fkey, list);
      }
      (part as Record<ListKind, unknown>)[kind] = items;
      changed.push(kind);
    }
    this.parts.set(server, part);
    const heldChanged = held !== undefined && this.replaceHeld(server, held);
    if (heldChanged && !changed.includes('tools')) changed.push('tools');
    if (changed.length > 0) this.rebuild([server]);
    return changed;
  }

  /**
   * Sets which of a server's tools are held back (pins). Returns true if what agents see changed.
   * Held tools keep their public names, so approving one later does not rename anything.
   */
  setHeld(server: string, held: ReadonlyMap<string, HeldInfo>): boolean {
    if (!this.replaceHeld(server, held)) return false;
    this.rebuild([server]);
    return true;
  }

  /** Records `held` for the server; true if that changes anything (which tools, or why). */
  private replaceHeld(server: string, held: ReadonlyMap<string, HeldInfo>): boolean {
    const before = this.held.get(server);
    if ((before?.size ?? 0) === held.size && [...held].every(([name, info]) => before?.get(name)?.digest === info.digest)) return false;
    if (held.size === 0) this.held.delete(server);
    else this.held.set(server, held);
    return true;
  }

  /** The server's held tools, by its own names. */
  heldTools(server: string): ReadonlyMap<string, HeldInfo> {
    return this.held.get(server) ?? new Map();
  }

  heldCount(server: string): number {
    return this.held.get(server)?.size ?? 0;
  }

  /** The server's tools as it lists them (held ones included), for re-reviewing them against pins. */
  serverTools(server: string): readonly Tool[] {
    return this.parts.get(server)?.tools ?? [];
  }

  /** Withdraws a server's whole part (it failed or was removed); returns the kinds that had content. */
  remove(server: string): ListKind[] {
    const part = this.parts.get(server);
    if (part === undefined) return [];
    this.parts.delete(server);
    this.held.delete(server);
    for (const kind of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) this.fingerprints.delete(`${server}\u0000${kind}`);
    const had = (Object.keys(part) as ListKind[]).filter((kind) => (part[kind]?.length ?? 0) > 0);
    this.rebuild([server]);
    return had;
  }

  tool(publicName: string): ToolEntry | undefined {
    return this.toolsByName.get(publicName);
  }

  /**
   * A tool as agents are shown it in the list (renamed, sanitized: the very view the list holds), or
   * undefined when it is not listed (unknown, withheld, held by pins). For lists made of a few tools.
   */
  toolView(publicName: string): unknown {
    const entry = this.toolsByName.get(publicName);
    if (entry === undefined || entry.held !== undefined) return undefined;
    return this.itemViews.viewOf(
      entry.tool,
      'name',
      publicName,
      true,
      this.unprefixed.has(entry.server) ? undefined : this.key(entry.server),
    );
  }

  prompt(publicName: string): PromptEntry | undefined {
    return this.promptsByName.get(publicName);
  }

  /**
   * Routes a URI to its server and the server's own URI: an unprefixed server's listed resource; a
   * namespaced one (`mcpgate://PREFIX/…`, `ui://PREFIX/…`) by its prefix; one matching an unprefixed server's templates, then
   * the only unprefixed server if there is just one (servers may serve URIs they do not list).
   */
  resolveUri(uri: string): { server: string; uri: string } | undefined {
    // An unprefixed server's listed `ui://KEY/…` is its own (the clash check withheld any prefixed twin).
    const listed = this.unprefixed.size === 0 ? undefined : this.uriOwner.get(uri);
    if (listed !== undefined) return { server: listed, uri };
    const split = splitUri(uri);
    const server = split === undefined ? undefined : this.serverOfKey.get(split.serverKey);
    if (server !== undefined) return { server, uri: split!.uri };
    if (this.unprefixed.size === 0) return undefined;
    const owner = this.templateOwners.find((t) => t.match.test(uri))?.server;
    if (owner !== undefined) return { server: owner, uri };
    if (this.unprefixed.size === 1) return { server: this.unprefixed.values().next().value!, uri };
    return undefined;
  }

  publicUri(server: string, uri: string): string {
    if (this.unprefixed.has(server)) return uri;
    return namespaceUri(this.keyOf.get(server) ?? sanitize(server), uri);
  }

  /** False for a server with `"prefix": false` (its items keep their own names and URIs). */
  isPrefixed(server: string): boolean {
    return !this.unprefixed.has(server);
  }

  /** The public name a server's tool has or would have (it need not exist). */
  nameFor(server: string, original: string): string {
    const known = this.publicName(server, original);
    if (known !== undefined) return known;
    return this.unprefixed.has(server) ? original : `${this.names.key(server)}${this.separator}${original}`;
  }

  listTools(): readonly unknown[] {
    return this.views.tools;
  }
  listResources(): readonly unknown[] {
    return this.views.resources;
  }
  listResourceTemplates(): readonly unknown[] {
    return this.views.resourceTemplates;
  }
  listPrompts(): readonly unknown[] {
    return this.views.prompts;
  }

  /**
   * The list result for one kind (`{"tools":[…]}`) as UTF-8 bytes in pieces: the servers' slices,
   * each encoded when that server's items changed, between the brackets. A large catalog is
   * serialized piece by piece when it changes, never on a list request nor whole on one server's
   * change, and not even copied into one buffer: every answer writes these same pieces in one
   * `writev` (wire/encoded.ts).
   */
  encodedList(kind: ListKind): readonly Buffer[] {
    let pieces = this.encoded.get(kind);
    if (pieces === undefined) {
      pieces = listPieces(kind, this.listFragments[kind]);
      this.encoded.set(kind, pieces);
    }
    return pieces;
  }

  /** What agents see of the server (held tools excluded). */
  counts(server: string): CatalogCounts {
    const part = this.parts.get(server) ?? {};
    return {
      tools: (part.tools?.length ?? 0) - this.heldCount(server),
      resources: part.resources?.length ?? 0,
      resourceTemplates: part.resourceTemplates?.length ?? 0,
      prompts: part.prompts?.length ?? 0,
    };
  }

  /**
   * Lays out again the servers in `changed` (their lists, held tools or naming changed, or they
   * were removed) and those whose public names or claims they affect; every other server's layout —
   * names, views, routes, encoded slices — is kept. The merged views are then joined from the
   * layouts (pointers, not items). The result equals laying out every server from scratch
   * (test/unit/catalog/catalog-incremental.test.ts).
   */
  private rebuild(changed: readonly string[]): void {
    // 1. Names: the changed servers' pairs replaced in the books; servers whose names moved follow.
    const dirty = this.names.update(changed, this.parts);

    // 2. Claims: who wants which public name; a server that gains or loses one is laid out again.
    const claims = new Map<string, WantedNames | undefined>();
    for (const server of dirty)
      claims.set(server, this.parts.has(server) ? this.names.claimsOf(server, this.parts.get(server)!) : undefined);
    this.claimants.reclaim(dirty, claims, this.layouts, this.parts);

    // 3. Layouts of the dirty servers, and their routes in the shared maps.
    for (const server of dirty) {
      const old = this.layouts.get(server);
      if (old === undefined) continue;
      for (const [name, entry] of old.tools) {
        if (this.toolsByName.get(name) === entry) this.toolsByName.delete(name);
        this.publicNames.delete(nameKey(server, entry.original));
      }
      for (const [name, entry] of old.prompts) if (this.promptsByName.get(name) === entry) this.promptsByName.delete(name);
      for (const uri of old.uris) if (this.uriOwner.get(uri) === server) this.uriOwner.delete(uri);
    }
    for (const server of dirty) {
      if (!this.parts.has(server)) {
        this.layouts.delete(server);
        continue;
      }
      const part = this.parts.get(server)!;
      const layout = layOut(server, part, claims.get(server) ?? this.names.claimsOf(server, part), this.layouts.get(server), {
        unprefixed: this.unprefixed.has(server),
        key: this.names.key(server),
        held: this.held.get(server),
        claimants: this.claimants,
        views: this.itemViews,
      });
      this.layouts.set(server, layout);
      for (const [name, entry] of layout.tools) {
        this.toolsByName.set(name, entry);
        this.publicNames.set(nameKey(server, entry.original), name);
      }
      for (const [name, entry] of layout.prompts) this.promptsByName.set(name, entry);
      for (const uri of layout.uris) this.uriOwner.set(uri, server);
    }

    // 4. The merged lists, joined from the layouts in server order.
    const { views, refs, listFragments, templateOwners, clashes, duplicates } = joinLayouts(
      this.layouts,
      this.names.order,
      this.names.byOrder,
    );
    this.templateOwners = templateOwners;
    this.views = views;
    this.refs = refs;
    this.listFragments = listFragments;
    this.version += 1;
    this.encoded.clear();
    const warnings = [...this.names.warnings, ...clashes, ...duplicates];
    this.warnings = warnings;
    // Each warning once, when it appears (again only if it went away and came back).
    const now = new Set(warnings);
    if (this.onWarning !== undefined) for (const warning of now) if (!this.warned.has(warning)) this.onWarning(warning);
    this.warned = now;
  }

  /** The items of one kind that `keep` accepts (per-agent views under rules). */
  filteredList(kind: ListKind, keep: (ref: ItemRef) => boolean): unknown[] {
    const items = this.views[kind];
    const refs = this.refs[kind];
    const out: unknown[] = [];
    for (let i = 0; i < items.length; i++) if (keep(refs[i]!)) out.push(items[i]);
    return out;
  }

  /** As `filteredList`, each item with the server it came from (to merge views in server order) and its own name there. */
  filteredItems(kind: ListKind, keep: (ref: ItemRef) => boolean): { server: string; original?: string; item: unknown }[] {
    const items = this.views[kind];
    const refs = this.refs[kind];
    const out: { server: string; original?: string; item: unknown }[] = [];
    for (let i = 0; i < items.length; i++)
      if (keep(refs[i]!)) out.push({ server: refs[i]!.server, original: refs[i]!.original, item: items[i] });
    return out;
  }

  /**
   * Which prefixed server a public name belongs to by its prefix, whether or not such a tool exists,
   * so a denial can be decided (and reported) the same way for existing and made-up names. A name
   * of an unprefixed server carries no server: only an existing item's entry tells it.
   */
  serverOfName(publicName: string): { server: string; rest: string } | undefined {
    let best: { server: string; rest: string } | undefined;
    let bestLength = -1;
    for (const [key, server] of this.serverOfKey) {
      const prefix = `${key}${this.separator}`;
      if (publicName.startsWith(prefix) && prefix.length > bestLength) {
        best = { server, rest: publicName.slice(prefix.length) };
        bestLength = prefix.length;
      }
    }
    return best;
  }

  /** The public name of a server's tool, if it is in the catalog (held or not). */
  publicName(server: string, original: string): string | undefined {
    return this.publicNames.get(nameKey(server, original));
  }

  /** Whether the catalog holds a part of this server (listed, even if empty). */
  lists(server: string): boolean {
    return this.parts.has(server);
  }

  /** The servers the catalog holds a part of. */
  listedServers(): string[] {
    return [...this.parts.keys()];
  }

  /** Every configured server name (whether or not it is connected). */
  get serverNames(): string[] {
    return [...this.names.order.keys()];
  }

  private key(server: string): string {
    return this.keyOf.get(server) ?? sanitize(server);
  }
}

/**
 * A digest of a list, item by item: keeping the list's JSON text as its fingerprint held a second copy
 * of every server's catalog for the gateway's lifetime, and one stringify of the
 * whole list built a string as large as the list.
 */
function fingerprintOf(items: readonly unknown[]): string {
  const hash = createHash('sha256');
  for (const item of items) hash.update(JSON.stringify(item)).update('\n');
  return `${items.length}:${hash.digest('base64')}`;
}

// ── a server's results in the catalog's namespace ───────────────────────────────────────────────────
// Results pass through unchanged except for names: the URIs inside resource links and embedded
// resources, and a call result's MCP Apps pointer to its UI resource (`_meta.ui.resourceUri`,
// `_meta["ui/resourceUri"]`), are namespaced so the agent can read them back through the gateway. These helpers edit a
// parsed result in place and say whether they changed anything (if not, the raw line is relayed).

type Namespacer = (uri: string) => string;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** One content block (tool result item, prompt message content). */
function rewriteBlock(block: unknown, ns: Namespacer): boolean {
  if (!isRecord(block)) return false;
  if (block.type === 'resource_link' && typeof block.uri === 'string') {
    block.uri = ns(block.uri);
    return true;
  }
  if (block.type === 'resource' && isRecord(block.resource) && typeof block.resource.uri === 'string') {
    block.resource.uri = ns(block.resource.uri);
    return true;
  }
  return false;
}

/** tools/call: `content[]`. Most results hold only text, so this is a short scan that changes nothing. */
export function rewriteToolResult(result: Record<string, unknown>, ns: Namespacer): boolean {
  const meta = result._meta === undefined ? undefined : renameUiPointers(result._meta, ns);
  if (meta !== undefined) result._meta = meta;
  let changed = meta !== undefined;
  const content = result.content;
  if (!Array.isArray(content)) return changed;
  for (const block of content) changed = rewriteBlock(block, ns) || changed;
  return changed;
}

/** prompts/get: each message has one content block. */
export function rewritePromptResult(result: Record<string, unknown>, ns: Namespacer): boolean {
  const messages = result.messages;
  if (!Array.isArray(messages)) return false;
  let changed = false;
  for (const message of messages) if (isRecord(message)) changed = rewriteBlock(message.content, ns) || changed;
  return changed;
}

/** resources/read: every item of `contents[]` names its URI. */
export function rewriteReadResult(result: Record<string, unknown>, ns: Namespacer): boolean {
  const contents = result.contents;
  if (!Array.isArray(contents)) return false;
  let changed = false;
  for (const item of contents) {
    if (isRecord(item) && typeof item.uri === 'string') {
      item.uri = ns(item.uri);
      changed = true;
    }
  }
  return changed;
}
