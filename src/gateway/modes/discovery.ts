// Discovery mode (agent-mcp-gateway compatible): instead of the whole catalog an agent sees four small
// meta-tools — list_servers, get_server_tools, execute_tool and, with --debug, get_gateway_status —
// a few hundred tokens of context instead of thousands. Every one goes through the same rules (and
// pins) as the aggregate catalog: what an agent can discover is exactly what it may call.

import type { Catalog } from '../../catalog/catalog.js';
import type { ServersConfig } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { decideTool, serverVisible, type Claims } from '../../rules/decide.js';
import type { Rules } from '../../rules/load.js';
import { globToRegExp } from '../../rules/globs.js';
import type { Connection } from '../../servers/connection.js';
import { ownsServer } from '../routing/own-catalogs.js';

/** What the meta-tools read: the configured servers, their connections, the catalog, the rules. */
export interface DiscoveryParts {
  servers: () => ServersConfig;
  connections: ReadonlyMap<string, Connection>;
  catalog: Catalog;
  rules: () => Rules;
  /** The catalog's separator between server and tool (`__` unless configured otherwise). */
  separator: string;
  /** Offer get_gateway_status. */
  debug: boolean;
  status: () => Record<string, unknown>;
}

const AGENT_ID = { type: 'string', description: 'Your agent id (only used when the gateway has no identity for you).' };

const META_TOOLS = [
  {
    name: 'list_servers',
    description: 'Lists the MCP servers you may use, with their state and how many tools each offers you.',
    inputSchema: { type: 'object', properties: { agent_id: AGENT_ID } },
  },
  {
    name: 'get_server_tools',
    description:
      'Lists the tools of one server you may call, with their input schemas. Filter by names or a glob pattern; max_schema_tokens caps the size (tools beyond it are listed by name only).',
    inputSchema: {
      type: 'object',
      properties: {
        server: { type: 'string' },
        names: { type: 'array', items: { type: 'string' } },
        pattern: { type: 'string', description: 'glob, e.g. "get_*"' },
        max_schema_tokens: { type: 'integer', minimum: 1 },
        agent_id: AGENT_ID,
      },
      required: ['server'],
    },
  },
  {
    name: 'execute_tool',
    description: 'Calls a tool of a server with the given arguments and returns its result.',
    inputSchema: {
      type: 'object',
      properties: {
        server: { type: 'string' },
        tool: { type: 'string' },
        args: { type: 'object' },
        timeout_ms: { type: 'integer', minimum: 1 },
        agent_id: AGENT_ID,
      },
      required: ['server', 'tool'],
    },
  },
] as const;

const STATUS_TOOL = {
  name: 'get_gateway_status',
  description: "Reports the gateway's state: reload status of each configuration file, the rules in force, the servers and their states.",
  inputSchema: { type: 'object', properties: { agent_id: AGENT_ID } },
} as const;

/** The meta-tools' names (the status tool's too, listed only with --debug). */
export const META_TOOL_NAMES: ReadonlySet<string> = new Set([...META_TOOLS.map((t) => t.name), STATUS_TOOL.name]);

export function metaTools(debug: boolean): string {
  return JSON.stringify({ tools: debug ? [...META_TOOLS, STATUS_TOOL] : META_TOOLS });
}

const text = (value: unknown): Record<string, unknown> => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] });
const invalid = (message: string): GatewayError => new GatewayError('MCPG_INVALID_PARAMS', message);

/** Rough token count of a JSON value (about four characters a token), for max_schema_tokens. */
const tokens = (value: unknown): number => Math.ceil(JSON.stringify(value).length / 4);

/**
 * The catalog that lists a server for this session: one of its own catalogs for a per-agent or
 * per-session server whose pooled connection it has (own-catalogs.ts), else the shared one.
 */
function catalogOf(parts: DiscoveryParts, server: string, own: readonly Catalog[] | undefined): Catalog {
  if (own !== undefined) for (const catalog of own) if (ownsServer([catalog], server)) return catalog;
  return parts.catalog;
}

