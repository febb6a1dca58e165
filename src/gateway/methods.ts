// The protocol's method tables the gateway routes by (MCP 2025-11-25).

import type { ListKind } from '../servers/lists.js';

/** A server's list_changed notification → the catalog kinds to refresh. */
export const LIST_CHANGED: Readonly<Record<string, readonly ListKind[] | undefined>> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
  'notifications/prompts/list_changed': ['prompts'],
};

/** Server→agent requests mcpgate relays, and the agent capability each needs. */
export const SERVER_REQUEST_CAPABILITY: Readonly<Record<string, string | undefined>> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

export const LOG_LEVEL_RANK: Readonly<Record<string, number | undefined>> = {
  debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7,
};

/** What mcpgate declares to agents: everything it can relay. */
export const GATEWAY_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
} as const;
