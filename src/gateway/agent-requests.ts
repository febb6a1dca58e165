// Requests a server sends to an agent (sampling/createMessage, elicitation/create, roots/list): the
// table of those the agent has not answered yet, so each answer goes back to the server that asked,
// under that server's own id, and none is left hanging when either side goes away.

import { GatewayError } from '../errors.js';
import type { Connection } from '../servers/connection.js';
import { encodeNotification, encodeRequest, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../wire/jsonrpc.js';

interface Outgoing {
  conn: Connection;
  serverRequestId: RequestId;
}

export class AgentRequests {
  private readonly outgoing = new Map<number, Outgoing>();
  private nextId = 1;

  /** `send` writes one framed message to the agent. */
  constructor(private readonly agent: string, private readonly send: (line: string) => void) {}

  /** Relays the server's request if the agent declared `capability`; otherwise the server gets a clear error. */
  relay(conn: Connection, msg: JsonRpcRequest, capability: string, agentCapabilities: Record<string, unknown>): void {
    if (agentCapabilities[capability] === undefined) {
      conn.respondError(msg.id, new GatewayError('MCPG_CAPABILITY_UNSUPPORTED', `agent "${this.agent}" did not declare the ${capability} capability, so ${msg.method} cannot be relayed`, { server: conn.name }).toJsonRpc());
      return;
    }
    const id = this.nextId++;
    this.outgoing.set(id, { conn, serverRequestId: msg.id });
    this.send(encodeRequest(id, msg.method, msg.params));
  }

  /** The agent answered: pass it to the server that asked. False if no request of ours has that id. */
  answer(msg: JsonRpcResponse): boolean {
    const entry = typeof msg.id === 'number' ? this.outgoing.get(msg.id) : undefined;
    if (entry === undefined) return false;
    this.outgoing.delete(msg.id as number);
    if ('result' in msg) entry.conn.respond(entry.serverRequestId, msg.result);
    else entry.conn.respondError(entry.serverRequestId, msg.error);
    return true;
  }

  /** The server withdrew one of its requests (`notifications/cancelled`): pass the cancellation on. */
  cancelledByServer(conn: Connection, requestId: unknown): void {
    this.drop((entry) => entry.conn === conn && entry.serverRequestId === requestId, `server "${conn.name}" cancelled the request`);
  }

  /** A connection went away: its questions can no longer be answered, so the agent may stop working on them. */
  connectionLost(conn: Connection): void {
    this.drop((entry) => entry.conn === conn, `server "${conn.name}" disconnected`);
  }

  /** The agent went away: every server still waiting gets an error instead of silence. */
  close(): void {
    for (const entry of this.outgoing.values()) {
      entry.conn.respondError(entry.serverRequestId, new GatewayError('MCPG_AGENT_UNAVAILABLE', `agent "${this.agent}" disconnected`).toJsonRpc());
    }
    this.outgoing.clear();
  }

  private drop(match: (entry: Outgoing) => boolean, reason: string): void {
    for (const [id, entry] of this.outgoing) {
      if (!match(entry)) continue;
      this.outgoing.delete(id);
      this.send(encodeNotification('notifications/cancelled', { requestId: id, reason }));
    }
  }
}
