// One server's layout: its share of the catalog under the current names and owners — what it claims,
// the views it shows and where each came from, its routes, its warnings, and each list's encoded
// slice. An item's view (renamed, sanitized) is kept while the server lists the same object under the
// same public name, and a slice is encoded again only when its views changed, so one server's
// list_changed re-encodes only that server's slices. `joinLayouts` merges the layouts into the
// catalog's lists, and `listPieces` puts a list's slices between its brackets.
// `layOut` makes one server's layout.

import { LIST_KINDS, type ListKind, type ServerLists } from '../servers/lists.js';
import { sanitizeTool } from '../wire/sanitize.js';
import type { NameOwners, NameKind, WantedNames } from './name-owners.js';
import { namespaceUri, sanitize } from './names.js';
import { renameUiPointers } from './ui-pointers.js';
import type { HeldInfo, ItemRef, PromptEntry, ToolEntry } from './types.js';

/** One server's share of the catalog: what it claims, what it shows, its routes and its warnings. */
export interface Layout {
  /** The public name each item wants, per kind, in the server's order (repeats included). */
  readonly claims: WantedNames;
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

/** Each item's view (renamed and sanitized), kept by the server's own item object while its public name stays. */
export class ItemViews {
  private readonly viewMemo = new WeakMap<object, { name: string; view: unknown }>();

  /** `sanitize`: neutralize escape sequences and invisible characters in tools' and prompts' texts. */
  constructor(private readonly sanitize: boolean) {}

