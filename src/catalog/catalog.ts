// The catalog: every server's tools, resources, templates and prompts merged under namespaced names.
// Each server's part is replaced whole (on connect and on a debounced refresh); the merged views and
// the name → server routes are rebuilt then and cached, so listing and routing cost a map lookup.

import type { Tool } from '../wire/protocol.js';
import type { ListKind, ServerLists } from '../servers/lists.js';
import { assignNames, nameKey, namespaceUri, sanitize, splitUri, DEFAULT_SEPARATOR } from './names.js';

export interface ToolEntry {
  readonly server: string;
  /** The tool's name on its server. */
  readonly original: string;
  readonly tool: Tool;
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

export class Catalog {
  private readonly parts = new Map<string, Part>();
  private readonly fingerprints = new Map<string, string>();
  private readonly keyOf = new Map<string, string>();
  private readonly serverOfKey = new Map<string, string>();
  private toolsByName = new Map<string, ToolEntry>();
  private promptsByName = new Map<string, PromptEntry>();
  private readonly encoded = new Map<ListKind, string>();
  private views: { tools: unknown[]; resources: unknown[]; resourceTemplates: unknown[]; prompts: unknown[] } = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  /** Names that had to be sanitized, shortened or de-collided, for the log and `check`. */
  warnings: string[] = [];

  constructor(serverNames: readonly string[], private readonly separator: string = DEFAULT_SEPARATOR) {
    this.setServers(serverNames);
  }

  /** Fixes each server's key (its name, made client-safe and unique) used in tool names and URIs. */
  setServers(serverNames: readonly string[]): void {
    this.keyOf.clear();
    this.serverOfKey.clear();
    // Client-safe names first, so a clean `a_b` keeps its key and a colliding `a.b` gets the suffix.
    const ordered = [...serverNames].sort((a, b) => Number(sanitize(a) !== a) - Number(sanitize(b) !== b) || (a < b ? -1 : a > b ? 1 : 0));
    for (const server of ordered) {
      // A suffixed key can itself be another server's key ("a.", "a._1", "a_"), so try until one is free.
      const base = sanitize(server);
      let key = base;
      for (let n = 1; this.serverOfKey.has(key); n++) key = `${base}_${n}`;
      this.keyOf.set(server, key);
      this.serverOfKey.set(key, server);
    }
    this.rebuild();
  }

  /** Replaces the given kinds of one server's part; returns the kinds whose content changed. */
  set(server: string, lists: Part): ListKind[] {
    const part = this.parts.get(server) ?? {};
    const changed: ListKind[] = [];
    for (const kind of Object.keys(lists) as ListKind[]) {
      const items = lists[kind];
      const fingerprint = JSON.stringify(items);
      const fkey = `${server}\u0000${kind}`;
      if (this.fingerprints.get(fkey) === fingerprint) continue;
      this.fingerprints.set(fkey, fingerprint);
      (part as Record<ListKind, unknown>)[kind] = items;
      changed.push(kind);
    }
    this.parts.set(server, part);
    if (changed.length > 0) this.rebuild();
    return changed;
  }

  /** Withdraws a server's whole part (it failed or was removed); returns the kinds that had content. */
  remove(server: string): ListKind[] {
    const part = this.parts.get(server);
    if (part === undefined) return [];
    this.parts.delete(server);
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

  /** Routes a namespaced URI (`mcpgate://SERVER/…`) to its server and the server's own URI. */
  resolveUri(uri: string): { server: string; uri: string } | undefined {
    const split = splitUri(uri);
    if (split === undefined) return undefined;
    const server = this.serverOfKey.get(split.serverKey);
    return server === undefined ? undefined : { server, uri: split.uri };
  }

  publicUri(server: string, uri: string): string {
    return namespaceUri(this.keyOf.get(server) ?? sanitize(server), uri);
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
   * The list result for one kind, encoded once per catalog change (`{"tools":[…]}`): a large catalog is
   * serialized when it changes, not on every list request.
   */
  encodedList(kind: ListKind): string {
    let text = this.encoded.get(kind);
    if (text === undefined) {
      text = JSON.stringify({ [kind]: this.views[kind] });
      this.encoded.set(kind, text);
    }
    return text;
  }

  counts(server: string): CatalogCounts {
    const part = this.parts.get(server) ?? {};
    return {
      tools: part.tools?.length ?? 0,
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
      const key = this.key(server);
      for (const tool of this.parts.get(server)?.tools ?? []) toolReqs.push({ server: key, name: tool.name });
      for (const prompt of this.parts.get(server)?.prompts ?? []) promptReqs.push({ server: key, name: prompt.name });
    }
    const toolNames = assignNames(toolReqs, this.separator);
    const promptNames = assignNames(promptReqs, this.separator);
    this.warnings = [...toolNames.warnings, ...promptNames.warnings];

    const toolsByName = new Map<string, ToolEntry>();
    const promptsByName = new Map<string, PromptEntry>();
    const views = { tools: [] as unknown[], resources: [] as unknown[], resourceTemplates: [] as unknown[], prompts: [] as unknown[] };
    for (const server of servers) {
      const key = this.key(server);
      const part = this.parts.get(server)!;
      for (const tool of part.tools ?? []) {
        const name = toolNames.names.get(nameKey(key, tool.name))!;
        if (toolsByName.has(name)) {
          this.warnings.push(`server "${server}" lists tool "${tool.name}" more than once; the first definition is used`);
          continue;
        }
        toolsByName.set(name, { server, original: tool.name, tool });
        views.tools.push({ ...tool, name });
      }
      for (const prompt of part.prompts ?? []) {
        const name = promptNames.names.get(nameKey(key, prompt.name))!;
        if (promptsByName.has(name)) {
          this.warnings.push(`server "${server}" lists prompt "${prompt.name}" more than once; the first definition is used`);
          continue;
        }
        promptsByName.set(name, { server, original: prompt.name });
        views.prompts.push({ ...(prompt), name });
      }
      for (const resource of part.resources ?? []) views.resources.push({ ...(resource), uri: namespaceUri(key, resource.uri) });
      for (const template of part.resourceTemplates ?? []) {
        views.resourceTemplates.push({ ...(template), uriTemplate: namespaceUri(key, template.uriTemplate) });
      }
    }
    this.toolsByName = toolsByName;
    this.promptsByName = promptsByName;
    this.views = views;
    this.encoded.clear();
  }

  private key(server: string): string {
    return this.keyOf.get(server) ?? sanitize(server);
  }
}
