// The catalog: every server's tools, resources, templates and prompts merged under namespaced names.
// Each server's part is replaced whole (on connect and on a debounced refresh); the merged views and
// the name → server routes are rebuilt then and cached, so listing and routing cost a map lookup.
// A rebuild lays out again only the server that changed (and servers whose names or clashes it
// affects): each server's layout keeps its names, views, routes and encoded slices, an item's view
// (renamed, sanitized) is kept while the server still lists the same object under the same public
// name, and names are kept by `NameBook`, so one server's list_changed costs that server's part.
// A server may have its own prefix or none (`"prefix": false`: its items keep their own names and
// URIs); when two servers expose the same name or URI, the one listed later in .mcp.json has that
// item withheld, with one warning naming both servers and the fix (never a silent shadowing).

import { createHash } from 'node:crypto';
import type { Tool } from '../wire/protocol.js';
import type { ListKind, ServerLists } from '../servers/lists.js';
import { sanitizeTool } from '../wire/sanitize.js';
import { nameKey, namespaceUri, sanitize, splitUri, NameBook, DEFAULT_SEPARATOR } from './names.js';

/** Why a tool is held back until approved (pins/review.ts produces these; the catalog only keeps them). */
export interface HeldInfo {
  readonly digest: string;
  readonly changes: readonly string[];
}

export interface ToolEntry {
  readonly server: string;
  /** The tool's name on its server. */
  readonly original: string;
  readonly tool: Tool;
  /** Set when the tool's definition is not approved (pins): hidden from lists, calls refused. */
  readonly held?: HeldInfo;
}

export interface CatalogOptions {
  separator?: string;
  /** Told each warning once when it first appears (a clash found on a list change, a renamed tool). */
  onWarning?: (warning: string) => void;
  /** Neutralize escape sequences and invisible characters in descriptions and titles (default true). */
  sanitize?: boolean;
}

export interface ItemRef {
  readonly server: string;
  /** The item's name on its server (tools and prompts). */
  readonly original?: string;
}

export interface PromptEntry {
  readonly server: string;
  readonly original: string;
}

export interface CatalogCounts {
  tools: number;
  resources: number;
  resourceTemplates: number;
  prompts: number;
}

type Part = Partial<ServerLists>;

type ClaimKind = 'tool' | 'prompt' | 'resource' | 'template';
const CLAIM_KINDS: readonly ClaimKind[] = ['tool', 'prompt', 'resource', 'template'];

function emptyClaims(): Record<ClaimKind, Map<string, Map<string, number>>> {
  return { tool: new Map(), prompt: new Map(), resource: new Map(), template: new Map() };
}

/** One server's share of the catalog: what it claims, what it shows, its routes and its warnings. */
interface Layout {
  /** The public name each item wants, per kind, in the server's order (repeats included). */
  readonly claims: Record<ClaimKind, string[]>;
  readonly views: Record<ListKind, unknown[]>;
  readonly refs: Record<ListKind, ItemRef[]>;
  /** Each non-empty slice of each list, encoded (the JSON of its views without the brackets). */
  readonly bytes: Partial<Record<ListKind, Buffer>>;
  readonly tools: Map<string, ToolEntry>;
  readonly prompts: Map<string, PromptEntry>;
  /** For an unprefixed server: the URIs of its resources and its templates, to route its own URIs. */
  readonly uris: string[];
  readonly templates: { server: string; match: RegExp }[];
  /** Its items withheld because an earlier server exposes the same name. */
  readonly clashWarnings: string[];
  readonly duplicateWarnings: string[];
}

/** A server as the catalog names it: its name and its `prefix` from .mcp.json (absent: its name; false: none). */
export type ServerNaming = string | { readonly name: string; readonly prefix?: string | false };

