// The agent's requests other than tools/call that go to one server: resources/read, prompts/get and
// completion/complete (routed by name or URI, within the session's curated view), resources/subscribe
// and unsubscribe (held on the connection that carries the URI), the tasks methods
// (to the server that owns the agent's task, under the server's id), and methods mcpgate does not
// know (to the server they belong to), and the Skills extension's requests (to the skills methods).
// Each is routed once, audited where a read, a skill or a prompt, and
// sent through the session's `Calls`, which relay the answer with the result's names made public.

import { GatewayError, asGatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';
import type { JsonRpcRequest, RequestId } from '../../wire/jsonrpc.js';
import { sanitizeContent } from '../../wire/sanitize.js';
import type { CompiledView } from '../../rules/views.js';
import { rewritePromptResult, rewriteReadResult, rewriteToolResult } from '../../catalog/catalog.js';
import { KEPT_RESULTS_URI } from '../../policy/kept-results.js';
import { whenReady, type Caller } from '../routing/router.js';
import { listTasks, renameTaskAnswer, taskOf, taskOver } from '../routing/tasks.js';
import { routeOtherMethod } from '../routing/other-methods.js';
import type { SkillMethods } from '../routing/skill-methods.js';
import { auditOf, invalidParams, type CallParts, type Calls } from './calls.js';
import type { InterceptSubject } from '../../policy/interceptors.js';

/** What the routed requests read of their agent session. */
interface RoutedHost {
  readonly parts: CallParts & { readonly connections: ReadonlyMap<string, Connection>; readonly skills: SkillMethods };
  readonly log: Logger;
  /** The session as the router's caller. */
  readonly caller: Caller & { readonly agent: string; readonly owner: string };
  /** The session's id (the audit trail's). */
  readonly id: string;
  readonly calls: Calls;
  /** The curated view's name, for the errors that name it. */
  viewName(): string | undefined;
  curatedView(): CompiledView | undefined;
  sendResult(id: RequestId, result: unknown): void;
  sendError(id: RequestId, err: unknown): void;
  /** Holds (or lets go of) the session's subscription to `uri` on `conn` (subscriptions.ts); nothing once the session closed. */
  hold(conn: Connection, uri: string, subscribe: boolean): Promise<void>;
}

export class RoutedRequests {
  constructor(private readonly host: RoutedHost) {}

  /**
   * A Skills extension request — `skills/list`, `skills/get`, `resources/directory/read`, or a
   * `resources/read` inside a skill (`SkillMethods.owns`) — answered by the skills methods under the
   * rules and the pins (merged, renamed, verified), not relayed as the server gave it.
   */
  skill(msg: JsonRpcRequest): void {
    const { parts, log, caller } = this.host;
    const start = performance.now();
    void parts.skills.serve(log, caller, msg, this.host.curatedView()).then(
      (result) => {
        this.auditSkill(msg, start, undefined);
        this.host.sendResult(msg.id, result);
      },
      (err: unknown) => {
        this.auditSkill(msg, start, err);
        this.host.sendError(msg.id, err);
      },
    );
  }

  /** The audit line of a skills request that names a skill or file (a listing names none). */
  private auditSkill(msg: JsonRpcRequest, start: number, err: unknown): void {
    const { parts, caller } = this.host;
    const uri = msg.params?.uri;
    if (parts.audit === undefined || typeof uri !== 'string') return;
    const error = err === undefined ? undefined : asGatewayError(err);
    parts.audit.record({
      event: 'call',
      agent: caller.agent,
      session: this.host.id,
      method: msg.method,
      resource: uri,
      ...(error?.server !== undefined && { server: error.server }),
      decision: error?.code === 'MCPG_SKILL_HELD' ? 'held' : error?.code === 'MCPG_POLICY_DENIED' ? 'denied' : 'allowed',
      outcome: error === undefined ? 'ok' : 'failed',
      durationMs: performance.now() - start,
      ...(error !== undefined && { code: error.code }),
    });
  }

  readResource(msg: JsonRpcRequest): void {
    const { parts, log, caller, calls } = this.host;
    // A result over its cap, kept whole for this agent (policy/kept-results.ts): served by the gate.
    if (typeof msg.params?.uri === 'string' && msg.params.uri.startsWith(KEPT_RESULTS_URI)) {
      const page = parts.gate.kept.read(caller.agent, msg.params.uri);
      return page instanceof GatewayError ? this.host.sendError(msg.id, page) : this.host.sendResult(msg.id, page);
    }
    if (parts.skills.owns(msg)) return this.skill(msg);
    const route = parts.router.uri(log, caller, msg.method, msg.params?.uri);
    const audit =
      parts.audit === undefined || typeof msg.params?.uri !== 'string'
        ? undefined
        : auditOf(
            parts.audit,
            { session: this.host.id, method: msg.method, agent: caller.agent },
            { resource: msg.params.uri },
            route instanceof GatewayError ? route : route.conn.name,
          );
    if (route instanceof GatewayError) return this.host.sendError(msg.id, route);
    if (this.outsideView(route.conn.name))
      return this.host.sendError(
        msg.id,
        new GatewayError('MCPG_RESOURCE_NOT_FOUND', `no server serves ${route.publicUri} on view "${String(this.host.viewName())}"`, {
          detail: { uri: route.publicUri },
        }),
      );
    // The guards read a resource's contents as they read a tool's result (no cap: a read is not a call).
    const subject = {
      agent: caller.agent,
      session: this.host.id,
      server: route.conn.name,
      tool: undefined,
      name: route.publicUri,
      method: msg.method,
    };
    // Interceptors judge the read (`{ uri }`, the server's own; a mutation of it is not taken) and its contents.
    this.intercepted(msg.id, { ...subject, event: msg.method }, { uri: route.uri }, (_judged, intercept) =>
      calls.send(route.carrier, msg.id, calls.outbound(msg.method, { ...msg.params, uri: route.uri }), {
        rewrite: (result) => {
          const renamed = rewriteReadResult(result, (uri) => parts.catalog.publicUri(route.conn.name, uri));
          const answered = parts.inForce.rules.guards === undefined ? false : parts.gate.answer(subject, result);
          if (answered instanceof GatewayError) throw answered;
          return answered || renamed;
        },
        screenError: (error) => parts.inForce.rules.guards !== undefined && parts.gate.guards.error(subject, error),
        timed: audit && { start: performance.now(), audit },
        intercept,
      }),
    );
  }

  /**
   * Subscribes the session to a resource URI (or unsubscribes it); rejects with why not. The URI is
   * routed under the rules as a read is, then held on the connection that carries it: the server's
   * shared connection, or the session's own pooled connection for a per-agent or per-session server.
   */
  async subscribe(subscribe: boolean, publicUriParam: unknown): Promise<void> {
    const { parts, log, caller } = this.host;
    const method = subscribe ? 'resources/subscribe' : 'resources/unsubscribe';
    await parts.settling.settled;
    const route = parts.router.uri(log, caller, method, publicUriParam);
    if (route instanceof GatewayError) throw route;
    const conn = route.conn.config.sessions === 'shared' ? route.conn : await whenReady(route.carrier);
    if ((conn.info?.capabilities.resources as { subscribe?: boolean } | undefined)?.subscribe !== true) {
      throw new GatewayError('MCPG_CAPABILITY_UNSUPPORTED', `server "${conn.name}" does not support resource subscriptions`, {
        server: conn.name,
      });
    }
    await this.host.hold(conn, route.uri, subscribe);
  }

  getPrompt(msg: JsonRpcRequest): void {
    const { parts, log, caller, calls } = this.host;
    const route = parts.router.prompt(log, caller, msg.params?.name);
    const audit =
      parts.audit === undefined || typeof msg.params?.name !== 'string'
        ? undefined
        : auditOf(
            parts.audit,
            { session: this.host.id, method: msg.method, agent: caller.agent },
            { prompt: msg.params.name, ...parts.audit.argumentsOf(msg.params.arguments) },
            route instanceof GatewayError ? route : route.server,
          );
    if (route instanceof GatewayError) return this.host.sendError(msg.id, route);
    if (this.outsideView(route.server))
      return this.host.sendError(
        msg.id,
        new GatewayError('MCPG_PROMPT_NOT_FOUND', `unknown prompt: ${String(msg.params?.name)}`, { detail: { prompt: msg.params?.name } }),
      );
    const subject = {
      agent: caller.agent,
      session: this.host.id,
      server: route.server,
      tool: undefined,
      name: String(msg.params?.name),
      method: msg.method,
    };
    // Interceptors judge the prompt's request (`{ name, arguments }`; a mutator may change the arguments) and its messages.
    const asked = { name: route.original, arguments: isObject(msg.params?.arguments) ? msg.params.arguments : {} };
    this.intercepted(msg.id, { ...subject, event: msg.method }, asked, (judged, intercept) =>
      calls.send(
        route.carrier,
        msg.id,
        calls.outbound(msg.method, {
          ...msg.params,
          name: route.original,
          ...(judged !== asked && isObject(judged.arguments) && { arguments: judged.arguments }),
        }),
        {
          rewrite: (result) => {
            const renamed = rewritePromptResult(result, (uri) => parts.catalog.publicUri(route.server, uri));
            const sanitized = parts.sanitize && sanitizeContent(result);
            const answered = parts.inForce.rules.guards === undefined ? false : parts.gate.answer(subject, result);
            if (answered instanceof GatewayError) throw answered;
            return answered || sanitized || renamed;
          },
          screenError: (error) => parts.inForce.rules.guards !== undefined && parts.gate.guards.error(subject, error),
          timed: audit && { start: performance.now(), audit },
          intercept,
        },
      ),
    );
  }

  /**
   * The interceptor servers (policy/interceptors.ts) judge a read's or a prompt's request, then `go`
   * sends it with what they left (`judged`, the same object when nothing changed) and `intercept`,
   * their judgement of the answer. With none configured (one property read) `go` runs at once.
   */
  private intercepted(
    id: RequestId,
    subject: InterceptSubject,
    payload: Record<string, unknown>,
    go: (
      judged: Record<string, unknown>,
      intercept: ((result: Record<string, unknown>) => Promise<unknown> | undefined) | undefined,
    ) => void,
  ): void {
    const { interceptors } = this.host.parts.gate;
    if (interceptors.none) return go(payload, undefined);
    const intercept = (result: Record<string, unknown>): Promise<unknown> | undefined =>
      interceptors.intercept(subject, 'response', result);
    const judged = interceptors.intercept(subject, 'request', payload);
    if (judged === undefined) return go(payload, intercept);
    void judged.then((out) => {
      if (out instanceof GatewayError) return this.host.sendError(id, out);
      go(isObject(out) ? out : payload, intercept);
    });
  }

  complete(msg: JsonRpcRequest): void {
    const { parts, log, caller, calls } = this.host;
    const route = parts.router.completion(log, caller, msg.params?.ref as Record<string, unknown> | undefined);
    if (route instanceof GatewayError) return this.host.sendError(msg.id, route);
    if (this.outsideView(route.conn.name))
      return this.host.sendError(
        msg.id,
        invalidParams(`completion/complete: the prompt or resource is not on view "${String(this.host.viewName())}"`),
      );
    calls.send(route.carrier, msg.id, calls.outbound(msg.method, { ...msg.params, ref: route.ref }));
  }

  /** tasks/get, tasks/result, tasks/cancel: to the server that owns the agent's task, under the server's id. */
  task(msg: JsonRpcRequest): void {
    const { parts, caller, calls } = this.host;
    const record = taskOf(parts.tasks, caller.owner, msg.method, msg.params?.taskId);
    if (record instanceof GatewayError) return this.host.sendError(msg.id, record);
    const conn = parts.connections.get(record.server);
    if (conn === undefined)
      return this.host.sendError(
        msg.id,
        new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${record.server}" of task ${record.publicId} is not connected`, {
          server: record.server,
        }),
      );
    const carrier = parts.router.carrier(conn, caller);
    if (carrier instanceof GatewayError) return this.host.sendError(msg.id, carrier);
    calls.send(carrier, msg.id, calls.outbound(msg.method, { ...msg.params, taskId: record.serverTaskId }), {
      rewrite: (result) => {
        taskOver(record, msg.method, result.status);
        const renamed = renameTaskAnswer(result, record);
        if (msg.method !== 'tasks/result') return renamed;
        const linked = rewriteToolResult(result, (uri) => parts.catalog.publicUri(record.server, uri));
        return (parts.sanitize && sanitizeContent(result)) || linked || renamed;
      },
    });
  }

  /** tasks/list: the agent's tasks on every server that has some. */
  listTasks(msg: JsonRpcRequest): void {
    const { parts, log } = this.host;
    void listTasks(parts.tasks, this.host.caller.owner, (server) => this.carrierTo(server), log).then(
      (result) => this.host.sendResult(msg.id, result),
      (err: unknown) => this.host.sendError(msg.id, err),
    );
  }

  /** A method mcpgate does not know: to the server it belongs to, else refused naming it (other-methods.ts). */
  other(msg: JsonRpcRequest): void {
    const { parts, log, caller, calls } = this.host;
    const routed = routeOtherMethod(parts, log, caller, msg);
    if (routed instanceof GatewayError) return this.host.sendError(msg.id, routed);
    calls.send(routed.carrier, msg.id, calls.outbound(msg.method, routed.params));
  }

  /** The connection this session's requests to `server` go out on (tasks), if the server is known. */
  private carrierTo(server: string): Connection | Promise<Connection> | undefined {
    const { parts, caller } = this.host;
    const conn = parts.connections.get(server);
    if (conn === undefined) return undefined;
    const carrier = parts.router.carrier(conn, caller);
    if (carrier instanceof GatewayError) throw carrier;
    return whenReady(carrier);
  }

  /** Whether a server's resources and prompts are out of this session's curated view (a view shows only those of its `servers`). */
  private outsideView(server: string): boolean {
    const view = this.host.curatedView();
    return view !== undefined && !view.servers.has(server);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
