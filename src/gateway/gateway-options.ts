// What a Gateway is made with (the composition root fills it from the command line and the files),
// and the factory that makes a connection to one server.

import type { RemoteServerConfig, ServerConfig, ServersConfig } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import type { AuditLog } from '../observability/audit.js';
import type { Tracing } from '../observability/tracing.js';
import type { Connection, ConnectionHooks } from '../servers/connection.js';
import type { SupervisionSettings } from '../servers/supervision.js';
import type { StopTimings } from '../servers/transports/transport.js';
import type { UpstreamCredentials } from '../servers/upstream-credentials.js';
import type { BreakerOptions } from '../servers/breaker.js';
import type { Clock } from '../servers/clock.js';
import type { Rules } from '../rules/load.js';
import type { PinMode } from '../pins/review.js';
import type { AgentMode } from '../rules/agent-mode.js';
import type { EmbeddingsSettings } from './modes/embeddings.js';
import type { ApprovalBoard } from '../policy/approval-desk.js';
import type { SharedQuotaCounters } from '../policy/quota-counters.js';

/**
 * Makes the connection to one server. The default spawns or dials the real server; unit tests pass
 * one whose transport is an in-memory server (test/unit/gateway/gateway-routing.test.ts).
 */
/**
 * `pooled`, for a pooled connection: `account`, the agent whose own login it uses; `extensions`,
 * what it declares to the server (`extensions.ts`; default `PASSED_THROUGH`); `agentCapabilities`,
 * what its agent declared (the connection declares what that agent can answer: `clientCapabilities`).
 */
export type ConnectionFactory = (
  config: ServerConfig,
  hooks: ConnectionHooks,
  log: Logger,
  pooled?: {
    readonly account?: string | undefined;
    readonly extensions?: Readonly<Record<string, unknown>> | undefined;
    readonly agentCapabilities?: Readonly<Record<string, unknown>> | undefined;
  },
) => Connection;

export interface GatewayOptions {
  config: ServersConfig;
  log: Logger;
  /**
   * A Streamable HTTP server's OAuth credentials, one per connection (the composition root makes them
   * from src/oauth); `account`: the agent whose own login a per-agent server's pooled connection uses.
   */
  credentials?: (config: RemoteServerConfig, account?: string) => UpstreamCredentials | undefined;
  separator?: string;
  startupTimeoutMs?: number;
  /**
   * How long after the first server is ready a first list waits for the others
   * (`--list-wait`, default DEFAULT_LIST_WAIT_MS): a server slower than that arrives with list_changed.
   */
  listWaitMs?: number;
  stopTimings?: StopTimings;
  /** Requests one agent may have in flight on servers at once (default 1000). */
  maxInflight?: number;
  /** Pinning of tool definitions; absent means off. */
  pins?: { mode: PinMode; dir: string };
  /** Neutralize escape sequences and invisible characters in what servers say (default true). */
  sanitize?: boolean;
  /** Reconnect, park and circuit-breaker settings (defaults in servers/connection.ts). */
  supervision?: SupervisionSettings;
  /** Per-agent rules; absent means every agent may use every server. */
  rules?: Rules;
  /** The AES-256 key sealing modern agents' requestState (MCPGATE_REQUEST_STATE_KEY); absent: made at start. */
  requestStateKey?: Buffer;
  /** In a cluster: this worker's id, sealed into each requestState (the waiting call is in its memory). */
  requestStateHolder?: string;
  /**
   * `aggregate` (default): the full catalog; `discovery`: the meta-tools only; `search`: search_tools,
   * the always-shown tools and what the session found (search-mode.ts). An agent's rules may name its own.
   */
  mode?: AgentMode;
  /** Search mode's hybrid ranking: the operator's embeddings endpoint; absent: lexical only. */
  embeddings?: EmbeddingsSettings;
  /** Local folders of skills mcpgate serves itself (`serve --skills DIR`), as the origin `mcpgate`. */
  skillFolders?: readonly string[];
  /** Offer get_gateway_status in discovery mode. */
  debug?: boolean;
  /** How a connection is made (default: `new Connection` with the settings above); the pool uses it too. */
  connect?: ConnectionFactory;
  /** The pool's creation breaker per per-agent/per-session server (default: the connection breaker's defaults). */
  poolBreaker?: Partial<BreakerOptions>;
  /** The pool's clock (tests drive idle and TTL with a fake one). */
  poolClock?: Clock;
  /** The audit trail (--audit); the composition root owns and closes it. */
  audit?: AuditLog;
  /** OpenTelemetry traces (--otlp-endpoint); the composition root owns and closes it. */
  tracing?: Tracing;
  /** With --redis: the cluster's halves of the policy, made before the gateway (cluster/redis-quota-counters.ts, cluster/approval-board.ts). */
  shared?: { counters: SharedQuotaCounters; board: ApprovalBoard; worker: string };
  /** The console's base URL once the HTTP front listens: a call waiting for approval names its page there. */
  consoleBase?: () => string | undefined;
}

export const DEFAULT_MAX_INFLIGHT = 1000;
/**
 * A first list waits this long after the first server is ready for the others: servers started
 * together are ready within it even on a loaded machine (so an agent's first list is the whole
 * catalog in the common case), and one that hangs at start-up no longer holds the agent for the
 * whole start-up timeout.
 */
export const DEFAULT_LIST_WAIT_MS = 5000;
