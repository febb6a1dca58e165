// One agent session's requests in flight on servers (`InFlight`: agent id ↔ connection and the
// server's id): each sent once its carrier is ready, its answer relayed by splicing the agent's id into
// the server's line (or encoded when it was edited), its progress passed on, cancelled, and recorded
// (audit line, call metrics). A call from inside the gateway (code mode's inner calls) is in flight
// here too, its answer given to its caller instead of the agent's channel. The tools/call steps before
// a call is sent are `ToolCalls` (tool-calls.ts); resources, prompts, tasks and other methods are
// `RoutedRequests` (routed-requests.ts). The session holds one `Calls` (`CallsHost`).

import { randomBytes } from 'node:crypto';
import { GatewayError, asGatewayError } from '../../errors.js';
import type { Connection } from '../../servers/connection.js';
import type { OutboundRequest } from '../../servers/outbound-request.js';
import { spliceResponseId, type JsonRpcResponse, type RequestId } from '../../wire/jsonrpc.js';
import type { AuditCall, AuditLog } from '../../observability/audit.js';
import type { ServerCallSpan } from '../../observability/tracing.js';
import type { InnerAnswer } from '../modes/session-mode.js';
import { isPending, type Carrier } from '../routing/router.js';
import type { AgentChannel } from './agent-channel.js';
import { failureOf, type RequestSpans } from './request-spans.js';
import type { Catalog } from '../../catalog/catalog.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { CallGate } from '../../policy/call-gate.js';
import type { RulesInForce } from '../../rules/load.js';
import type { OwnCatalogs } from '../routing/own-catalogs.js';
import type { Router } from '../routing/router.js';
import type { TaskTable } from '../routing/tasks.js';
import type { Settling } from './until-settled.js';
import type { AgentDeclaration } from './agent-declaration.js';

/** The gateway's parts the session's calls use (the session's `SessionParts` has them all). */
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

/** What the requests in flight read of their agent session and ask of it. */
interface CallsHost {
  readonly parts: Pick<CallParts, 'maxInflight' | 'metrics' | 'audit'>;
  readonly channel: AgentChannel;
  /** Tracing on: the session's open request spans (undefined: off). */
  readonly spans: RequestSpans | undefined;
  /** The session's agent (named when it has too many requests in flight). */
  readonly agent: string;
  isClosed(): boolean;
  /** What the agent declared (capabilities, log level, a modern request's headers), sent on with each request. */
  readonly declared: AgentDeclaration;
  sendError(id: RequestId, err: unknown): void;
  notify(method: string, params: unknown, about: RequestId): void;
}

/** How a call from inside the gateway is made (`ToolCalls.callAsAgent`). */
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
export interface InnerCall {
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

export class Calls {
  private readonly inflight = new InFlight();
  /** Calls from inside the gateway (`ToolCalls.callAsAgent`) by their own ids. */
  private readonly inner = new Map<RequestId, InnerCall>();
  private nextInner = 1;
  /** This session's prefix of the ids of calls from inside. */
  private readonly innerPrefix = `${INNER_CALL}${randomBytes(6).toString('hex')}-`;

  constructor(private readonly host: CallsHost) {}

  /** True while the agent's request `id` is in flight (sent, or waiting for its carrier). */
  has(id: RequestId): boolean {
    return this.inflight.has(id);
  }

  // ── calls from inside ───────────────────────────────────────────────────────────────────────

  /** A call from inside starts: its answer, failure and progress go to `inner`, not to the agent. Its id no agent can name. */
  startInner(inner: InnerCall): string {
    const id = `${this.innerPrefix}${this.nextInner++}`;
    this.inner.set(id, inner);
    return id;
  }

  /** The caller of call `id` from inside gave up on it (aborted): nothing more reaches that caller. */
  endInner(id: RequestId): void {
    this.inner.delete(id);
  }

  /** True when `id` is a call from inside (which is not the agent's to cancel). */
  isInner(id: RequestId): boolean {
    return this.inner.size !== 0 && this.inner.has(id);
  }

  /** True when `id` is one of this session's ids for calls from inside, running or given up on. */
  private fromInside(id: RequestId): boolean {
    return typeof id === 'string' && id.startsWith(this.innerPrefix);
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
          `agent "${this.host.agent}" already has ${this.inflight.size} requests in flight (the limit is ${maxInflight}); wait for some to finish`,
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

  /**
   * A request's failure: to the agent, or to the caller of a call from inside (counted as the session
   * counts it). A call from inside whose caller gave up on it fails to no one: the agent never sent it.
   */
  fail(id: RequestId, err: unknown): void {
    const inner = this.inner.size === 0 ? undefined : this.inner.get(id);
    if (inner === undefined) {
      if (!this.fromInside(id)) this.host.sendError(id, err);
      return;
    }
    this.inner.delete(id);
    if (inner.settled) return;
    inner.settled = true;
    const error = asGatewayError(err);
    this.host.parts.metrics.error(error.code);
    inner.resolve({ error: error.toJsonRpc() });
  }

  /**
   * A notification about request `about`: to the agent, or a progress notification to the caller of a
   * call from inside (none once that caller gave up on it).
   */
  notify(method: string, params: unknown, about: RequestId): void {
    const inner = this.inner.size === 0 ? undefined : this.inner.get(about);
    if (inner === undefined) {
      if (!this.fromInside(about)) this.host.notify(method, params, about);
      return;
    }
    if (method === 'notifications/progress') {
      const { progressToken: _, ...progress } = params as Record<string, unknown>;
      inner.options.progress?.(progress);
      return;
    }
    if (inner.options.parent !== undefined) this.host.notify(method, params, inner.options.parent);
  }

  /** What the agent is told about request `id` goes as part of this request (a call from inside: its parent's). */
  aboutOf(id: RequestId): RequestId {
    return (this.inner.size === 0 ? undefined : this.inner.get(id)?.options.parent) ?? id;
  }

  /**
   * Request `id` is withdrawn from its server, if it is in flight (and, like any cancelled request, it
   * is not answered): false when it is not in flight.
   */
  withdraw(id: RequestId, reason: string): boolean {
    const entry = this.inflight.get(id);
    if (entry === undefined) return false;
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
    return true;
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
   * The session ends: its requests in flight are cancelled on the servers and answered that they will
   * not be (the agent's, if it still listens; a call from inside, its caller).
   */
  close(): void {
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
    this.inflight.clear();
    for (const id of [...this.inner.keys()])
      this.fail(id, new GatewayError('MCPG_SHUTTING_DOWN', 'the session ended before the call was made'));
  }
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
