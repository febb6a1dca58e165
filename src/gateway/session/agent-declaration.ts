// What an agent has declared of itself, as its session keeps it: its capabilities, whether it has
// initialized, the log level it asked for, and a modern request's `Mcp-Param-*` headers. A 2025 agent
// declares them in initialize, notifications/initialized and logging/setLevel; a modern (2026-07-28)
// request brings them in its `_meta` envelope; a session resumed from another worker of a cluster has
// the capabilities kept there. The agent's calls read them as they are sent: every request to a
// server carries them (`OutboundRequest`).

import type { Envelope } from '../../wire/era.js';
import { LOG_LEVEL_RANK, MCP_LOG_LEVELS } from '../routing/method-tables.js';
import { extensionsOf } from './extensions.js';

export class AgentDeclaration {
  /** The capabilities of its initialize, or of its latest modern request's envelope. */
  capabilities: Record<string, unknown> = {};
  /** It has initialized (answered initialize, said initialized, opened a modern listen stream, or was resumed). */
  initialized = false;
  /** The rank of the least severe log level it asked for (`LOG_LEVEL_RANK`); undefined: it never asked. Set by `askLevel`. */
  logRank: number | undefined;
  /** The same level by name, as a server is told it with each request. Set by `askLevel`. */
  logLevel: string | undefined;
  /** Its latest modern request's `Mcp-Param-*` headers, sent on with that request to a modern HTTP server. */
  paramHeaders: Readonly<Record<string, string>> | undefined;

  /** It asked for the log level `level` (logging/setLevel, a modern request's envelope); false, and nothing changes, when that is no level. */
  askLevel(level: unknown): boolean {
    const rank = typeof level === 'string' ? LOG_LEVEL_RANK[level] : undefined;
    if (rank === undefined) return false;
    this.logRank = rank;
    this.logLevel = MCP_LOG_LEVELS[rank];
    return true;
  }

  /** A modern request's envelope: its capabilities, log level and headers are the agent's from now on. */
  adopt({ capabilities, logLevel, paramHeaders }: Envelope): void {
    this.capabilities = capabilities;
    if (logLevel !== undefined) this.askLevel(logLevel);
    this.paramHeaders = paramHeaders;
  }

  /** It can answer a server's `roots/list`. */
  get hasRoots(): boolean {
    return isObject(this.capabilities.roots);
  }

  /** The extensions it declared (`capabilities.extensions`), if any. */
  get extensions(): Record<string, unknown> | undefined {
    return extensionsOf(this.capabilities);
  }

  /** It has initialized and takes URL-mode elicitation (a session's era; a modern request is asked otherwise). */
  get takesUrlElicitation(): boolean {
    const elicitation = this.capabilities.elicitation;
    return this.initialized && isObject(elicitation) && isObject(elicitation.url);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
