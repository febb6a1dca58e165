// Code mode in an agent session: instead of the catalog the agent is listed three tools —
// `search_tools` (search mode's index under the agent's rules and pins, one compact line per hit),
// `describe_tools` (a compact TypeScript declaration of up to 10 tools, stamped with the catalog
// version) and `run_code` (an async JavaScript function body run in a fresh sandbox, whose tool calls
// are the agent's own calls: code-run.ts). A small catalog (at most 30 tools the agent may call from
// code) has its declarations in run_code's description instead, so no describe step is needed.
// The same tools sit beside an aggregate or search mode's list when the agent's rules say
// `"codeMode": true` (`CodeTools.list` gives them to those modes). On a curated view they see the
// view's tools only, by the view's names, fixed parameters left out of the declarations (a program's
// call goes through the view as a direct one does). Runs of a session are bounded
// (`code.limits.runsInFlight`); the agent's cancel of run_code stops its program and its inner calls.

import type { Catalog, ToolEntry } from '../../catalog/catalog.js';
import type { ProgramRunner, ProgramTool } from '../../code/program.js';
import { GatewayError } from '../../errors.js';
import type { AuditLog } from '../../observability/audit.js';
import { approvalFor } from '../../rules/approvals.js';
import { codeApprovalFor, codeMayCall, codeSettingsOf } from '../../rules/code-settings.js';
import type { Rules } from '../../rules/load.js';
import type { CompiledView, ViewTool } from '../../rules/views.js';
import { presented, viewArguments, viewSelection, viewTarget } from '../../policy/curated-views.js';
import type { JsonRpcRequest, RequestId } from '../../wire/jsonrpc.js';
import { seenEntry } from '../routing/own-catalogs.js';
import type { CodeBoard } from './code-board.js';
import { DEFAULT_RUNS_IN_FLIGHT, newRunId, runCode } from './code-run.js';
import { MAX_SKILL_HITS, SEARCH_TOOL_NAME, searchRequest, skillLines } from './search-mode.js';
import type { ModeHost, ModeToolCall, SessionMode } from './session-mode.js';
import { compactHit, declaration, isReadOnly, summaryOf } from './tool-declarations.js';
import type { ToolSearch } from './tool-search.js';

export const DESCRIBE_TOOL_NAME = 'describe_tools';
export const RUN_CODE_TOOL_NAME = 'run_code';
/** Every tool name code mode owns. */
export const CODE_TOOL_NAMES: ReadonlySet<string> = new Set([SEARCH_TOOL_NAME, DESCRIBE_TOOL_NAME, RUN_CODE_TOOL_NAME]);

/** At most this many tools the agent may call from code: their declarations go in run_code's description. */
const EMBED_MAX_TOOLS = 30;
const MAX_DESCRIBE = 10;

/** What code mode reads of the gateway (one set per gateway). */
interface CodeModeParts {
  readonly search: ToolSearch;
  readonly catalog: Catalog;
  readonly board: CodeBoard;
  /** The gateway's pool of sandbox workers every run goes to (closed with the gateway). */
  readonly runner: ProgramRunner;
  readonly audit: AuditLog | undefined;
}

const SEARCH_TOOL = {
  name: SEARCH_TOOL_NAME,
  description: 'Find tools for a task. One line per tool: name(params, optional?) — summary.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The task, in a few words.' },
      limit: { type: 'integer', minimum: 1, maximum: 50 },
    },
    required: ['query'],
  },
};

const DESCRIBE_TOOL = {
  name: DESCRIBE_TOOL_NAME,
  description: 'TypeScript declarations of up to 10 tools by name, to call them from run_code.',
  inputSchema: {
    type: 'object',
    properties: { names: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_DESCRIBE } },
    required: ['names'],
  },
};

const RUN_CODE_DESCRIPTION =
  'Run an async JavaScript function body. Call tools with `await tools.<server>.<tool>(args)` or ' +
  '`await tools.call(name, args)`; use Promise.all for parallel calls. A failed call throws (err.code). ' +
  'Return only what you need: the value comes back as JSON.';

function runCodeTool(declarations: string | undefined): Record<string, unknown> {
  return {
    name: RUN_CODE_TOOL_NAME,
    description: declarations === undefined ? RUN_CODE_DESCRIPTION : `${RUN_CODE_DESCRIPTION}\nTools:\n${declarations}`,
    inputSchema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
  };
}

