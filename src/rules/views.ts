// Curated views: the `views` section of gateway-rules.json, compiled. A curated view is a named
// selection of tools across servers (served at `/mcp/v/NAME` over HTTP, `serve --view NAME` over
// stdio) that may rename a tool, replace or extend its description, and fix or hide parameters, and
// that shows the skills its `skills` names (by server and skill path glob). It only narrows: an agent on a view sees the tools its rules allow *and* the view selects, so nothing
// here grants anything (rules/decide.ts still decides every call). Pure: validation and compilation.

import { describeValue, isPlainObject } from '../config/issues.js';
import { frozenMap, frozenSet } from './frozen.js';
import { compileMatcher, globToRegExp, isGlob, type Matcher } from './globs.js';

/** A parameter a view sets on the way to the server; `hidden` also removes it from the schema shown. */
interface ViewParam {
  readonly value: unknown;
  readonly hidden: boolean;
}

/** One selection of a view: a server's tool (or tools, for a glob) and what the view changes. */
export interface ViewTool {
  readonly server: string;
  /** The server's own tool name, or a glob over them, as written. */
  readonly tool: string;
  /** The name agents on the view see and call (exact selections only). */
  readonly name?: string;
  /** Replaces the tool's description. */
  readonly description?: string;
  /** Appended to the tool's description (after `description` when both are set). */
  readonly appendDescription?: string;
  readonly params: ReadonlyMap<string, ViewParam>;
}

export interface CompiledView {
  readonly name: string;
  /** Exact selections, keyed `server\0tool`; looked up before the globs. */
  readonly exact: ReadonlyMap<string, ViewTool>;
  /** The renamed selections by the name the view gives them. */
  readonly renamed: ReadonlyMap<string, ViewTool>;
  /** Servers whose resources, resource templates and prompts the view also shows. */
  readonly servers: ReadonlySet<string>;
  /** The selection that takes a server's tool into the view: its exact entry, else the first glob in file order. */
  readonly select: (server: string, tool: string) => ViewTool | undefined;
  /** Whether the view shows a server's skill, by its path (`acme/billing/refunds`); `skills` names them. */
  readonly showsSkill: (server: string, path: string) => boolean;
}

/** What the rules compiler lends: where errors and warnings go, and the servers `.mcp.json` defines. */
interface ViewContext {
  readonly servers: ReadonlySet<string>;
  readonly error: (at: readonly PropertyKey[], message: string) => void;
  readonly warn: (at: readonly PropertyKey[], message: string) => void;
}

/** A view's name is one URL path segment (`/mcp/v/NAME`). */
const VIEW_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** The characters the MCP specification allows in a tool name, and its length. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const VIEW_KEYS = new Set(['tools', 'servers', 'skills', 'description']);
const ENTRY_KEYS = new Set(['name', 'description', 'appendDescription', 'params']);
const PARAM_KEYS = new Set(['value', 'hidden']);
/** Bounds on what a view adds to every list it serves. */
const MAX_DESCRIPTION = 8192;
const MAX_VALUE_CHARS = 16384;

const q = (value: string): string => JSON.stringify(value);

/** `views`: `{NAME: {"tools": {SERVER: [TOOL…] | {TOOL: {…}}}, "servers": [SERVER…]}}`; undefined → none. */
export function compileViews(value: unknown, ctx: ViewContext): ReadonlyMap<string, CompiledView> {
  const views = new Map<string, CompiledView>();
  if (value === undefined) return frozenMap(views);
  if (!isPlainObject(value)) {
    ctx.error(['views'], `expected an object mapping view names to views, got ${describeValue(value)}`);
    return frozenMap(views);
  }
  for (const [name, raw] of Object.entries(value)) {
    const view = compileView(name, raw, ctx);
    if (view !== undefined) views.set(name, view);
  }
  return frozenMap(views);
}