function listServers(parts: DiscoveryParts, agent: string, claims?: Claims, own?: readonly Catalog[]): Record<string, unknown> {
  const rules = parts.rules();
  const servers = parts
    .servers()
    .servers.filter((s) => !s.disabled && (rules.open || serverVisible(rules, agent, s.name, claims)))
    .map((s) => {
      const conn = parts.connections.get(s.name);
      // What get_server_tools would list: allowed, and not held (the held count spans every agent's tools).
      const catalog = catalogOf(parts, s.name, own);
      const tools = catalog
        .serverTools(s.name)
        .filter((t) => (rules.open || decideTool(rules, agent, s.name, t.name, claims).allowed) && callable(catalog, s.name, t.name));
      return { name: s.name, state: conn?.shownState ?? 'not started', tools: tools.length, description: conn?.info?.serverInfo.name };
    });
  return text({ servers });
}

/** In the catalog and not held by pins. */
function callable(catalog: Catalog, server: string, tool: string): boolean {
  const entry = catalog.tool(catalog.publicName(server, tool) ?? '');
  return entry !== undefined && entry.held === undefined;
}

/** Who runs a meta-tool: the agent it is run as, its token's claims and its own catalogs (when it is the session's own agent). */
interface MetaCaller {
  readonly agent: string;
  readonly claims?: Claims | undefined;
  readonly own?: readonly Catalog[] | undefined;
}

function getServerTools(parts: DiscoveryParts, caller: MetaCaller, args: Record<string, unknown>): Record<string, unknown> {
  const { agent, claims, own } = caller;
  const server = args.server;
  if (typeof server !== 'string') throw invalid('get_server_tools needs "server" (a string)');
  const rules = parts.rules();
  if (!rules.open && !serverVisible(rules, agent, server, claims)) {
    throw new GatewayError('MCPG_POLICY_DENIED', `agent "${agent}" may not use server "${server}"`, { server, detail: { agent } });
  }
  const names = Array.isArray(args.names) ? new Set(args.names.filter((n): n is string => typeof n === 'string')) : undefined;
  const pattern = typeof args.pattern === 'string' ? globToRegExp(args.pattern) : undefined;
  const budget = typeof args.max_schema_tokens === 'number' && args.max_schema_tokens > 0 ? args.max_schema_tokens : Infinity;
  let used = 0;
  const tools: Record<string, unknown>[] = [];
  const omitted: string[] = [];
  const catalog = catalogOf(parts, server, own);
  for (const tool of catalog.serverTools(server)) {
    if (names !== undefined && !names.has(tool.name)) continue;
    if (pattern !== undefined && !pattern.test(tool.name)) continue;
    if (!rules.open && !decideTool(rules, agent, server, tool.name, claims).allowed) continue;
    if (!callable(catalog, server, tool.name)) continue;
    const item = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
    const cost = tokens(item);
    if (used + cost > budget) {
      omitted.push(tool.name);
      continue;
    }
    used += cost;
    tools.push(item);
  }
  return text(omitted.length === 0 ? { server, tools } : { server, tools, omitted_for_budget: omitted });
}

/** Resolves execute_tool's target to the public tool name the normal call path takes. */
function executeTarget(
  parts: DiscoveryParts,
  args: Record<string, unknown>,
): { name: string; arguments: unknown; timeoutMs: number | undefined } {
  const { server, tool } = args;
  if (typeof server !== 'string' || typeof tool !== 'string') throw invalid('execute_tool needs "server" and "tool" (strings)');
  if (args.args !== undefined && (typeof args.args !== 'object' || args.args === null || Array.isArray(args.args)))
    throw invalid('execute_tool "args" must be an object');
  const timeoutMs =
    typeof args.timeout_ms === 'number' && Number.isInteger(args.timeout_ms) && args.timeout_ms > 0 ? args.timeout_ms : undefined;
  // An unknown tool still gets a well-formed public name, so the rules decide before existence does.
  const name = parts.catalog.nameFor(server, tool);
  return { name, arguments: args.args ?? {}, timeoutMs };
}

/** Runs a meta-tool: a result to send, or (execute_tool) the call to make through the normal path. */
export function runMetaTool(
  parts: DiscoveryParts,
  caller: MetaCaller,
  name: string,
  args: Record<string, unknown>,
): { result: Record<string, unknown> } | { execute: ReturnType<typeof executeTarget> } {
  const { agent, claims, own } = caller;
  switch (name) {
    case 'list_servers':
      return { result: listServers(parts, agent, claims, own) };
    case 'get_server_tools':
      return { result: getServerTools(parts, caller, args) };
    case 'execute_tool':
      return { execute: executeTarget(parts, args) };
    case 'get_gateway_status':
      if (parts.debug) return { result: text(parts.status()) };
  }
  throw new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } });
}
