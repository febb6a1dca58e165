// Public names: each server's key in names and URIs (its `prefix`, else its name, made client-safe
// and unique), which servers have none (`"prefix": false`), their order in .mcp.json (the earlier
// keeps a clashing name), and the names of prefixed servers' tools and prompts, kept up to date one
// server at a time by a `NameBook` per kind, so the names are always `assignNames`'s answer.

import type { ServerLists } from '../servers/lists.js';
import type { WantedNames } from './name-owners.js';
import { namespaceUri, sanitize, NameBook } from './names.js';
import type { ServerNaming } from './types.js';

export class PublicNames {
  readonly keyOf = new Map<string, string>();
  readonly serverOfKey = new Map<string, string>();
  /** Servers with `"prefix": false`. */
  readonly unprefixed = new Set<string>();
  /** Each configured server's place in .mcp.json: the earlier one keeps a clashing name. */
  readonly order = new Map<string, number>();
  /** Public names of prefixed servers' tools and prompts, kept up to date one server at a time. */
  private toolBook: NameBook;
  private promptBook: NameBook;
  /** From the books' last `resolve`: the names that differ from their candidate, and the warnings. */
  private moved = { tool: new Map<string, string>(), prompt: new Map<string, string>() };
  warnings: string[] = [];

  constructor(private readonly separator: string) {
    this.toolBook = new NameBook(this.separator);
    this.promptBook = new NameBook(this.separator);
  }

  /**
   * Fixes each server's key (its prefix, else its name, made client-safe and unique) used in tool
   * names and URIs, which servers have none, and their order (the earlier keeps a clashing name).
   * The books start empty: every server is to be named again.
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
    this.toolBook = new NameBook(this.separator);
    this.promptBook = new NameBook(this.separator);
    this.moved = { tool: new Map(), prompt: new Map() };
  }

  /**
   * The changed servers' pairs replaced in the books (`parts`: every listed server's lists); returns
   * the servers to lay out again: the changed ones and the listed ones whose names moved.
   */
  update(changed: readonly string[], parts: ReadonlyMap<string, Partial<ServerLists>>): Set<string> {
    for (const server of changed) {
      if (this.unprefixed.has(server)) continue;
      const part = parts.get(server);
      const key = this.key(server);
      this.toolBook.set(
        key,
        (part?.tools ?? []).map((tool) => tool.name),
      );
      this.promptBook.set(
        key,
        (part?.prompts ?? []).map((prompt) => prompt.name),
      );
    }
    const tools = this.toolBook.resolve();
    const prompts = this.promptBook.resolve();
    const dirty = new Set(changed);
    for (const [before, after] of [
      [this.moved.tool, tools.moved],
      [this.moved.prompt, prompts.moved],
    ] as const) {
      for (const [key, name] of before) if (after.get(key) !== name) this.markKey(dirty, key, parts);
      for (const [key, name] of after) if (before.get(key) !== name) this.markKey(dirty, key, parts);
    }
    this.moved = { tool: tools.moved, prompt: prompts.moved };
    this.warnings = [...tools.warnings, ...prompts.warnings];
    return dirty;
  }

  /** Servers in .mcp.json order (then by name): the earlier one keeps a clashing name. */
  readonly byOrder = (a: string, b: string): number =>
    (this.order.get(a) ?? Infinity) - (this.order.get(b) ?? Infinity) || (a < b ? -1 : a > b ? 1 : 0);

  /** Marks the server of a books' key (`serverKey\0name`) dirty. */
  private markKey(dirty: Set<string>, key: string, parts: ReadonlyMap<string, unknown>): void {
    const server = this.serverOfKey.get(key.slice(0, key.indexOf('\u0000')));
    if (server !== undefined && parts.has(server)) dirty.add(server);
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

  /** The public name each of the server's items (`part`) wants. */
  claimsOf(server: string, part: Partial<ServerLists>): WantedNames {
    return {
      tool: (part.tools ?? []).map((tool) => this.toolName(server, tool.name)),
      prompt: (part.prompts ?? []).map((prompt) => this.promptName(server, prompt.name)),
      resource: (part.resources ?? []).map((resource) => this.uriOf(server, resource.uri)),
      template: (part.resourceTemplates ?? []).map((template) => this.uriOf(server, template.uriTemplate)),
    };
  }

  key(server: string): string {
    return this.keyOf.get(server) ?? sanitize(server);
  }
}