  /**
   * The view of a server's item under its public name: the one made last time if neither changed.
   * `uriKey`: the server's key when its URIs are namespaced, so a tool's MCP Apps pointers
   * (`_meta.ui.resourceUri`) name the resource as the catalog lists it.
   */
  viewOf(item: object, field: 'name' | 'uri' | 'uriTemplate', value: string, sanitizeIt: boolean, uriKey?: string): unknown {
    const memoName = uriKey === undefined ? value : `${value}\u0000${uriKey}`;
    const memo = this.viewMemo.get(item);
    if (memo !== undefined && memo.name === memoName) return memo.view;
    const renamed = { ...item, [field]: value } as Record<string, unknown>;
    const meta = uriKey === undefined ? undefined : renameUiPointers(renamed._meta, (uri) => namespaceUri(uriKey, uri));
    if (meta !== undefined) renamed._meta = meta;
    const view = sanitizeIt && this.sanitize ? sanitizeTool(renamed) : renamed;
    this.viewMemo.set(item, { name: memoName, view });
    return view;
  }
}

/** What laying out one server reads besides its part and claims. */
interface LayoutParts {
  /** The server has `"prefix": false`. */
  readonly unprefixed: boolean;
  /** Its key in public names and URIs. */
  readonly key: string;
  /** Its held tools, by its own names. */
  readonly held: ReadonlyMap<string, HeldInfo> | undefined;
  readonly claimants: NameOwners;
  readonly views: ItemViews;
}

/** Lays out one server under the current names and owners, reusing its views and encoded slices. */
export function layOut(
  server: string,
  part: Partial<ServerLists>,
  claims: WantedNames,
  before: Layout | undefined,
  parts: LayoutParts,
): Layout {
  const { unprefixed, held, claimants } = parts;
  const clashWarnings: string[] = [];
  const duplicateWarnings: string[] = [];
  const withheld = new Set<string>();
  const check = (kind: NameKind, names: string[], originals: string[]): void => {
    names.forEach((publicName, i) => {
      const owner = claimants.ownerOf(kind, publicName)!;
      if (owner === server) return;
      const name = originals[i]!;
      withheld.add(`${kind}\u0000${name}`);
      const fix = unprefixed
        ? `give server "${server}" a prefix in .mcp.json (for example "prefix": "${sanitize(server)}")`
        : `give server "${owner}" a prefix in .mcp.json`;
      clashWarnings.push(
        `${kind} "${name}" of server "${server}" is withheld: server "${owner}" (earlier in .mcp.json) already exposes ${kind} "${publicName}"; ${fix}`,
      );
    });
  };
  check(
    'tool',
    claims.tool,
    (part.tools ?? []).map((tool) => tool.name),
  );
  check(
    'prompt',
    claims.prompt,
    (part.prompts ?? []).map((prompt) => prompt.name),
  );
  check(
    'resource',
    claims.resource,
    (part.resources ?? []).map((resource) => resource.uri),
  );
  check(
    'template',
    claims.template,
    (part.resourceTemplates ?? []).map((template) => template.uriTemplate),
  );
  const kept = (kind: NameKind, name: string): boolean => withheld.size === 0 || !withheld.has(`${kind}\u0000${name}`);

  const views: Record<ListKind, unknown[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  const refs: Record<ListKind, ItemRef[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  const tools = new Map<string, ToolEntry>();
  const prompts = new Map<string, PromptEntry>();
  const uris: string[] = [];
  const templates: { server: string; match: RegExp }[] = [];
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
    views.tools.push(parts.views.viewOf(tool, 'name', name, true, unprefixed ? undefined : parts.key));
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
    views.prompts.push(parts.views.viewOf(prompt, 'name', name, true));
    refs.prompts.push({ server, original: prompt.name });
  });
  (part.resources ?? []).forEach((resource, i) => {
    if (!kept('resource', resource.uri)) return;
    if (unprefixed) uris.push(resource.uri);
    views.resources.push(parts.views.viewOf(resource, 'uri', claims.resource[i]!, false));
    refs.resources.push({ server });
  });
  (part.resourceTemplates ?? []).forEach((template, i) => {
    if (!kept('template', template.uriTemplate)) return;
    if (unprefixed) templates.push({ server, match: templateMatcher(template.uriTemplate) });
    views.resourceTemplates.push(parts.views.viewOf(template, 'uriTemplate', claims.template[i]!, false));
    refs.resourceTemplates.push({ server });
  });
  // Each slice is encoded again only if its views are not the very ones encoded last time.
  const bytes: Partial<Record<ListKind, Buffer>> = {};
  for (const kind of LIST_KINDS) {
    const now = views[kind];
    if (now.length === 0) continue;
    const last = before?.views[kind];
    const same =
      last !== undefined && before!.bytes[kind] !== undefined && last.length === now.length && last.every((view, i) => view === now[i]);
    bytes[kind] = same ? before!.bytes[kind]! : Buffer.from(JSON.stringify(now).slice(1, -1));
  }
  return { claims, views, refs, bytes, tools, prompts, uris, templates, clashWarnings, duplicateWarnings };
}

/** The merged lists, joined from the layouts (pointers, not items), and the layouts' warnings. */
interface Joined {
  readonly views: Record<ListKind, unknown[]>;
  /** Which server (and original name) each item of the views came from, index for index. */
  readonly refs: Record<ListKind, ItemRef[]>;
  /** Per kind, the servers' encoded slices in list order (empty slices left out). */
  readonly listFragments: Record<ListKind, Buffer[]>;
  /** Unprefixed servers' templates, earlier servers' first. */
  readonly templateOwners: { server: string; match: RegExp }[];
  readonly clashes: string[];
  readonly duplicates: string[];
}

/** Joins the layouts in server order; `order`/`byOrder`: the servers' places in .mcp.json. */
export function joinLayouts(
  layouts: ReadonlyMap<string, Layout>,
  order: ReadonlyMap<string, number>,
  byOrder: (a: string, b: string) => number,
): Joined {
  const servers = [...layouts.keys()].sort();
  const views = { tools: [] as unknown[], resources: [] as unknown[], resourceTemplates: [] as unknown[], prompts: [] as unknown[] };
  const refs: Record<ListKind, ItemRef[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  const listFragments: Record<ListKind, Buffer[]> = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  const templateOwners: { server: string; match: RegExp }[] = [];
  const duplicates: string[] = [];
  for (const server of servers) {
    const layout = layouts.get(server)!;
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
  templateOwners.sort((a, b) => (order.get(a.server) ?? Infinity) - (order.get(b.server) ?? Infinity));
  const clashes = [...servers].sort(byOrder).flatMap((server) => layouts.get(server)!.clashWarnings);
  return { views, refs, listFragments, templateOwners, clashes, duplicates };
}

const COMMA = Buffer.from(',');
const OPEN: Record<ListKind, Buffer> = {
  tools: Buffer.from('{"tools":['),
  resources: Buffer.from('{"resources":['),
  resourceTemplates: Buffer.from('{"resourceTemplates":['),
  prompts: Buffer.from('{"prompts":['),
};
const CLOSE = Buffer.from(']}');

/** A list's result (`{"tools":[…]}`) as pieces: the servers' slices of that list between the brackets, never joined. */
export function listPieces(kind: ListKind, fragments: readonly Buffer[]): Buffer[] {
  const list: Buffer[] = [OPEN[kind]];
  fragments.forEach((fragment, i) => {
    if (i > 0) list.push(COMMA);
    list.push(fragment);
  });
  list.push(CLOSE);
  return list;
}

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
