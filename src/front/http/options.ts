// The Streamable HTTP front's options, their defaults and the paths it answers on. http/front.ts
// re-exports the options and defaults for the composition root.
// They are `HttpFrontOptions` and `HTTP_DEFAULTS`; `limitsOf` gives the limits an options object
// comes to; the paths are `/mcp`, a curated view's `/mcp/v/NAME` and the protected-resource
// metadata's.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClusterLink } from '../../cluster/link.js';
import type { OpsContext } from './ops.js';
import type { ReplayCounters, ReplayLimits } from './sse-replay.js';

/** Default bound on what is written for one session's agent and not yet read (`--max-agent-buffer`). */
export const DEFAULT_MAX_AGENT_BUFFER = 32 * 1024 * 1024;

export interface HttpFrontOptions {
  host: string;
  port: number;
  /**
   * One of `serve --workers N`, in this slot: the primary owns `port` and hands this worker its
   * connections (`HttpFront.accept`); this worker binds only a port of its own (the `host`, a free
   * port), and the sessions it opens name the slot (http/session-ids.ts).
   */
  handedSlot?: number;
  /** 'off' is refused unless `host` is a loopback address (checked by the CLI and here). */
  auth: 'on' | 'off';
  /** With auth off: the agent of requests without an `X-Mcpgate-Agent` header. */
  defaultAgent: string;
  /**
   * Whether `defaultAgent` was configured (--agent, MCPGATE_AGENT) rather than the built-in default.
   * If not, an unnamed agent has no identity of its own: a per-agent server gives each of its
   * sessions its own connection rather than one shared by every unnamed agent.
   */
  defaultAgentExplicit?: boolean;
  maxBodyBytes?: number;
  /** Browser origins allowed besides loopback ones (`*`: any). */
  allowedOrigins?: readonly string[];
  /** `Host` names allowed besides loopback ones (and, off loopback, IP literals); `*`: any. */
  allowedHosts?: readonly string[];
  /**
   * Bytes written for one session but not yet taken by its agent, past which mcpgate stops: a GET
   * stream over it is dropped, answers over it end the session (default DEFAULT_MAX_AGENT_BUFFER).
   */
  maxAgentBuffer?: number;
  /** A session with no request, no open POST and no GET stream for this long ends (default 30 min). */
  sessionIdleMs?: number;
  maxSessions?: number;
  maxSessionsPerAgent?: number;
  /** How long shutdown lets calls in flight finish before it ends them (default 10 s). */
  drainMs?: number;
  /** Counts requests by route and status (the metrics registry). */
  onRequest?: (route: string, status: number) => void;
  /** Bounds of the SSE replay logs (resumable streams, http/sse-replay.ts; defaults REPLAY_DEFAULTS). */
  replay?: Partial<ReplayLimits>;
  /** Counts replay-log events and resumptions (the metrics registry). */
  onReplay?: ReplayCounters;
  ops: Omit<OpsContext, 'draining' | 'url' | 'cluster' | 'adminName'>;
  /** Routes under `prefix` (e.g. the console at /ui) answered by another room, behind the same gate. */
  mounted?: MountedRoutes;
  /**
   * With `--redis`: the cluster this worker is part of. A session not held here is forwarded to
   * its owner or adopted (cluster/link.ts); without it, such a session is 404 at once.
   */
  cluster?: ClusterLink;
  /**
   * With `--workers N`: `/metrics` on the shared port answers with every worker of the host (asked
   * through the primary, cli/host-metrics.ts); each worker's own port still answers for it alone.
   */
  hostMetrics?: () => Promise<string>;
}

export interface MountedRoutes {
  /** A path such as `/ui`: it and everything under `/ui/` go to `handle`. */
  prefix: string;
  handle(path: string, req: IncomingMessage, res: ServerResponse): void;
}

export const HTTP_DEFAULTS = {
  sessionIdleMs: 30 * 60_000,
  maxSessions: 1000,
  maxSessionsPerAgent: 100,
  drainMs: 10_000,
  maxAgentBuffer: DEFAULT_MAX_AGENT_BUFFER,
};

/** The front's limits, each an option or its default. */
export type HttpLimits = typeof HTTP_DEFAULTS;

export function limitsOf(options: HttpFrontOptions): HttpLimits {
  return {
    sessionIdleMs: options.sessionIdleMs ?? HTTP_DEFAULTS.sessionIdleMs,
    maxSessions: options.maxSessions ?? HTTP_DEFAULTS.maxSessions,
    maxSessionsPerAgent: options.maxSessionsPerAgent ?? HTTP_DEFAULTS.maxSessionsPerAgent,
    drainMs: options.drainMs ?? HTTP_DEFAULTS.drainMs,
    maxAgentBuffer: options.maxAgentBuffer ?? HTTP_DEFAULTS.maxAgentBuffer,
  };
}

export const MCP_PATH = '/mcp';
/** Where a curated view of the rules is served: `/mcp/v/NAME`. */
export const VIEW_PREFIX = '/mcp/v/';
export const METADATA_PATH = '/.well-known/oauth-protected-resource';
