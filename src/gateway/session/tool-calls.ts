// One agent session's tools/calls before they are sent: each made once into a `ToolCall` (its params
// checked, never edited; a rewrite makes a new one), its name resolved (a mode's own tool, a curated
// view's), routed, its arguments screened by the guards and judged by the interceptor servers, then
// admitted at the call gate and sent through the session's `Calls` (calls.ts) with how its answer is
// rewritten, screened and recorded. `callAsAgent` makes a call from inside the gateway (code mode's
// inner calls) through the same steps. The session holds one `ToolCalls` (`ToolCallsHost`).

import { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { JsonRpcRequest, RequestId } from '../../wire/jsonrpc.js';
import { sanitizeContent } from '../../wire/sanitize.js';
import type { ScreenedArguments } from '../../policy/guard-checks.js';
import { callHeaders } from '../../wire/tool-headers.js';
import { viewArguments, viewTarget } from '../../policy/curated-views.js';
import type { CompiledView } from '../../rules/views.js';
import { rewriteToolResult } from '../../catalog/catalog.js';
import type { AuditCall } from '../../observability/audit.js';
import { META_TOOL_NAMES } from '../modes/discovery.js';
import { CODE_TOOL_NAMES } from '../modes/code-mode.js';
import { signServerError } from '../modes/argument-errors.js';
import type { InnerAnswer, SessionMode } from '../modes/session-mode.js';
import { NOT_YET, type Caller, type ToolRoute } from '../routing/router.js';
import { seenEntry } from '../routing/own-catalogs.js';
import { recordCreatedTask } from '../routing/tasks.js';
import type { AgentChannel } from './agent-channel.js';
import { GatedCalls } from './gated-calls.js';
import type { RequestSpans } from './request-spans.js';
import { UntilSettled } from './until-settled.js';
import type { AgentDeclaration } from './agent-declaration.js';
import { auditOf, invalidParams, type CallAsAgentOptions, type CallParts, type Calls, type InnerCall } from './calls.js';

/** What the tool calls read of their agent session and ask of it. */
interface ToolCallsHost {
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
  /** What the agent declared: whether it takes a URL elicitation (an approval page). */
  readonly declared: AgentDeclaration;
  /** The curated view the session is on, from the rules in force; undefined: none. */
  curatedView(): CompiledView | undefined;
  /** The session's part of the agent's mode now. */
  mode(): SessionMode;
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

/** Every tool name an agent mode may own: discovery's meta-tools, search mode's search_tools, code mode's tools. */
const MODE_TOOL_NAMES: ReadonlySet<string> = new Set([...META_TOOL_NAMES, ...CODE_TOOL_NAMES]);

export class ToolCalls {
  /** Calls whose request the interceptor servers are judging (not yet at the gate nor on any server). */
  private readonly intercepting = new Set<RequestId>();
  /** A tools/call's params → the agent's line they were parsed from, which the server may get spliced. */
  private readonly agentLines = new WeakMap<object, string>();
  /** The agent's calls held at the call gate (not yet on any server); made on its first call there. */
  private gatedCalls: GatedCalls | undefined;
  /** Tool calls waiting until the servers settle (a name not known yet); answered at close. */
  private readonly waiting: UntilSettled;

  constructor(
    private readonly host: ToolCallsHost,
    private readonly calls: Calls,
  ) {
    this.waiting = new UntilSettled(host.parts.settling, (id, err) => calls.fail(id, err));
  }

  /** The agent's line of a tools/call, kept with the params parsed from it: the server may get it spliced. */
  keepLine(params: object, line: string): void {
    this.agentLines.set(params, line);
  }

  /** The agent's tools/call: its params checked once, then resolved, routed, judged and sent. */
  tool(msg: JsonRpcRequest): void {
    const call = toolCall(msg, msg.params, { agent: this.host.caller.agent, timeoutMs: undefined });
    if (call instanceof GatewayError) return this.calls.fail(msg.id, call);
    this.run(call);
  }

  /** A mode's rewrite (execute_tool): a new tools/call of `params`, made as `as.agent`. */
  callAs(msg: JsonRpcRequest, params: Record<string, unknown>, as: { agent: string; timeoutMs: number | undefined }): void {
    const executed = toolCall(msg, params, as);
    if (executed instanceof GatewayError) return this.calls.fail(msg.id, executed);
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
    const { signal, progress } = options;
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise<InnerAnswer>((resolve, reject) => {
      const inner: InnerCall = {
        options,
        settled: false,
        resolve: (answer) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      };
      const id = this.calls.startInner(inner);
      const onAbort = (): void => {
        if (inner.settled) return;
        inner.settled = true;
        this.calls.endInner(id);
        this.withdraw(id, 'cancelled by the gateway');
        reject(abortReason(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const params: Record<string, unknown> = {
        name: tool.name,
        ...(tool.arguments !== undefined && { arguments: tool.arguments }),
        ...(progress !== undefined && { _meta: { progressToken: id } }),
      };
      const msg: JsonRpcRequest = { jsonrpc: '2.0', id, method: 'tools/call', params };
      // As an agent's request is refused once its session ends or the gateway shuts down.
      if (this.host.isClosed() || this.host.parts.settling.isClosing)
        return this.calls.fail(id, new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down'));
      const call = toolCall(msg, params, { agent: this.host.caller.agent, timeoutMs: options.timeoutMs });
      if (call instanceof GatewayError) return this.calls.fail(id, call);
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
      return this.calls.fail(msg.id, refused);
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
    if (route instanceof GatewayError) return this.calls.fail(msg.id, route);
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
      return this.calls.fail(call.msg.id, screened.blocked);
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
        return this.calls.fail(id, out);
      }
      if (out === payload) return this.gateThen(call, route, audit);
      const changed = isObject(out) ? out.arguments : undefined;
      if (!isObject(changed))
        return this.calls.fail(
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
          return this.calls.fail(call.msg.id, carrier);
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
      inFlight: (id) => this.calls.has(id),
      about: (id) => this.calls.aboutOf(id),
      sendError: (id, err) => this.calls.fail(id, err),
      notify: (method, params, about) => this.calls.notify(method, params, about),
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
    const outbound = this.calls.outbound(
      msg.method,
      route.original === name ? params : { ...params, name: route.original },
      line,
      mirrored,
    );
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
    this.calls.send(route.carrier, msg.id, outbound, {
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
    this.calls.fail(call.msg.id, refused);
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

  /**
   * The agent cancelled its request `id` (any request: a tools/call may be anywhere on its way): a call
   * from inside is not the agent's to cancel.
   */
  cancel(id: RequestId, reason: string): void {
    if (this.calls.isInner(id)) return;
    this.withdraw(id, reason);
  }

  /** Request `id` is withdrawn: waiting for the servers to settle, with the interceptors, at the gate, or on its server. */
  private withdraw(id: RequestId, reason: string): void {
    // Not sent yet: only its request span ends (at the gate, GatedCalls ends it; on a server, Calls does).
    if (this.waiting.cancel(id) || this.intercepting.delete(id)) return this.host.spans?.end(id, 'cancelled');
    if (!this.calls.withdraw(id, reason)) this.gatedCalls?.cancel(id, reason);
  }

  /** The session ends: calls waiting for the servers to settle and those held at the gate are answered that they will not be made. */
  close(): void {
    this.waiting.close();
    this.gatedCalls?.close();
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
