// The rules applied at the door of each request: tools by name (decided before existence, so a denial
// reveals nothing), and server-level access for resources, prompts and completion. The decisions are
// rules/decide.ts's; this file turns a denial into the one error agents see.

import type { ToolEntry } from '../catalog/catalog.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { decideServer, decideTool } from '../rules/decide.js';
import type { Gateway } from './gateway.js';

/** MCPG_POLICY_DENIED naming agent, server and item; the rule that decided goes to the log only. */
function denied(log: Logger, agent: string, server: string, what: string, reason: string): GatewayError {
  log.debug('denied by the rules', { server, reason });
  return new GatewayError('MCPG_POLICY_DENIED', `agent "${agent}" may not use ${what} of server "${server}"`, { server, detail: { agent } });
}

/** For tools/call: the entry if the name exists, else the server its prefix names (made-up names alike). */
export function toolDenied(gateway: Gateway, log: Logger, agent: string, name: string, entry: ToolEntry | undefined): GatewayError | undefined {
  const rules = gateway.rules;
  if (rules.open) return undefined;
  const target = entry ?? gateway.catalog.serverOfName(name);
  if (target === undefined) return undefined;
  const tool = 'original' in target ? target.original : target.rest;
  const decision = decideTool(rules, agent, target.server, tool);
  return decision.allowed ? undefined : denied(log, agent, target.server, `tool "${tool}"`, decision.reason);
}

/** Server-level rules (resources, prompts, completion): undefined when allowed, else the error. */
export function serverDenied(gateway: Gateway, log: Logger, agent: string, server: string, what: string): GatewayError | undefined {
  const rules = gateway.rules;
  if (rules.open) return undefined;
  const decision = decideServer(rules, agent, server);
  return decision.allowed ? undefined : denied(log, agent, server, what, decision.reason);
}