/** A tool as code mode sees it: the name it is called by, where it is listed, its entry, and its view. */
interface SeenTool {
  /** The name the session calls it by: its public name, or its curated view's. */
  readonly name: string;
  /** Its public name (the catalog's). */
  readonly publicName: string;
  readonly catalog: Catalog;
  readonly entry: ToolEntry;
  /** Its listed view (on a curated view: as the view presents it, fixed parameters left out). */
  readonly view: Readonly<Record<string, unknown>>;
  /** The curated view's entry for it (undefined: the session is on none). */
  readonly onView?: ViewTool | undefined;
}

/**
 * One session's code-mode tools: the list, search_tools' compact hits, describe_tools, and run_code's
 * runs (by the agent's request id, so its cancel finds them). Used by code mode, and beside aggregate
 * and search mode for an agent with `"codeMode": true`.
 */
export class CodeTools {
  private readonly runs = new Map<RequestId, AbortController>();
  private cache:
    | {
        key: string;
        rules: Rules;
        claims: unknown;
        own: readonly Catalog[] | undefined;
        view: CompiledView | undefined;
        tools: readonly unknown[];
        withSearch: readonly unknown[];
        /** On a curated view: its tools by public name (what a search finds is shown as the view shows it). */
        byPublic: ReadonlyMap<string, SeenTool> | undefined;
      }
    | undefined;

  constructor(
    private readonly parts: CodeModeParts,
    private readonly host: ModeHost,
  ) {}

  /** Code mode's tools as listed now (run_code with the declarations when the catalog is small). */
  list(withSearch: boolean): readonly unknown[] {
    const entry = this.current();
    return withSearch ? entry.withSearch : entry.tools;
  }

  /** The list and what it was made from, made again when the catalogs, rules, claims or view changed. */
  private current(): NonNullable<CodeTools['cache']> {
    const { host } = this;
    const own = host.own();
    const rules = this.parts.search.rules();
    const claims = host.claims();
    const view = host.curatedView();
    const key = `${this.parts.catalog.version}\u0000${own?.map((c) => c.version).join(',') ?? ''}`;
    const cached = this.cache;
    if (
      cached !== undefined &&
      cached.key === key &&
      cached.rules === rules &&
      cached.claims === claims &&
      cached.own === own &&
      cached.view === view
    )
      return cached;
    const all = this.callable();
    const callable = all.filter((t) => this.fromCode(t));
    const embedded = callable.length <= EMBED_MAX_TOOLS ? callable.map((t) => this.declare(t)).join('\n') : undefined;
    const tools = [DESCRIBE_TOOL, runCodeTool(embedded === '' ? undefined : embedded)];
    const byPublic = view === undefined ? undefined : new Map(all.map((t) => [t.publicName, t]));
    const entry = { key, rules, claims, own, view, tools, withSearch: [SEARCH_TOOL, ...tools], byPublic };
    this.cache = entry;
    return entry;
  }

  /** Answers search_tools, describe_tools or run_code. */
  call(call: ModeToolCall): void {
    const { host } = this;
    const { msg } = call;
    if (call.name === SEARCH_TOOL_NAME) return host.untilSettled(msg.id, () => this.searchTools(msg, call.args), 'listable');
    if (call.name === DESCRIBE_TOOL_NAME) return host.untilSettled(msg.id, () => this.describeTools(msg, call.args), 'listable');
    host.untilSettled(msg.id, () => this.runCode(call), 'listable');
  }

  /** The agent cancelled a request: a run it names stops (its inner calls are cancelled by the program's signal). */
  cancel(id: RequestId): boolean {
    const run = this.runs.get(id);
    if (run === undefined) return false;
    this.runs.delete(id);
    run.abort();
    return true;
  }

  close(): void {
    for (const run of this.runs.values()) run.abort();
    this.runs.clear();
  }

