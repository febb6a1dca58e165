// A curated view applied to one agent session (the view itself is compiled by rules/views.ts): the
// tools the agent's rules allow are narrowed to the view's selection and shown as the view presents
// them (renamed, described, parameters fixed or hidden); a call by a name the view shows is turned
// back into the catalog's public name and the server's own arguments. The rules and the pins still
// judge the call by the tool's real name and definition (router.ts): a view never widens anything.
// `viewList` makes the view's tools list from the items the rules let the agent see
// (`AgentViews.encodedOn`; code mode's tools on a view show the same `viewSelection`); `viewTarget`
// turns a call by the view's name back into the public name, and `viewArguments` gives the server's
// arguments. `ToolCalls.callOnView` uses them before routing (a direct call and a program's inner call
// alike), so the router, rules and pins judge the real tool.

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
 * templates and prompts only of the servers the view names.
 */
export function viewList(view: CompiledView, kind: ListKind, items: readonly SeenItem[]): unknown[] {
  if (kind !== 'tools') return items.filter((i) => view.servers.has(i.server)).map((i) => i.item);
  return viewSelection(view, items).map((s) => presented(s.entry, s.seen.item as Record<string, unknown>));
}

/** A tool a view shows: what it was made from, the view's entry for it, and the name the view shows it by. */
interface ViewSelected<T extends SeenItem> {
  readonly seen: T;
  readonly entry: ViewTool;
  readonly name: string;
}

/**
 * The tools a view shows of `items` (the tools the agent's rules let it see), in their order. Two tools
 * the view would show under one name: the renamed one wins (the view said so), the other is left out.
 * The tools list and code mode's tools on a view (their declarations, search and a program's names) are
 * both made from this, so they show the same tools by the same names.
 */
export function viewSelection<T extends SeenItem>(view: CompiledView, items: readonly T[]): ViewSelected<T>[] {
  const out: ViewSelected<T>[] = [];
  const taken = new Set(view.renamed.keys());
  for (const seen of items) {
    const entry = seen.original === undefined ? undefined : view.select(seen.server, seen.original);
    if (entry === undefined) continue;
    let name = entry.name;
    if (name === undefined) {
      name = (seen.item as Record<string, unknown>).name as string;
      if (taken.has(name)) continue;
      taken.add(name);
    }
    out.push({ seen, entry, name });
  }
  return out;
}

/**
 * The tool as the view presents it: a copy; the catalog's object is shared by every agent. A fixed
 * parameter is shown as a `const` of its value, or left out with `fixed: 'left out'` (code mode's
 * declarations: a program need not, and may not otherwise, set it).
 */
export function presented(entry: ViewTool, tool: Record<string, unknown>, fixed: 'const' | 'left out' = 'const'): Record<string, unknown> {
  if (entry.name === undefined && entry.description === undefined && entry.appendDescription === undefined && entry.params.size === 0)
    return tool;
  const out: Record<string, unknown> = { ...tool };
  if (entry.name !== undefined) out.name = entry.name;
  if (entry.description !== undefined || entry.appendDescription !== undefined) {
    const base = entry.description ?? (typeof tool.description === 'string' ? tool.description : '');
    out.description =
      entry.appendDescription === undefined ? base : base === '' ? entry.appendDescription : `${base}\n\n${entry.appendDescription}`;
  }
  if (entry.params.size > 0) out.inputSchema = fixedSchema(entry, tool.inputSchema, fixed === 'left out');
  return out;
}

/** A fixed parameter is shown as a `const` of its value (or left out, as a hidden one always is). */
function fixedSchema(entry: ViewTool, schema: unknown, leaveOutFixed: boolean): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const source = schema as Record<string, unknown>;
  const props =
    typeof source.properties === 'object' && source.properties !== null && !Array.isArray(source.properties)
      ? (source.properties as Record<string, unknown>)
      : {};
  const properties: Record<string, unknown> = { ...props };
  for (const [param, fixed] of entry.params) {
    if (fixed.hidden || leaveOutFixed) delete properties[param];
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
    const required = source.required.filter(
      (name) => !(typeof name === 'string' && entry.params.has(name) && (leaveOutFixed || entry.params.get(name)!.hidden)),
    );
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
