// Routing of the name- and URI-addressed requests other than tools/call (resources, prompts,
// completion): from a public name or `mcpgate://SERVER/…` URI to the connection and the server's own
// name, with the rules applied first. Each returns the route or the error to answer with.

import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { Connection } from '../servers/connection.js';
import { serverDenied } from './access.js';
import type { Gateway } from './gateway.js';

export interface UriRoute {
  conn: Connection;
  /** The server's own URI. */
  uri: string;
  /** The namespaced URI the agent used. */
  publicUri: string;
}

const invalidParams = (message: string): GatewayError => new GatewayError('MCPG_INVALID_PARAMS', message);

export function routeUri(gateway: Gateway, log: Logger, agent: string, method: string, uri: unknown): UriRoute | GatewayError {
  if (typeof uri !== 'string') return invalidParams(`${method} needs params.uri (a string)`);
  const split = gateway.catalog.resolveUri(uri);
  const refused = split === undefined ? undefined : serverDenied(gateway, log, agent, split.server, `resource "${split.uri}"`);
  if (refused !== undefined) return refused;
  const conn = split === undefined ? undefined : gateway.connections.get(split.server);
  if (split === undefined || conn === undefined) {
    return new GatewayError('MCPG_RESOURCE_NOT_FOUND', `no server serves ${uri} (mcpgate resource URIs look like mcpgate://SERVER/URI)`, { detail: { uri } });
  }
  return { conn, uri: split.uri, publicUri: uri };
}

export function routePrompt(gateway: Gateway, log: Logger, agent: string, name: unknown): { conn: Connection; server: string; original: string } | GatewayError {
  if (typeof name !== 'string') return invalidParams('prompts/get needs params.name (a string)');
  const entry = gateway.catalog.prompt(name);
  // Decided before existence, like tools: a denial reveals nothing.
  const target = entry ?? gateway.catalog.serverOfName(name);
  const refused = target === undefined ? undefined : serverDenied(gateway, log, agent, target.server, `prompt "${'original' in target ? target.original : target.rest}"`);
  if (refused !== undefined) return refused;
  if (entry === undefined) return new GatewayError('MCPG_PROMPT_NOT_FOUND', `unknown prompt: ${name}`, { detail: { prompt: name } });
  const conn = gateway.connections.get(entry.server);
  if (conn === undefined) return new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${entry.server}" is not connected`, { server: entry.server });
  return { conn, server: entry.server, original: entry.original };
}

/** completion/complete: rewrites `ref` to the server's own prompt name or URI; returns the connection. */
export function routeCompletion(gateway: Gateway, log: Logger, agent: string, ref: Record<string, unknown> | undefined): Connection | GatewayError {
  if (ref?.type === 'ref/prompt') {
    const route = routePrompt(gateway, log, agent, ref.name);
    if (route instanceof GatewayError) return route;
    ref.name = route.original;
    return route.conn;
  }
  if (ref?.type === 'ref/resource') {
    const route = routeUri(gateway, log, agent, 'completion/complete', ref.uri);
    if (route instanceof GatewayError) return route;
    ref.uri = route.uri;
    return route.conn;
  }
  return invalidParams('completion/complete needs params.ref of type "ref/prompt" (with name) or "ref/resource" (with uri)');
}
