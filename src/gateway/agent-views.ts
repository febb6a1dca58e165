// What one agent may see, under the rules: each list filtered by the same pure functions that decide
// calls (rules/decide.ts), so what an agent is shown and what it may call can never disagree. Encoded
// once per (catalog version, rules snapshot, agent) and reused until either changes.

import type { Catalog } from '../catalog/catalog.js';
import { decideServer, decideTool, matchedGrants, type Claims } from '../rules/decide.js';
import type { Rules } from '../rules/load.js';
import type { ListKind } from '../servers/lists.js';

interface Cached {
  catalogVersion: number;
  rules: Rules;
  lists: Partial<Record<ListKind, string>>;
}

/** A bound on remembered agents: views are cheap to rebuild, so old ones are simply dropped. */
const MAX_CACHED_AGENTS = 1024;

export class AgentViews {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly catalog: Catalog, private readonly rules: () => Rules) {}

  /**
   * `{"tools":[…]}` (or resources, resourceTemplates, prompts) as this agent may see it; `claims`,
   * those of its token, for the rules' grants (the view is cached per agent and grants met).
   */
  encoded(agent: string, kind: ListKind, claims?: Claims): string {
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
    let text = entry.lists[kind];
    if (text === undefined) {
      const keep = kind === 'tools'
        ? (ref: { server: string; original?: string }) => decideTool(rules, agent, ref.server, ref.original!, claims).allowed
        : (ref: { server: string }) => decideServer(rules, agent, ref.server, claims).allowed;
      text = JSON.stringify({ [kind]: this.catalog.filteredList(kind, keep) });
      entry.lists[kind] = text;
    }
    return text;
  }
}

/** What one session last showed its agent of each list, so a change is announced only if it differs. */
export class ShownViews {
  private readonly last = new Map<ListKind, string>();

  constructor(private readonly views: AgentViews, private readonly agent: string, private readonly claims: () => Claims | undefined = () => undefined) {}

  /** The list to send now (remembered as shown). */
  serve(kind: ListKind): string {
    const text = this.views.encoded(this.agent, kind, this.claims());
    this.last.set(kind, text);
    return text;
  }

  /** Whether the agent's view differs from what it was last shown (and remember the new one). */
  changed(kind: ListKind): boolean {
    const text = this.views.encoded(this.agent, kind, this.claims());
    if (this.last.get(kind) === text) return false;
    this.last.set(kind, text);
    return true;
  }
}
