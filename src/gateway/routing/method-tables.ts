// The protocol's method tables the gateway routes by (MCP 2025-11-25), and its answer to initialize.

import type { ListKind } from '../../servers/lists.js';
import { GATEWAY_INFO } from '../../version.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../../wire/protocol.js';

// These tables are looked up with names an agent or a server chose (a method, a log level): they
// have no prototype, so `constructor` or `__proto__` finds nothing rather than Object's own members.
function table<T>(entries: Record<string, T>): Readonly<Record<string, T | undefined>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}

/** A server's list_changed notification → the catalog kinds to refresh. */
export const LIST_CHANGED = table<readonly ListKind[]>({
  'notifications/tools/list_changed': ['tools'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
  'notifications/prompts/list_changed': ['prompts'],
});

/** Server→agent requests mcpgate relays, and the agent capability each needs. */
export const SERVER_REQUEST_CAPABILITY = table<string>({
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
});

export const LOG_LEVEL_RANK = table<number>({
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7,
});

/** Log levels by rank. */
export const MCP_LOG_LEVELS = Object.keys(LOG_LEVEL_RANK).sort((a, b) => LOG_LEVEL_RANK[a]! - LOG_LEVEL_RANK[b]!);

/** What mcpgate declares to agents: everything it can relay. */
const GATEWAY_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
} as const;

/**
 * What mcpgate declares to an agent: `GATEWAY_CAPABILITIES`, with the servers' merged `extensions`
 * and the `tasks` some server supports (tasks.ts `tasksCapability`) when there are any.
 */
export function gatewayCapabilities(
  extensions: Record<string, unknown> | undefined,
  tasks?: Record<string, unknown>,
): Record<string, unknown> {
  if (extensions === undefined && tasks === undefined) return GATEWAY_CAPABILITIES;
  return { ...GATEWAY_CAPABILITIES, ...(tasks !== undefined && { tasks }), ...(extensions !== undefined && { extensions }) };
}

/** The answer to an agent's `initialize`: the version it asked for if we speak it, else our latest. */
export function initializeResult(
  requested: unknown,
  instructions: string | undefined,
  capabilities: Record<string, unknown> = GATEWAY_CAPABILITIES,
): Record<string, unknown> {
  const protocolVersion =
    typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
  const result: Record<string, unknown> = { protocolVersion, capabilities, serverInfo: GATEWAY_INFO };
  if (instructions !== undefined) result.instructions = instructions;
  return result;
}
