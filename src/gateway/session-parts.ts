// What an agent session is given: its parts of the gateway (`SessionPartsOf`, never the gateway
// itself) and its channel to the agent (`AgentChannel`). Types only. The parts are generic over the
// session type so that this file need not import session.ts (session.ts names them `SessionParts`).

import type { Catalog } from '../catalog/catalog.js';
import type { AuditLog } from '../observability/audit.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { Rules } from '../rules/load.js';
import type { Connection } from '../servers/connection.js';
import type { RequestId } from '../wire/jsonrpc.js';
import type { EncodedParts } from '../wire/encoded.js';
import type { AgentViews } from './agent-views.js';
import type { ApprovalDesk } from './approval-desk.js';
import type { ApprovalNeed } from '../rules/approvals.js';
import type { Claims } from '../rules/decide.js';
import type { DiscoveryParts } from './discovery.js';
import type { ToolSearch } from './tool-search.js';
import type { Router } from './router.js';
import type { OwnSubscriptions, Subscriptions } from './subscriptions.js';
import type { Settling } from './until-settled.js';
import type { TaskTable } from './tasks.js';
import type { Quotas } from './quotas.js';

/** What a session uses of the gateway: the parts, never the gateway itself. */
export interface SessionPartsOf<Session> {
  router: Router;
  /** The rules in force (one snapshot; a session on a curated view finds its view there). */
  rules: () => Rules;
  views: AgentViews;
  settling: Settling;
  catalog: Catalog;
  connections: ReadonlyMap<string, Connection>;
  subscriptions: Subscriptions<Session>;
  /** Subscriptions on the session's own pooled connections (per-agent and per-session servers). */
  ownSubscriptions: OwnSubscriptions<Session>;
  metrics: GatewayMetrics;
  /** The audit trail (--audit); undefined: off, and nothing is built for it. */
  audit: AuditLog | undefined;
  /** OpenTelemetry traces (--otlp-endpoint); undefined: off, and no span is made. */
  tracing: Tracing | undefined;
  /** Discovery mode's meta-tools (for the agents in discovery mode: the gateway's, or their rules'). */
  discovery: DiscoveryParts;
  /** Each agent's mode, and search mode's search_tools and list. */
  search: ToolSearch;
  /** Where calls needing a person's approval wait (approval-desk.ts). */
  approvals: ApprovalDesk;
  /** Whether the rules hold this call for a person's approval (rules/approvals.ts), and for how long. */
  approval(agent: string, server: string, tool: string, args: Readonly<Record<string, unknown>> | undefined, claims: Claims | undefined): ApprovalNeed | undefined;
  /** Requests one agent may have in flight on servers at once. */
  maxInflight: number;
  /** The rules' quotas and rate limits on tool calls (quotas.ts). */
  quotas: Quotas;
  /** Neutralize escape sequences and invisible characters in what servers say. */
  sanitize: boolean;
  /** The ready servers' own instructions, for `initialize`. */
  instructions(): string | undefined;
  /** What mcpgate declares to agents (`methods.ts` `gatewayCapabilities`). */
  capabilities(): Record<string, unknown>;
  /** The tasks agents' calls created on servers, and whose each is (tasks.ts). */
  tasks: TaskTable;
  /** Sets the shared servers' log level to the most verbose any agent asked for, and `session`'s own pooled connections to their owners'. */
  setServersLogLevel(session: Session): Promise<void>;
  /** The session ended (the registry forgets it, its subscriptions are dropped). */
  closed(session: Session): void;
  /**
   * The connection this session's request to `conn`'s server goes to: `conn` itself for a shared
   * server; for a per-agent or per-session server the session's own pooled connection (a promise
   * while it is made). Throws the pool's error (MCPG_POOL_EXHAUSTED, …).
   */
  scoped(session: Session, conn: Connection): Connection | Promise<Connection>;
  /** The agent's roots changed: tell the servers that may ask it (shared ones and its own pooled ones). */
  rootsChanged(session: Session): void;
  /**
   * The session's own catalogs: what its per-agent or per-session servers' pooled connections list,
   * shown and routed instead of the shared catalog's part of those servers (own-catalogs.ts);
   * undefined while it has none.
   */
  own(session: Session): readonly Catalog[] | undefined;
}

/** What a rate-limited refusal carries (the specification draft's `error.data`, SEP-3304). */
export interface RateLimitedData {
  readonly retryAfterMs: number;
  readonly limit?: number;
  readonly remaining?: number;
}

export interface AgentChannel {
  /** `modern`: the agent speaks 2026-07-28 (a dual-era server then takes its calls on its modern session). */
  readonly era?: 'modern';
  /**
   * Sends one framed message to the agent. `about` is the agent's request the message belongs to:
   * its response when `final`, otherwise something sent while it runs (progress, a server's
   * sampling or elicitation request). Streamable HTTP routes by it; stdio ignores it. Returns
   * false when the message could not be sent (an HTTP agent with no stream open for it).
   */
  send(line: string, about?: RequestId, final?: boolean): boolean | void;
  /**
   * Sends one message given as pieces (wire/encoded.ts: a cached list's bytes between its head and
   * tail), written as bytes without joining them. A channel without it gets the joined text by `send`.
   */
  sendParts?(parts: EncodedParts, about?: RequestId, final?: boolean): boolean | void;
  /**
   * The server ended the answer stream of the agent's request `about` to be polled (SEP-1699):
   * a channel that can (Streamable HTTP) ends the agent's stream the same way, with `retryMs`, and
   * calls `resume` when the agent resumes it, so the server is polled when the agent polls.
   */
  pause?(about: RequestId, retryMs: number, resume: () => void): void;
  /**
   * The agent's request `about` is about to be refused as rate limited (-32023) before any work: a
   * channel that can (Streamable HTTP) answers it with status 429 and `Retry-After`.
   */
  rateLimited?(about: RequestId, data: RateLimitedData): void;
  /** The session ended (after it answered what was open); a modern listen stream ends its request here. */
  closed?(): void;
}