function compileView(name: string, raw: unknown, ctx: ViewContext): CompiledView | undefined {
  const base = ['views', name];
  if (!VIEW_NAME.test(name)) {
    ctx.error(
      base,
      `view name ${q(name)} must be 1–64 letters, digits, "_", "." or "-" (it is a URL path segment: /mcp/v/NAME), starting with a letter or digit`,
    );
    return undefined;
  }
  if (!isPlainObject(raw)) {
    ctx.error(base, `expected an object with "tools" (and optionally "servers"), got ${describeValue(raw)}`);
    return undefined;
  }
  for (const key of Object.keys(raw))
    if (!VIEW_KEYS.has(key)) ctx.warn([...base, key], `unknown key ${q(key)} in view ${q(name)} is ignored`);
  if (raw.description !== undefined && typeof raw.description !== 'string')
    ctx.error([...base, 'description'], `expected a string, got ${describeValue(raw.description)}`);
  const exact = new Map<string, ViewTool>();
  const globs: { match: RegExp; entry: ViewTool }[] = [];
  const renamed = new Map<string, ViewTool>();
  const tools = raw.tools;
  if (tools === undefined)
    ctx.error(
      [...base, 'tools'],
      `missing; a view selects tools: {"SERVER": ["TOOL", "list_*"]} or {"SERVER": {"TOOL": {"name": …, "params": …}}}`,
    );
  else if (!isPlainObject(tools))
    ctx.error([...base, 'tools'], `expected an object mapping server names to tools, got ${describeValue(tools)}`);
  else {
    for (const [server, selection] of Object.entries(tools)) {
      const at = [...base, 'tools', server];
      if (!ctx.servers.has(server)) ctx.warn(at, `view ${q(name)} names server ${q(server)}, which .mcp.json does not define`);
      for (const entry of readSelection(server, selection, at, ctx)) {
        if (isGlob(entry.tool)) globs.push({ match: globToRegExp(entry.tool), entry });
        else exact.set(`${server}\u0000${entry.tool}`, entry);
        if (entry.name === undefined) continue;
        const clash = renamed.get(entry.name);
        if (clash !== undefined)
          ctx.error(
            [...at, entry.tool, 'name'],
            `view ${q(name)} gives the name ${q(entry.name)} to two tools (also to ${q(clash.tool)} of server ${q(clash.server)})`,
          );
        else renamed.set(entry.name, entry);
      }
    }
  }
  const servers = new Set<string>();
  if (raw.servers !== undefined) {
    if (!Array.isArray(raw.servers))
      ctx.error(
        [...base, 'servers'],
        `expected an array of server names (whose resources and prompts the view shows), got ${describeValue(raw.servers)}`,
      );
    else
      raw.servers.forEach((server: unknown, i) => {
        if (typeof server !== 'string' || server === '')
          ctx.error([...base, 'servers', i], `expected a server name, got ${describeValue(server)}`);
        else {
          if (!ctx.servers.has(server))
            ctx.warn([...base, 'servers', i], `view ${q(name)} names server ${q(server)}, which .mcp.json does not define`);
          servers.add(server);
        }
      });
  }
  const skills = readSkills(name, raw.skills, base, ctx);
  const frozenExact = frozenMap(exact);
  return Object.freeze({
    name,
    exact: frozenExact,
    renamed: frozenMap(renamed),
    servers: frozenSet(servers),
    // The RegExps stay in this closure (see globs.ts: a frozen RegExp is slow and an exposed one mutable).
    select: (server: string, tool: string) =>
      frozenExact.get(`${server}\u0000${tool}`) ?? globs.find((g) => g.entry.server === server && g.match.test(tool))?.entry,
    showsSkill: (server: string, path: string) => {
      const matcher = skills.get(server);
      return matcher !== undefined && (matcher.exact.has(path) || matcher.match(path) !== undefined);
    },
  });
}

/** `skills`: `{SERVER: [PATH or glob…]}`, the skills the view shows (none without it: a view is curated). */
function readSkills(name: string, raw: unknown, base: readonly PropertyKey[], ctx: ViewContext): ReadonlyMap<string, Matcher> {
  const skills = new Map<string, Matcher>();
  if (raw === undefined) return skills;
  if (!isPlainObject(raw)) {
    ctx.error(
      [...base, 'skills'],
      `expected an object mapping server names to arrays of skill paths or patterns, got ${describeValue(raw)}`,
    );
    return skills;
  }
  for (const [server, paths] of Object.entries(raw)) {
    const at = [...base, 'skills', server];
    if (!ctx.servers.has(server) && server !== 'mcpgate')
      ctx.warn(at, `view ${q(name)} names server ${q(server)}, which .mcp.json does not define`);
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string' || p === '')) {
      ctx.error(at, `expected an array of skill paths or patterns (non-empty strings), got ${describeValue(paths)}`);
      continue;
    }
    skills.set(server, compileMatcher(paths as string[]));
  }
  return skills;
}

