// One agent's session: the MCP server the agent sees. It keeps what the agent declared (its
// capabilities, whether it has initialized, its log level, its resource subscriptions), answers what
// the gateway knows itself (initialize, ping, the lists: cached bytes from the catalog, handed to the
// channel's `sendParts` between a head with the request's id and a tail, so a list is never
// re-serialized), routes everything else to the server that owns the name, and keeps
// the per-call state that makes progress and cancellation exact: agent id ↔ (connection, server id)
// (`Calls`, below), and records what each request to a server came to (its audit line, the call
// metrics; below).
// Right to left, it is what the gateway calls to reach this agent: server requests, log messages,
// list changes, and the answers to its requests, written to its channel (agent-channel.ts). It gets
// `SessionParts` (below: the router, the rules in force, views, settling, the catalog and the own
// catalogs, connections, subscriptions, metrics, the parts discovery.ts's meta-tools run over, the
// limits, a few callbacks), never the gateway.
//
// Hot path (tools/call): one JSON.parse of the agent's line, a map lookup, and the agent's line with
// only its id and name replaced (wire/request-splice.ts; JSON.stringify of the re-addressed request
// where that is not certain); the server's answer is relayed by splicing the id into its raw line.

import { randomUUID } from 'node:crypto';
import { GatewayError, asGatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';
import type { OutboundRequest } from '../../servers/outbound-request.js';
import {
  encodeError,
  encodeNotification,
  encodeResult,
  parseMessage,
  spliceResponseId,
  type Classified,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../wire/jsonrpc.js';
import { encodeResultParts, partsToText } from '../../wire/encoded.js';
import { sanitizeContent } from '../../wire/sanitize.js';
import { callHeaders } from '../../wire/tool-headers.js';
import type { Envelope } from '../../wire/era.js';
import type { Claims } from '../../rules/decide.js';
import { ShownViews, type AgentViews } from './agent-views.js';
import { REMOVED_VIEW, viewArguments, viewTarget } from '../../policy/curated-views.js';
import type { CompiledView } from '../../rules/views.js';
import { UntilSettled, type Settling } from './until-settled.js';
import { RequestSpans, failureOf } from './request-spans.js';
import { META_TOOL_NAMES, type DiscoveryParts } from '../modes/discovery.js';
import { SEARCH_TOOL_NAME } from '../modes/search-mode.js';
import { AggregateMode } from '../modes/aggregate-mode.js';
import { DiscoveryMode } from '../modes/discovery-mode.js';
import { SearchSession } from '../modes/search-session.js';
import type { ModeHost, SessionMode } from '../modes/session-mode.js';
import { NOT_YET, isPending, whenReady, type Caller, type Carrier, type ToolRoute, type Router } from '../routing/router.js';
import type { CallGate } from '../../policy/call-gate.js';
import { APPROVAL_ELICITATION, GatedCalls } from './gated-calls.js';
import { seenEntry, type OwnCatalogs } from '../routing/own-catalogs.js';
import { rewritePromptResult, rewriteReadResult, rewriteToolResult, type Catalog } from '../../catalog/catalog.js';
import { initializeResult, LOG_LEVEL_RANK } from '../routing/method-tables.js';
import { scopeOf } from '../../servers/pool.js';
import { listTasks, recordCreatedTask, renameTaskAnswer, taskOf, type TaskTable } from '../routing/tasks.js';
import { routeOtherMethod } from '../routing/other-methods.js';
import type { AgentChannel } from './agent-channel.js';
import type { AgentIdentity } from './agent-identity.js';
import type { AuditCall, AuditLog } from '../../observability/audit.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { Tracing, ServerCallSpan } from '../../observability/tracing.js';
import type { RulesInForce } from '../../rules/load.js';
import type { ToolSearch } from '../modes/tool-search.js';
import type { Subscriptions } from './subscriptions.js';
import { AgentRequests, type ServerQuestion } from './agent-requests.js';
import { extensionsOf } from './extensions.js';

/** What a session uses of the gateway: the parts, never the gateway itself. */
export interface SessionParts {
  router: Router;
  /** The rules in force (one snapshot; a session on a curated view finds its view there, a call what the gate asks). */
  inForce: RulesInForce;
  views: AgentViews;
  settling: Settling;
  catalog: Catalog;
  connections: ReadonlyMap<string, Connection>;
  subscriptions: Subscriptions<AgentSession>;
  metrics: GatewayMetrics;
  /** The audit trail (--audit); undefined: off, and nothing is built for it. */
  audit: AuditLog | undefined;
  /** OpenTelemetry traces (--otlp-endpoint); undefined: off, and no span is made. */
  tracing: Tracing | undefined;
  /** Discovery mode's meta-tools (for the agents in discovery mode: the gateway's, or their rules'). */
  discovery: DiscoveryParts;
  /** Each agent's mode, and search mode's search_tools and list. */
  search: ToolSearch;
  /** What the rules hold some calls to before they go (policy/call-gate.ts). */
  gate: CallGate;
  /** Requests one agent may have in flight on servers at once. */
  maxInflight: number;
  /** Neutralize escape sequences and invisible characters in what servers say. */
  sanitize: boolean;
  /** The ready servers' own instructions, for `initialize`. */
  instructions(): string | undefined;
  /** What mcpgate declares to agents (`method-tables.ts` `gatewayCapabilities`). */
  capabilities(): Record<string, unknown>;
  /** The tasks agents' calls created on servers, and whose each is (tasks.ts). */
  tasks: TaskTable;
  /** Sets the shared servers' log level to the most verbose any agent asked for, and `session`'s own pooled connections to their owners'. */
  setServersLogLevel(session: AgentSession): Promise<void>;
  /** The session ended (the registry forgets it, its subscriptions are dropped). */
  closed(session: AgentSession): void;
  /** The agent's roots changed: tell the servers that may ask it (shared ones and its own pooled ones). */
  rootsChanged(session: AgentSession): void;
  /**
   * Each pool scope's own catalog: what its per-agent or per-session servers' pooled connections list,
   * shown and routed instead of the shared catalog's part of those servers (own-catalogs.ts).
   */
  own: OwnCatalogs;
}

type Rewrite = (result: Record<string, unknown>) => boolean;

/** How a request is sent to a server, besides what it is (`OutboundRequest`). */
interface Sending {
  timeoutMs?: number | undefined;
  /** Edits a result before it is relayed (names, content); true when it changed it. */
  rewrite?: Rewrite | undefined;
  /** The audit line and call metrics of the request (undefined: none kept). */
  timed?: Timed | undefined;
  /** Ends the call's hold on its calls-in-flight limits (the gate's pass). */
  release?: (() => void) | undefined;
  /** Asked once a connection the call waited for is ready: whether the call may still go (an error ends it). */
  recheck?: (() => GatewayError | undefined) | undefined;
}

/** `ToolCall.arguments` when the agent sent arguments that are not an object. */
const INVALID = Symbol('invalid arguments');

/**
 * One tools/call, made once when its params are checked and never edited: a curated view's or a
 * meta-tool's rewrite makes a new one. Every step of the call (name, route, gate, send) reads it.
 */
interface ToolCall {
  /** The agent's request (its id and method). */
  readonly msg: JsonRpcRequest;
  /** The tool's name as this step knows it: the agent's, or a view's or execute_tool's rewrite. */
  readonly name: string;
  /** The params the server is sent (the agent's own object while nothing rewrote them: its line may be spliced). */
  readonly params: Readonly<Record<string, unknown>>;
  readonly arguments: Readonly<Record<string, unknown>> | undefined | typeof INVALID;
  /** The agent identity the call is made as (discovery's agent_id may name another). */
  readonly agent: string;
  readonly timeoutMs: number | undefined;
  /** The curated view has turned the name into the catalog's (or the session has none). */
  readonly viewed: boolean;
}

/** A tools/call's params checked once: its name (required) and its arguments (an object, or absent). */
function toolCall(
  msg: JsonRpcRequest,
  params: Record<string, unknown> | undefined,
  as: { agent: string; timeoutMs: number | undefined },
): ToolCall | GatewayError {
  const name = params?.name;
  if (params === undefined || typeof name !== 'string') return invalidParams('tools/call needs params.name (a string)');
  const args = params.arguments;
  const checked = args === undefined ? undefined : isObject(args) ? args : INVALID;
  return { msg, name, params, arguments: checked, agent: as.agent, timeoutMs: as.timeoutMs, viewed: false };
}

/** How long `initialize` waits for servers to settle, so the agent gets their instructions. */
const INITIALIZE_WAIT_MS = 5000;

/** Agent sessions are numbered for the pool's per-session scope (`session:N`). */
let nextSerial = 1;

/** Every tool name an agent mode may own: discovery's meta-tools and search mode's search_tools. */
const MODE_TOOL_NAMES: ReadonlySet<string> = new Set([...META_TOOL_NAMES, SEARCH_TOOL_NAME]);

export class AgentSession implements Caller {
  private initialized = false;
  private capabilities: Record<string, unknown> = {};
  /** The level the agent asked for (logging/setLevel); undefined: everything the servers send. */
  logRank: number | undefined;
  private readonly inflight = new Calls();
  /** Server→agent requests the agent has not answered yet. */
  private readonly agentRequests: AgentRequests;

  /** The server's own key of our request `id` to the agent, when it relays a modern server's input request. */
  inputKey(id: number): string | undefined {
    return this.agentRequests.inputKey(id);
  }
  private closed = false;
  /** Tracing on: the open span of each agent request, by the agent's id (undefined: tracing off). */
  private readonly spans: RequestSpans | undefined;
  /** A modern request's `Mcp-Param-*` headers (its envelope's), sent on with it to a modern HTTP server. */
  private paramHeaders: Readonly<Record<string, string>> | undefined;
  /** A tools/call's params → the agent's line they were parsed from, which the server may get spliced. */
  private readonly agentLines = new WeakMap<object, string>();
  /** The lists as last shown to the agent, to announce only what changed for it. */
  readonly shown: ShownViews;
  /** Requests waiting until the servers settle (lists asked for during startup); answered at close. */
  private readonly waiting: UntilSettled;
  /** The session's part of each agent mode, made once; the agent's mode now picks one (`current`). */
  private readonly modes: Readonly<Record<'aggregate' | 'discovery' | 'search', SessionMode>>;
  /** Unique in this process: the per-session pool scope. */
  readonly serial = nextSerial++;
  /**
   * The verified claims of the token the agent's latest request came with (HTTP with a JWT or OAuth
   * token; the front sets them per request), for the rules' grants; undefined otherwise.
   */
  claims: Claims | undefined;
  /** The agent's calls held at the call gate (not yet on any server); made on its first call there. */
  private gatedCalls: GatedCalls | undefined;
  /**
   * The curated view the agent came through (`/mcp/v/NAME`, `serve --view NAME`): its lists are the
   * view's and it calls tools by the view's names. Undefined: the agent's whole view.
   */
  view: string | undefined;

  readonly agent: string;
  /** False when the identity is only the default: then discovery tools may name the agent (agent_id). */
  private readonly agentExplicit: boolean;
  /** The front the agent came through (metrics count sessions by it). */
  readonly transport: 'stdio' | 'http';
  /** Whether the agent has an identity of its own (agent-identity.ts `identified`). */
  readonly identified: boolean;
  /** The session's id in the audit trail and the console (HTTP: its Mcp-Session-Id). */
  readonly id: string;
  private readonly log: Logger;

  constructor(
    private readonly parts: SessionParts,
    private readonly channel: AgentChannel,
    who: AgentIdentity,
    opened: { log: Logger; id?: string | undefined },
  ) {
    const { agent, explicit: agentExplicit, transport } = who;
    const id = opened.id ?? randomUUID();
    this.agent = agent;
    this.agentExplicit = agentExplicit;
    this.transport = transport;
    this.identified = who.identified;
    this.id = id;
    this.log = opened.log;
    this.spans = parts.tracing === undefined ? undefined : new RequestSpans(parts.tracing, id, agent, transport);
    this.agentRequests = new AgentRequests(agent, (line, about) => !this.closed && this.channel.send(line, about) !== false);
    this.shown = new ShownViews(parts.views, agent, {
      own: () => parts.own.of(this),
      claims: () => this.claims,
      view: () => this.curatedView(),
      searchTools: () => this.current.shownTools(),
    });
    this.waiting = new UntilSettled(parts.settling, (id, err) => this.sendError(id, err));
    const host: ModeHost = {
      agent,
      agentExplicit,
      claims: () => this.claims,
      modern: () => this.channel.era === 'modern',
      own: () => this.parts.own.of(this),
      untilSettled: (id, handler, until) => this.waiting.run(id, handler, until),
      sendResult: (id, result) => this.sendResult(id, result),
      sendEncodedResult: (id, json) => this.sendEncodedResult(id, json),
      sendResultBytes: (id, bytes) => this.sendResultBytes(id, bytes),
      sendError: (id, err) => this.sendError(id, err),
      serveTools: () => this.shown.serve('tools'),
      toolsChanged: () => {
        if (this.shown.changed('tools')) this.listChanged('notifications/tools/list_changed');
      },
      callAs: (msg, params, as) => {
        const executed = toolCall(msg, params, as);
        if (executed instanceof GatewayError) return this.sendError(msg.id, executed);
        this.runCall(executed);
      },
    };
    this.modes = {
      aggregate: new AggregateMode(host),
      discovery: new DiscoveryMode(parts.discovery, host),
      search: new SearchSession(parts.search, parts.catalog, host),
    };
  }

  handleLine(line: string): void {
    if (this.closed) return;
    const parsed = parseMessage(line);
    // A tools/call keeps its line: the server gets it with only the id and name replaced (wire/request-splice.ts).
    if (parsed.kind === 'request' && parsed.msg.method === 'tools/call' && parsed.msg.params !== undefined)
      this.agentLines.set(parsed.msg.params, line);
    this.handleMessage(parsed);
  }

  /**
   * One message the front has already parsed and classified (HTTP parses to route before this).
   * Whatever goes wrong while handling it stays with it: the agent is answered MCPG_INTERNAL for
   * that request and the session, the other agents and the process carry on.
   */
  handleMessage(parsed: Classified): void {
    if (this.closed) return;
    try {
      this.dispatch(parsed);
    } catch (err) {
      if (parsed.kind !== 'request') {
        this.log.error('internal error while handling a message from the agent', { error: err });
        return;
      }
      const call = this.inflight.get(parsed.msg.id);
      if (call !== undefined) {
        this.inflight.delete(parsed.msg.id);
        call.trace?.end('failed', 'MCPG_INTERNAL');
        if (call.serverId !== 0) call.conn.cancel(call.serverId, 'mcpgate failed while handling the request');
      }
      this.sendError(parsed.msg.id, err); // logged there, with the stack, as an internal error
    }
  }

  private dispatch(parsed: Classified): void {
    switch (parsed.kind) {
      case 'request':
        return this.onRequest(parsed.msg);
      case 'notification':
        return this.onNotification(parsed.msg);
      case 'response':
        return this.onResponse(parsed.msg);
      case 'invalid':
        this.log.debug('invalid message from agent', { error: parsed.error.message });
        this.sendError(parsed.id, parsed.error);
    }
  }

  /** A message too large to read: answer with the code (no id is known). */
  overflow(length: number): void {
    this.sendError(null, new GatewayError('MCPG_MESSAGE_TOO_LARGE', `message of ${length} characters exceeds the limit and was discarded`));
  }

  private onRequest(msg: JsonRpcRequest): void {
    if (this.spans !== undefined) this.spans.open(msg);
    if (this.parts.settling.isClosing)
      return this.sendError(msg.id, new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down'));
    switch (msg.method) {
      case 'tools/call':
        return this.callTool(msg);
      case 'ping':
        return this.sendResult(msg.id, {});
      case 'initialize':
        return void this.initialize(msg);
      case 'tools/list':
        return this.current.listTools(msg);
      case 'resources/list':
        return this.waiting.run(msg.id, () => this.sendResultBytes(msg.id, this.shown.serve('resources')), 'listable');
      case 'resources/templates/list':
        return this.waiting.run(msg.id, () => this.sendResultBytes(msg.id, this.shown.serve('resourceTemplates')), 'listable');
      case 'prompts/list':
        return this.waiting.run(msg.id, () => this.sendResultBytes(msg.id, this.shown.serve('prompts')), 'listable');
      case 'resources/read':
        return this.waiting.run(msg.id, () => this.readResource(msg));
      case 'prompts/get':
        return this.waiting.run(msg.id, () => this.getPrompt(msg));
      case 'completion/complete':
        return this.waiting.run(msg.id, () => this.complete(msg));
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return void this.subscribeUri(msg.method === 'resources/subscribe', msg.params?.uri).then(
          () => this.sendResult(msg.id, {}),
          (err: unknown) => this.sendError(msg.id, err),
        );
      case 'logging/setLevel':
        return void this.setLevel(msg);
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/cancel':
        return this.taskRequest(msg);
      case 'tasks/list':
        return void listTasks(this.parts.tasks, this.owner, (server) => this.carrierTo(server), this.log).then(
          (result) => this.sendResult(msg.id, result),
          (err: unknown) => this.sendError(msg.id, err),
        );
      default:
        return this.waiting.run(msg.id, () => this.otherMethod(msg));
    }
  }

  // ── tools ───────────────────────────────────────────────────────────────────────────────────

  /** The agent's tools/call: its params checked once, then resolved, routed, judged and sent (`runCall`). */
  private callTool(msg: JsonRpcRequest): void {
    const call = toolCall(msg, msg.params, { agent: this.agent, timeoutMs: undefined });
    if (call instanceof GatewayError) return this.sendError(msg.id, call);
    this.runCall(call);
  }

  /** Resolves the name (a curated view's, a meta-tool, search_tools), routes it, and sends it through the gate. */
  private runCall(call: ToolCall): void {
    const { msg, name } = call;
    const view = call.viewed ? undefined : this.curatedView();
    if (view !== undefined) return this.callOnView(view, call);
    // Only a name some mode owns asks the agent's mode (one set lookup for every other call).
    if (MODE_TOOL_NAMES.has(name)) {
      const mode = this.current;
      if (mode.owns(name))
        return mode.call({ msg, name, params: call.params, args: call.arguments === INVALID ? {} : (call.arguments ?? {}) });
    }
    if (call.arguments === INVALID) return this.sendError(msg.id, invalidParams('tools/call params.arguments must be an object'));
    // Denied, held, unknown or unconnected: the router decides once, before existence for denials.
    // An agent named by discovery's agent_id has no token of its own: no claims.
    const route = this.parts.router.tool(this.log, this.callerFor(call.agent), name);
    if (route === NOT_YET) return this.waiting.run(msg.id, () => this.runCall(call));
    const audit =
      this.parts.audit === undefined
        ? undefined
        : auditOf(
            this.parts.audit,
            { session: this.id, method: msg.method, agent: call.agent },
            { tool: name, ...this.parts.audit.argumentsOf(call.arguments) },
            route instanceof GatewayError ? route : route.server,
          );
    if (route instanceof GatewayError) return this.sendError(msg.id, route);
    // The call gate (policy/call-gate.ts) judges what the rules hold for some calls only: without
    // approvals or limits in the rules (one property read each) the call is sent.
    const rules = this.parts.inForce.rules;
    if (!rules.approves && rules.limits === undefined) return this.sendCall(call, route, audit, undefined);
    this.throughGate(call, route, audit);
  }

  /** A routed call the rules hold to approvals or limits: through the gate (gated-calls.ts), then sent. */
  private throughGate(call: ToolCall, route: ToolRoute, audit: Omit<AuditCall, 'outcome'> | undefined): void {
    const meta = call.params._meta;
    this.gated().admit({
      id: call.msg.id,
      ticket: {
        agent: call.agent,
        session: this.id,
        server: route.server,
        tool: route.original,
        publicName: call.name,
        arguments: call.arguments === INVALID ? undefined : call.arguments,
        claims: call.agent === this.agent ? this.claims : undefined,
      },
      progressToken: isObject(meta) ? meta.progressToken : undefined,
      audit,
      go: (release, waited) => {
        if (!waited) return this.sendCall(call, route, audit, release);
        // The carrier is taken again: a pooled connection made before the wait may have gone since.
        const carrier = this.parts.router.carrier(route.conn, this.callerFor(call.agent));
        if (carrier instanceof GatewayError) {
          release();
          return this.sendError(call.msg.id, carrier);
        }
        this.sendCall(call, { ...route, carrier }, audit, release);
      },
    });
  }

  /** This session's calls at the gate, made on its first such call. */
  private gated(): GatedCalls {
    return (this.gatedCalls ??= new GatedCalls({
      gate: this.parts.gate,
      channel: this.channel,
      audit: this.parts.audit,
      spans: this.spans,
      maxInflight: this.parts.maxInflight,
      agent: this.agent,
      isClosed: () => this.closed,
      takesUrlElicitation: () =>
        this.initialized &&
        this.channel.era !== 'modern' &&
        isObject(this.capabilities.elicitation) &&
        isObject(this.capabilities.elicitation.url),
      inFlight: (id) => this.inflight.has(id),
      sendError: (id, err) => this.sendError(id, err),
      notify: (method, params, about) => this.notify(method, params, about),
    }));
  }

  /** Sends a routed (and, where limited, counted) tools/call to its server; `release` ends its hold on its limits. */
  private sendCall(
    call: ToolCall,
    route: ToolRoute,
    audit: Omit<AuditCall, 'outcome'> | undefined,
    release: (() => void) | undefined,
  ): void {
    const { msg, params, name, agent } = call;
    // A tool that mirrors parameters into headers gets mcpgate's own, from the arguments it forwards
    // (in place of any the agent sent); a modern HTTP server is the only one that sees them, so none
    // are made for a stdio or SSE server.
    const mirrored = route.conn.config.type === 'http' ? callHeaders(route.tool, params.arguments) : undefined;
    // The params as they were parsed from the agent's line (not a view's or a meta-tool's): the
    // server may get that line with only the id and the name replaced.
    const line = params._meta === undefined ? this.agentLines.get(params) : undefined;
    // An unprefixed server's tool has the agent's name: its params go as they are.
    const outbound = this.outbound(msg.method, route.original === name ? params : { ...params, name: route.original }, line, mirrored);
    // A task-augmented call (`params.task`) is answered with the task the server created: recorded, renamed.
    const augmented = typeof params.task === 'object' && params.task !== null;
    // A resting on-demand server is listed from its last known catalog: once the call has started it,
    // the tool is decided again against what the live server listed (a changed definition is held).
    const recheck =
      route.conn.onDemand && route.conn.state !== 'ready'
        ? (): GatewayError | undefined => {
            const again = this.parts.router.tool(this.log, this.callerFor(agent), name);
            if (again instanceof GatewayError) return again;
            if (again === NOT_YET || again.original !== route.original)
              return new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } });
            return undefined;
          }
        : undefined;
    const rewrite = (result: Record<string, unknown>): boolean => {
      const created = augmented && recordCreatedTask(this.parts.tasks, this.owner, route.server, result);
      const renamed = rewriteToolResult(result, (uri) => this.parts.catalog.publicUri(route.server, uri));
      return (this.parts.sanitize && sanitizeContent(result)) || renamed || created;
    };
    this.sendToServer(route.carrier, msg.id, outbound, {
      timeoutMs: call.timeoutMs,
      rewrite,
      timed: { tool: route.original, start: performance.now(), audit },
      release,
      recheck,
    });
  }

  /** The view this session is on, from the rules in force (a view a reload removed shows nothing). */
  private curatedView(): CompiledView | undefined {
    return this.view === undefined ? undefined : (this.parts.inForce.rules.views.get(this.view) ?? REMOVED_VIEW);
  }

  /**
   * A tools/call on a curated view: the view's name becomes the tool's public name and the view's fixed
   * parameters are set; then it is an ordinary call, which the rules and the pins judge as ever. What
   * the view leaves out, or the rules deny behind a rename, is an unknown tool under the view's name.
   */
  private callOnView(view: CompiledView, call: ToolCall): void {
    const { msg, name, params } = call;
    if (call.arguments === INVALID) return this.sendError(msg.id, invalidParams('tools/call params.arguments must be an object'));
    const own = this.parts.own.of(this);
    const target = viewTarget(
      view,
      name,
      (publicName) => seenEntry(this.parts.catalog, own, (c) => c.tool(publicName)),
      (server, original) => this.parts.catalog.nameFor(server, original),
    );
    const unknown = new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } });
    if (target === undefined)
      return this.parts.settling.hasSettled ? this.sendError(msg.id, unknown) : this.waiting.run(msg.id, () => this.callOnView(view, call));
    if (target.entry.name !== undefined) {
      const denied = this.parts.router.toolDenied(
        this.log,
        { agent: this.agent, claims: this.claims },
        target.publicName,
        seenEntry(this.parts.catalog, own, (c) => c.tool(target.publicName)),
      );
      if (denied !== undefined) return this.sendError(msg.id, unknown);
    }
    const args = viewArguments(target.entry, name, call.arguments);
    if (args instanceof GatewayError) return this.sendError(msg.id, args);
    // New params, a new call: the agent's line no longer says what the server gets, so it is encoded, not spliced.
    if (target.publicName !== name || target.entry.params.size > 0)
      return this.runCall({
        ...call,
        name: target.publicName,
        params: { ...params, name: target.publicName, arguments: args },
        arguments: args,
        viewed: true,
      });
    this.runCall({ ...call, viewed: true });
  }

  // ── modes ───────────────────────────────────────────────────────────────────────────────────

  /**
   * The agent's mode (its rules', else the gateway's; read per request: a reload may change it); a
   * session on a curated view lists the view itself.
   */
  get mode(): 'aggregate' | 'discovery' | 'search' {
    return this.view !== undefined ? 'aggregate' : this.parts.search.modeOf(this.agent);
  }

  /** The session's part of the agent's mode now. */
  private get current(): SessionMode {
    return this.modes[this.mode];
  }

  // ── tasks ───────────────────────────────────────────────────────────────────────────────────

  /** Whose tasks this session's are: its agent's (identified), else its own (tasks.ts); the pool scope's key. */
  get owner(): string {
    return scopeOf(this, 'per-agent').key;
  }

  /** The catalogs this session sees instead of the shared one's part of their servers (own-catalogs.ts). */
  get ownCatalogs(): readonly Catalog[] | undefined {
    const own = this.parts.own;
    return own.size === 0 ? undefined : own.of(this);
  }

  /**
   * Who a call is routed for: this session, or an agent discovery's `agent_id` names (only where
   * this session's identity is the default one): that agent's rules, no token claims, and this
   * session's own catalogs and pool scope (an unnamed session's own).
   */
  private callerFor(agent: string): Caller {
    if (agent === this.agent) return this;
    return { agent, identified: false, serial: this.serial, claims: undefined, ownCatalogs: this.ownCatalogs, extensions: this.extensions };
  }

  /** The connection this session's requests to `server` go out on (tasks), if the server is known. */
  private carrierTo(server: string): Connection | Promise<Connection> | undefined {
    const conn = this.parts.connections.get(server);
    if (conn === undefined) return undefined;
    const carrier = this.parts.router.carrier(conn, this);
    if (carrier instanceof GatewayError) throw carrier;
    return whenReady(carrier);
  }

  /** tasks/get, tasks/result, tasks/cancel: to the server that owns the agent's task, under the server's id. */
  private taskRequest(msg: JsonRpcRequest): void {
    const record = taskOf(this.parts.tasks, this.owner, msg.method, msg.params?.taskId);
    if (record instanceof GatewayError) return this.sendError(msg.id, record);
    const conn = this.parts.connections.get(record.server);
    if (conn === undefined)
      return this.sendError(
        msg.id,
        new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${record.server}" of task ${record.publicId} is not connected`, {
          server: record.server,
        }),
      );
    const carrier = this.parts.router.carrier(conn, this);
    if (carrier instanceof GatewayError) return this.sendError(msg.id, carrier);
    this.sendToServer(carrier, msg.id, this.outbound(msg.method, { ...msg.params, taskId: record.serverTaskId }), {
      rewrite: (result) => {
        const renamed = renameTaskAnswer(result, record);
        if (msg.method !== 'tasks/result') return renamed;
        const linked = rewriteToolResult(result, (uri) => this.parts.catalog.publicUri(record.server, uri));
        return (this.parts.sanitize && sanitizeContent(result)) || linked || renamed;
      },
    });
  }

  /** A method mcpgate does not know: to the server it belongs to, else refused naming it (other-methods.ts). */
  private otherMethod(msg: JsonRpcRequest): void {
    const routed = routeOtherMethod(this.parts, this.log, this, msg);
    if (routed instanceof GatewayError) return this.sendError(msg.id, routed);
    this.sendToServer(routed.carrier, msg.id, this.outbound(msg.method, routed.params));
  }

  /**
   * The request a server gets, built once: the method, the params in the server's names, the agent's
   * line where it may be spliced, what the agent declared, and the `Mcp-Param-*` headers (`mirrored`
   * from a tool's parameters, else the agent's own).
   */
  private outbound(
    method: string,
    params: Record<string, unknown> | undefined,
    line?: string,
    mirrored?: Readonly<Record<string, string>>,
  ): OutboundRequest {
    return { method, params, line, agentCapabilities: this.capabilities, paramHeaders: mirrored ?? this.paramHeaders };
  }

  /**
   * Sends the agent's request `agentId` as `outbound` on `carrier` (the router's: at once, or once it
   * is made or started) and relays the answer, as `sending` says.
   */
  private sendToServer(carrier: Carrier, agentId: RequestId, outbound: OutboundRequest, sending: Sending = {}): void {
    const { release } = sending;
    // Refused before it is in `inflight`: a pass it held at the gate ends here (in `inflight`, Calls ends it).
    const refuse = (err: unknown): void => {
      release?.();
      this.sendError(agentId, err);
    };
    if (this.inflight.has(agentId))
      return refuse(
        new GatewayError('MCPG_INVALID_REQUEST', `request id ${JSON.stringify(agentId)} is already in use by a request in flight`),
      );
    if (this.inflight.size >= this.parts.maxInflight) {
      return refuse(
        new GatewayError(
          'MCPG_OVERLOADED',
          `agent "${this.agent}" already has ${this.inflight.size} requests in flight (the limit is ${this.parts.maxInflight}); wait for some to finish`,
        ),
      );
    }
    const meta = outbound.params?._meta;
    let agentToken: unknown;
    if (meta !== undefined) {
      if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
        return refuse(invalidParams(`${outbound.method} params._meta must be an object`));
      agentToken = (meta as Record<string, unknown>).progressToken;
      if (agentToken !== undefined && typeof agentToken !== 'string' && !(typeof agentToken === 'number' && Number.isFinite(agentToken))) {
        return refuse(invalidParams(`${outbound.method} params._meta.progressToken must be a string or a number`));
      }
    }
    const conn = isPending(carrier) ? carrier.server : carrier;
    const entry: Call = release === undefined ? { conn, serverId: 0, trace: undefined } : { conn, serverId: 0, trace: undefined, release };
    this.inflight.set(agentId, entry);
    if (!isPending(carrier)) return this.forward(entry, outbound, { agentId, agentToken }, sending);
    // A pooled connection being made (or an on-demand server starting): the call waits in `inflight`
    // (serverId 0: a cancel or close finds nothing to cancel on a server) and is sent once it is
    // ready, if still wanted.
    carrier.ready.then(
      (pooled) => {
        if (this.inflight.get(agentId) !== entry || this.closed) return;
        const refused = sending.recheck?.();
        if (refused !== undefined) {
          this.inflight.delete(agentId);
          return this.sendError(agentId, refused);
        }
        entry.conn = pooled;
        this.forward(entry, outbound, { agentId, agentToken }, sending);
      },
      (err: unknown) => {
        if (this.inflight.get(agentId) !== entry) return;
        this.inflight.delete(agentId);
        this.sendError(agentId, err);
      },
    );
  }

  /** Sends the call `entry` (in `inflight` under the agent's id) on `entry.conn`. */
  private forward(
    entry: Call,
    outbound: OutboundRequest,
    asked: { readonly agentId: RequestId; readonly agentToken: unknown },
    { timeoutMs, rewrite, timed }: Sending,
  ): void {
    const { agentId, agentToken } = asked;
    const conn = entry.conn;
    // Traced: the server gets the call's trace context in its `_meta` (so the agent's line is not spliced).
    const request = this.spans === undefined ? outbound : this.spans.serverCall(entry, agentId, outbound);
    entry.serverId = conn.forward(
      request,
      {
        reply: (res, line) => {
          if (this.inflight.get(agentId) !== entry) return;
          this.inflight.delete(agentId);
          if (timed !== undefined) recordFinished(this.parts, conn, timed, { outcome: 'error' in res ? 'error' : 'ok', res });
          // Read before relay: a rewrite may edit the result.
          const failure = this.spans === undefined ? undefined : failureOf(res);
          try {
            this.relay(res, line, { agentId, serverId: entry.serverId }, rewrite);
            if (this.spans !== undefined) {
              entry.trace?.end(failure === undefined ? 'ok' : 'error', failure);
              this.spans.end(agentId, failure === undefined ? 'ok' : 'error', failure, conn.name);
            }
          } catch (err) {
            // The server's answer could not be passed on (a bug here, never the agent's or the server's
            // fault to carry): the agent still gets an answer, and the server's other calls go on.
            this.sendError(agentId, err);
          }
        },
        fail: (err) => {
          if (this.inflight.get(agentId) !== entry) return;
          this.inflight.delete(agentId);
          if (timed !== undefined) recordFinished(this.parts, conn, timed, { outcome: 'failed', err });
          entry.trace?.end('failed', asGatewayError(err).code);
          this.sendError(agentId, err);
        },
        progress:
          agentToken === undefined ? undefined : (p) => this.notify('notifications/progress', { ...p, progressToken: agentToken }, agentId),
        paused: (retryMs, resume) => {
          if (!this.closed && this.inflight.get(agentId) === entry) this.channel.pause?.(agentId, retryMs, resume);
        },
      },
      timeoutMs,
      this.channel.era === 'modern' ? 'modern' : 'legacy',
    );
    // Not sent (refused before it left, or the server is unavailable): the sink has answered already.
    if (entry.serverId === 0 && this.inflight.get(agentId) === entry) this.inflight.delete(agentId);
  }

  private relay(
    res: JsonRpcResponse,
    line: string,
    ids: { readonly agentId: RequestId; readonly serverId: number },
    rewrite: Rewrite | undefined,
  ): void {
    const { agentId, serverId } = ids;
    if (this.closed) return;
    const spliced = 'result' in res && rewrite !== undefined && rewrite(res.result) ? undefined : spliceResponseId(line, serverId, agentId);
    if (spliced !== undefined) {
      this.channel.send(spliced, agentId, true);
      return;
    }
    res.id = agentId;
    this.channel.send(JSON.stringify(res), agentId, true);
  }

  // ── resources, prompts, completion ──────────────────────────────────────────────────────────

  private readResource(msg: JsonRpcRequest): void {
    const route = this.parts.router.uri(this.log, this, msg.method, msg.params?.uri);
    const audit =
      this.parts.audit === undefined || typeof msg.params?.uri !== 'string'
        ? undefined
        : auditOf(
            this.parts.audit,
            { session: this.id, method: msg.method, agent: this.agent },
            { resource: msg.params.uri },
            route instanceof GatewayError ? route : route.conn.name,
          );
    if (route instanceof GatewayError) return this.sendError(msg.id, route);
    if (this.outsideView(route.conn.name))
      return this.sendError(
        msg.id,
        new GatewayError('MCPG_RESOURCE_NOT_FOUND', `no server serves ${route.publicUri} on view "${this.view!}"`, {
          detail: { uri: route.publicUri },
        }),
      );
    this.sendToServer(route.carrier, msg.id, this.outbound(msg.method, { ...msg.params, uri: route.uri }), {
      rewrite: (result) => rewriteReadResult(result, (uri) => this.parts.catalog.publicUri(route.conn.name, uri)),
      timed: audit && { start: performance.now(), audit },
    });
  }

  private getPrompt(msg: JsonRpcRequest): void {
    const route = this.parts.router.prompt(this.log, this, msg.params?.name);
    const audit =
      this.parts.audit === undefined || typeof msg.params?.name !== 'string'
        ? undefined
        : auditOf(
            this.parts.audit,
            { session: this.id, method: msg.method, agent: this.agent },
            { prompt: msg.params.name, ...this.parts.audit.argumentsOf(msg.params.arguments) },
            route instanceof GatewayError ? route : route.server,
          );
    if (route instanceof GatewayError) return this.sendError(msg.id, route);
    if (this.outsideView(route.server))
      return this.sendError(
        msg.id,
        new GatewayError('MCPG_PROMPT_NOT_FOUND', `unknown prompt: ${String(msg.params?.name)}`, { detail: { prompt: msg.params?.name } }),
      );
    this.sendToServer(route.carrier, msg.id, this.outbound(msg.method, { ...msg.params, name: route.original }), {
      rewrite: (result) => {
        const renamed = rewritePromptResult(result, (uri) => this.parts.catalog.publicUri(route.server, uri));
        return (this.parts.sanitize && sanitizeContent(result)) || renamed;
      },
      timed: audit && { start: performance.now(), audit },
    });
  }

  private complete(msg: JsonRpcRequest): void {
    const route = this.parts.router.completion(this.log, this, msg.params?.ref as Record<string, unknown> | undefined);
    if (route instanceof GatewayError) return this.sendError(msg.id, route);
    if (this.outsideView(route.conn.name))
      return this.sendError(msg.id, invalidParams(`completion/complete: the prompt or resource is not on view "${this.view!}"`));
    this.sendToServer(route.carrier, msg.id, this.outbound(msg.method, { ...msg.params, ref: route.ref }));
  }

  /** Whether a server's resources and prompts are out of this session's curated view (a view shows only those of its `servers`). */
  private outsideView(server: string): boolean {
    const view = this.curatedView();
    return view !== undefined && !view.servers.has(server);
  }

  /** Subscribes this session to a resource URI (or unsubscribes it); throws why not. */
  // The URI is routed under the rules as a read is, then held on the connection that carries it: the
  // server's shared connection, or this session's own pooled connection for a per-agent or
  // per-session server (`Subscriptions`). A modern listen stream subscribes its URIs here too.
  async subscribeUri(subscribe: boolean, publicUriParam: unknown): Promise<void> {
    const method = subscribe ? 'resources/subscribe' : 'resources/unsubscribe';
    await this.parts.settling.settled;
    const route = this.parts.router.uri(this.log, this, method, publicUriParam);
    if (route instanceof GatewayError) throw route;
    const { uri } = route;
    // A per-agent or per-session server's subscription is held on the session's own pooled connection.
    const conn = route.conn.config.sessions === 'shared' ? route.conn : await whenReady(route.carrier);
    if ((conn.info?.capabilities.resources as { subscribe?: boolean } | undefined)?.subscribe !== true) {
      throw new GatewayError('MCPG_CAPABILITY_UNSUPPORTED', `server "${conn.name}" does not support resource subscriptions`, {
        server: conn.name,
      });
    }
    if (this.closed) return;
    if (subscribe) await this.parts.subscriptions.subscribe(this, conn, uri);
    else await this.parts.subscriptions.unsubscribe(this, conn, uri);
  }

  private async setLevel(msg: JsonRpcRequest): Promise<void> {
    const level = msg.params?.level;
    const rank = typeof level === 'string' ? LOG_LEVEL_RANK[level] : undefined;
    if (rank === undefined)
      return this.sendError(msg.id, invalidParams(`logging/setLevel needs params.level, one of ${Object.keys(LOG_LEVEL_RANK).join(', ')}`));
    this.logRank = rank;
    await this.parts.setServersLogLevel(this);
    this.sendResult(msg.id, {});
  }

  private async initialize(msg: JsonRpcRequest): Promise<void> {
    const params = msg.params ?? {};
    const requested = params.protocolVersion;
    this.capabilities = (params.capabilities as Record<string, unknown> | undefined) ?? {};
    // The servers ready by then give their instructions; no list_changed goes out before this answer.
    await Promise.race([this.parts.settling.listable, delay(INITIALIZE_WAIT_MS)]);
    this.sendResult(msg.id, initializeResult(requested, this.parts.instructions(), this.parts.capabilities()));
    this.initialized = true;
  }

  /** A modern listen stream: from now on the agent hears when its view of a list changes. */
  listenForChanges(): void {
    for (const kind of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) this.shown.changed(kind);
    this.initialized = true;
  }

  /** The agent said its roots changed: tell the servers that may ask it. */
  private rootsChanged(): void {
    this.parts.rootsChanged(this);
  }

  /** The extensions the agent declared (`capabilities.extensions`), if any. */
  get extensions(): Record<string, unknown> | undefined {
    return extensionsOf(this.capabilities);
  }

  /**
   * A modern (2026-07-28) request's session: its capabilities and log level come with the request
   * (the `_meta` envelope), not from `initialize`, and server requests need no wait for `initialized`.
   */
  adoptEnvelope({ capabilities, logLevel, paramHeaders }: Envelope): void {
    this.capabilities = capabilities;
    if (logLevel !== undefined) this.logRank = LOG_LEVEL_RANK[logLevel];
    this.paramHeaders = paramHeaders;
    this.agentRequests.agentReady(capabilities);
  }

  /**
   * A session adopted from another worker of a cluster: the agent initialized it there,
   * so it starts initialized here, with the capabilities it declared then (kept in Redis). Only the
   * log level it may have set is not carried over.
   */
  resume(capabilities: Record<string, unknown>): void {
    this.capabilities = capabilities;
    this.initialized = true;
    this.agentRequests.agentReady(capabilities);
  }

  // ── notifications and responses from the agent ─────────────────────────────────────────────

  private onNotification(msg: JsonRpcNotification): void {
    switch (msg.method) {
      case 'notifications/cancelled': {
        const requestId = msg.params?.requestId as RequestId | undefined;
        const entry = requestId === undefined ? undefined : this.inflight.get(requestId);
        if (entry === undefined) {
          if (requestId !== undefined)
            this.gatedCalls?.cancel(requestId, typeof msg.params?.reason === 'string' ? msg.params.reason : 'cancelled by the agent');
          return;
        }
        this.inflight.delete(requestId!);
        if (this.spans !== undefined) {
          entry.trace?.end('cancelled');
          this.spans.end(requestId!, 'cancelled', undefined, entry.conn.name);
        }
        const reason = typeof msg.params?.reason === 'string' ? msg.params.reason : 'cancelled by the agent';
        entry.conn.cancel(entry.serverId, reason);
        return;
      }
      case 'notifications/roots/list_changed':
        this.rootsChanged();
        return;
      case 'notifications/initialized': {
        this.initialized = true;
        this.agentRequests.agentReady(this.capabilities);
        return;
      }
      default:
        this.log.debug('ignored a notification from the agent', { method: msg.method });
    }
  }

  private onResponse(msg: JsonRpcResponse): void {
    // The agent's answer to mcpgate's own URL elicitation of a call held at the gate: an admin decides, not it.
    if (typeof msg.id === 'string' && msg.id.startsWith(APPROVAL_ELICITATION)) return;
    if (!this.agentRequests.answer(msg)) this.log.debug('dropped an answer to no pending request', { id: msg.id });
  }

  // ── right to left: called by the gateway ───────────────────────────────────────────────────

  /**
   * Relays a server→agent request (sampling, elicitation, roots) if the agent declared the
   * capability. It is sent as part of the agent's call it belongs to: the one the server named
   * (`related`, HTTP servers), else this agent's only call in flight on that server. `fallback`:
   * the answer when the agent lacks the capability (a `roots/list` of an entry with `"roots"`).
   */
  relayServerRequest(question: Omit<ServerQuestion, 'about'> & { readonly related?: number | undefined }): void {
    const { related, ...asked } = question;
    this.agentRequests.relay({ ...asked, about: this.inflight.owner(question.conn, related) }, this.capabilities);
  }

  /** The server withdrew one of its requests to the agent: pass the cancellation on. */
  serverCancelled(conn: Connection, requestId: unknown): void {
    this.agentRequests.cancelledByServer(conn, requestId);
  }

  /** A connection went away: its questions to the agent can no longer be answered. */
  connectionLost(conn: Connection): void {
    this.agentRequests.connectionLost(conn);
  }

  /** True when the server's call `serverId` on `conn` is one of this agent's. */
  ownsCall(conn: Connection, serverId: number): boolean {
    return this.inflight.owns(conn, serverId);
  }

  /** This agent's calls in flight on `conn`. */
  callsOn(conn: Connection): number {
    return this.inflight.countOn(conn);
  }

  /**
   * A server's log message, if this agent asked for logs (logging/setLevel) at or below its level.
   * Agents that never asked get none: on a shared gateway one agent's calls must not fill another's
   * log, and servers' logs are not attributable to a call.
   */
  deliverLog(server: string, params: Record<string, unknown>): void {
    if (this.logRank === undefined) return;
    const rank = typeof params.level === 'string' ? LOG_LEVEL_RANK[params.level] : undefined;
    if (rank !== undefined && rank < this.logRank) return;
    const logger = typeof params.logger === 'string' && params.logger !== '' ? `${server}/${params.logger}` : server;
    this.notify('notifications/message', { ...params, logger });
  }

  listChanged(method: string): void {
    if (this.initialized) this.notify(method);
  }

  notify(method: string, params?: unknown, about?: RequestId): void {
    if (!this.closed) this.channel.send(encodeNotification(method, params), about);
  }

  private sendResult(id: RequestId, result: unknown): void {
    if (this.closed) return;
    this.channel.send(encodeResult(id, result), id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  /** A result already encoded as JSON text. */
  private sendEncodedResult(id: RequestId, resultJson: string): void {
    if (this.closed) return;
    this.channel.send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`, id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  /** A result cached as bytes (a list): only the head with the id is made per answer. */
  private sendResultBytes(id: RequestId, result: readonly Buffer[]): void {
    if (this.closed) return;
    const parts = encodeResultParts(JSON.stringify(id), result);
    if (this.channel.sendParts !== undefined) this.channel.sendParts(parts, id, true);
    else this.channel.send(partsToText(parts), id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  private sendError(id: RequestId | null, err: unknown): void {
    if (this.closed) return;
    const error = asGatewayError(err);
    if (error.code === 'MCPG_INTERNAL') this.log.error('internal error while handling a request', { error: err });
    this.parts.metrics.error(error.code);
    this.channel.send(encodeError(id, error.toJsonRpc()), id ?? undefined, true);
    if (this.spans !== undefined && id !== null) this.spans.end(id, 'failed', error.code, error.server);
  }

  /**
   * The session ends (the agent went away, or the gateway is shutting down): cancel its calls on the
   * servers, tell the agent — if it is still listening — that they will not be answered (nothing
   * is left hanging), and answer the servers' questions to it. Idempotent.
   */
  close(): void {
    if (this.closed) return;
    this.waiting.close();
    for (const [agentId, entry] of this.inflight) {
      entry.trace?.end('cancelled');
      entry.conn.cancel(entry.serverId, 'the agent disconnected');
      this.sendError(
        agentId,
        new GatewayError('MCPG_SHUTTING_DOWN', `the gateway is shutting down; the call to server "${entry.conn.name}" was cancelled`, {
          server: entry.conn.name,
        }),
      );
    }
    this.gatedCalls?.close();
    this.closed = true;
    this.spans?.endAll('MCPG_SHUTTING_DOWN');
    this.inflight.clear();
    this.agentRequests.close();
    this.parts.closed(this);
    this.channel.closed?.();
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalidParams(message: string): GatewayError {
  return new GatewayError('MCPG_INVALID_PARAMS', message);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

// ── calls in flight ─────────────────────────────────────────────────────────────────────────────────
// One agent's calls in flight on servers: agent request id → (connection, id on that connection).
// Progress, cancellation and the routing of a server's questions to the call they belong to all
// read this table; the session writes it.

interface Call {
  conn: Connection;
  /** The id the connection gave the forwarded request. */
  serverId: number;
  /** The server-call span (tracing on only). */
  trace: ServerCallSpan | undefined;
  /** Ends the call's hold on its calls-in-flight limits (the gate's pass); run once, when the call leaves this table. */
  release?: (() => void) | undefined;
}

class Calls extends Map<RequestId, Call> {
  // However a call leaves the table (answered, failed, cancelled, its session closed), its hold on
  // its calls-in-flight limits ends with it. A call without one costs a lookup.
  override delete(id: RequestId): boolean {
    const call = this.get(id);
    if (call?.release !== undefined) {
      const release = call.release;
      call.release = undefined;
      release();
    }
    return super.delete(id);
  }

  override clear(): void {
    for (const call of this.values()) {
      const release = call.release;
      call.release = undefined;
      release?.();
    }
    super.clear();
  }

  /** True when the server's call `serverId` on `conn` is one of these. */
  owns(conn: Connection, serverId: number): boolean {
    for (const call of this.values()) if (call.conn === conn && call.serverId === serverId) return true;
    return false;
  }

  /** How many of these calls are on `conn`. */
  countOn(conn: Connection): number {
    let n = 0;
    for (const call of this.values()) if (call.conn === conn) n += 1;
    return n;
  }

  /**
   * The agent request a server's question on `conn` belongs to: the call the server named
   * (`related`, HTTP servers say), else the only call on that server; undefined when it is not
   * one call for sure.
   */
  owner(conn: Connection, related: number | undefined): RequestId | undefined {
    let found: RequestId | undefined;
    let candidates = 0;
    for (const [agentId, call] of this) {
      if (call.conn !== conn) continue;
      if (related !== undefined && call.serverId === related) return agentId;
      candidates += 1;
      found = agentId;
    }
    return candidates === 1 ? found : undefined;
  }
}

// ── what is recorded of a request ───────────────────────────────────────────────────────────────────
// What is recorded of an agent's request that goes to a server: its audit line (--audit), written
// at the decision when refused, else with the outcome when it ends, and for tools/call the call
// metrics. The session times the request (`Timed`) and calls these.

/** A request being timed: the server's own tool name (tools/call, for the metrics), when it was sent, its audit record. */
interface Timed {
  tool?: string;
  start: number;
  audit?: Omit<AuditCall, 'outcome'>;
}

/**
 * The audit record of one decision. A refusal is written now (and undefined returned); an allowed
 * request's record is returned, to be written with its outcome when the server answers.
 */
function auditOf(
  audit: AuditLog,
  request: { readonly session: string; readonly method: string; readonly agent: string },
  what: Partial<AuditCall>,
  decided: GatewayError | string,
): Omit<AuditCall, 'outcome'> | undefined {
  const { session, method, agent } = request;
  if (typeof decided === 'string') return { event: 'call', agent, session, method, server: decided, ...what, decision: 'allowed' };
  const decision = decided.code === 'MCPG_POLICY_DENIED' ? 'denied' : decided.code === 'MCPG_TOOL_HELD' ? 'held' : 'allowed';
  audit.record({
    event: 'call',
    agent,
    session,
    method,
    ...(decided.server !== undefined && { server: decided.server }),
    ...what,
    decision,
    outcome: 'failed',
    code: decided.code,
  });
  return undefined;
}

/** A timed request ended: the metrics (tools/call) and the audit trail. */
function recordFinished(
  parts: { metrics: GatewayMetrics; audit: AuditLog | undefined },
  conn: Connection,
  timed: Timed,
  ended: { readonly outcome: 'ok' | 'error' | 'failed'; readonly res?: JsonRpcResponse; readonly err?: unknown },
): void {
  let outcome = ended.outcome;
  const { res, err } = ended;
  const seconds = (performance.now() - timed.start) / 1000;
  if (timed.tool !== undefined) parts.metrics.callFinished(conn.name, timed.tool, outcome, seconds);
  if (timed.audit === undefined) return;
  let code: string | number | undefined;
  if (res !== undefined && 'error' in res) code = res.error.code;
  else if (res !== undefined && (res.result as { isError?: unknown }).isError === true) outcome = 'error';
  if (err !== undefined) code = asGatewayError(err).code;
  parts.audit?.record({ ...timed.audit, outcome, durationMs: Math.round(seconds * 1e4) / 10, ...(code !== undefined && { code }) });
}