/** An RFC 6570 template as a matcher: `{x}` one path segment, `{+x}`/`{#x}` anything, other expressions anything but `/`. */
function templateMatcher(template: string): RegExp {
  let source = '';
  let last = 0;
  for (const m of template.matchAll(/\{([+#./;?&]?)[^}]*\}/g)) {
    source += escapeRegExp(template.slice(last, m.index));
    source += m[1] === '+' || m[1] === '#' ? '.*' : '[^/]*';
    last = m.index + m[0].length;
  }
  return new RegExp(`^${source}${escapeRegExp(template.slice(last))}$`, 's');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class Catalog {
  private readonly parts = new Map<string, Part>();
  private readonly held = new Map<string, ReadonlyMap<string, HeldInfo>>();
  private readonly separator: string;
  private readonly sanitize: boolean;
  /** sha256 of each server's list of each kind, to tell a real change from a repeat (not the JSON itself). */
  private readonly fingerprints = new Map<string, string>();
  private readonly keyOf = new Map<string, string>();
  private readonly serverOfKey = new Map<string, string>();
  /** Servers with `"prefix": false`. */
  private readonly unprefixed = new Set<string>();
  /** Each configured server's place in .mcp.json: the earlier one keeps a clashing name. */
  private readonly order = new Map<string, number>();
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
  private readonly viewMemo = new WeakMap<object, { name: string; view: unknown }>();
  /** Each server's share of the catalog, rebuilt only when that server, or who owns its names, changes. */
  private readonly layouts = new Map<string, Layout>();
  /** Public names of prefixed servers' tools and prompts, kept up to date one server at a time. */
  private toolBook: NameBook;
  private promptBook: NameBook;
  /** From the books' last `resolve`: the names that differ from their candidate, and the warnings. */
  private moved = { tool: new Map<string, string>(), prompt: new Map<string, string>() };
  private nameWarnings: string[] = [];
  /** Per kind, each public name → the servers whose items want it (and how many items): the earliest keeps it. */
  private claimants: Record<ClaimKind, Map<string, Map<string, number>>> = emptyClaims();
  /** Per kind, the servers' encoded slices in list order (empty slices left out). */
  private listFragments: Record<ListKind, Buffer[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  /** Which server (and original name) each item of the views came from, index for index. */
  private refs: Record<ListKind, ItemRef[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  /** Bumped on every rebuild: caches of per-agent views compare it. */
  version = 0;
  private views: { tools: unknown[]; resources: unknown[]; resourceTemplates: unknown[]; prompts: unknown[] } = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  /** Names that had to be sanitized, shortened or de-collided, for the log and `check`. */
  warnings: string[] = [];

  constructor(servers: readonly ServerNaming[], options: CatalogOptions | string = {}) {
    const opts = typeof options === 'string' ? { separator: options } : options;
    this.separator = opts.separator ?? DEFAULT_SEPARATOR;
    this.sanitize = opts.sanitize ?? true;
    this.onWarning = opts.onWarning;
    this.toolBook = new NameBook(this.separator);
    this.promptBook = new NameBook(this.separator);
    this.setServers(servers);
  }

  /**
   * Fixes each server's key (its prefix, else its name, made client-safe and unique) used in tool
   * names and URIs, which servers have none, and their order (the earlier keeps a clashing name).
   */
  setServers(servers: readonly ServerNaming[]): void {
    this.keyOf.clear();
    this.serverOfKey.clear();
    this.unprefixed.clear();
    this.order.clear();
    const wanted = new Map<string, string>();
    servers.forEach((entry, index) => {
      const { name, prefix } = typeof entry === 'string' ? { name: entry, prefix: undefined } : entry;
      this.order.set(name, index);
      if (prefix === false) this.unprefixed.add(name);
      else wanted.set(name, prefix ?? name);
    });
    // Client-safe keys first, so a clean `a_b` keeps its key and a colliding `a.b` gets the suffix.
    const safe = (server: string): number => Number(sanitize(wanted.get(server)!) !== wanted.get(server));
    const ordered = [...wanted.keys()].sort((a, b) => safe(a) - safe(b) || (a < b ? -1 : a > b ? 1 : 0));
    for (const server of ordered) {
      // A suffixed key can itself be another server's key ("a.", "a._1", "a_"), so try until one is free.
      const base = sanitize(wanted.get(server)!);
      let key = base;
      for (let n = 1; this.serverOfKey.has(key); n++) key = `${base}_${n}`;
      this.keyOf.set(server, key);
      this.serverOfKey.set(key, server);
    }
    // Keys, prefixes and order may all have changed: every server is laid out again.
    this.toolBook = new NameBook(this.separator);
    this.promptBook = new NameBook(this.separator);
    this.moved = { tool: new Map(), prompt: new Map() };
    this.claimants = emptyClaims();
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
      const fingerprint = fingerprintOf(items ?? []);
      const fkey = `${server}\u0000${kind}`;
      if (this.fingerprints.get(fkey) === fingerprint) continue;
      this.fingerprints.set(fkey, fingerprint);
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

  prompt(publicName: string): PromptEntry | undefined {
    return this.promptsByName.get(publicName);
  }

  /**
   * Routes a URI to its server and the server's own URI: a namespaced one (`mcpgate://PREFIX/…`) by
   * its prefix; else an unprefixed server's listed resource, then one matching its templates, then
   * the only unprefixed server if there is just one (servers may serve URIs they do not list).
   */
  resolveUri(uri: string): { server: string; uri: string } | undefined {
    const split = splitUri(uri);
    const server = split === undefined ? undefined : this.serverOfKey.get(split.serverKey);
    if (server !== undefined) return { server, uri: split!.uri };
    if (this.unprefixed.size === 0) return undefined;
    const owner = this.uriOwner.get(uri) ?? this.templateOwners.find((t) => t.match.test(uri))?.server;
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
    return this.unprefixed.has(server) ? original : `${this.key(server)}${this.separator}${original}`;
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
      const list: Buffer[] = [OPEN[kind]];
      this.listFragments[kind].forEach((fragment, i) => {
        if (i > 0) list.push(COMMA);
        list.push(fragment);
      });
      list.push(CLOSE);
      pieces = list;
      this.encoded.set(kind, pieces);
    }
    return pieces;
  }

  /** The view of a server's item under its public name: the one made last time if neither changed. */
  private viewOf(item: object, field: 'name' | 'uri' | 'uriTemplate', value: string, sanitizeIt: boolean): unknown {
    const memo = this.viewMemo.get(item);
    if (memo !== undefined && memo.name === value) return memo.view;
    const renamed = { ...item, [field]: value } as Record<string, unknown>;
    const view = sanitizeIt && this.sanitize ? sanitizeTool(renamed) : renamed;
    this.viewMemo.set(item, { name: value, view });
    return view;
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
   * (test/unit/catalog-incremental.test.ts).
   */
  private rebuild(changed: readonly string[]): void {
    // 1. Names: the changed servers' pairs replaced in the books; servers whose names moved follow.
    for (const server of changed) {
      if (this.unprefixed.has(server)) continue;
      const part = this.parts.get(server);
      const key = this.key(server);
      this.toolBook.set(key, (part?.tools ?? []).map((tool) => tool.name));
      this.promptBook.set(key, (part?.prompts ?? []).map((prompt) => prompt.name));
    }
    const tools = this.toolBook.resolve();
    const prompts = this.promptBook.resolve();
    const dirty = new Set(changed);
    for (const [before, after] of [[this.moved.tool, tools.moved], [this.moved.prompt, prompts.moved]] as const) {
      for (const [key, name] of before) if (after.get(key) !== name) this.markKey(dirty, key);
      for (const [key, name] of after) if (before.get(key) !== name) this.markKey(dirty, key);
    }
    this.moved = { tool: tools.moved, prompt: prompts.moved };
    this.nameWarnings = [...tools.warnings, ...prompts.warnings];

    // 2. Claims: who wants which public name; a server that gains or loses one is laid out again.
    const ownersBefore = new Map<string, string | undefined>();
    const claims = new Map<string, Record<ClaimKind, string[]> | undefined>();
    for (const server of dirty) {
      const now = this.parts.has(server) ? this.claimsOf(server) : undefined;
      claims.set(server, now);
      const old = this.layouts.get(server)?.claims;
      for (const kind of CLAIM_KINDS) {
        for (const name of [...(old?.[kind] ?? []), ...(now?.[kind] ?? [])]) {
          const at = `${kind}\u0000${name}`;
          if (!ownersBefore.has(at)) ownersBefore.set(at, this.ownerOf(kind, name));
        }
        for (const name of old?.[kind] ?? []) this.unclaim(kind, name, server);
        for (const name of now?.[kind] ?? []) this.claim(kind, name, server);
      }
    }
    for (const [at, before] of ownersBefore) {
      const [kind, name] = at.split('\u0000') as [ClaimKind, string];
      const after = this.ownerOf(kind, name);
      if (after === before) continue;
      // The old owner shows the item no more; every claimant's warning names the new owner.
      if (before !== undefined && this.parts.has(before)) dirty.add(before);
      for (const server of this.claimants[kind].get(name)?.keys() ?? []) dirty.add(server);
    }

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
      const layout = this.layoutOf(server, claims.get(server) ?? this.claimsOf(server), this.layouts.get(server));
      this.layouts.set(server, layout);
      for (const [name, entry] of layout.tools) {
        this.toolsByName.set(name, entry);
        this.publicNames.set(nameKey(server, entry.original), name);
      }
      for (const [name, entry] of layout.prompts) this.promptsByName.set(name, entry);
      for (const uri of layout.uris) this.uriOwner.set(uri, server);
    }

    // 4. The merged lists, joined from the layouts in server order.
    const servers = [...this.layouts.keys()].sort();
    const views = { tools: [] as unknown[], resources: [] as unknown[], resourceTemplates: [] as unknown[], prompts: [] as unknown[] };
    const refs: Record<ListKind, ItemRef[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    const listFragments: Record<ListKind, Buffer[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    const templateOwners: { server: string; match: RegExp }[] = [];
    const duplicates: string[] = [];
    for (const server of servers) {
      const layout = this.layouts.get(server)!;
      for (const kind of LIST_KINDS) {
        if (layout.views[kind].length === 0) continue;
        for (const view of layout.views[kind]) views[kind].push(view);
        for (const ref of layout.refs[kind]) refs[kind].push(ref);
        listFragments[kind].push(layout.bytes[kind]!);
      }
      templateOwners.push(...layout.templates);
      duplicates.push(...layout.duplicateWarnings);
    }
    // Templates of earlier servers are tried first, like every other clash.
    templateOwners.sort((a, b) => (this.order.get(a.server) ?? Infinity) - (this.order.get(b.server) ?? Infinity));
    const clashes = [...servers].sort(this.byOrder).flatMap((server) => this.layouts.get(server)!.clashWarnings);
    this.templateOwners = templateOwners;
    this.views = views;
    this.refs = refs;
    this.listFragments = listFragments;
    this.version += 1;
    this.encoded.clear();
    const warnings = [...this.nameWarnings, ...clashes, ...duplicates];
    this.warnings = warnings;
    // Each warning once, when it appears (again only if it went away and came back).
    const now = new Set(warnings);
    if (this.onWarning !== undefined) for (const warning of now) if (!this.warned.has(warning)) this.onWarning(warning);
    this.warned = now;
  }

  /** Servers in .mcp.json order (then by name): the earlier one keeps a clashing name. */
  private readonly byOrder = (a: string, b: string): number =>
    (this.order.get(a) ?? Infinity) - (this.order.get(b) ?? Infinity) || (a < b ? -1 : a > b ? 1 : 0);

  /** Marks the server of a books' key (`serverKey\0name`) dirty. */
  private markKey(dirty: Set<string>, key: string): void {
    const server = this.serverOfKey.get(key.slice(0, key.indexOf('\u0000')));
    if (server !== undefined && this.parts.has(server)) dirty.add(server);
  }

  private toolName(server: string, name: string): string {
    return this.unprefixed.has(server) ? name : this.toolBook.nameOf(this.key(server), name, this.moved.tool)!;
  }

  private promptName(server: string, name: string): string {
    return this.unprefixed.has(server) ? name : this.promptBook.nameOf(this.key(server), name, this.moved.prompt)!;
  }

  private uriOf(server: string, uri: string): string {
    return this.unprefixed.has(server) ? uri : namespaceUri(this.key(server), uri);
  }

  /** The public name each of the server's items wants. */
  private claimsOf(server: string): Record<ClaimKind, string[]> {
    const part = this.parts.get(server)!;
    return {
      tool: (part.tools ?? []).map((tool) => this.toolName(server, tool.name)),
      prompt: (part.prompts ?? []).map((prompt) => this.promptName(server, prompt.name)),
      resource: (part.resources ?? []).map((resource) => this.uriOf(server, resource.uri)),
      template: (part.resourceTemplates ?? []).map((template) => this.uriOf(server, template.uriTemplate)),
    };
  }

  private claim(kind: ClaimKind, name: string, server: string): void {
    let servers = this.claimants[kind].get(name);
    if (servers === undefined) this.claimants[kind].set(name, (servers = new Map<string, number>()));
    servers.set(server, (servers.get(server) ?? 0) + 1);
  }

  private unclaim(kind: ClaimKind, name: string, server: string): void {
    const servers = this.claimants[kind].get(name);
    const count = servers?.get(server);
    if (servers === undefined || count === undefined) return;
    if (count > 1) servers.set(server, count - 1);
    else servers.delete(server);
    if (servers.size === 0) this.claimants[kind].delete(name);
  }

  /** The server that keeps a public name: the earliest in .mcp.json of those whose items want it. */
  private ownerOf(kind: ClaimKind, name: string): string | undefined {
    const servers = this.claimants[kind].get(name);
    if (servers === undefined) return undefined;
    let owner: string | undefined;
    for (const server of servers.keys()) if (owner === undefined || this.byOrder(server, owner) < 0) owner = server;
    return owner;
  }

  /** Lays out one server under the current names and owners, reusing its views and encoded slices. */
  private layoutOf(server: string, claims: Record<ClaimKind, string[]>, before: Layout | undefined): Layout {
    const part = this.parts.get(server)!;
    const unprefixed = this.unprefixed.has(server);
    const clashWarnings: string[] = [];
    const duplicateWarnings: string[] = [];
    const withheld = new Set<string>();
    const check = (kind: ClaimKind, names: string[], originals: string[]): void => {
      names.forEach((publicName, i) => {
        const owner = this.ownerOf(kind, publicName)!;
        if (owner === server) return;
        const name = originals[i]!;
        withheld.add(`${kind}\u0000${name}`);
        const fix = unprefixed ? `give server "${server}" a prefix in .mcp.json (for example "prefix": "${sanitize(server)}")` : `give server "${owner}" a prefix in .mcp.json`;
        clashWarnings.push(`${kind} "${name}" of server "${server}" is withheld: server "${owner}" (earlier in .mcp.json) already exposes ${kind} "${publicName}"; ${fix}`);
      });
    };
    check('tool', claims.tool, (part.tools ?? []).map((tool) => tool.name));
    check('prompt', claims.prompt, (part.prompts ?? []).map((prompt) => prompt.name));
    check('resource', claims.resource, (part.resources ?? []).map((resource) => resource.uri));
    check('template', claims.template, (part.resourceTemplates ?? []).map((template) => template.uriTemplate));
    const kept = (kind: ClaimKind, name: string): boolean => withheld.size === 0 || !withheld.has(`${kind}\u0000${name}`);

    const views: Record<ListKind, unknown[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    const refs: Record<ListKind, ItemRef[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    const tools = new Map<string, ToolEntry>();
    const prompts = new Map<string, PromptEntry>();
    const uris: string[] = [];
    const templates: { server: string; match: RegExp }[] = [];
    const held = this.held.get(server);
    (part.tools ?? []).forEach((tool, i) => {
      if (!kept('tool', tool.name)) return;
      const name = claims.tool[i]!;
      if (tools.has(name)) {
        duplicateWarnings.push(`server "${server}" lists tool "${tool.name}" more than once; the first definition is used`);
        return;
      }
      const info = held?.get(tool.name);
      tools.set(name, info === undefined ? { server, original: tool.name, tool } : { server, original: tool.name, tool, held: info });
      if (info !== undefined) return;
      views.tools.push(this.viewOf(tool, 'name', name, true));
      refs.tools.push({ server, original: tool.name });
    });
    (part.prompts ?? []).forEach((prompt, i) => {
      if (!kept('prompt', prompt.name)) return;
      const name = claims.prompt[i]!;
      if (prompts.has(name)) {
        duplicateWarnings.push(`server "${server}" lists prompt "${prompt.name}" more than once; the first definition is used`);
        return;
      }
      prompts.set(name, { server, original: prompt.name });
      views.prompts.push(this.viewOf(prompt, 'name', name, true));
      refs.prompts.push({ server, original: prompt.name });
    });
    (part.resources ?? []).forEach((resource, i) => {
      if (!kept('resource', resource.uri)) return;
      if (unprefixed) uris.push(resource.uri);
      views.resources.push(this.viewOf(resource, 'uri', claims.resource[i]!, false));
      refs.resources.push({ server });
    });
    (part.resourceTemplates ?? []).forEach((template, i) => {
      if (!kept('template', template.uriTemplate)) return;
      if (unprefixed) templates.push({ server, match: templateMatcher(template.uriTemplate) });
      views.resourceTemplates.push(this.viewOf(template, 'uriTemplate', claims.template[i]!, false));
      refs.resourceTemplates.push({ server });
    });
    // Each slice is encoded again only if its views are not the very ones encoded last time.
    const bytes: Partial<Record<ListKind, Buffer>> = {};
    for (const kind of LIST_KINDS) {
      const now = views[kind];
      if (now.length === 0) continue;
      const last = before?.views[kind];
      const same = last !== undefined && before!.bytes[kind] !== undefined && last.length === now.length && last.every((view, i) => view === now[i]);
      bytes[kind] = same ? before!.bytes[kind]! : Buffer.from(JSON.stringify(now).slice(1, -1));
    }
    return { claims, views, refs, bytes, tools, prompts, uris, templates, clashWarnings, duplicateWarnings };
  }

  /** The items of one kind that `keep` accepts (per-agent views under rules). */
  filteredList(kind: ListKind, keep: (ref: ItemRef) => boolean): unknown[] {
    const items = this.views[kind];
    const refs = this.refs[kind];
    const out: unknown[] = [];
    for (let i = 0; i < items.length; i++) if (keep(refs[i]!)) out.push(items[i]);
    return out;
  }

  /** As `filteredList`, each item with the server it came from (to merge views in server order). */
  filteredItems(kind: ListKind, keep: (ref: ItemRef) => boolean): { server: string; item: unknown }[] {
    const items = this.views[kind];
    const refs = this.refs[kind];
    const out: { server: string; item: unknown }[] = [];
    for (let i = 0; i < items.length; i++) if (keep(refs[i]!)) out.push({ server: refs[i]!.server, item: items[i] });
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
    return [...this.order.keys()];
  }

  private key(server: string): string {
    return this.keyOf.get(server) ?? sanitize(server);
  }
}

const LIST_KINDS: readonly ListKind[] = ['tools', 'resources', 'resourceTemplates', 'prompts'];
const COMMA = Buffer.from(',');
const OPEN: Record<ListKind, Buffer> = { tools: Buffer.from('{"tools":['), resources: Buffer.from('{"resources":['), resourceTemplates: Buffer.from('{"resourceTemplates":['), prompts: Buffer.from('{"prompts":[') };
const CLOSE = Buffer.from(']}');

/**
 * A digest of a list, item by item: keeping the list's JSON text as its fingerprint held a second copy
 * of every server's catalog for the gateway's lifetime (security audit #9), and one stringify of the
 * whole list built a string as large as the list.
 */
function fingerprintOf(items: readonly unknown[]): string {
  const hash = createHash('sha256');
  for (const item of items) hash.update(JSON.stringify(item)).update('\n');
  return `${items.length}:${hash.digest('base64')}`;
}
