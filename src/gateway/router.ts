// The router: from a public name (`SERVER__TOOL`, a prompt name) or an `mcpgate://SERVER/…` URI to
// the connection and the server's own name, under the rules and the pins, decided once per request.
// The rules decide before existence, for existing and made-up names alike, so a denial reveals
// nothing; the decisions themselves are rules/decide.ts's, and this file turns a refusal into the one
// error agents see. It takes the parts it reads (catalog, connections, the rules snapshot), never the
// gateway, so it is unit-tested against an in-memory catalog (test/unit/router.test.ts).

import type { Catalog, ToolEntry } from '../catalog/catalog.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { decideServer, decideTool, type Claims } from '../rules/decide.js';
import type { Rules } from '../rules/load.js';
import type { Connection } from '../servers/connection.js';
import { seenEntry } from './own-catalogs.js';

export interface RouterParts {
  catalog: Catalog;
  connections: ReadonlyMap<string, Connection>;
  /** The rules in force: one immutable snapshot, read once per decision. */
  rules: () => Rules;
  /** Whether every server has started or failed (before that, an unknown tool may yet appear). */
  hasSettled: () => boolean;
  /** The pins' state directory, named in the command that approves a held tool. */
  pinsDir: string;
}

/** A tools/call's destination: the connection and the server's own tool name. */
export interface ToolRoute {
  conn: Connection;
  server: string;
  original: string;
  /** The tool as its server listed it. */
  tool: ToolEntry['tool'];
}

export interface UriRoute {
  conn: Connection;
  /** The server's own URI. */
  uri: string;
  /** The namespaced URI the agent used. */
  publicUri: string;
}

export interface PromptRoute {
  conn: Connection;
  server: string;
  original: string;
}

/** The tool is not in the catalog yet and servers are still starting: ask again once they settle. */
export const NOT_YET = 'not yet' as const;

const invalidParams = (message: string): GatewayError => new GatewayError('MCPG_INVALID_PARAMS', message);

/** MCPG_POLICY_DENIED naming agent, server and item; the rule that decided goes to the log only. */
function denied(log: Logger, agent: string, server: string, what: string, reason: string): GatewayError {
  log.debug('denied by the rules', { server, reason });
  return new GatewayError('MCPG_POLICY_DENIED', `agent "${agent}" may not use ${what} of server "${server}"`, { server, detail: { agent } });
}

/** A denial on an unprefixed server, answered as "unknown" so it reveals nothing; the rule goes to the log. */
function hidden(log: Logger, server: string, reason: string, unknown: GatewayError): GatewayError {
  log.debug('denied by the rules (answered as unknown: the server has no prefix)', { server, reason });
  return unknown;
}

export class Router {
  constructor(private readonly parts: RouterParts) {}

