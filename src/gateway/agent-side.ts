// The agent's end of an agent session: what the agent declared (its capabilities, whether it has
// initialized, its log level), what it says besides requests (its notifications, its answers to the
// servers' questions), what goes to it (the answers to its requests, notifications, log messages,
// list changes, the servers' questions) and its calls in flight, which the gateway asks about.
// AgentSession (session.ts) extends it with the agent's requests: answered, or routed to servers.
import { asGatewayError } from '../errors.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import type { Logger } from '../observability/logger.js';
import type { Connection } from '../servers/connection.js';
import {
  encodeError, encodeNotification, encodeResult, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId,
} from '../wire/jsonrpc.js';
import { encodeResultParts, partsToText } from '../wire/encoded.js';
import { AgentRequests } from './agent-requests.js';
import { Calls } from './calls.js';
import { LOG_LEVEL_RANK } from './methods.js';
import { extensionsOf } from './extensions.js';
import type { RequestSpans } from './request-spans.js';
import type { AgentChannel } from './session-parts.js';

/** The id prefix of mcpgate's own `elicitation/create` offering an agent the approval page of its waiting call (session.ts). */
export const APPROVAL_ELICITATION = 'mcpgate-approval-';

export abstract class AgentSide {
  protected initialized = false;
  protected capabilities: Record<string, unknown> = {};
  /** The level the agent asked for (logging/setLevel); undefined: everything the servers send. */
  logRank: number | undefined;
  protected readonly inflight = new Calls();
  /** Server→agent requests the agent has not answered yet. */
  protected readonly agentRequests: AgentRequests;

  /** The server's own key of our request `id` to the agent, when it relays a modern server's input request. */
  inputKey(id: number): string | undefined {
    return this.agentRequests.inputKey(id);
  }
  protected closed = false;

  constructor(
    protected readonly channel: AgentChannel,
    readonly agent: string,
    protected readonly log: Logger,
    private readonly metrics: GatewayMetrics,
    /** Tracing on: the open span of each agent request, by the agent's id (undefined: tracing off). */
    protected readonly spans: RequestSpans | undefined,
  ) {
    this.agentRequests = new AgentRequests(agent, (line, about) => !this.closed && this.channel.send(line, about) !== false);
  }

  /** The extensions the agent declared (`capabilities.extensions`), if any. */
  get extensions(): Record<string, unknown> | undefined {
    return extensionsOf(this.capabilities);
  }

  /** The agent said its roots changed: tell the servers that may ask it. */
  protected abstract rootsChanged(): void;

  /**
   * A modern (2026-07-28) request's session: its capabilities and log level come with the request
   * (the `_meta` envelope), not from `initialize`, and server requests need no wait for `initialized`.
   */
  adoptEnvelope(capabilities: Record<string, unknown>, logLevel: string | undefined): void {
    this.capabilities = capabilities;
    if (logLevel !== undefined) this.logRank = LOG_LEVEL_RANK[logLevel];
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

  /** A cancelled request that is not on a server: a call waiting for approval, withdrawn by the session (session.ts). */
  protected cancelWaiting(requestId: RequestId, reason: string): void {
    void requestId;
    void reason;
  }

  protected onNotification(msg: JsonRpcNotification): void {
    switch (msg.method) {
      case 'notifications/cancelled': {
        const requestId = msg.params?.requestId as RequestId | undefined;
        const entry = requestId === undefined ? undefined : this.inflight.get(requestId);
        if (entry === undefined) {
          if (requestId !== undefined) this.cancelWaiting(requestId, typeof msg.params?.reason === 'string' ? msg.params.reason : 'cancelled by the agent');
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

  protected onResponse(msg: JsonRpcResponse): void {
    // The agent's answer to mcpgate's own URL elicitation of a call waiting for approval: the admin decides, not it.
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
  relayServerRequest(conn: Connection, msg: JsonRpcRequest, capability: string, related?: number, fallback?: unknown): void {
    this.agentRequests.relay(conn, msg, capability, this.capabilities, this.inflight.owner(conn, related), fallback);
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

  protected sendResult(id: RequestId, result: unknown): void {
    if (this.closed) return;
    this.channel.send(encodeResult(id, result), id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  /** A result already encoded as JSON text. */
  protected sendEncodedResult(id: RequestId, resultJson: string): void {
    if (this.closed) return;
    this.channel.send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`, id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  /** A result cached as bytes (a list): only the head with the id is made per answer. */
  protected sendResultBytes(id: RequestId, result: readonly Buffer[]): void {
    if (this.closed) return;
    const parts = encodeResultParts(JSON.stringify(id), result);
    if (this.channel.sendParts !== undefined) this.channel.sendParts(parts, id, true);
    else this.channel.send(partsToText(parts), id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  protected sendError(id: RequestId | null, err: unknown): void {
    if (this.closed) return;
    const error = asGatewayError(err);
    if (error.code === 'MCPG_INTERNAL') this.log.error('internal error while handling a request', { error: err });
    this.metrics.error(error.code);
    this.channel.send(encodeError(id, error.toJsonRpc()), id ?? undefined, true);
    if (this.spans !== undefined && id !== null) this.spans.end(id, 'failed', error.code, error.server);
  }
}