  private searchTools(msg: JsonRpcRequest, args: Readonly<Record<string, unknown>>): void {
    const { host } = this;
    let request;
    try {
      request = searchRequest(args);
    } catch (err) {
      return host.sendError(msg.id, err);
    }
    const view = host.curatedView();
    // On a curated view only its tools are found, and each is shown as the view shows it.
    const within = view === undefined ? undefined : (entry: ToolEntry): boolean => view.select(entry.server, entry.original) !== undefined;
    const byPublic = view === undefined ? undefined : this.current().byPublic;
    this.parts.search.search(request, { agent: host.agent, claims: host.claims(), own: host.own(), within }).then(
      (found) => {
        const hits = found.flatMap((t) => {
          if (byPublic === undefined)
            return [{ view: { name: t.name, description: t.description, inputSchema: t.inputSchema }, server: t.server }];
          const shown = byPublic.get(t.name);
          return shown === undefined ? [] : [{ view: shown.view, server: t.server }];
        });
        const lines = hits.map((h) => compactHit(h.view));
        // Skills the task matches follow: the agent reads one with resources/read before writing its program.
        const skills = host.findSkills(request.query, Math.min(request.limit, MAX_SKILL_HITS));
        const text = [...lines, ...skillLines(skills)];
        host.sendResult(msg.id, {
          content: [{ type: 'text', text: text.length === 0 ? 'No tool found; try other words.' : text.join('\n') }],
          structuredContent: {
            tools: hits.map((h, i) => ({ name: h.view.name, server: h.server, summary: summaryOf(h.view.description), line: lines[i] })),
            ...(skills.length > 0 && { skills }),
          },
        });
      },
      (err: unknown) => host.sendError(msg.id, err),
    );
  }

  private describeTools(msg: JsonRpcRequest, args: Readonly<Record<string, unknown>>): void {
    const { host } = this;
    const names = args.names;
    if (!Array.isArray(names) || names.length === 0 || names.length > MAX_DESCRIBE || !names.every((n) => typeof n === 'string'))
      return host.sendError(
        msg.id,
        new GatewayError('MCPG_INVALID_PARAMS', `describe_tools needs "names": an array of 1 to ${MAX_DESCRIBE} tool names`),
      );
    const described: { name: string; declaration: string }[] = [];
    const unknown: string[] = [];
    for (const name of names) {
      const tool = this.seen(name);
      if (tool === undefined) unknown.push(name);
      else described.push({ name, declaration: this.declare(tool) });
    }
    const version = this.catalogVersion();
    const text = [
      `// catalog ${version}`,
      ...described.map((d) => d.declaration),
      ...(unknown.length > 0 ? [`// unknown: ${unknown.join(', ')}`] : []),
    ].join('\n');
    host.sendResult(msg.id, {
      content: [{ type: 'text', text }],
      structuredContent: { catalogVersion: version, tools: described, unknown },
    });
  }

