// What search mode needs of the gateway, in one place: which mode an agent is in (its rules' `mode`,
// else the gateway's `--mode`), its always-shown tools, the search itself under the agent's rules,
// and the counts status, metrics and the console show. Sessions (session.ts) get it as a part.

import type { Catalog, ToolEntry } from '../../catalog/catalog.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { Logger } from '../../observability/logger.js';
import type { AgentMode, ModeSettings } from '../../rules/agent-mode.js';
import { decideTool, effectiveAgent, type Claims } from '../../rules/decide.js';
import type { Rules } from '../../rules/load.js';
import type { SearchIndexes } from './search-indexes.js';
import { resultTool, searchModeList, type SearchRequest, type SearchResultTool } from './search-mode.js';
import { seenEntry } from '../routing/own-catalogs.js';
import type { HybridRanking } from './hybrid-ranking.js';

interface ToolSearchParts {
  readonly catalog: Catalog;
  readonly rules: () => Rules;
  readonly indexes: SearchIndexes;
  readonly metrics: GatewayMetrics;
  readonly log: Logger;
  /** The gateway's `--mode`: an agent whose rules name none is in it. */
  readonly mode: AgentMode;
  /** The embeddings ranking fused with the lexical one; undefined: lexical only. */
  readonly hybrid: HybridRanking | undefined;
}

/** Who is searching: the agent, its token's claims, its session's own catalogs. */
interface Searcher {
  readonly agent: string;
  readonly claims: Claims | undefined;
  readonly own: readonly Catalog[] | undefined;
  /** Narrows what is found further (a curated view's selection); undefined: every tool the agent may call. */
  readonly within?: ((entry: ToolEntry) => boolean) | undefined;
}

/** Search mode's counts since start (status, the console); /metrics has them as counters. */
interface SearchCounts {
  searches: number;
  results: number;
  zeroResults: number;
}

export class ToolSearch {
  readonly counts: SearchCounts = { searches: 0, results: 0, zeroResults: 0 };

  constructor(private readonly parts: ToolSearchParts) {}

  /** The rules in force (a session's cached list is keyed by the snapshot). */
  rules(): Rules {
    return this.parts.rules();
  }

  /** The hybrid ranking's state, for status; undefined when lexical only. */
  hybridStatus(): ReturnType<HybridRanking['status']> | undefined {
    return this.parts.hybrid?.status();
  }

  /** Whether any agent may be in search mode (or has searched): the status shows search counts only then. */
  get inUse(): boolean {
    if (this.parts.mode === 'search' || this.counts.searches > 0 || this.parts.hybrid !== undefined) return true;
    for (const agent of this.parts.rules().agents.values()) if (agent.modeSettings?.mode === 'search') return true;
    return false;
  }

  /** Indexes the shared catalog ahead of the first search. */
  warm(): void {
    this.parts.indexes.warm();
  }

  /** Tools in the shared index. */
  get indexed(): number {
    return this.parts.indexes.size;
  }

  /** The agent's mode: its rules' (its own entry, else `default`'s), else the gateway's. */
  modeOf(agent: string): AgentMode {
    return this.modeSettingsOf(agent)?.mode ?? this.parts.mode;
  }

  modeSettingsOf(agent: string): ModeSettings | undefined {
    const rules = this.parts.rules();
    if (rules.open) return undefined;
    const id = effectiveAgent(rules, agent);
    return id === undefined ? undefined : rules.agents.get(id)?.modeSettings;
  }

  /** Whether the agent may call the tool (held tools are filtered by the callers: they are never listed). */
  allowed(who: Searcher): (entry: ToolEntry) => boolean {
    const rules = this.parts.rules();
    if (rules.open) return () => true;
    return (entry) => decideTool(rules, who.agent, entry.server, entry.original, who.claims).allowed;
  }

  /** The best tools for the query that the agent may call, best first, as it calls them. */
  async search(request: SearchRequest, who: Searcher): Promise<SearchResultTool[]> {
    const rulesAllow = this.allowed(who);
    const within = who.within;
    const allowed = within === undefined ? rulesAllow : (entry: ToolEntry): boolean => rulesAllow(entry) && within(entry);
    const hybrid = this.parts.hybrid;
    // The hybrid ranking fuses a deeper lexical list with the vector one; lexical alone needs only `limit`.
    const depth = hybrid === undefined ? request.limit : Math.max(request.limit, hybrid.depth);
    const lexical = this.parts.indexes.search(request.query, depth, who.own, allowed);
    const ranked =
      hybrid === undefined ? lexical : await hybrid.rank(request, lexical, { indexes: this.parts.indexes, own: who.own, allow: allowed });
    const tools: SearchResultTool[] = [];
    for (const hit of ranked) {
      if (tools.length >= request.limit) break;
      const tool = resultTool(hit.catalog, hit.key, hit.entry);
      if (tool !== undefined) tools.push(tool);
    }
    this.counts.searches++;
    this.counts.results += tools.length;
    if (tools.length === 0) this.counts.zeroResults++;
    this.parts.metrics.toolSearch(tools.length);
    return tools;
  }

  /** A search-mode session's tools list: search_tools, describe_tools, the always-shown tools, what it found. */
  list(who: Searcher, found: Iterable<string>): unknown[] {
    const { catalog } = this.parts;
    const own = who.own;
    return searchModeList(this.modeSettingsOf(who.agent), found, {
      catalogs: own === undefined ? [catalog] : [...own, catalog],
      lookup: (name) => this.lookup(own, name),
      allowed: this.allowed(who),
    });
  }

  /**
   * The listed definitions of the named tools the agent may call (the view tools/list would show);
   * the other names — unknown, denied or held alike — in `unknown`.
   */
  describe(who: Searcher, names: readonly string[]): { tools: unknown[]; unknown: string[] } {
    const allowed = this.allowed(who);
    const tools: unknown[] = [];
    const unknown: string[] = [];
    for (const name of names) {
      const hit = this.lookup(who.own, name);
      const view = hit !== undefined && hit.entry.held === undefined && allowed(hit.entry) ? hit.catalog.toolView(name) : undefined;
      if (view === undefined) unknown.push(name);
      else tools.push(view);
    }
    return { tools, unknown };
  }

  /** A name as the session sees it (`seenEntry`, as the router looks it up), with the catalog it is in. */
  private lookup(own: readonly Catalog[] | undefined, name: string): { catalog: Catalog; entry: ToolEntry } | undefined {
    return seenEntry(this.parts.catalog, own, (c) => {
      const entry = c.tool(name);
      return entry === undefined ? undefined : { server: entry.server, catalog: c, entry };
    });
  }
}
