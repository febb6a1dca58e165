// Search mode in an agent session: tools/list shows search_tools, describe_tools, the always-shown
// tools and what this session's searches found (search-mode.ts); search_tools and describe_tools are
// the mode's own tools, and a search that finds something new changes the list (announced with
// list_changed). A modern request's
// session ends with its answer, so it remembers nothing.

import type { Catalog } from '../../catalog/catalog.js';
import type { Claims } from '../../rules/decide.js';
import type { JsonRpcRequest } from '../../wire/jsonrpc.js';
import {
  DESCRIBE_NAME,
  FoundTools,
  SEARCH_TOOL_NAME,
  describeRequest,
  describeResult,
  searchRequest,
  searchResult,
} from './search-mode.js';
import type { ModeHost, ModeToolCall, SessionMode } from './session-mode.js';
import type { ToolSearch } from './tool-search.js';

export class SearchSession implements SessionMode {
  /** The tools this session's searches returned (listed to the agent). */
  readonly found = new FoundTools();
  private cache:
    { key: string; rules: unknown; claims: Claims | undefined; own: readonly unknown[] | undefined; bytes: readonly Buffer[] } | undefined;

  constructor(
    private readonly search: ToolSearch,
    private readonly catalog: Catalog,
    private readonly host: ModeHost,
  ) {}

  listTools(msg: JsonRpcRequest): void {
    this.host.untilSettled(msg.id, () => this.host.sendResultBytes(msg.id, this.host.serveTools()), 'listable');
  }

  owns(name: string): boolean {
    return name === SEARCH_TOOL_NAME || name === DESCRIBE_NAME;
  }

  call(call: ModeToolCall): void {
    if (call.name === DESCRIBE_NAME) return this.host.untilSettled(call.msg.id, () => this.describeTools(call.msg), 'listable');
    this.host.untilSettled(call.msg.id, () => this.searchTools(call.msg), 'listable');
  }

  /** describe_tools: the full definitions of the named tools the agent may call. */
  private describeTools(msg: JsonRpcRequest): void {
    const host = this.host;
    try {
      const names = describeRequest(msg.params?.arguments);
      const { tools, unknown } = this.search.describe({ agent: host.agent, claims: host.claims(), own: host.own() }, names);
      host.sendResult(msg.id, describeResult(tools, unknown));
    } catch (err) {
      host.sendError(msg.id, err);
    }
  }

  /** search_tools: the best tools the agent may call; a legacy session remembers them and lists them. */
  private searchTools(msg: JsonRpcRequest): void {
    const host = this.host;
    let request;
    try {
      request = searchRequest(msg.params?.arguments);
    } catch (err) {
      return host.sendError(msg.id, err);
    }
    this.search.search(request, { agent: host.agent, claims: host.claims(), own: host.own() }).then(
      (tools) => {
        // A modern request's session ends with this answer: nothing to remember (search-mode.ts).
        const added = !host.modern() && this.found.add(tools.map((t) => t.name));
        host.sendResult(msg.id, searchResult(tools));
        if (added) host.toolsChanged();
      },
      (err: unknown) => host.sendError(msg.id, err),
    );
  }

  /** The tools list in search mode, encoded once per catalog versions, rules, claims and finds. */
  shownTools(): readonly Buffer[] {
    const own = this.host.own();
    const rules = this.search.rules();
    const claims = this.host.claims();
    const key = `${this.catalog.version}\u0000${own?.map((c) => c.version).join(',') ?? ''}\u0000${this.found.revision}`;
    const cached = this.cache;
    if (cached !== undefined && cached.key === key && cached.rules === rules && cached.claims === claims && sameCatalogs(cached.own, own))
      return cached.bytes;
    const bytes = [Buffer.from(JSON.stringify({ tools: this.search.list({ agent: this.host.agent, claims, own }, this.found) }))];
    this.cache = { key, rules, claims, own, bytes };
    return bytes;
  }
}

function sameCatalogs(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.length === b.length && a.every((c, i) => c === b[i]));
}