  /**
   * tools/call: allowed → the route; denied, held, unknown or its server not connected → the error;
   * unknown while servers are still starting → NOT_YET (the caller waits for them to settle).
   */
  tool(log: Logger, agent: string, name: string, own?: readonly Catalog[], claims?: Claims): ToolRoute | GatewayError | typeof NOT_YET {
    const { catalog } = this.parts;
    // `own`: the session's per-agent/per-session catalogs (own-catalogs.ts); they replace the shared view of their servers.
    const entry = seenEntry(catalog, own, (c) => c.tool(name));
    const refused = this.toolDenied(log, agent, name, entry, claims);
    if (refused !== undefined) return refused;
    if (entry === undefined) {
      if (!this.parts.hasSettled()) return NOT_YET;
      return new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } });
    }
    if (entry.held !== undefined) return this.heldError(name, entry.server, entry.original, entry.held.changes);
    const conn = this.connection(entry.server);
    if (conn instanceof GatewayError) return conn;
    return { conn, server: entry.server, original: entry.original, tool: entry.tool };
  }

  /**
   * The rules' verdict on a tool: the entry if the name exists, else the server its prefix names.
   * A name of an unprefixed server says nothing of its server, so a made-up one is merely unknown;
   * for a denial to reveal nothing, a denied tool of an unprefixed server is unknown too (the same
   * MCPG_TOOL_NOT_FOUND; the denial is logged at debug).
   */
  toolDenied(log: Logger, agent: string, name: string, entry: ToolEntry | undefined, claims?: Claims): GatewayError | undefined {
    const rules = this.parts.rules();
    if (rules.open) return undefined;
    const target = entry ?? this.parts.catalog.serverOfName(name);
    if (target === undefined) return undefined;
    const tool = 'original' in target ? target.original : target.rest;
    const decision = decideTool(rules, agent, target.server, tool, claims);
    if (decision.allowed) return undefined;
    if (!this.parts.catalog.isPrefixed(target.server)) return hidden(log, target.server, decision.reason, new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } }));
    return denied(log, agent, target.server, `tool "${tool}"`, decision.reason);
  }

  /**
   * Server-level rules (resources, prompts, completion): undefined when allowed, else the error —
   * `unknown` for an unprefixed server, whose items' names and URIs do not name it (see toolDenied).
   */
  serverDenied(log: Logger, agent: string, server: string, what: string, unknown?: () => GatewayError, claims?: Claims): GatewayError | undefined {
    const rules = this.parts.rules();
    if (rules.open) return undefined;
    const decision = decideServer(rules, agent, server, claims);
    if (decision.allowed) return undefined;
    if (unknown !== undefined && !this.parts.catalog.isPrefixed(server)) return hidden(log, server, decision.reason, unknown());
    return denied(log, agent, server, what, decision.reason);
  }

  uri(log: Logger, agent: string, method: string, uri: unknown, claims?: Claims): UriRoute | GatewayError {
    if (typeof uri !== 'string') return invalidParams(`${method} needs params.uri (a string)`);
    const split = this.parts.catalog.resolveUri(uri);
    const notFound = (): GatewayError => new GatewayError('MCPG_RESOURCE_NOT_FOUND', `no server serves ${uri} (mcpgate resource URIs look like mcpgate://SERVER/URI, or ui://SERVER/… for an MCP Apps ui:// resource)`, { detail: { uri } });
    const refused = split === undefined ? undefined : this.serverDenied(log, agent, split.server, `resource "${split.uri}"`, notFound, claims);
    if (refused !== undefined) return refused;
    const conn = split === undefined ? undefined : this.parts.connections.get(split.server);
    if (split === undefined || conn === undefined) return notFound();
    return { conn, uri: split.uri, publicUri: uri };
  }

  prompt(log: Logger, agent: string, name: unknown, own?: readonly Catalog[], claims?: Claims): PromptRoute | GatewayError {
    if (typeof name !== 'string') return invalidParams('prompts/get needs params.name (a string)');
    const { catalog } = this.parts;
    const entry = seenEntry(catalog, own, (c) => c.prompt(name));
    // Decided before existence, like tools: a denial reveals nothing.
    const target = entry ?? catalog.serverOfName(name);
    const notFound = (): GatewayError => new GatewayError('MCPG_PROMPT_NOT_FOUND', `unknown prompt: ${name}`, { detail: { prompt: name } });
    const refused = target === undefined ? undefined : this.serverDenied(log, agent, target.server, `prompt "${'original' in target ? target.original : target.rest}"`, notFound, claims);
    if (refused !== undefined) return refused;
    if (entry === undefined) return notFound();
    const conn = this.connection(entry.server);
    if (conn instanceof GatewayError) return conn;
    return { conn, server: entry.server, original: entry.original };
  }

  /** completion/complete: rewrites `ref` to the server's own prompt name or URI; returns the connection. */
  completion(log: Logger, agent: string, ref: Record<string, unknown> | undefined, own?: readonly Catalog[], claims?: Claims): Connection | GatewayError {
    if (ref?.type === 'ref/prompt') {
      const route = this.prompt(log, agent, ref.name, own, claims);
      if (route instanceof GatewayError) return route;
      ref.name = route.original;
      return route.conn;
    }
    if (ref?.type === 'ref/resource') {
      const route = this.uri(log, agent, 'completion/complete', ref.uri, claims);
      if (route instanceof GatewayError) return route;
      ref.uri = route.uri;
      return route.conn;
    }
    return invalidParams('completion/complete needs params.ref of type "ref/prompt" (with name) or "ref/resource" (with uri)');
  }

  /** The error for a call to a held tool: what changed and the exact command that approves it. */
  heldError(publicName: string, server: string, tool: string, changes: readonly string[]): GatewayError {
    const dir = this.parts.pinsDir;
    const why = changes.includes('new tool') ? 'it is a new tool that has not been approved' : `its definition changed since it was approved (${changes.join(', ')})`;
    const approve = `mcpgate approve ${server} ${tool} --state ${dir}`;
    return new GatewayError('MCPG_TOOL_HELD', `tool "${publicName}" of server "${server}" is held: ${why}. Review it with 'mcpgate pins ${server} --state ${dir}' and approve it with '${approve}'`, { server, detail: { tool: publicName, changes, approve } });
  }

  private connection(server: string): Connection | GatewayError {
    return this.parts.connections.get(server) ?? new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${server}" is not connected`, { server });
  }
}
