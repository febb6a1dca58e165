// One agent's session: the MCP server the agent sees. It keeps what the agent declared (its
// `AgentDeclaration`, agent-declaration.ts: capabilities, initialized, log level), dispatches
// each of its requests, and answers what the gateway knows itself (initialize, ping, the lists as
// cached bytes from the catalog), each answer written by its `AgentAnswers` (agent-answers.ts), and
// its modes picked by `SessionModes` (modes/session-modes.ts). What goes to a server goes through its
// `ToolCalls` (tool-calls.ts: a tools/call resolved, routed, judged and sent) or `RoutedRequests`
// (routed-requests.ts: reads, prompts, completion, tasks, other methods), both onto its `Calls`
// (calls.ts: every request in flight on a server, relayed, cancelled, recorded). Right to left, it is
// what the gateway calls to reach this agent: server requests, log messages and list changes, written
// to its channel (agent-channel.ts). It gets `SessionParts` (session-parts.ts), never the gateway.

import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';
import {
  parseMessage,
  type Classified,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../wire/jsonrpc.js';
import type { Envelope } from '../../wire/era.js';
import type { Claims } from '../../rules/decide.js';
import { ShownViews } from './agent-views.js';
import { REMOVED_VIEW } from '../../policy/curated-views.js';
import type { CompiledView } from '../../rules/views.js';
import { UntilSettled } from './until-settled.js';
import { RequestSpans } from './request-spans.js';
import { AgentAnswers } from './agent-answers.js';
import type { InnerAnswer, ModeHost } from '../modes/session-mode.js';
import { SessionModes } from '../modes/session-modes.js';
import { callInner } from '../modes/inner-calls.js';
import type { Caller } from '../routing/router.js';
import { APPROVAL_ELICITATION } from './gated-calls.js';
import type { Catalog } from '../../catalog/catalog.js';
import { initializeResult, LOG_LEVEL_RANK } from '../routing/method-tables.js';
import { scopeOf } from '../../servers/pool.js';
import type { AgentChannel } from './agent-channel.js';
import type { AgentIdentity } from './agent-identity.js';
import { AgentRequests, type ServerQuestion } from './agent-requests.js';
import type { SessionParts } from './session-parts.js';
import { AgentDeclaration } from './agent-declaration.js';
import { Calls, invalidParams, type CallAsAgentOptions } from './calls.js';
import { RoutedRequests } from './routed-requests.js';
import { ToolCalls } from './tool-calls.js';

/** How long `initialize` waits for servers to settle, so the agent gets their instructions. */
const INITIALIZE_WAIT_MS = 5000;

/** Agent sessions are numbered for the pool's per-session scope (`session:N`). */
let nextSerial = 1;

export class AgentSession implements Caller {
  /** What the agent declared of itself: capabilities, initialized, log level (agent-declaration.ts). */
  readonly declared = new AgentDeclaration();
  /** Its requests in flight on servers (calls.ts). */
  private readonly calls: Calls;
  /** Its tools/calls, resolved, routed, judged and sent (tool-calls.ts). */
  private readonly toolCalls: ToolCalls;
  /** Reads, prompts, completion, tasks and other methods, each routed to one server (routed-requests.ts). */
  private readonly routed: RoutedRequests;
  /** Server→agent requests the agent has not answered yet. */
  private readonly agentRequests: AgentRequests;

  /** The server's own key of our request `id` to the agent, when it relays a modern server's input request. */
  inputKey(id: number): string | undefined {
    return this.agentRequests.inputKey(id);
  }
  private closed = false;
  /** Tracing on: the open span of each agent request, by the agent's id (undefined: tracing off). */
  private readonly spans: RequestSpans | undefined;
  /** Its answers and notifications to the agent (agent-answers.ts). */
  private readonly answers: AgentAnswers;
  /** The lists as last shown to the agent, to announce only what changed for it. */
  readonly shown: ShownViews;
  /** Requests waiting until the servers settle (lists asked for during startup); answered at close. */
  private readonly waiting: UntilSettled;
  /** The session's part of each agent mode, made once; the agent's mode now picks one (session-modes.ts). */
  private readonly modes: SessionModes;
  /** Unique in this process: the per-session pool scope. */
  readonly serial = nextSerial++;
  /**
   * The verified claims of the token the agent's latest request came with (HTTP with a JWT or OAuth
   * token; the front sets them per request), for the rules' grants; undefined otherwise.
   */
  claims: Claims | undefined;
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
    private readonly parts: SessionParts<AgentSession>,
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
    this.answers = new AgentAnswers(channel, this.spans, parts.metrics, { log: this.log, isClosed: () => this.closed });
    this.agentRequests = new AgentRequests(agent, (line, about) => !this.closed && this.channel.send(line, about) !== false);
    this.shown = new ShownViews(parts.views, agent, {
      own: () => parts.own.of(this),
      claims: () => this.claims,
      view: () => this.curatedView(),
      searchTools: () => this.modes.current(this.view).shownTools(),
    });
    this.waiting = new UntilSettled(parts.settling, (id, err) => this.answers.error(id, err));
    // What its calls read of the session and ask of it (`CallsHost`, `ToolCallsHost`: one value for both).
    const callsHost = {
      parts,
      channel,
      log: this.log,
      spans: this.spans,
      caller: this,
      agent,
      id,
      declared: this.declared,
      owner: () => this.owner,
      isClosed: () => this.closed,
      curatedView: () => this.curatedView(),
      mode: () => this.modes.current(this.view),
      sendError: (id: RequestId, err: unknown) => this.answers.error(id, err),
      notify: (method: string, params: unknown, about: RequestId) => this.notify(method, params, about),
    };
    this.calls = new Calls(callsHost);
    this.toolCalls = new ToolCalls(callsHost, this.calls);
    this.routed = new RoutedRequests({
      parts,
      log: this.log,
      caller: this,
      id,
      calls: this.calls,
      viewName: () => this.view,
      curatedView: () => this.curatedView(),
      sendResult: (id, result) => this.answers.result(id, result),
      sendError: (id, err) => this.answers.error(id, err),
      hold: async (conn, uri, subscribe) => {
        if (this.closed) return;
        if (subscribe) await parts.subscriptions.subscribe(this, conn, uri);
        else await parts.subscriptions.unsubscribe(this, conn, uri);
      },
    });
    const host: ModeHost = {
      agent,
      agentExplicit,
      claims: () => this.claims,
      modern: () => this.channel.era === 'modern',
      own: () => this.parts.own.of(this),
      untilSettled: (id, handler, until) => this.waiting.run(id, handler, until),
      sendResult: (id, result) => this.answers.result(id, result),
      sendEncodedResult: (id, json) => this.answers.encodedResult(id, json),
      sendResultBytes: (id, bytes) => this.answers.resultBytes(id, bytes),
      sendError: (id, err) => this.answers.error(id, err),
      serveTools: () => this.shown.serve('tools'),
      toolsChanged: () => {
        if (this.shown.changed('tools')) this.listChanged('notifications/tools/list_changed');
      },
      callAs: (msg, params, as) => this.toolCalls.callAs(msg, params, as),
      session: id,
      notify: (method, params, about) => this.notify(method, params, about),
      callInner: (call) => callInner((tool, options) => this.toolCalls.callAsAgent(tool, options), call),
      findSkills: (query, limit) => parts.skills.find(this.log, this, { query, limit, view: this.curatedView() }),
      curatedView: () => this.curatedView(),
    };
    this.modes = new SessionModes(parts, host, () => this.shown.ordinary('tools'));
  }

  handleLine(line: string): void {
    if (this.closed) return;
    const parsed = parseMessage(line);
    // A tools/call keeps its line: the server gets it with only the id and name replaced (wire/request-splice.ts).
    if (parsed.kind === 'request' && parsed.msg.method === 'tools/call' && parsed.msg.params !== undefined)
      this.toolCalls.keepLine(parsed.msg.params, line);
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
      this.calls.threw(parsed.msg.id);
      this.answers.error(parsed.msg.id, err); // logged there, with the stack, as an internal error
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
        this.answers.error(parsed.id, parsed.error);
    }
  }

  /** A message too large to read: answer with the code (no id is known). */
  overflow(length: number): void {
    this.answers.error(
      null,
      new GatewayError('MCPG_MESSAGE_TOO_LARGE', `message of ${length} characters exceeds the limit and was discarded`),
    );
  }

  private onRequest(msg: JsonRpcRequest): void {
    if (this.spans !== undefined) this.spans.open(msg);
    if (this.parts.settling.isClosing)
      return this.answers.error(msg.id, new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down'));
    switch (msg.method) {
      case 'tools/call':
        return this.toolCalls.tool(msg);
      case 'ping':
        return this.answers.result(msg.id, {});
      case 'initialize':
        return void this.initialize(msg);
      case 'tools/list':
        return this.modes.current(this.view).listTools(msg);
      case 'resources/list':
        return this.waiting.run(msg.id, () => this.answers.resultBytes(msg.id, this.shown.serve('resources')), 'listable');
      case 'resources/templates/list':
        return this.waiting.run(msg.id, () => this.answers.resultBytes(msg.id, this.shown.serve('resourceTemplates')), 'listable');
      case 'prompts/list':
        return this.waiting.run(msg.id, () => this.answers.resultBytes(msg.id, this.shown.serve('prompts')), 'listable');
      case 'resources/read':
        return this.waiting.run(msg.id, () => this.routed.readResource(msg));
      case 'prompts/get':
        return this.waiting.run(msg.id, () => this.routed.getPrompt(msg));
      case 'skills/list':
        return this.waiting.run(msg.id, () => this.routed.skill(msg), 'listable');
      case 'skills/get':
      case 'resources/directory/read':
        return this.waiting.run(msg.id, () => this.routed.skill(msg));
      case 'completion/complete':
        return this.waiting.run(msg.id, () => this.routed.complete(msg));
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return void this.subscribeUri(msg.method === 'resources/subscribe', msg.params?.uri).then(
          () => this.answers.result(msg.id, {}),
          (err: unknown) => this.answers.error(msg.id, err),
        );
      case 'logging/setLevel':
        return void this.setLevel(msg);
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/cancel':
        return this.routed.task(msg);
      case 'tasks/list':
        return this.routed.listTasks(msg);
      default:
        return this.waiting.run(msg.id, () => this.routed.other(msg));
    }
  }

  // ── what the session is, for the router and the pool ──────────────────────────────────────

  /** Whose tasks this session's are: its agent's (identified), else its own (tasks.ts); the pool scope's key. */
  get owner(): string {
    return scopeOf(this, 'per-agent').key;
  }

  /** The catalogs this session sees instead of the shared one's part of their servers (own-catalogs.ts). */
  get ownCatalogs(): readonly Catalog[] | undefined {
    const own = this.parts.own;
    return own.size === 0 ? undefined : own.of(this);
  }

  /** The view this session is on, from the rules in force (a view a reload removed shows nothing). */
  private curatedView(): CompiledView | undefined {
    return this.view === undefined ? undefined : (this.parts.inForce.rules.views.get(this.view) ?? REMOVED_VIEW);
  }

  /**
   * A tools/call made from inside the gateway as this session's agent (code mode's inner calls), through
   * exactly the steps of the agent's own (tool-calls.ts `ToolCalls.callAsAgent`).
   */
  callAsAgent(
    tool: { readonly name: string; readonly arguments?: Record<string, unknown> | undefined },
    options?: CallAsAgentOptions,
  ): Promise<InnerAnswer> {
    return this.toolCalls.callAsAgent(tool, options);
  }

  // ── resources ───────────────────────────────────────────────────────────────────────────────

  /** Subscribes this session to a resource URI (or unsubscribes it); rejects with why not (`RoutedRequests.subscribe`). */
  subscribeUri(subscribe: boolean, publicUriParam: unknown): Promise<void> {
    return this.routed.subscribe(subscribe, publicUriParam);
  }

  private async setLevel(msg: JsonRpcRequest): Promise<void> {
    if (!this.declared.askLevel(msg.params?.level))
      return this.answers.error(
        msg.id,
        invalidParams(`logging/setLevel needs params.level, one of ${Object.keys(LOG_LEVEL_RANK).join(', ')}`),
      );
    await this.parts.setServersLogLevel(this);
    this.answers.result(msg.id, {});
  }

  private async initialize(msg: JsonRpcRequest): Promise<void> {
    const params = msg.params ?? {};
    const requested = params.protocolVersion;
    this.declared.capabilities = (params.capabilities as Record<string, unknown> | undefined) ?? {};
    // The servers ready by then give their instructions; no list_changed goes out before this answer.
    await Promise.race([this.parts.settling.listable, delay(INITIALIZE_WAIT_MS)]);
    // On a curated view the capability directory is not added (it would name servers beyond the view).
    const mode = this.view === undefined ? this.modes.name(undefined) : 'aggregate';
    const instructions = this.parts.instructions({ agent: this.agent, claims: this.claims, mode });
    this.answers.result(msg.id, initializeResult(requested, instructions, this.parts.capabilities()));
    this.declared.initialized = true;
  }

  /** A modern listen stream: from now on the agent hears when its view of a list changes. */
  listenForChanges(): void {
    for (const kind of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) this.shown.changed(kind);
    this.declared.initialized = true;
  }

  /** True when a server's request outside the agent's calls can reach it now (see `AgentChannel.canBeAsked`). */
  get askable(): boolean {
    return this.channel.canBeAsked !== false;
  }

  /**
   * The agent can take a request outside its calls now (an HTTP agent opened its GET stream): a
   * server that asked for roots while no agent could answer is told to ask again.
   */
  canBeAsked(): void {
    if (this.declared.initialized && !this.closed) this.rootsReady();
  }

  /** An agent that has roots is ready to be asked for them: servers answered without roots ask again. */
  private rootsReady(): void {
    if (this.declared.hasRoots) this.parts.rootsArrived(this);
  }

  /** The agent said its roots changed: tell the servers that may ask it. */
  private rootsChanged(): void {
    this.parts.rootsChanged(this);
  }

  /** What the agent declared (its connections per agent or per session declare the same to servers). */
  get agentCapabilities(): Record<string, unknown> {
    return this.declared.capabilities;
  }

  /** The extensions the agent declared (`capabilities.extensions`), if any. */
  get extensions(): Record<string, unknown> | undefined {
    return this.declared.extensions;
  }

  /**
   * A modern (2026-07-28) request's session: its capabilities and log level come with the request
   * (the `_meta` envelope), not from `initialize`, and server requests need no wait for `initialized`.
   */
  adoptEnvelope(envelope: Envelope): void {
    this.declared.adopt(envelope);
    this.agentRequests.agentReady(envelope.capabilities);
  }

  /**
   * A session adopted from another worker of a cluster: the agent initialized it there,
   * so it starts initialized here, with the capabilities it declared then (kept in Redis). Only the
   * log level it may have set is not carried over.
   */
  resume(capabilities: Record<string, unknown>): void {
    this.declared.capabilities = capabilities;
    this.declared.initialized = true;
    this.agentRequests.agentReady(capabilities);
  }

  // ── notifications and responses from the agent ─────────────────────────────────────────────

  private onNotification(msg: JsonRpcNotification): void {
    switch (msg.method) {
      case 'notifications/cancelled': {
        const requestId = msg.params?.requestId as RequestId | undefined;
        if (requestId === undefined) return;
        const reason = typeof msg.params?.reason === 'string' ? msg.params.reason : 'cancelled by the agent';
        // A code-mode run stops (its program's inner calls are cancelled with it); a request waiting for
        // the servers to settle never runs; any other request is withdrawn.
        if (this.modes.cancelRun(requestId)) return;
        if (this.waiting.cancel(requestId)) return this.spans?.end(requestId, 'cancelled');
        this.toolCalls.cancel(requestId, reason);
        return;
      }
      case 'notifications/roots/list_changed':
        this.rootsChanged();
        return;
      case 'notifications/initialized': {
        this.declared.initialized = true;
        this.agentRequests.agentReady(this.declared.capabilities);
        if (this.askable) this.rootsReady();
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
    this.agentRequests.relay({ ...asked, about: this.calls.owner(question.conn, related) }, this.declared.capabilities);
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
    return this.calls.owns(conn, serverId);
  }

  /** This agent's calls in flight on `conn`. */
  callsOn(conn: Connection): number {
    return this.calls.countOn(conn);
  }

  /**
   * A server's log message, if this agent asked for logs (logging/setLevel) at or below its level.
   * Agents that never asked get none: on a shared gateway one agent's calls must not fill another's
   * log, and servers' logs are not attributable to a call.
   */
  deliverLog(server: string, params: Record<string, unknown>): void {
    const asked = this.declared.logRank;
    if (asked === undefined) return;
    const rank = typeof params.level === 'string' ? LOG_LEVEL_RANK[params.level] : undefined;
    if (rank !== undefined && rank < asked) return;
    const logger = typeof params.logger === 'string' && params.logger !== '' ? `${server}/${params.logger}` : server;
    this.notify('notifications/message', { ...params, logger });
  }

  listChanged(method: string): void {
    if (this.declared.initialized) this.notify(method);
  }

  notify(method: string, params?: unknown, about?: RequestId): void {
    this.answers.notify(method, params, about);
  }

  /**
   * The session ends (the agent went away, or the gateway is shutting down): cancel its calls on the
   * servers, tell the agent — if it is still listening — that they will not be answered (nothing
   * is left hanging), and answer the servers' questions to it. Idempotent.
   */
  close(): void {
    if (this.closed) return;
    this.waiting.close();
    this.modes.close();
    this.toolCalls.close();
    this.calls.close();
    this.closed = true;
    this.spans?.endAll('MCPG_SHUTTING_DOWN');
    this.agentRequests.close();
    this.parts.closed(this);
    this.channel.closed?.();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
