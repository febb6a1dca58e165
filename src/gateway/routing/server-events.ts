// What servers send, right to left, besides `list_changed` (the listing's, catalog-listing.ts): log
// messages (to the agents that set a level, filtered by it), `resources/updated` (to subscribed
// agents), cancellations and elicitation completions, and server→agent requests (to the one agent
// they belong to, or refused with MCPG_AGENT_UNAVAILABLE rather than a guess). The class is
// `ServerEvents`.
//
// A per-agent or per-session server has a catalog connection, used only to list it, and
// pooled connections, each owned by one agent or agent session. What a pooled connection sends goes
// to its owners only (`notification` with its owners). What the catalog connection sends beyond
// list_changed belongs to no agent. Which agent a request goes to, and how `roots/list` is answered
// when none can be asked: src/gateway/README.md, "Which agent".

import type { Catalog } from '../../catalog/catalog.js';
import { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../../wire/jsonrpc.js';
import type { Agents, ServerRequestTarget } from '../open-agents.js';
import { SERVER_REQUEST_CAPABILITY } from './method-tables.js';
import type { AgentSession } from '../session/session.js';
import type { Subscriptions } from '../session/subscriptions.js';
import { scopeOf } from '../../servers/pool.js';
import { taskOver, type TaskTable } from './tasks.js';

interface ServerEventsParts {
  agents: Agents;
  catalog: Catalog;
  subscriptions: Subscriptions<AgentSession>;
  tasks: TaskTable;
  log: Logger;
}

export class ServerEvents {
  /**
   * Shared connections whose latest `roots/list` mcpgate answered itself (no single agent that has
   * roots to ask: over HTTP a server asking at start-up meets no agent). Once an agent that has roots
   * is ready each is sent `roots/list_changed`, so it asks again and gets that agent's roots, as it
   * would over stdio.
   */
  private readonly rootsAnsweredAlone = new Set<Connection>();

  constructor(private readonly parts: ServerEventsParts) {}

  /** An agent that has roots is ready: each shared server mcpgate answered roots for is told to ask again. */
  rootsArrived(): void {
    for (const conn of this.rootsAnsweredAlone) {
      this.rootsAnsweredAlone.delete(conn);
      if (conn.state === 'ready') conn.notify('notifications/roots/list_changed');
    }
  }

  /**
   * A notification from a server connection, to its audience: every agent for a shared connection,
   * its `owners` (the sessions it belongs to) for a pooled one. A pooled server's catalog connection
   * (pooled, no owners) is followed for its list changes only: nothing of it comes here.
   */
  notification(conn: Connection, msg: JsonRpcNotification, owners?: ReadonlySet<AgentSession>): void {
    if (owners === undefined && conn.config.sessions !== 'shared') return;
    const audience: Iterable<AgentSession> = owners ?? this.parts.agents;
    switch (msg.method) {
      case 'notifications/message':
        for (const session of audience) session.deliverLog(conn.name, msg.params ?? {});
        return;
      case 'notifications/resources/updated': {
        const uri = msg.params?.uri;
        if (typeof uri !== 'string') return;
        const publicUri = this.parts.catalog.publicUri(conn.name, uri);
        for (const session of this.parts.subscriptions.holders(conn, uri))
          if (owners === undefined || owners.has(session)) session.notify(msg.method, { ...msg.params, uri: publicUri });
        return;
      }
      case 'notifications/cancelled':
        for (const session of audience) session.serverCancelled(conn, msg.params?.requestId);
        return;
      case 'notifications/elicitation/complete':
        for (const session of audience) session.notify(msg.method, msg.params);
        return;
      case 'notifications/tasks/status':
        return this.taskStatus(conn, msg, audience);
      default:
        this.parts.log.debug('dropped a server notification mcpgate does not relay', {
          server: conn.name,
          pooled: owners !== undefined,
          method: msg.method,
        });
    }
  }

  /** A task's status: to the sessions of the agent that owns the task (tasks.ts), under its public id. */
  private taskStatus(conn: Connection, msg: JsonRpcNotification, among: Iterable<AgentSession>): void {
    const taskId = msg.params?.taskId;
    const records = typeof taskId === 'string' ? this.parts.tasks.ofServerTask(conn.name, taskId) : [];
    if (records.length === 0) return this.parts.log.debug('dropped the status of a task no agent is known to own', { server: conn.name });
    for (const record of records) taskOver(record, msg.method, msg.params?.status);
    for (const session of among) {
      const owner = scopeOf(session, 'per-agent').key;
      for (const record of records) if (record.owner === owner) session.notify(msg.method, { ...msg.params, taskId: record.publicId });
    }
  }

  /**
   * A request from a server to an agent (sampling, elicitation, roots). `owners`: for a pooled
   * connection, the sessions it belongs to (an empty set for a catalog connection: no agent).
   */
  serverRequest(conn: Connection, msg: JsonRpcRequest, related?: number, owners?: ReadonlySet<AgentSession>): void {
    const { agents } = this.parts;
    const capability = SERVER_REQUEST_CAPABILITY[msg.method];
    if (capability === undefined) {
      conn.respondError(
        msg.id,
        new GatewayError('MCPG_METHOD_NOT_FOUND', `mcpgate does not relay ${msg.method} to agents`, { server: conn.name }).toJsonRpc(),
      );
      return;
    }
    const configured = msg.method === 'roots/list' ? configuredRoots(conn) : undefined;
    const target = agents.forServerRequest(conn, related, owners);
    if (msg.method === 'roots/list' && owners === undefined) {
      // An agent with roots that cannot be asked yet (an HTTP agent before its GET stream) is answered
      // for like no agent: the server is told again once the agent can be asked.
      if (target.session !== undefined && target.session.declared.hasRoots && (target.busy || target.session.askable))
        this.rootsAnsweredAlone.delete(conn);
      else this.rootsAnsweredAlone.add(conn);
    }
    // A roots/list that belongs to no call (a server asking at start-up) is mcpgate's to answer when
    // the agent cannot: the entry's roots, else none.
    const fallback =
      target.session !== undefined && !target.busy && msg.method === 'roots/list' ? (configured ?? { roots: [] }) : configured;
    if (target.session !== undefined) return target.session.relayServerRequest({ conn, msg, capability, related, fallback });
    // No one agent to ask: roots are mcpgate's own to answer (the entry's, else none), as a client
    // that exposes no roots would; a roots list_changed follows when an agent's roots change.
    if (msg.method === 'roots/list') {
      this.parts.log.debug(
        configured === undefined
          ? 'answered roots/list with no roots: no single agent to ask'
          : 'answered roots/list from the entry\'s "roots"',
        { server: conn.name },
      );
      conn.respond(msg.id, configured ?? { roots: [] });
      return;
    }
    conn.respondError(
      msg.id,
      new GatewayError('MCPG_AGENT_UNAVAILABLE', `cannot relay ${msg.method}: ${whyNoAgent(conn, target, owners)}`, {
        server: conn.name,
      }).toJsonRpc(),
    );
  }
}

/** Why no agent can be asked, and what the operator can do about it. */
function whyNoAgent(conn: Connection, target: ServerRequestTarget, owners: ReadonlySet<AgentSession> | undefined): string {
  const fix = `make server "${conn.name}" "sessions": "per-agent" in .mcp.json, so each agent has a connection of its own`;
  if (target.none === undefined) return 'it has an agent';
  if (target.none === 'no-agent')
    return owners !== undefined
      ? 'no agent session owns this connection (it is gone, or this is the connection mcpgate lists the server with)'
      : 'no agent is connected';
  const named = target.agents.map((a) => `"${a}"`);
  switch (target.none) {
    case 'several-busy':
      return `agents ${named.join(' and ')} have calls in flight on server "${conn.name}", and the request does not say which call it belongs to (a stdio server cannot); ${fix}`;
    default:
      return `no agent has a call in flight on server "${conn.name}" and several are connected (${named.join(', ')}), so none can be chosen; ${fix}`;
  }
}

/** The `roots/list` result the server's entry configures, if it lists `"roots"`. */
function configuredRoots(conn: Connection): { roots: { uri: string }[] } | undefined {
  const roots = conn.config.roots;
  return roots === undefined ? undefined : { roots: roots.map((uri) => ({ uri })) };
}
