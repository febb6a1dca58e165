// The lexical indexes search mode ranks with (src/search/tool-index.ts): one per catalog, kept the
// same way for each — the shared catalog's, searched by every agent with the agent's rules as the
// filter, and each own catalog's (a pool scope's per-agent or per-session servers, own-catalogs.ts),
// searched by its owners only — so one agent's pooled tools never rank, let alone show, in another
// agent's search.
//
// Each index follows its catalog one server at a time: before a search, a catalog whose version
// moved is compared server by server (the server's tool list is the same object while it is
// unchanged, catalog.ts keeps it), and only a server whose tools, public names or instructions
// changed has its tools removed and upserted again. Held tools stay indexed (their names and
// texts are the server's, only their approval is pending) and are filtered out at search time
// with the rules, before the limit, so whether a tool is held never shows in what a search returns.

import type { Catalog, ToolEntry } from '../../catalog/catalog.js';
import { searchTask } from '../../search/task-search.js';
import { ToolIndex, type SearchDoc } from '../../search/tool-index.js';
import type { Tool } from '../../wire/protocol.js';
import { ownsServer } from '../routing/own-catalogs.js';

interface ServerState {
  /** The server's tool list as the catalog holds it (a new array whenever it changes). */
  readonly tools: readonly Tool[];
  /** The public names indexed for it, in order. */
  readonly keys: readonly string[];
  readonly instructions: string | undefined;
}

/** One catalog's index and what it was built from. */
interface Synced {
  readonly index: ToolIndex;
  readonly servers: Map<string, ServerState>;
  version: number;
}

/** A search result before it is shown: the tool's entry in the catalog it was found in. */
export interface FoundTool {
  readonly key: string;
  /** The catalog it was found in (the shared one or an own catalog): it has the tool's listed view. */
  readonly catalog: Catalog;
  readonly entry: ToolEntry;
  readonly score: number;
}

export class SearchIndexes {
  /**
   * Each catalog's index, the shared one like any other: own catalogs come and go with their pool
   * scopes, and their indexes go with them.
   */
  private readonly indexes = new WeakMap<Catalog, Synced>();
  /** Tool documents (re)indexed since start, across every index: the incremental upkeep's work. */
  upserts = 0;

  constructor(
    private readonly catalog: Catalog,
    /** The server's instructions when agents may see them (withheld ones are not indexed). */
    private readonly instructionsOf: (server: string) => string | undefined,
  ) {}

  /** Tools in the shared index (held ones included). */
  get size(): number {
    return this.indexes.get(this.catalog)?.index.size ?? 0;
  }

  /**
   * The best `limit` tools for `query` that `allow` lets through, from the shared catalog (its
   * servers the session's own catalogs list excluded) and from each own catalog, best first.
   */
  search(query: string, limit: number, own: readonly Catalog[] | undefined, allow: (entry: ToolEntry) => boolean): FoundTool[] {
    const found: FoundTool[] = [];
    for (const catalog of [this.catalog, ...(own ?? [])]) {
      const skip = catalog === this.catalog && own !== undefined ? (server: string) => ownsServer(own, server) : undefined;
      for (const hit of searchTask(this.sync(catalog).index, query, limit, (key) => {
        const entry = catalog.tool(key);
        return entry !== undefined && entry.held === undefined && (skip === undefined || !skip(entry.server)) && allow(entry);
      }))
        found.push({ key: hit.key, catalog, entry: catalog.tool(hit.key)!, score: hit.score });
    }
    // Scores of separate indexes are each a BM25 score (a one-step query) or a rank-fusion score (a
    // task of several steps, task-search.ts) over their own documents: comparable enough to
    // interleave a few pooled servers' tools with the shared ones (one index's hits come sorted).
    if (own !== undefined) found.sort((a, b) => b.score - a.score);
    return found.length > limit ? found.slice(0, limit) : found;
  }

  /** Indexes the shared catalog now (after start-up), so the first search does not pay for it. */
  warm(): void {
    this.sync(this.catalog);
  }

  /**
   * Every tool the session may be shown: the shared catalog's listed tools (servers its own catalogs
   * list excluded) and its own catalogs', that `allow` lets through (held tools are never listed).
   */
  *candidates(own: readonly Catalog[] | undefined, allow: (entry: ToolEntry) => boolean): Iterable<FoundTool> {
    for (const catalog of [this.catalog, ...(own ?? [])]) {
      const shared = catalog === this.catalog;
      for (const item of catalog.listTools()) {
        const key = (item as { name: string }).name;
        const entry = catalog.tool(key);
        if (entry === undefined || entry.held !== undefined) continue;
        if (shared && own !== undefined && ownsServer(own, entry.server)) continue;
        if (allow(entry)) yield { key, catalog, entry, score: 0 };
      }
    }
  }

  /** `catalog`'s index (made on first use), brought up to the catalog's version one changed server at a time. */
  private sync(catalog: Catalog): Synced {
    let synced = this.indexes.get(catalog);
    if (synced === undefined) this.indexes.set(catalog, (synced = { index: new ToolIndex(), servers: new Map(), version: -1 }));
    if (synced.version === catalog.version) return synced;
    const listed = new Set(catalog.listedServers());
    for (const [server, state] of synced.servers) {
      if (listed.has(server)) continue;
      for (const key of state.keys) synced.index.remove(key);
      synced.servers.delete(server);
    }
    for (const server of listed) {
      const tools = catalog.serverTools(server);
      const instructions = this.instructionsOf(server);
      const keys: string[] = [];
      const indexed: Tool[] = [];
      for (const tool of tools) {
        const key = catalog.publicName(server, tool.name);
        // Withheld (another server has the name) or listed twice by the server (the first one counts).
        if (key === undefined || catalog.tool(key)?.server !== server || catalog.tool(key)?.tool !== tool) continue;
        keys.push(key);
        indexed.push(tool);
      }
      const before = synced.servers.get(server);
      if (before !== undefined && before.tools === tools && before.instructions === instructions && sameKeys(before.keys, keys)) continue;
      if (before !== undefined) for (const key of before.keys) synced.index.remove(key);
      indexed.forEach((tool, i) => synced.index.upsert(docOf(keys[i]!, server, tool, instructions)));
      this.upserts += keys.length;
      synced.servers.set(server, { tools, keys, instructions });
    }
    synced.version = catalog.version;
    return synced;
  }
}

function docOf(key: string, server: string, tool: Tool, instructions: string | undefined): SearchDoc {
  return {
    key,
    name: tool.name,
    server,
    ...(typeof tool.title === 'string' && { title: tool.title }),
    ...(typeof tool.description === 'string' && { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(instructions !== undefined && { serverInstructions: instructions }),
  };
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((key, i) => key === b[i]);
}
