// A curated view applied to one agent session (the view itself is compiled by rules/views.ts): the
// tools the agent's rules allow are narrowed to the view's selection and shown as the view presents
// them (renamed, described, parameters fixed or hidden); a call by a name the view shows is turned
// back into the catalog's public name and the server's own arguments. The rules and the pins still
// judge the call by the tool's real name and definition (router.ts): a view never widens anything.
// `viewList` makes the view's tools list from the items the rules let the agent see
// (`AgentViews.encodedOn`); `viewTarget` turns a call by the view's name back into the public name,
// and `viewArguments` gives the server's arguments. `AgentSession.callOnView` uses them before the
// ordinary `callTool`, so the router, rules and pins judge the real tool.

import { GatewayError } from '../errors.js';
import type { CompiledView, ViewTool } from '../rules/views.js';
import type { ListKind } from '../servers/lists.js';

/** An item the agent's rules let it see, with the server it came from and (tools, prompts) its own name there. */
export interface SeenItem {
  readonly server: string;
  readonly original?: string;
  readonly item: unknown;
}

/** A view that a reload removed: its sessions see nothing and every call is unknown. */
export const REMOVED_VIEW: CompiledView = Object.freeze({
  name: '',
  exact: new Map(),
  renamed: new Map(),
  servers: new Set<string>(),
  select: () => undefined,
  showsSkill: () => false,
});

/**
 * What an agent on `view` is shown of one list: tools the view selects, as it presents them; resources,
 * templates and prompts only of the servers the view names. Two tools the view would show under one
 * name: the renamed one wins (the view said so), the other is left out.
 */
export function viewList(view: CompiledView, kind: ListKind, items: readonly SeenItem[]): unknown[] {
  if (kind !== 'tools') return items.filter((i) => view.servers.has(i.server)).map((i) => i.item);
  const out: Record<string, unknown>[] = [];
  const taken = new Set(view.renamed.keys());
  for (const { server, original, item } of items) {
    const entry = original === undefined ? undefined : view.select(server, original);
    if (entry === undefined) continue;
    const tool = item as Record<string, unknown>;
    if (entry.name === undefined) {
      if (taken.has(tool.name as string)) continue;
      taken.add(tool.name as string);
    }
    out.push(presented(entry, tool));
  }
  return out;
}

/** The tool as the view presents it: a copy; the catalog's object is shared by every agent. */
function presented(entry: ViewTool, tool: Record<string, unknown>): Record<string, unknown> {
  if (entry.name === undefined && entry.description === undefined && entry.appendDescription === undefined && entry.params.size === 0)
    return tool;
  const out: Record<string, unknown> = { ...tool };
  if (entry.name !== undefined) out.name = entry.name;
  if (entry.description !== undefined || entry.appendDescription !== undefined) {
    const base = entry.description ?? (typeof tool.description === 'string' ? tool.description : '');
    out.description =
      entry.appendDescription === undefined ? base : base === '' ? entry.appendDescription : `${base}\n\n${entry.appendDescription}`;
  }
  if (entry.params.size > 0) out.inputSchema = fixedSchema(entry, tool.inputSchema);
  return out;
}

/** A fixed parameter is shown as a `const` of its value; a hidden one is not shown at all. */
function fixedSchema(entry: ViewTool, schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const source = schema as Record<string, unknown>;
  const props =
    typeof source.properties === 'object' && source.properties !== null && !Array.isArray(source.properties)
      ? (source.properties as Record<string, unknown>)
      : {};
  const properties: Record<string, unknown> = { ...props };
  for (const [param, fixed] of entry.params) {
    if (fixed.hidden) delete properties[param];
    else {
      const was = properties[param];
      properties[param] = {
        ...(typeof was === 'object' && was !== null && !Array.isArray(was) ? was : {}),
        const: fixed.value,
        default: fixed.value,
      };
    }
  }
  const out: Record<string, unknown> = { ...source, properties };
  if (Array.isArray(source.required)) {
    const required = source.required.filter((name) => !(typeof name === 'string' && entry.params.get(name)?.hidden === true));
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  return out;
}

/** A call by a name the view shows: the catalog's public name of the tool, and the view's entry for it. */
interface ViewTarget {
  readonly publicName: string;
  readonly entry: ViewTool;
}

/**
 * Which tool `name` is on this view, or undefined when the view does not show it (answered as an
 * unknown tool: what a view leaves out does not exist for its agents). `entryOf` finds a public
 * name's tool (the catalog's, or the session's own); `publicName` names a server's tool.
 */
export function viewTarget(
  view: CompiledView,
  name: string,
  entryOf: (publicName: string) => { server: string; original: string } | undefined,
  publicName: (server: string, original: string) => string,
): ViewTarget | undefined {
  const renamed = view.renamed.get(name);
  if (renamed !== undefined) return { publicName: publicName(renamed.server, renamed.tool), entry: renamed };
  const found = entryOf(name);
  if (found === undefined) return undefined;
  const entry = view.select(found.server, found.original);
  // A renamed tool is called by the view's name only; its public name is not on the view.
  if (entry === undefined || entry.name !== undefined) return undefined;
  return { publicName: name, entry };
}

/**
 * The arguments the server gets: the agent's with every fixed parameter set to the view's value. A
 * shown fixed parameter sent with another value is refused (the agent was told its value); a hidden
 * one is set whatever the agent sent, since it was never shown.
 */
export function viewArguments(
  entry: ViewTool,
  shownName: string,
  args: Record<string, unknown> | undefined,
): Record<string, unknown> | GatewayError {
  if (entry.params.size === 0) return args ?? {};
  const out: Record<string, unknown> = { ...args };
  for (const [param, fixed] of entry.params) {
    if (!fixed.hidden && args !== undefined && param in args && JSON.stringify(args[param]) !== JSON.stringify(fixed.value)) {
      return new GatewayError(
        'MCPG_INVALID_PARAMS',
        `tool "${shownName}": parameter "${param}" is fixed to ${JSON.stringify(fixed.value)} on this view`,
        { detail: { tool: shownName, param } },
      );
    }
    out[param] = fixed.value;
  }
  return out;
}
