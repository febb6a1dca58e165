// A request whose method mcpgate does not know (an extension's, a newer revision's, a server's own):
// it is routed where its params say it belongs, else to the one server that declares its
// namespace, else refused with an error naming the method — never dropped. In order:
//   1. `params.taskId` of one of the agent's tasks (tasks.ts) → that task's server, under its id;
//   2. `params.uri` that routes (router.ts, under the rules) → that server, under its own URI;
//   3. `params.name` of a tool, else of a prompt, the agent may use → that server, under its own name;
//   4. the method's namespace (`widgets` of `widgets/spin`) declared by exactly one ready server the
//      rules let the agent reach, as a capability or an `experimental` capability → that server.
// The answer is relayed as the server gave it.

import { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';
import type { JsonRpcRequest } from '../../wire/jsonrpc.js';
import { NOT_YET, type Caller, type Carrier, type Router } from './router.js';
import type { TaskTable } from './tasks.js';

/** What routing an unknown method reads. */
interface OtherMethodParts {
  readonly router: Router;
  readonly connections: ReadonlyMap<string, Connection>;
  readonly tasks: TaskTable;
}

/** Who is asking: the caller the router routes for, and the owner of its tasks. */
interface Asker extends Caller {
  readonly owner: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where `msg` goes: the connection carrying it and its params in the server's names; or why nowhere. */
export function routeOtherMethod(
  parts: OtherMethodParts,
  log: Logger,
  asker: Asker,
  msg: JsonRpcRequest,
): { carrier: Carrier; params: Record<string, unknown> | undefined } | GatewayError {
  const routed = (
    carrier: Carrier | GatewayError,
    params: Record<string, unknown> | undefined,
  ): { carrier: Carrier; params: Record<string, unknown> | undefined } | GatewayError =>
    carrier instanceof GatewayError ? carrier : { carrier, params };
  const params = msg.params;
  if (params !== undefined && typeof params.taskId === 'string') {
    const record = parts.tasks.find(asker.owner, params.taskId);
    const conn = record === undefined ? undefined : parts.connections.get(record.server);
    if (record !== undefined && conn !== undefined) {
      return routed(parts.router.carrier(conn, asker), { ...params, taskId: record.serverTaskId });
    }
  }
  if (params !== undefined && typeof params.uri === 'string') {
    const route = parts.router.uri(log, asker, msg.method, params.uri);
    if (!(route instanceof GatewayError)) {
      return routed(route.carrier, { ...params, uri: route.uri });
    }
  }
  if (params !== undefined && typeof params.name === 'string') {
    const tool = parts.router.tool(log, asker, params.name);
    if (tool !== NOT_YET && !(tool instanceof GatewayError)) {
      return routed(tool.carrier, { ...params, name: tool.original });
    }
    const prompt = parts.router.prompt(log, asker, params.name);
    if (!(prompt instanceof GatewayError)) {
      return routed(prompt.carrier, { ...params, name: prompt.original });
    }
  }
  const namespace = msg.method.includes('/') ? msg.method.slice(0, msg.method.indexOf('/')) : msg.method;
  const declaring = [...parts.connections.values()].filter((conn) => {
    const capabilities = conn.state === 'ready' ? conn.info?.capabilities : undefined;
    if (capabilities === undefined) return false;
    const declared =
      capabilities[namespace] !== undefined || (isRecord(capabilities.experimental) && capabilities.experimental[namespace] !== undefined);
    return declared && parts.router.serverDenied(log, asker, conn.name, { what: `method "${msg.method}"` }) === undefined;
  });
  if (declaring.length === 1) return routed(parts.router.carrier(declaring[0]!, asker), params);
  const why =
    declaring.length === 0
      ? `no server declares "${namespace}"`
      : `${declaring.length} servers declare "${namespace}" (${declaring.map((c) => `"${c.name}"`).join(', ')})`;
  return new GatewayError(
    'MCPG_METHOD_NOT_FOUND',
    `method not found: ${msg.method} — mcpgate routes a method it does not know to the server its params name (a task's taskId, a resource's uri, a tool's or prompt's name) or to the one server whose capabilities declare its namespace, and ${why}`,
    { detail: { method: msg.method } },
  );
}
