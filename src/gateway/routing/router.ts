// The router: from a public name (`SERVER__TOOL`, a prompt name) or an `mcpgate://SERVER/…` URI to
// the server's own name and the connection that will carry the request (`{ conn, server, original,
// carrier }`), under the rules and the pins, decided once per request; or the error (denied, held,
// unknown, not connected); or `NOT_YET` for an unknown tool while servers still start. For a shared server that is its connection (an on-demand one
// woken); for a per-agent or per-session server it is the caller's own pooled connection, from the
// pool under the caller's scope (`servers/pool.ts` `scopeOf`) — never the catalog connection, which
// lists the server and carries no agent's request.
// The rules decide before existence, for existing and made-up names alike, so a denial reveals
// nothing; the decisions themselves are rules/decide.ts's, and this file turns a refusal into the one
// error agents see. It takes the parts it reads (catalog, connections, the rules snapshot), never the
// gateway, so it is unit-tested against an in-memory catalog (test/unit/gateway/router.test.ts).

import type { Catalog, ToolEntry } from '../../catalog/catalog.js';
import { GatewayError, asGatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import { decideServer, decideTool, type Claims } from '../../rules/decide.js';
import type { Rules, RulesInForce } from '../../rules/load.js';
import type { Connection } from '../../servers/connection.js';
import { scopeOf, type ConnectionPool, type PoolOwner, type ScopeOwner } from '../../servers/pool.js';
import { seenEntry } from './own-catalogs.js';

interface RouterParts {
  catalog: Catalog;
  connections: ReadonlyMap<string, Connection>;
  /** The rules in force: one immutable snapshot, read once per decision. */
  inForce: RulesInForce;
  /** Whether every server has started or failed (before that, an unknown tool may yet appear). */
  hasSettled: () => boolean;
  /** The pins' state directory, named in the command that approves a held tool. */
  pinsDir: string;
  /** The connections of per-agent and per-session servers. */
  pool: ConnectionPool;
}

/**
 * Who a request is routed for: the agent (the rules judge it, with its token's claims), the
 * catalogs it sees (its own catalogs, or undefined), and the agent session whose pool scope a
 * per-agent or per-session server's connection is taken from. An agent session is one.
 */
/** Who asks whether the rules allow something: the agent, and its token's claims when it has one. */
interface AskingAgent {
  readonly agent: string;
  readonly claims?: Claims | undefined;
}

export interface Caller extends ScopeOwner, PoolOwner {
  readonly claims: Claims | undefined;
  readonly ownCatalogs: readonly Catalog[] | undefined;
}

/**
 * The connection a request goes out on: at once, or `PendingCarrier` — once it is made (a pooled one) or
 * started (an on-demand one); `server` is the server's connection, which names it meanwhile.
 */
export type Carrier = Connection | PendingCarrier;

interface PendingCarrier {
  readonly pending: true;
  readonly server: Connection;
  readonly ready: Promise<Connection>;
}

export function isPending(carrier: Carrier): carrier is PendingCarrier {
  return (carrier as Partial<PendingCarrier>).pending === true;
}

/** The carrier once it can carry. */
export function whenReady(carrier: Carrier): Connection | Promise<Connection> {
  return isPending(carrier) ? carrier.ready : carrier;
}

/** A tools/call's destination: the server's connection, the one carrying the call, and the server's own tool name. */
export interface ToolRoute {
  /** The server's connection in the gateway (the catalog connection of a pooled server). */
  conn: Connection;
  carrier: Carrier;
  server: string;
  original: string;
  /** The tool as its server listed it. */
  tool: ToolEntry['tool'];
}

interface UriRoute {
  conn: Connection;
  carrier: Carrier;
  /** The server's own URI. */
  uri: string;
  /** The namespaced URI the agent used. */
  publicUri: string;
}

interface PromptRoute {
  conn: Connection;
  carrier: Carrier;
  server: string;
  original: string;
}

/** The tool is not in the catalog yet and servers are still starting: ask again once they settle. */
export const NOT_YET = 'not yet' as const;

const invalidParams = (message: string): GatewayError => new GatewayError('MCPG_INVALID_PARAMS', message);

/** MCPG_POLICY_DENIED naming agent, server and item; the rule that decided goes to the log only. */
function denied(log: Logger, at: { readonly agent: string; readonly server: string }, what: string, reason: string): GatewayError {
  const { agent, server } = at;
  log.debug('denied by the rules', { server, reason });
  return new GatewayError('MCPG_POLICY_DENIED', `agent "${agent}" may not use ${what} of server "${server}"`, {
    server,
    detail: { agent },
  });
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
  tool(log: Logger, caller: Caller, name: string): ToolRoute | GatewayError | typeof NOT_YET {
    const { catalog } = this.parts;
    // The caller's per-agent/per-session catalogs (own-catalogs.ts) replace the shared view of their servers.
    // A caller without own catalogs takes the shared path unchanged: one map lookup.
    const own = caller.ownCatalogs;
    const entry = own === undefined ? catalog.tool(name) : seenEntry(catalog, own, (c) => c.tool(name));
    const refused = this.toolDenied(log, caller, name, entry);
    if (refused !== undefined) return refused;
    if (entry === undefined) {
      if (!this.parts.hasSettled()) return NOT_YET;
      return new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } });
    }
    if (entry.held !== undefined) return this.heldError(name, entry.server, entry.original, entry.held.changes);
    const conn = this.connection(entry.server);
    if (conn instanceof GatewayError) return conn;
    const carrier = this.carrier(conn, caller);
    if (carrier instanceof GatewayError) return carrier;
    return { conn, carrier, server: entry.server, original: entry.original, tool: entry.tool };
  }

  /**
   * The connection a request of `caller` to `conn`'s server goes out on: `conn` itself for a shared
   * server (an on-demand one not running is started, and the request waits for it, bounded by the
   * start-up timeout); for a per-agent or per-session server the caller's own pooled connection
   * (a promise while it is made). The pool's refusal (MCPG_POOL_EXHAUSTED, …) is the error.
   */
  carrier(conn: Connection, caller: Caller): Carrier | GatewayError {
    const mode = conn.config.sessions;
    if (mode === 'shared')
      return conn.onDemand && conn.state !== 'ready'
        ? pending(
            conn,
            conn.wake().then(() => conn),
          )
        : conn;
    try {
      const got = this.parts.pool.get(
        conn.config,
        scopeOf(caller, mode),
        caller,
        agentHeaders(this.parts.inForce.rules, caller, conn.config.name),
      );
      return got instanceof Promise ? pending(conn, got) : got;
    } catch (err) {
      return asGatewayError(err);
    }
  }

  /**
   * The rules' verdict on a tool: the entry if the name exists, else the server its prefix names.
   * A name of an unprefixed server says nothing of its server, so a made-up one is merely unknown;
   * for a denial to reveal nothing, a denied tool of an unprefixed server is unknown too (the same
   * MCPG_TOOL_NOT_FOUND; the denial is logged at debug).
   */
  toolDenied(log: Logger, asker: AskingAgent, name: string, entry: ToolEntry | undefined): GatewayError | undefined {
    const { agent, claims } = asker;
    const rules = this.parts.inForce.rules;
    if (rules.open) return undefined;
    const target = entry ?? this.parts.catalog.serverOfName(name);
    if (target === undefined) return undefined;
    const tool = 'original' in target ? target.original : target.rest;
    const decision = decideTool(rules, agent, target.server, tool, claims);
    if (decision.allowed) return undefined;
    if (!this.parts.catalog.isPrefixed(target.server))
      return hidden(
        log,
        target.server,
        decision.reason,
        new GatewayError('MCPG_TOOL_NOT_FOUND', `unknown tool: ${name}`, { detail: { tool: name } }),
      );
    return denied(log, { agent, server: target.server }, `tool "${tool}"`, decision.reason);
  }

  /**
   * Server-level rules (resources, prompts, completion): undefined when allowed, else the error —
   * `unknown` for an unprefixed server, whose items' names and URIs do not name it (see toolDenied).
   */
  serverDenied(
    log: Logger,
    asker: AskingAgent,
    server: string,
    item: { readonly what: string; readonly unknown?: (() => GatewayError) | undefined },
  ): GatewayError | undefined {
    const { agent, claims } = asker;
    const { what, unknown } = item;
    const rules = this.parts.inForce.rules;
    if (rules.open) return undefined;
    const decision = decideServer(rules, agent, server, claims);
    if (decision.allowed) return undefined;
    if (unknown !== undefined && !this.parts.catalog.isPrefixed(server)) return hidden(log, server, decision.reason, unknown());
    return denied(log, { agent, server }, what, decision.reason);
  }

  uri(log: Logger, caller: Caller, method: string, uri: unknown): UriRoute | GatewayError {
    const { agent, claims } = caller;
    if (typeof uri !== 'string') return invalidParams(`${method} needs params.uri (a string)`);
    const split = this.parts.catalog.resolveUri(uri);
    const notFound = (): GatewayError =>
      new GatewayError(
        'MCPG_RESOURCE_NOT_FOUND',
        `no server serves ${uri} (mcpgate resource URIs look like mcpgate://SERVER/URI, or ui://SERVER/… for an MCP Apps ui:// resource)`,
        { detail: { uri } },
      );
    const refused =
      split === undefined
        ? undefined
        : this.serverDenied(log, { agent, claims }, split.server, { what: `resource "${split.uri}"`, unknown: notFound });
    if (refused !== undefined) return refused;
    const conn = split === undefined ? undefined : this.parts.connections.get(split.server);
    if (split === undefined || conn === undefined) return notFound();
    const carrier = this.carrier(conn, caller);
    if (carrier instanceof GatewayError) return carrier;
    return { conn, carrier, uri: split.uri, publicUri: uri };
  }

  prompt(log: Logger, caller: Caller, name: unknown): PromptRoute | GatewayError {
    if (typeof name !== 'string') return invalidParams('prompts/get needs params.name (a string)');
    const { catalog } = this.parts;
    const { agent, claims } = caller;
    const entry = seenEntry(catalog, caller.ownCatalogs, (c) => c.prompt(name));
    // Decided before existence, like tools: a denial reveals nothing.
    const target = entry ?? catalog.serverOfName(name);
    const notFound = (): GatewayError => new GatewayError('MCPG_PROMPT_NOT_FOUND', `unknown prompt: ${name}`, { detail: { prompt: name } });
    const refused =
      target === undefined
        ? undefined
        : this.serverDenied(log, { agent, claims }, target.server, {
            what: `prompt "${'original' in target ? target.original : target.rest}"`,
            unknown: notFound,
          });
    if (refused !== undefined) return refused;
    if (entry === undefined) return notFound();
    const conn = this.connection(entry.server);
    if (conn instanceof GatewayError) return conn;
    const carrier = this.carrier(conn, caller);
    if (carrier instanceof GatewayError) return carrier;
    return { conn, carrier, server: entry.server, original: entry.original };
  }

  /** completion/complete: the server's connection, the one carrying it, and `ref` in the server's own prompt name or URI. */
  completion(
    log: Logger,
    caller: Caller,
    ref: Record<string, unknown> | undefined,
  ): { conn: Connection; carrier: Carrier; ref: Record<string, unknown> } | GatewayError {
    if (ref?.type === 'ref/prompt') {
      const route = this.prompt(log, caller, ref.name);
      if (route instanceof GatewayError) return route;
      return { conn: route.conn, carrier: route.carrier, ref: { ...ref, name: route.original } };
    }
    if (ref?.type === 'ref/resource') {
      const route = this.uri(log, caller, 'completion/complete', ref.uri);
      if (route instanceof GatewayError) return route;
      return { conn: route.conn, carrier: route.carrier, ref: { ...ref, uri: route.uri } };
    }
    return invalidParams('completion/complete needs params.ref of type "ref/prompt" (with name) or "ref/resource" (with uri)');
  }

  /** The error for a call to a held tool: what changed and the exact command that approves it. */
  heldError(publicName: string, server: string, tool: string, changes: readonly string[]): GatewayError {
    const dir = this.parts.pinsDir;
    const why = changes.includes('new tool')
      ? 'it is a new tool that has not been approved'
      : `its definition changed since it was approved (${changes.join(', ')})`;
    const approve = `mcpgate approve ${server} ${tool} --state ${dir}`;
    return new GatewayError(
      'MCPG_TOOL_HELD',
      `tool "${publicName}" of server "${server}" is held: ${why}. Review it with 'mcpgate pins ${server} --state ${dir}' and approve it with '${approve}'`,
      { server, detail: { tool: publicName, changes, approve } },
    );
  }

  private connection(server: string): Connection | GatewayError {
    return (
      this.parts.connections.get(server) ?? new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${server}" is not connected`, { server })
    );
  }
}

/** A carrier's promise is awaited by the request it carries, which may be refused first (a quota, a denied approval): its failure is that request's, never unhandled. */
function pending(server: Connection, ready: Promise<Connection>): PendingCarrier {
  ready.catch(() => {});
  return { pending: true, server, ready };
}

/**
 * The agent's own headers for a remote server (the rules' `serverHeaders`): only for a verified
 * identity, only from the agent's own entry (never `default`'s, which the rules refuse anyway).
 */
function agentHeaders(
  rules: Rules,
  owner: { readonly agent: string; readonly identified: boolean },
  server: string,
): Readonly<Record<string, string>> | undefined {
  if (!owner.identified) return undefined;
  return rules.agents.get(owner.agent)?.serverHeaders.get(server);
}