/** A server's selection: an array of names and globs, or an object of names and globs to their changes. */
function readSelection(server: string, value: unknown, at: readonly PropertyKey[], ctx: ViewContext): ViewTool[] {
  const plain = (tool: string): ViewTool => Object.freeze({ server, tool, params: frozenMap<string, ViewParam>([]) });
  if (Array.isArray(value)) {
    const out: ViewTool[] = [];
    value.forEach((tool: unknown, i) => {
      if (typeof tool === 'string' && tool !== '') out.push(plain(tool));
      else ctx.error([...at, i], `expected a tool name or pattern (a non-empty string), got ${describeValue(tool)}`);
    });
    return out;
  }
  if (!isPlainObject(value)) {
    ctx.error(at, `expected an array of tool names or patterns, or an object mapping them to changes, got ${describeValue(value)}`);
    return [];
  }
  const out: ViewTool[] = [];
  for (const [tool, changes] of Object.entries(value)) {
    const entryAt = [...at, tool];
    if (tool === '') {
      ctx.error(entryAt, 'a tool name must not be empty');
      continue;
    }
    const entry = readChanges(server, tool, changes, entryAt, ctx);
    if (entry !== undefined) out.push(entry);
  }
  return out;
}

function readChanges(server: string, tool: string, value: unknown, at: readonly PropertyKey[], ctx: ViewContext): ViewTool | undefined {
  if (!isPlainObject(value)) {
    ctx.error(
      at,
      `expected an object ({} to take the tool as it is, or "name", "description", "appendDescription", "params"), got ${describeValue(value)}`,
    );
    return undefined;
  }
  for (const key of Object.keys(value)) if (!ENTRY_KEYS.has(key)) ctx.warn([...at, key], `unknown key ${q(key)} is ignored`);
  const glob = isGlob(tool);
  let bad = false;
  const text = (key: 'name' | 'description' | 'appendDescription'): string | undefined => {
    const v = value[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      ctx.error([...at, key], `expected a string, got ${describeValue(v)}`);
      bad = true;
      return undefined;
    }
    if (key !== 'name' && v.length > MAX_DESCRIPTION) {
      ctx.error([...at, key], `at most ${MAX_DESCRIPTION} characters (got ${v.length})`);
      bad = true;
    }
    return v;
  };
  const name = text('name');
  if (name !== undefined && glob) {
    ctx.error(
      [...at, 'name'],
      `a pattern (${q(tool)}) selects many tools and cannot give them one name; rename each tool in an entry of its own`,
    );
    bad = true;
  } else if (name !== undefined && !TOOL_NAME.test(name)) {
    ctx.error([...at, 'name'], `${q(name)} is not a valid tool name (1–128 letters, digits, "_", "." or "-")`);
    bad = true;
  }
  const description = text('description');
  const appendDescription = text('appendDescription');
  const params = new Map<string, ViewParam>();
  if (value.params !== undefined) {
    if (!isPlainObject(value.params)) {
      ctx.error(
        [...at, 'params'],
        `expected an object mapping parameter names to {"value": …, "hidden": true|false}, got ${describeValue(value.params)}`,
      );
      bad = true;
    } else {
      for (const [param, spec] of Object.entries(value.params)) {
        const paramAt = [...at, 'params', param];
        if (!isPlainObject(spec) || !('value' in spec)) {
          ctx.error(
            paramAt,
            `expected {"value": …} (the value the server gets), optionally with "hidden": true, got ${describeValue(spec)}`,
          );
          bad = true;
          continue;
        }
        for (const key of Object.keys(spec)) if (!PARAM_KEYS.has(key)) ctx.warn([...paramAt, key], `unknown key ${q(key)} is ignored`);
        if (spec.hidden !== undefined && typeof spec.hidden !== 'boolean') {
          ctx.error([...paramAt, 'hidden'], `expected true or false, got ${describeValue(spec.hidden)}`);
          bad = true;
          continue;
        }
        const size = JSON.stringify(spec.value)?.length ?? 0;
        if (size > MAX_VALUE_CHARS) {
          ctx.error([...paramAt, 'value'], `at most ${MAX_VALUE_CHARS} characters of JSON (got ${size})`);
          bad = true;
          continue;
        }
        params.set(param, Object.freeze({ value: spec.value, hidden: spec.hidden === true }));
      }
    }
  }
  if (bad) return undefined;
  return Object.freeze({
    server,
    tool,
    ...(name !== undefined && { name }),
    ...(description !== undefined && { description }),
    ...(appendDescription !== undefined && { appendDescription }),
    params: frozenMap(params),
  });
}
