// What one agent may see, under the rules: each list filtered by the same pure functions that decide
// calls (rules/decide.ts), so what an agent is shown and what it may call can never disagree. Encoded
// once per (catalog version, rules snapshot, agent) as bytes, and those bytes are what every answer
// writes until either changes (an agent under open rules shares the catalog's own bytes).

import type { Catalog } from '../catalog/catalog.js';
import { decideServer, decideTool } from '../rules/decide.js';
import type { Rules } from '../rules/load.js';
import type { ListKind } from '../servers/lists.js';
import { sameBytes } from '../wire/encoded.js';

interface Cached {
  catalogVersion: number;
  rules: Rules;
  lists: Partial<Record<ListKind, readonly Buffer[]>>;
}

/** A bound on remembered agents: views are cheap to rebuild, so old ones are simply dropped. */
const MAX_CACHED_AGENTS = 1024;

export class AgentViews {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly catalog: Catalog, private readonly rules: () => Rules) {}

  /** `{"tools":[…]}` (or resources, resourceTemplates, prompts) as this agent may see it, in UTF-8. */
  encoded(agent: string, kind: ListKind): readonly Buffer[] {
    const rules = this.rules();
    if (rules.open) return this.catalog.encodedList(kind);
    let entry = this.cache.get(agent);
    if (entry === undefined || entry.catalogVersion !== this.catalog.version || entry.rules !== rules) {
      if (entry === undefined && this.cache.size >= MAX_CACHED_AGENTS) this.cache.clear();
      entry = { catalogVersion: this.catalog.version, rules, lists: {} };
      this.cache.set(agent, entry);
    }
    let bytes = entry.lists[kind];
    if (bytes === undefined) {
      const keep = kind === 'tools'
        ? (ref: { server: string; original?: string }) => decideTool(rules, agent, ref.server, ref.original!).allowed
        : (ref: { server: string }) => decideServer(rules, agent, ref.server).allowed;
      bytes = [Buffer.from(JSON.stringify({ [kind]: this.catalog.filteredList(kind, keep) }))];
      entry.lists[kind] = bytes;
    }
    return bytes;
  }
}

/** What one session last showed its agent of each list, so a change is announced only if it differs. */
export class ShownViews {
  private readonly last = new Map<ListKind, readonly Buffer[]>();

  constructor(private readonly views: AgentViews, private readonly agent: string) {}

  /** The list to send now (remembered as shown). */
  serve(kind: ListKind): readonly Buffer[] {
    const bytes = this.views.encoded(this.agent, kind);
    this.last.set(kind, bytes);
    return bytes;
  }

  /** Whether the agent's view differs from what it was last shown (and remember the new one). */
  changed(kind: ListKind): boolean {
    const bytes = this.views.encoded(this.agent, kind);
    const last = this.last.get(kind);
    this.last.set(kind, bytes);
    return last === undefined || !sameBytes(last, bytes);
  }
}