  private runCode(call: ModeToolCall): void {
    const { host } = this;
    const { msg } = call;
    const code = call.args.code;
    if (typeof code !== 'string' || code.trim() === '')
      return host.sendError(
        msg.id,
        new GatewayError('MCPG_INVALID_PARAMS', 'run_code needs "code": the body of an async function (a string)'),
      );
    const settings = codeSettingsOf(this.parts.search.rules(), host.agent);
    const most = settings?.limits.runsInFlight ?? DEFAULT_RUNS_IN_FLIGHT;
    if (this.runs.size >= most)
      return host.sendError(
        msg.id,
        new GatewayError(
          'MCPG_CODE_BUSY',
          `this session already has ${this.runs.size} code runs going (the limit is ${most}); wait for one to end`,
        ),
      );
    if (this.runs.has(msg.id))
      return host.sendError(
        msg.id,
        new GatewayError('MCPG_INVALID_REQUEST', `request id ${JSON.stringify(msg.id)} is already in use by a run`),
      );
    const controller = new AbortController();
    this.runs.set(msg.id, controller);
    const meta = call.params._meta;
    const token = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>).progressToken : undefined;
    const run = newRunId();
    void runCode(
      {
        agent: host.agent,
        session: host.session,
        settings,
        audit: this.parts.audit,
        board: this.parts.board,
        runner: this.parts.runner,
        tools: this.programTools(),
        lookup: (name) => {
          const tool = this.seen(name);
          if (tool === undefined) return undefined;
          const { onView } = tool;
          return {
            view: tool.view,
            server: tool.entry.server,
            original: tool.entry.original,
            // On a view the rules' code.allow reads the arguments the server gets (the view's fixed ones set).
            ...(onView !== undefined && {
              serverArgs: (args: Record<string, unknown>) => {
                const out = viewArguments(onView, name, args);
                return out instanceof GatewayError ? undefined : out;
              },
            }),
          };
        },
        callInner: (inner) => host.callInner(inner),
        progress: (record, done) => {
          if (typeof token !== 'string' && typeof token !== 'number') return;
          host.notify(
            'notifications/progress',
            {
              progressToken: token,
              progress: done,
              message: `${record.name}: ${record.ok ? 'ok' : (record.code ?? 'failed')} (${Math.round(record.ms)} ms)`,
            },
            msg.id,
          );
        },
      },
      { run, about: msg.id, code, signal: controller.signal },
    ).then((result) => {
      // Cancelled by the agent: a cancelled request is not answered.
      if (this.runs.get(msg.id) !== controller) return;
      this.runs.delete(msg.id);
      // With progress asked for, the answer goes a turn after the last progress notification: a
      // client that handles notifications asynchronously (the SDKs do) still has the request open.
      if (typeof token === 'string' || typeof token === 'number') setImmediate(() => host.sendResult(msg.id, result));
      else host.sendResult(msg.id, result);
    });
  }

  /**
   * The tools a program may name: those the agent may call, and those a direct call of which is
   * refused by name rather than as unknown — held ones, and denied ones of a prefixed server (whose
   * prefix names the server anyway) — so that a program's call is refused exactly as a direct one.
   * A denied tool of an unprefixed server stays out: directly it is unknown, and so it is in code.
   * On a curated view, those the view selects, by its names (a denied one it renames is unknown on
   * it, directly and in code).
   */
  private programTools(): ProgramTool[] {
    const view = this.host.curatedView();
    const tools: ProgramTool[] = [];
    const seen = new Set<string>();
    const add = (path: ProgramTool): void => {
      if (seen.has(path.name)) return;
      seen.add(path.name);
      tools.push(path);
    };
    for (const tool of this.callable()) add(this.pathOf(tool.catalog, tool));
    // A listed tool the rules may deny (the allowed ones are in already): on a view, one it renames is unknown.
    const consider = (catalog: Catalog, publicName: string, entry: { server: string; original: string }, listed: boolean): void => {
      if (view === undefined) return add(this.pathOf(catalog, { name: publicName, publicName, entry }));
      const onView = view.select(entry.server, entry.original);
      if (onView === undefined || (listed && onView.name !== undefined)) return;
      if (onView.name === undefined && view.renamed.has(publicName)) return;
      add(this.pathOf(catalog, { name: onView.name ?? publicName, publicName, entry, onView }));
    };
    for (const catalog of this.catalogs()) {
      for (const item of catalog.listTools()) {
        const name = (item as { name: string }).name;
        const entry = catalog.tool(name);
        if (entry !== undefined && catalog.isPrefixed(entry.server)) consider(catalog, name, entry, true);
      }
      for (const server of catalog.serverNames)
        for (const original of catalog.heldTools(server).keys()) {
          const publicName = catalog.publicName(server, original);
          if (publicName !== undefined) consider(catalog, publicName, { server, original }, false);
        }
    }
    return tools;
  }

  /** Where a program finds a tool: `tools.<server>.<tool>` (a view's renamed tool under its server, by the view's name), and its exact name. */
  private pathOf(
    catalog: Catalog,
    tool: {
      readonly name: string;
      readonly publicName: string;
      readonly entry: { server: string; original: string };
      readonly onView?: ViewTool | undefined;
    },
  ): ProgramTool {
    const prefixed = catalog.serverOfName(tool.publicName);
    const server = prefixed?.server ?? tool.entry.server;
    if (tool.onView?.name !== undefined) return { name: tool.name, server, tool: tool.name };
    return { name: tool.name, server, tool: prefixed?.rest ?? tool.entry.original };
  }

  /** The session's catalogs, its own first. */
  private catalogs(): readonly Catalog[] {
    const own = this.host.own();
    return own === undefined ? [this.parts.catalog] : [...own, this.parts.catalog];
  }

  /** Every listed tool the agent may call, as its session sees it (on a curated view: the view's, as the tools list shows them). */
  private callable(): SeenTool[] {
    const out: SeenTool[] = [];
    const names = new Set<string>();
    for (const catalog of this.catalogs())
      for (const item of catalog.listTools()) {
        const name = (item as { name: string }).name;
        if (names.has(name)) continue;
        names.add(name);
        const tool = this.seenPublic(name);
        if (tool !== undefined) out.push(tool);
      }
    const view = this.host.curatedView();
    if (view === undefined) return out;
    const items = out.map((tool) => ({ server: tool.entry.server, original: tool.entry.original, item: tool.view, tool }));
    return viewSelection(view, items).map((s) => onView(s.seen.tool, s.entry, s.name));
  }

  /**
   * A tool the agent may call, by the name the session calls it by (undefined: none such). On a
   * curated view the name is resolved as a direct call's is (`viewTarget`, as `ToolCalls.callOnView` does).
   */
  private seen(name: string): SeenTool | undefined {
    const view = this.host.curatedView();
    if (view === undefined) return this.seenPublic(name);
    const { catalog } = this.parts;
    const own = this.host.own();
    const target = viewTarget(
      view,
      name,
      (publicName) => seenEntry(catalog, own, (c) => c.tool(publicName)),
      (server, original) => catalog.nameFor(server, original),
    );
    if (target === undefined) return undefined;
    const tool = this.seenPublic(target.publicName);
    return tool === undefined ? undefined : onView(tool, target.entry, name);
  }

  /** A listed tool the agent may call, by its public name (undefined: none such). */
  private seenPublic(name: string): SeenTool | undefined {
    const { host } = this;
    const hit = seenEntry(this.parts.catalog, host.own(), (c) => {
      const entry = c.tool(name);
      return entry === undefined ? undefined : { server: entry.server, catalog: c, entry };
    });
    if (hit === undefined || hit.entry.held !== undefined) return undefined;
    if (!this.parts.search.allowed({ agent: host.agent, claims: host.claims(), own: host.own() })(hit.entry)) return undefined;
    const view = hit.catalog.toolView(name) as Readonly<Record<string, unknown>> | undefined;
    return view === undefined ? undefined : { name, publicName: name, catalog: hit.catalog, entry: hit.entry, view };
  }

  /** Whether a program may call the tool (an `allow` rule narrowed by arguments counts only for those). */
  private fromCode(tool: SeenTool): boolean {
    const settings = codeSettingsOf(this.parts.search.rules(), this.host.agent);
    return codeMayCall(settings, { ...this.at(tool), readOnly: isReadOnly(tool.view) });
  }

  private at(tool: SeenTool): { server: string; tool: string } {
    return { server: tool.entry.server, tool: tool.entry.original };
  }

  private declare(tool: SeenTool): string {
    const rules = this.parts.search.rules();
    const { server, tool: original } = this.at(tool);
    const needsApproval =
      approvalFor(rules, this.host.agent, server, original, undefined, this.host.claims()) !== undefined ||
      codeApprovalFor(rules, this.host.agent, { server, tool: original, args: undefined }) !== undefined;
    return declaration(tool.view, this.pathOf(tool.catalog, tool), { needsApproval, notFromCode: !this.fromCode(tool) });
  }

  /** The catalog version the declarations are made from (the session's own catalogs' too). */
  private catalogVersion(): string {
    const own = this.host.own();
    return own === undefined ? `v${this.parts.catalog.version}` : `v${this.parts.catalog.version}.${own.map((c) => c.version).join('.')}`;
  }
}

