// One agent session's calls to servers: a tools/call made once into a `ToolCall` (its params checked,
// never edited), its name resolved (a curated view's, a mode's own tool), routed, judged at the call
// gate and sent; and every request the session has in flight on a server (`InFlight`: agent id ↔
// connection and the server's id), forwarded, its answer relayed by splicing the agent's id into the
// server's line, its progress passed on, cancelled, and recorded (audit line, call metrics).
// `callAsAgent` makes a call from inside the gateway (code mode's inner calls) through the same steps;
// its answer comes back to the caller instead of the agent's channel. The session holds one `Calls`
// and reaches the rest of the gateway for it (`CallsHost`).

import { randomBytes } from 'node:crypto';
import { GatewayError, asGatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';
import type { OutboundRequest } from '../../servers/outbound-request.js';
import { spliceResponseId, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../../wire/jsonrpc.js';
import { sanitizeContent } from '../../wire/sanitize.js';
import type { ScreenedArguments } from '../../policy/guard-checks.js';
import { callHeaders } from '../../wire/tool-headers.js';
import { viewArguments, viewTarget } from '../../policy/curated-views.js';
import type { CompiledView } from '../../rules/views.js';
import { rewriteToolResult } from '../../catalog/catalog.js';
import type { AuditCall, AuditLog } from '../../observability/audit.js';
import type { ServerCallSpan } from '../../observability/tracing.js';
import { META_TOOL_NAMES } from '../modes/discovery.js';
import { CODE_TOOL_NAMES } from '../modes/code-mode.js';
import { signServerError } from '../modes/argument-errors.js';
import type { InnerAnswer, SessionMode } from '../modes/session-mode.js';
import { NOT_YET, isPending, type Caller, type Carrier, type ToolRoute } from '../routing/router.js';
import { seenEntry } from '../routing/own-catalogs.js';
import { recordCreatedTask } from '../routing/tasks.js';
import type { AgentChannel } from './agent-channel.js';
import { GatedCalls } from './gated-calls.js';
import { failureOf, type RequestSpans } from './request-spans.js';
import { UntilSettled } from './until-settled.js';
import type { Catalog } from '../../catalog/catalog.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { CallGate } from '../../policy/call-gate.js';
import type { RulesInForce } from '../../rules/load.js';
import type { OwnCatalogs } from '../routing/own-catalogs.js';
import type { Router } from '../routing/router.js';
import type { TaskTable } from '../routing/tasks.js';
import type { Settling } from './until-settled.js';
import type { AgentDeclaration } from './agent-declaration.js';

/** The gateway's parts the calls use (the session's `SessionParts` has them all). */
export interface CallParts {
  readonly router: Router;
  readonly inForce: RulesInForce;
  readonly catalog: Catalog;
  readonly own: OwnCatalogs;
  readonly settling: Settling;
  readonly metrics: GatewayMetrics;
  readonly audit: AuditLog | undefined;
  readonly gate: CallGate;
  readonly maxInflight: number;
  readonly sanitize: boolean;
  readonly tasks: TaskTable;
}

/** What the calls read of their agent session and ask of it. */
interface CallsHost {
  readonly parts: CallParts;
  readonly channel: AgentChannel;
  readonly log: Logger;
  /** Tracing on: the session's open request spans (undefined: off). */
  readonly spans: RequestSpans | undefined;
  /** The session as the router's caller (its agent, claims, own catalogs, pool scope). */
  readonly caller: Caller & {
    readonly agent: string;
    readonly serial: number;
    readonly extensions: Record<string, unknown> | undefined;
    readonly agentCapabilities?: Readonly<Record<string, unknown>>;
  };
  /** The session's id (the audit trail's). */
  readonly id: string;
  /** The pool scope's key whose tasks the session's are (tasks.ts). */
  owner(): string;
  isClosed(): boolean;
  /** What the agent declared (capabilities, log level, a modern request's headers), sent on with each request. */
  readonly declared: AgentDeclaration;
  /** The curated view the session is on, from the rules in force; undefined: none. */
  curatedView(): CompiledView | undefined;
  /** The session's part of the agent's mode now. */
  mode(): SessionMode;
  sendError(id: RequestId, err: unknown): void;
  notify(method: string, params: unknown, about: RequestId): void;
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
  /** A call made from inside the gateway (`callAsAgent`): its answer goes back to its caller. */
  readonly inner?: InnerCall | undefined;
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

/** How a call from inside the gateway is made (`Calls.callAsAgent`). */
export interface CallAsAgentOptions {
  /** Aborting it cancels the call as the agent's `notifications/cancelled` would; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The agent request the call is part of (e.g. code mode's tools/call): its trace span is the parent
   * of the call's server span, and what the agent is told meanwhile (an approval page) goes as part of it.
   */
  readonly parent?: RequestId | undefined;
  /** The server's progress notifications for the call (without a progress token of the agent's). */
  readonly progress?: ((params: Record<string, unknown>) => void) | undefined;
  /** The code-mode run the call is made from: named in its audit line, and the gate applies the rules' `code.approve`. */
  readonly run?: string | undefined;
  readonly timeoutMs?: number | undefined;
}

/** A call from inside the gateway while it runs. */
interface InnerCall {
  readonly options: CallAsAgentOptions;
  readonly resolve: (answer: InnerAnswer) => void;
  settled: boolean;
}

/** The id prefix of calls made from inside the gateway; each session adds a random part, so an agent cannot name one. */
const INNER_CALL = 'mcpgate-inner-';

type Rewrite = (result: Record<string, unknown>) => boolean;

/** How a request is sent to a server, besides what it is (`OutboundRequest`). */
interface Sending {
  timeoutMs?: number | undefined;
  /** Edits a result before it is relayed (names, content); true when it changed it. */
  rewrite?: Rewrite | undefined;
  /** Edits a server's error before it is relayed (the guards, the tool's signature on -32602); true when it changed it. */
  screenError?: ((error: { code?: unknown; message?: unknown; data?: unknown }) => boolean) | undefined;
  /** A tool call whose answer's size is counted in the metrics (agent × server × tool). */
  metered?: { readonly agent: string; readonly server: string; readonly tool: string } | undefined;
  /** The audit line and call metrics of the request (undefined: none kept). */
  timed?: Timed | undefined;
  /** The interceptor servers' judgement of a result (after `rewrite`): undefined when none hooks it, else the result that goes on or the refusal. */
  intercept?: ((result: Record<string, unknown>) => Promise<unknown> | undefined) | undefined;
  /** Ends the call's hold on its calls-in-flight limits (the gate's pass). */
  release?: (() => void) | undefined;
  /** Asked once a connection the call waited for is ready: whether the call may still go (an error ends it). */
  recheck?: (() => GatewayError | undefined) | undefined;
}

/** Every tool name an agent mode may own: discovery's meta-tools, search mode's search_tools, code mode's tools. */
const MODE_TOOL_NAMES: ReadonlySet<string> = new Set([...META_TOOL_NAMES, ...CODE_TOOL_NAMES]);

export class Calls {
  private readonly inflight = new InFlight();
  /** Calls whose request the interceptor servers are judging (not yet at the gate nor on any server). */
  private readonly intercepting = new Set<RequestId>();
  /** A tools/call's params → the agent's line they were parsed from, which the server may get spliced. */
  private readonly agentLines = new WeakMap<object, string>();
  /** The agent's calls held at the call gate (not yet on any server); made on its first call there. */
  private gatedCalls: GatedCalls | undefined;
  /** Calls from inside the gateway (`callAsAgent`) by their own ids. */
  private readonly inner = new Map<RequestId, InnerCall>();
  private nextInner = 1;
  /** This session's prefix of the ids of calls from inside. */
  private readonly innerPrefix = `${INNER_CALL}${randomBytes(6).toString('hex')}-`;
  /** Tool calls waiting until the servers settle (a name not known yet); answered at close. */
  private readonly waiting: UntilSettled;

  constructor(private readonly host: CallsHost) {
    this.waiting = new UntilSettled(host.parts.settling, (id, err) => this.fail(id, err));
  }

  /** The agent's line of a tools/call, kept with the params parsed from it: the server may get it spliced. */
  keepLine(params: object, line: string): void {
    this.agentLines.set(params, line);
  }

  // ── tools/call ──────────────────────────────────────────────────────────────────────────────

  /** The agent's tools/call: its params checked once, then resolved, routed, judged and sent. */
  tool(msg: JsonRpcRequest): void {
    const call = toolCall(msg, msg.params, { agent: this.host.caller.agent, timeoutMs: undefined });
    if (call instanceof GatewayError) return this.fail(msg.id, call);
    this.run(call);
  }

  /** A mode's rewrite (execute_tool): a new tools/call of `params`, made as `as.agent`. */
  callAs(msg: JsonRpcRequest, params: Record<string, unknown>, as: { agent: string; timeoutMs: number | undefined }): void {
    const executed = toolCall(msg, params, as);
    if (executed instanceof GatewayError) return this.fail(msg.id, executed);
    this.run(executed);
  }

  /**
   * A tools/call made from inside the gateway as this session's agent (code mode's inner calls), through
   * the same steps as the agent's own: its curated view, the route and the rules, the pins, the call
   * gate (approvals, quotas), the result's rewriting, the metrics and the audit trail. Only a mode's own
   * tools (search_tools, meta-tools) are not reached from inside. Resolves with what the agent would
   * have been answered; rejects only when `signal` aborts it.
   */
  callAsAgent(
    tool: { readonly name: string; readonly arguments?: Record<string, unknown> | undefined },
    options: CallAsAgentOptions = {},
  ): Promise<InnerAnswer> {
    const id = `${this.innerPrefix}${this.nextInner++}`;
    const { signal, progress } = options;
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise<InnerAnswer>((resolve, reject) => {
      const onAbort = (): void => {
        if (inner.settled) return;
        inner.settled = true;
        this.inner.delete(id);
        this.withdraw(id, 'cancelled by the gateway');
        reject(abortReason(signal));
      };
      const inner: InnerCall = {
        options,
        settled: false,
        resolve: (answer) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      };
      this.inner.set(id, inner);
      signal?.addEventListener('abort', onAbort, { once: true });
      const params: Record<string, unknown> = {
        name: tool.name,
        ...(tool.arguments !== undefined && { arguments: tool.arguments }),
        ...(progress !== undefined && { _meta: { progressToken: id } }),
      };
      const msg: JsonRpcRequest = { jsonrpc: '2.0', id, method: 'tools/call', params };
      // As an agent's request is refused once its session ends or the gateway shuts down.
      if (this.host.isClosed() || this.host.parts.settling.isClosing)
        return this.fail(id, new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down'));
      const call = toolCall(msg, params, { agent: this.host.caller.agent, timeoutMs: options.timeoutMs });
      if (call instanceof GatewayError) return this.fail(id, call);
      this.run({ ...call, inner });
    });
  }

  /** Resolves the name (a curated view's, a meta-tool, search_tools), routes it, and sends it through the gate. */
  private run(call: ToolCall): void {
    const { msg, name } = call;
    const { host } = this;
    const { parts } = host;
    // Only a name some mode owns asks the agent's mode (one set lookup for every other call); on a
    // curated view before the view's names (code mode's tools over a view), never once the view has
    // turned a name into the catalog's (a tool of that name is a server's).
    if (MODE_TOOL_NAMES.has(name) && call.inner === undefined && !call.viewed) {
      const mode = host.mode();
      if (mode.owns(name))
        return mode.call({ msg, name, params: call.params, args: call.arguments === INVALID ? {} : (call.arguments ?? {}) });
    }
    const view = call.viewed ? undefined : host.curatedView();
    if (view !== undefined) return this.callOnView(view, call);
    if (call.arguments === INVALID) {
      // Refused before routing, and audited as every refusal is (a program's call names its run).
      const refused = invalidParams('tools/call params.arguments must be an object');
      if (parts.audit !== undefined)
        auditOf(
          parts.audit,
          { session: host.id, method: msg.method, agent: call.agent },
          { tool: name, ...(call.inner?.options.run !== undefined && { run: call.inner.options.run }) },
          refused,
        );
      return this.fail(msg.id, refused);
    }
    // Denied, held, unknown or unconnected: the router decides once, before existence for denials.
    // An agent named by discovery's agent_id has no token of its own: no claims.
    const route = parts.router.tool(host.log, this.callerFor(call.agent), name);
    if (route === NOT_YET) return this.waiting.run(msg.id, () => this.run(call));
    const audit =
      parts.audit === undefined
        ? undefined
        : auditOf(
            parts.audit,
            { session: host.id, method: msg.method, agent: call.agent },
            {
              tool: name,
              ...parts.audit.argumentsOf(call.arguments),
              ...(call.inner?.options.run !== undefined && { run: call.inner.options.run }),
            },
            route instanceof GatewayError ? route : route.server,
          );
    if (route instanceof GatewayError) return this.fail(msg.id, route);
    // The built-in guards (policy/guard-checks.ts) screen the arguments before anything else sees
    // them: a blocked call is refused here, a redacted one goes on with new params (encoded, not
    // spliced), and the audit trail gets the arguments with every find replaced by its marker.
    // With `"guards": false` in the rules (one property read) no guard code runs.
    const screened =
      parts.inForce.rules.guards === undefined
        ? undefined
        : parts.gate.guards.arguments(
            { agent: call.agent, session: host.id, server: route.server, tool: route.original, name, method: msg.method },
            call.arguments,
          );
    if (screened !== undefined) return this.guarded(call, route, screened);
    this.interceptThen(call, route, audit);
  }

  /** A call whose arguments the guards found something in: refused, or sent on with what the server may get. */
  private guarded(call: ToolCall, route: ToolRoute, screened: ScreenedArguments): void {
    const { parts } = this.host;
    const audit =
      parts.audit === undefined
        ? undefined
        : auditOf(
            parts.audit,
            { session: this.host.id, method: call.msg.method, agent: call.agent },
            { tool: call.name, ...parts.audit.argumentsOf(screened.record) },
            route.server,
          );
    if (screened.blocked !== undefined) {
      if (audit !== undefined) parts.audit?.record({ ...audit, outcome: 'failed', code: screened.blocked.code });
      return this.fail(call.msg.id, screened.blocked);
    }
    if (screened.send === call.arguments) return this.interceptThen(call, route, audit);
    this.interceptThen({ ...call, params: { ...call.params, arguments: screened.send }, arguments: screened.send }, route, audit);
  }

  /**
   * The interceptor servers (policy/interceptors.ts) judge the call's request after the built-in
   * guards: a validator may refuse it, a mutator rewrite its arguments (then its params are new: the
   * request is encoded, not spliced). The payload they get is the request's params in the server's
   * names (`{ name, arguments }`); a mutator's change of the name is not taken. With no interceptor
   * server configured (one property read), or none hooking this call, nothing is awaited.
   */
  private interceptThen(call: ToolCall, route: ToolRoute, audit: Omit<AuditCall, 'outcome'> | undefined): void {
    const { interceptors } = this.host.parts.gate;
    if (interceptors.none) return this.gateThen(call, route, audit);
    const args = call.arguments === INVALID ? {} : (call.arguments ?? {});
    const payload = { name: route.original, arguments: args };
    const subject = {
      agent: call.agent,
      session: this.host.id,
      server: route.server,
      tool: route.original,
      name: call.name,
      event: 'tools/call',
    };
    const judged = interceptors.intercept(subject, 'request', payload);
    if (judged === undefined) return this.gateThen(call, route, audit);
    const id = call.msg.id;
    this.intercepting.add(id);
    void judged.then((out) => {
      // Withdrawn (cancelled) or closed while the interceptors judged it: it is not sent.
      if (!this.intercepting.delete(id) || this.host.isClosed()) return;
      if (out instanceof GatewayError) {
        if (audit !== undefined) this.host.parts.audit?.record({ ...audit, outcome: 'failed', code: out.code });
        return this.fail(id, out);
      }
      if (out === payload) return this.gateThen(call, route, audit);
      const changed = isObject(out) ? out.arguments : undefined;
      if (!isObject(changed))
        return this.fail(
          id,
          new GatewayError(
            'MCPG_INTERCEPTOR_FAILED',
            `a mutator's payload for "${call.name}" has no arguments object; the call was not sent`,
            {
              detail: { reason: 'no arguments in the mutated payload', phase: 'request' },
            },
          ),
        );
      this.gateThen({ ...call, params: { ...call.params, arguments: changed }, arguments: changed }, route, audit);
    });
  }

  /** The call gate (policy/call-gate.ts) judges what the rules hold for some calls only: without approvals or limits in the rules (one property read each) the call is sent. */
  private gateThen(call: ToolCall, route: ToolRoute, audit: Omit<AuditCall, 'outcome'> | undefined): void {
    const rules = this.host.parts.inForce.rules;
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
        session: this.host.id,
        server: route.server,
        tool: route.original,
        publicName: call.name,
        arguments: call.arguments === INVALID ? undefined : call.arguments,
        claims: call.agent === this.host.caller.agent ? this.host.caller.claims : undefined,
        run: call.inner?.options.run,
      },
      progressToken: isObject(meta) ? meta.progressToken : undefined,
      audit,
      inputSchema: route.tool.inputSchema,
      go: (release, waited) => {
        if (!waited) return this.sendCall(call, route, audit, release);
        // The carrier is taken again: a pooled connection made before the wait may have gone since.
        const carrier = this.host.parts.router.carrier(route.conn, this.callerFor(call.agent));
        if (carrier instanceof GatewayError) {
          release();
          return this.fail(call.msg.id, carrier);
        }
        this.sendCall(call, { ...route, carrier }, audit, release);
      },
    });
  }

  /** This session's calls at the gate, made on its first such call. */
  private gated(): GatedCalls {
    const { host } = this;
    return (this.gatedCalls ??= new GatedCalls({
      gate: host.parts.gate,
      channel: host.channel,
      audit: host.parts.audit,
      spans: host.spans,
      maxInflight: host.parts.maxInflight,
      agent: host.caller.agent,
      isClosed: () => host.isClosed(),
      takesUrlElicitation: () => host.declared.takesUrlElicitation && host.channel.era !== 'modern',
      inFlight: (id) => this.inflight.has(id),
      about: (id) => this.aboutOf(id),
      sendError: (id, err) => this.fail(id, err),
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
    // A call from inside that was cancelled while it waited is not sent.
    if (call.inner?.settled === true) return release?.();
    const { msg, params, name, agent } = call;
    const { parts, log } = this.host;
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
            const again = parts.router.tool(log, this.callerFor(agent), name);
            if (again instanceof GatewayError) return again;
            if (again === NOT_YET || again.original !== route.original)
              return new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } });
            return undefined;
          }
        : undefined;
    const subject = { agent, session: this.host.id, server: route.server, tool: route.original, name, method: msg.method };
    // A task-augmented call holds its calls-in-flight place while its task works (tasks.ts): the hold
    // passes to the task it created. The answer's release runs after its rewrite, to know.
    const taskHold = augmented ? release : undefined;
    let handedOver = false;
    const callRelease =
      taskHold === undefined
        ? release
        : () =>
            queueMicrotask(() => {
              if (!handedOver) taskHold();
            });
    const rewrite = (result: Record<string, unknown>): boolean => {
      const created = augmented && recordCreatedTask(parts.tasks, this.host.owner(), route.server, result);
      if (created && taskHold !== undefined) {
        const task = result.task as { taskId?: unknown; status?: unknown };
        handedOver = parts.tasks.hold(this.host.owner(), task.taskId, task.status, taskHold);
      }
      const renamed = rewriteToolResult(result, (uri) => parts.catalog.publicUri(route.server, uri));
      const sanitized = parts.sanitize && sanitizeContent(result);
      // The guards and the result cap (CallGate.answer) read the result as the agent would get it.
      const answered = parts.inForce.rules.guards === undefined ? false : parts.gate.answer(subject, result);
      if (answered instanceof GatewayError) throw answered;
      return answered || sanitized || renamed || created;
    };
    const { interceptors } = parts.gate;
    this.send(route.carrier, msg.id, outbound, {
      timeoutMs: call.timeoutMs,
      rewrite,
      // Built only where an interceptor is bound: a spread of the subject on every call costs more than the rest of this.
      intercept: interceptors.none
        ? undefined
        : (result) => interceptors.intercept({ ...subject, event: 'tools/call' }, 'response', result),
      screenError: (error) => {
        const screened = parts.inForce.rules.guards !== undefined && parts.gate.guards.error(subject, error);
        // A server's -32602 carries the tool's signature, so the agent can fix its call (argument-errors.ts).
        return signServerError(error, name, route.tool.inputSchema) || screened;
      },
      metered: subject,
      timed: { tool: route.original, start: performance.now(), audit },
      release: callRelease,
      recheck,
    });
  }

  /**
   * A tools/call on a curated view: the view's name becomes the tool's public name and the view's fixed
   * parameters are set; then it is an ordinary call, which the rules and the pins judge as ever. What
   * the view leaves out, or the rules deny behind a rename, is an unknown tool under the view's name.
   */
  private callOnView(view: CompiledView, call: ToolCall): void {
    const { msg, name, params } = call;
    const { parts, log, caller } = this.host;
    if (call.arguments === INVALID) return this.refuseOnView(call, invalidParams('tools/call params.arguments must be an object'));
    const own = parts.own.of(caller);
    const target = viewTarget(
      view,
      name,
      (publicName) => seenEntry(parts.catalog, own, (c) => c.tool(publicName)),
      (server, original) => parts.catalog.nameFor(server, original),
    );
    const unknown = new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } });
    if (target === undefined)
      return parts.settling.hasSettled ? this.refuseOnView(call, unknown) : this.waiting.run(msg.id, () => this.callOnView(view, call));
    if (target.entry.name !== undefined) {
      const denied = parts.router.toolDenied(
        log,
        { agent: caller.agent, claims: caller.claims },
        target.publicName,
        seenEntry(parts.catalog, own, (c) => c.tool(target.publicName)),
      );
      if (denied !== undefined) return this.refuseOnView(call, unknown);
    }
    const args = viewArguments(target.entry, name, call.arguments);
    if (args instanceof GatewayError) return this.refuseOnView(call, args);
    // New params, a new call: the agent's line no longer says what the server gets, so it is encoded, not spliced.
    if (target.publicName !== name || target.entry.params.size > 0)
      return this.run({
        ...call,
        name: target.publicName,
        params: { ...params, name: target.publicName, arguments: args },
        arguments: args,
        viewed: true,
      });
    this.run({ ...call, viewed: true });
  }

  /** A call the curated view refuses (unknown on it, a fixed parameter): audited as every refusal is, its run named. */
  private refuseOnView(call: ToolCall, refused: GatewayError): void {
    const { parts, id } = this.host;
    if (parts.audit !== undefined)
      auditOf(
        parts.audit,
        { session: id, method: call.msg.method, agent: call.agent },
        { tool: call.name, ...(call.inner?.options.run !== undefined && { run: call.inner.options.run }) },
        refused,
      );
    this.fail(call.msg.id, refused);
  }

  /**
   * Who a call is routed for: this session, or an agent discovery's `agent_id` names (only where
   * this session's identity is the default one): that agent's rules, no token claims, and this
   * session's own catalogs and pool scope (an unnamed session's own).
   */
  private callerFor(agent: string): Caller {
    const { caller } = this.host;
    if (agent === caller.agent) return caller;
    return {
      agent,
      identified: false,
      serial: caller.serial,
      claims: undefined,
      ownCatalogs: caller.ownCatalogs,
      extensions: caller.extensions,
      agentCapabilities: caller.agentCapabilities,
    };
  }

  // ── requests in flight on servers ───────────────────────────────────────────────────────────

  /**
   * The request a server gets, built once: the method, the params in the server's names, the agent's
   * line where it may be spliced, what the agent declared, and the `Mcp-Param-*` headers (`mirrored`
   * from a tool's parameters, else the agent's own).
   */
  outbound(
    method: string,
    params: Record<string, unknown> | undefined,
    line?: string,
    mirrored?: Readonly<Record<string, string>>,
  ): OutboundRequest {
    const { declared } = this.host;
    return {
      method,
      params,
      line,
      agentCapabilities: declared.capabilities,
      logLevel: declared.logLevel,
      paramHeaders: mirrored ?? declared.paramHeaders,
    };
  }

  /**
   * Sends the agent's request `agentId` as `outbound` on `carrier` (the router's: at once, or once it
   * is made or started) and relays the answer, as `sending` says.
   */
  send(carrier: Carrier, agentId: RequestId, outbound: OutboundRequest, sending: Sending = {}): void {
    const { release } = sending;
    const { maxInflight } = this.host.parts;
    // Refused before it is in `inflight`: a pass it held at the gate ends here (in `inflight`, InFlight ends it).
    const refuse = (err: unknown): void => {
      release?.();
      this.fail(agentId, err);
    };
    if (this.inflight.has(agentId))
      return refuse(
        new GatewayError('MCPG_INVALID_REQUEST', `request id ${JSON.stringify(agentId)} is already in use by a request in flight`),
      );
    if (this.inflight.size >= maxInflight) {
      return refuse(
        new GatewayError(
          'MCPG_OVERLOADED',
          `agent "${this.host.caller.agent}" already has ${this.inflight.size} requests in flight (the limit is ${maxInflight}); wait for some to finish`,
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
        if (this.inflight.get(agentId) !== entry || this.host.isClosed()) return;
        const refused = sending.recheck?.();
        if (refused !== undefined) {
          this.inflight.delete(agentId);
          return this.fail(agentId, refused);
        }
        entry.conn = pooled;
        this.forward(entry, outbound, { agentId, agentToken }, sending);
      },
      (err: unknown) => {
        if (this.inflight.get(agentId) !== entry) return;
        this.inflight.delete(agentId);
        this.fail(agentId, err);
      },
    );
  }

  /** Sends the call `entry` (in `inflight` under the agent's id) on `entry.conn`. */
  private forward(
    entry: Call,
    outbound: OutboundRequest,
    asked: { readonly agentId: RequestId; readonly agentToken: unknown },
    { timeoutMs, rewrite, timed, screenError, metered, intercept }: Sending,
  ): void {
    const { agentId, agentToken } = asked;
    const { spans, parts, channel } = this.host;
    const conn = entry.conn;
    const inner = this.inner.size === 0 ? undefined : this.inner.get(agentId);
    // Traced: the server gets the call's trace context in its `_meta` (so the agent's line is not spliced).
    const request = spans === undefined ? outbound : spans.serverCall(entry, inner?.options.parent ?? agentId, outbound);
    entry.serverId = conn.forward(
      request,
      {
        reply: (res, line) => {
          if (this.inflight.get(agentId) !== entry) return;
          this.inflight.delete(agentId);
          if (timed !== undefined) recordFinished(parts, conn, timed, { outcome: 'error' in res ? 'error' : 'ok', res });
          // Read before relay: a rewrite may edit the result.
          const failure = spans === undefined ? undefined : failureOf(res);
          const deliver = (answer: JsonRpcResponse, answerLine: string, edit: Rewrite | undefined): void => {
            try {
              // A server's error the guards redacted is encoded again (an empty line), not spliced.
              const relayed = 'error' in answer && screenError?.(answer.error) === true ? '' : answerLine;
              if (inner !== undefined) this.answerInner(agentId, answer, edit);
              else this.relay(answer, relayed, { agentId, serverId: entry.serverId, metered }, edit);
              if (spans !== undefined) {
                entry.trace?.end(failure === undefined ? 'ok' : 'error', failure);
                spans.end(agentId, failure === undefined ? 'ok' : 'error', failure, conn.name);
              }
            } catch (err) {
              // The server's answer could not be passed on (a bug here, never the agent's or the server's
              // fault to carry): the agent still gets an answer, and the server's other calls go on.
              this.fail(agentId, err);
            }
          };
          if (intercept === undefined || !('result' in res)) return deliver(res, line, rewrite);
          // The interceptor servers judge the result as the agent would get it (names, guards, cap):
          // it is edited first, then judged, then encoded (never spliced).
          let judged: Promise<unknown> | undefined;
          try {
            rewrite?.(res.result);
            judged = intercept(res.result);
          } catch (err) {
            return this.fail(agentId, err);
          }
          if (judged === undefined) return deliver(res, '', undefined);
          void judged.then((out) => {
            if (this.host.isClosed()) return;
            if (out instanceof GatewayError) {
              entry.trace?.end('failed', out.code);
              return this.fail(agentId, out);
            }
            if (!isObject(out))
              return this.fail(
                agentId,
                new GatewayError(
                  'MCPG_INTERCEPTOR_FAILED',
                  'a mutator turned a tool result into something that is not a result; it was not passed on',
                  {
                    detail: { reason: 'the mutated payload is not an object', phase: 'response' },
                  },
                ),
              );
            deliver({ ...res, result: out }, '', undefined);
          });
        },
        fail: (err) => {
          if (this.inflight.get(agentId) !== entry) return;
          this.inflight.delete(agentId);
          if (timed !== undefined) recordFinished(parts, conn, timed, { outcome: 'failed', err });
          entry.trace?.end('failed', asGatewayError(err).code);
          this.fail(agentId, err);
        },
        progress:
          agentToken === undefined ? undefined : (p) => this.notify('notifications/progress', { ...p, progressToken: agentToken }, agentId),
        paused:
          inner !== undefined
            ? undefined
            : (retryMs, resume) => {
                if (!this.host.isClosed() && this.inflight.get(agentId) === entry) channel.pause?.(agentId, retryMs, resume);
              },
      },
      timeoutMs,
      channel.era === 'modern' ? 'modern' : 'legacy',
    );
    // Not sent (refused before it left, or the server is unavailable): the sink has answered already.
    if (entry.serverId === 0 && this.inflight.get(agentId) === entry) this.inflight.delete(agentId);
  }

  /** The server's answer to the agent: its line with the agent's id spliced in, or re-encoded when rewritten. */
  private relay(
    res: JsonRpcResponse,
    line: string,
    ids: { readonly agentId: RequestId; readonly serverId: number; readonly metered?: Sending['metered'] },
    rewrite: Rewrite | undefined,
  ): void {
    const { agentId, serverId, metered } = ids;
    if (this.host.isClosed()) return;
    // An empty line: the answer was edited before (a server's error the guards redacted), so it is encoded.
    const rewritten = line === '' || ('result' in res && rewrite !== undefined && rewrite(res.result));
    const spliced = rewritten ? undefined : spliceResponseId(line, serverId, agentId);
    let sent: string;
    if (spliced !== undefined) sent = spliced;
    else {
      res.id = agentId;
      sent = JSON.stringify(res);
    }
    this.host.channel.send(sent, agentId, true);
    if (metered !== undefined) this.host.parts.metrics.resultPassed(metered.agent, metered.server, metered.tool, Buffer.byteLength(sent));
  }

  /** The server's answer to a call from inside: rewritten as the agent's would be, to its caller. */
  private answerInner(id: RequestId, res: JsonRpcResponse, rewrite: Rewrite | undefined): void {
    const inner = this.inner.get(id);
    if (inner === undefined || inner.settled) return;
    this.inner.delete(id);
    inner.settled = true;
    if ('error' in res) return inner.resolve({ error: res.error });
    rewrite?.(res.result);
    inner.resolve({ result: res.result });
  }

  /** A request's failure: to the agent, or to the caller of a call from inside (counted as the session counts it). */
  private fail(id: RequestId, err: unknown): void {
    const inner = this.inner.size === 0 ? undefined : this.inner.get(id);
    if (inner === undefined) return this.host.sendError(id, err);
    this.inner.delete(id);
    if (inner.settled) return;
    inner.settled = true;
    const error = asGatewayError(err);
    this.host.parts.metrics.error(error.code);
    inner.resolve({ error: error.toJsonRpc() });
  }

  /** A notification about request `about`: to the agent, or a progress notification to the caller of a call from inside. */
  private notify(method: string, params: unknown, about: RequestId): void {
    const inner = this.inner.size === 0 ? undefined : this.inner.get(about);
    if (inner === undefined) return this.host.notify(method, params, about);
    if (method === 'notifications/progress') {
      const { progressToken: _, ...progress } = params as Record<string, unknown>;
      inner.options.progress?.(progress);
      return;
    }
    if (inner.options.parent !== undefined) this.host.notify(method, params, inner.options.parent);
  }

  /** What the agent is told about request `id` goes as part of this request (a call from inside: its parent's). */
  private aboutOf(id: RequestId): RequestId {
    return (this.inner.size === 0 ? undefined : this.inner.get(id)?.options.parent) ?? id;
  }

  /** The agent cancelled its request `id` (a call from inside is not the agent's to cancel). */
  cancel(id: RequestId, reason: string): void {
    if (this.inner.size !== 0 && this.inner.has(id)) return;
    this.withdraw(id, reason);
  }

  /** Request `id` is withdrawn: at the gate, or cancelled on its server (and, like any cancelled request, not answered). */
  private withdraw(id: RequestId, reason: string): void {
    if (this.intercepting.delete(id)) return;
    const entry = this.inflight.get(id);
    if (entry === undefined) return this.gatedCalls?.cancel(id, reason);
    // Its hold on its calls-in-flight limits lasts while the server may still be working on it.
    const release = entry.release;
    entry.release = undefined;
    this.inflight.delete(id);
    const { spans } = this.host;
    if (spans !== undefined) {
      entry.trace?.end('cancelled');
      spans.end(id, 'cancelled', undefined, entry.conn.name);
    }
    entry.conn.cancel(entry.serverId, reason, release);
  }

  /** Handling request `id` threw: its call, if it got as far as a server, is cancelled there. */
  threw(id: RequestId): void {
    const call = this.inflight.get(id);
    if (call === undefined) return;
    this.inflight.delete(id);
    call.trace?.end('failed', 'MCPG_INTERNAL');
    if (call.serverId !== 0) call.conn.cancel(call.serverId, 'mcpgate failed while handling the request');
  }

  /** True when the server's call `serverId` on `conn` is one of this session's. */
  owns(conn: Connection, serverId: number): boolean {
    return this.inflight.owns(conn, serverId);
  }

  /** This session's calls in flight on `conn`. */
  countOn(conn: Connection): number {
    return this.inflight.countOn(conn);
  }

  /** The agent request a server's question on `conn` belongs to (`InFlight.owner`). */
  owner(conn: Connection, related: number | undefined): RequestId | undefined {
    const id = this.inflight.owner(conn, related);
    return id === undefined ? undefined : this.aboutOf(id);
  }

  /**
   * The session ends: its calls are cancelled on the servers and answered that they will not be
   * (the agent's, if it still listens; a call from inside, its caller), the held ones withdrawn.
   */
  close(): void {
    this.waiting.close();
    for (const [agentId, entry] of this.inflight) {
      entry.trace?.end('cancelled');
      // As in `withdraw`: the limits' hold ends when the server is through with the call.
      const release = entry.release;
      entry.release = undefined;
      entry.conn.cancel(entry.serverId, 'the agent disconnected', release);
      this.fail(
        agentId,
        new GatewayError('MCPG_SHUTTING_DOWN', `the gateway is shutting down; the call to server "${entry.conn.name}" was cancelled`, {
          server: entry.conn.name,
        }),
      );
    }
    this.gatedCalls?.close();
    this.inflight.clear();
    for (const id of [...this.inner.keys()])
      this.fail(id, new GatewayError('MCPG_SHUTTING_DOWN', 'the session ended before the call was made'));
  }
}

/** Why an aborted call from inside rejects: the signal's reason when it is an error (an `AbortError` by default). */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error(typeof reason === 'string' ? reason : 'aborted');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function invalidParams(message: string): GatewayError {
  return new GatewayError('MCPG_INVALID_PARAMS', message);
}

// ── calls in flight ─────────────────────────────────────────────────────────────────────────────────
// One agent's calls in flight on servers: agent request id → (connection, id on that connection).
// Progress, cancellation and the routing of a server's questions to the call they belong to all
// read this table; `Calls` writes it.

interface Call {
  conn: Connection;
  /** The id the connection gave the forwarded request. */
  serverId: number;
  /** The server-call span (tracing on only). */
  trace: ServerCallSpan | undefined;
  /** Ends the call's hold on its calls-in-flight limits (the gate's pass); run once, when the call leaves this table. */
  release?: (() => void) | undefined;
}

class InFlight extends Map<RequestId, Call> {
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
// metrics. The calls time the request (`Timed`) and call these.

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
export function auditOf(
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
  parts: Pick<CallParts, 'metrics' | 'audit'>,
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
