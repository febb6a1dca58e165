// The catalog: every server's tools, resources, templates and prompts merged under namespaced names.
// Each server's part is replaced whole (on connect and on a debounced refresh); the merged views and
// the name → server routes are rebuilt then and cached, so listing and routing cost a map lookup.
// A rebuild reuses what did not change: an item's view (renamed, sanitized) is kept while the server
// still lists the same object under the same public name, and each server's slice of a list is
// encoded once, so one server's list_changed re-encodes only that server's part.
// A server may have its own prefix or none (`"prefix": false`: its items keep their own names and
// URIs); when two servers expose the same name or URI, the one listed later in .mcp.json has that
// item withheld, with one warning naming both servers and the fix (never a silent shadowing).

import { createHash } from 'node:crypto';
import type { Tool } from '../wire/protocol.js';
import type { ListKind, ServerLists } from '../servers/lists.js';
import { sanitizeTool } from '../wire/sanitize.js';
import { assignNames, nameKey, namespaceUri, sanitize, splitUri, DEFAULT_SEPARATOR } from './names.js';

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
  private readonly encoded = new Map<ListKind, string>();
  /** Each item's view (renamed and sanitized) by the server's own item object, while its public name stays. */
  private readonly viewMemo = new WeakMap<object, { name: string; view: unknown }>();
  /** Each server's slice of each list as last encoded (`server\0kind` → the views and their JSON). */
  private fragments = new Map<string, { views: unknown[]; text: string }>();
  /** Per kind, the servers' encoded slices in list order (empty slices left out). */
  private listFragments: Record<ListKind, string[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
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
    this.rebuild();
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
    if (changed.length > 0) this.rebuild();
    return changed;
  }

  /**
   * Sets which of a server's tools are held back (pins). Returns true if what agents see changed.
   * Held tools keep their public names, so approving one later does not rename anything.
   */
  setHeld(server: string, held: ReadonlyMap<string, HeldInfo>): boolean {
    if (!this.replaceHeld(server, held)) return false;
    this.rebuild();
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
    this.rebuild();
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
   * The list result for one kind (`{"tools":[…]}`), joined once per catalog change from the servers'
   * slices, each encoded when that server's items changed: a large catalog is serialized piece by
   * piece when it changes, not on every list request nor whole on every server's change.
   */
  encodedList(kind: ListKind): string {
    let text = this.encoded.get(kind);
    if (text === undefined) {
      text = `{"${kind}":[${this.listFragments[kind].join(',')}]}`;
      this.encoded.set(kind, text);
    }
    return text;
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

  /** Encodes each server's slice of each list again only if its views are not the ones encoded last time. */
  private encodeFragments(slices: Map<string, Record<ListKind, [number, number]>>): void {
    const fragments = new Map<string, { views: unknown[]; text: string }>();
    const listFragments: Record<ListKind, string[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    for (const [server, ranges] of slices) {
      for (const kind of LIST_KINDS) {
        const [start, end] = ranges[kind];
        if (start === end) continue;
        const key = `${server}\u0000${kind}`;
        const all = this.views[kind];
        const before = this.fragments.get(key);
        let fragment = before;
        if (before === undefined || before.views.length !== end - start || before.views.some((view, i) => view !== all[start + i])) {
          const views = all.slice(start, end);
          fragment = { views, text: JSON.stringify(views).slice(1, -1) };
        }
        fragments.set(key, fragment!);
        listFragments[kind].push(fragment!.text);
      }
    }
    this.fragments = fragments;
    this.listFragments = listFragments;
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

  private rebuild(): void {
    const servers = [...this.parts.keys()].sort();
    const toolReqs: { server: string; name: string }[] = [];
    const promptReqs: { server: string; name: string }[] = [];
    for (const server of servers) {
      if (this.unprefixed.has(server)) continue;
      const key = this.key(server);
      for (const tool of this.parts.get(server)?.tools ?? []) toolReqs.push({ server: key, name: tool.name });
      for (const prompt of this.parts.get(server)?.prompts ?? []) promptReqs.push({ server: key, name: prompt.name });
    }
    const toolNames = assignNames(toolReqs, this.separator);
    const promptNames = assignNames(promptReqs, this.separator);
    const warnings = [...toolNames.warnings, ...promptNames.warnings];
    const toolName = (server: string, name: string): string => (this.unprefixed.has(server) ? name : toolNames.names.get(nameKey(this.key(server), name))!);
    const promptName = (server: string, name: string): string => (this.unprefixed.has(server) ? name : promptNames.names.get(nameKey(this.key(server), name))!);
    const uriOf = (server: string, uri: string): string => (this.unprefixed.has(server) ? uri : namespaceUri(this.key(server), uri));

    // Who keeps each public name: servers in .mcp.json order, the earlier one wins, the later one's
    // item is withheld with a warning naming both.
    const withheld = new Set<string>();
    const byOrder = [...servers].sort((a, b) => (this.order.get(a) ?? Infinity) - (this.order.get(b) ?? Infinity) || (a < b ? -1 : a > b ? 1 : 0));
    const claim = (what: string, owners: Map<string, string>, server: string, name: string, publicName: string): void => {
      const owner = owners.get(publicName);
      if (owner === undefined) owners.set(publicName, server);
      else if (owner !== server) {
        withheld.add(`${what}\u0000${server}\u0000${name}`);
        const fix = this.unprefixed.has(server) ? `give server "${server}" a prefix in .mcp.json (for example "prefix": "${sanitize(server)}")` : `give server "${owner}" a prefix in .mcp.json`;
        warnings.push(`${what} "${name}" of server "${server}" is withheld: server "${owner}" (earlier in .mcp.json) already exposes ${what} "${publicName}"; ${fix}`);
      }
    };
    const owners = { tool: new Map<string, string>(), prompt: new Map<string, string>(), resource: new Map<string, string>(), template: new Map<string, string>() };
    for (const server of byOrder) {
      const part = this.parts.get(server)!;
      for (const tool of part.tools ?? []) claim('tool', owners.tool, server, tool.name, toolName(server, tool.name));
      for (const prompt of part.prompts ?? []) claim('prompt', owners.prompt, server, prompt.name, promptName(server, prompt.name));
      for (const resource of part.resources ?? []) claim('resource', owners.resource, server, resource.uri, uriOf(server, resource.uri));
      for (const template of part.resourceTemplates ?? []) claim('template', owners.template, server, template.uriTemplate, uriOf(server, template.uriTemplate));
    }
    const kept = (what: string, server: string, name: string): boolean => !withheld.has(`${what}\u0000${server}\u0000${name}`);

    const toolsByName = new Map<string, ToolEntry>();
    const promptsByName = new Map<string, PromptEntry>();
    const uriOwner = new Map<string, string>();
    const templateOwners: { server: string; match: RegExp }[] = [];
    const views = { tools: [] as unknown[], resources: [] as unknown[], resourceTemplates: [] as unknown[], prompts: [] as unknown[] };
    const refs: Record<ListKind, ItemRef[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    const slices = new Map<string, Record<ListKind, [number, number]>>();
    for (const server of servers) {
      const part = this.parts.get(server)!;
      const unprefixed = this.unprefixed.has(server);
      const starts = { tools: views.tools.length, resources: views.resources.length, resourceTemplates: views.resourceTemplates.length, prompts: views.prompts.length };
      for (const tool of part.tools ?? []) {
        if (!kept('tool', server, tool.name)) continue;
        const name = toolName(server, tool.name);
        if (toolsByName.has(name)) {
          warnings.push(`server "${server}" lists tool "${tool.name}" more than once; the first definition is used`);
          continue;
        }
        const held = this.held.get(server)?.get(tool.name);
        toolsByName.set(name, held === undefined ? { server, original: tool.name, tool } : { server, original: tool.name, tool, held });
        if (held !== undefined) continue;
        views.tools.push(this.viewOf(tool, 'name', name, true));
        refs.tools.push({ server, original: tool.name });
      }
      for (const prompt of part.prompts ?? []) {
        if (!kept('prompt', server, prompt.name)) continue;
        const name = promptName(server, prompt.name);
        if (promptsByName.has(name)) {
          warnings.push(`server "${server}" lists prompt "${prompt.name}" more than once; the first definition is used`);
          continue;
        }
        promptsByName.set(name, { server, original: prompt.name });
        views.prompts.push(this.viewOf(prompt, 'name', name, true));
        refs.prompts.push({ server, original: prompt.name });
      }
      for (const resource of part.resources ?? []) {
        if (!kept('resource', server, resource.uri)) continue;
        if (unprefixed) uriOwner.set(resource.uri, server);
        views.resources.push(this.viewOf(resource, 'uri', uriOf(server, resource.uri), false));
        refs.resources.push({ server });
      }
      for (const template of part.resourceTemplates ?? []) {
        if (!kept('template', server, template.uriTemplate)) continue;
        if (unprefixed) templateOwners.push({ server, match: templateMatcher(template.uriTemplate) });
        views.resourceTemplates.push(this.viewOf(template, 'uriTemplate', uriOf(server, template.uriTemplate), false));
        refs.resourceTemplates.push({ server });
      }
      slices.set(server, {
        tools: [starts.tools, views.tools.length],
        resources: [starts.resources, views.resources.length],
        resourceTemplates: [starts.resourceTemplates, views.resourceTemplates.length],
        prompts: [starts.prompts, views.prompts.length],
      });
    }
    // Templates of earlier servers are tried first, like every other clash.
    templateOwners.sort((a, b) => (this.order.get(a.server) ?? Infinity) - (this.order.get(b.server) ?? Infinity));
    this.publicNames = new Map([...toolsByName].map(([name, entry]) => [nameKey(entry.server, entry.original), name]));
    this.toolsByName = toolsByName;
    this.promptsByName = promptsByName;
    this.uriOwner = uriOwner;
    this.templateOwners = templateOwners;
    this.views = views;
    this.refs = refs;
    this.version += 1;
    this.encodeFragments(slices);
    this.encoded.clear();
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

/**
 * A digest of a list, item by item: keeping the list's JSON text as its fingerprint held a second copy
 * of every server's catalog for the gateway's lifetime (security audit #9), and one stringify of the
 * whole list built a string as large as the list.
 */
const LIST_KINDS: readonly ListKind[] = ['tools', 'resources', 'resourceTemplates', 'prompts'];

function fingerprintOf(items: readonly unknown[]): string {
  const hash = createHash('sha256');
  for (const item of items) hash.update(JSON.stringify(item)).update('\n');
  return `${items.length}:${hash.digest('base64')}`;
}