/** A tool as a curated view shows it to code mode: by the view's name, its fixed parameters left out. */
function onView(tool: SeenTool, entry: ViewTool, name: string): SeenTool {
  return { ...tool, name, view: presented(entry, tool.view, 'left out'), onView: entry };
}

/** Code mode: its tools list is code mode's three tools; a list change is compared against that list. */
export class CodeMode implements SessionMode {
  private bytes: { tools: readonly unknown[]; bytes: readonly Buffer[] } | undefined;

  constructor(
    private readonly tools: CodeTools,
    private readonly host: ModeHost,
  ) {}

  listTools(msg: JsonRpcRequest): void {
    this.host.untilSettled(msg.id, () => this.host.sendResultBytes(msg.id, this.host.serveTools()), 'listable');
  }

  owns(name: string): boolean {
    return CODE_TOOL_NAMES.has(name);
  }

  call(call: ModeToolCall): void {
    this.tools.call(call);
  }

  shownTools(): readonly Buffer[] {
    const tools = this.tools.list(true);
    if (this.bytes?.tools !== tools) this.bytes = { tools, bytes: [Buffer.from(JSON.stringify({ tools }))] };
    return this.bytes.bytes;
  }

  cancel(id: RequestId): boolean {
    return this.tools.cancel(id);
  }

  close(): void {
    this.tools.close();
  }
}
