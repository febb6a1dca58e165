// Requests a server sends to an agent (sampling/createMessage, elicitation/create, roots/list): the
// table of those the agent has not answered yet, so each answer goes back to the server that asked,
// under that server's own id, and none is left hanging when either side goes away.

import { GatewayError } from '../../errors.js';
import type { Connection } from '../../servers/connection.js';
import { INPUT_KEY, type WithInputKey } from '../../servers/input-rounds.js';
import { encodeNotification, encodeRequest, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../../wire/jsonrpc.js';

interface Outgoing {
  conn: Connection;
  serverRequestId: RequestId;
  /** A modern server's key for this input request (the server session's input rounds), for a modern agent's inputRequests. */
  inputKey?: string;
}

/** Server→agent requests held until the agent has initialized. */
const MAX_EARLY_REQUESTS = 64;

/** A server's request to the agent: on `conn`, needing the agent's `capability`, as part of the agent's request `about` when known; `fallback` answers it when the agent lacks the capability. */
export interface ServerQuestion {
  readonly conn: Connection;
  readonly msg: JsonRpcRequest;
  readonly capability: string;
  readonly about?: RequestId | undefined;
  readonly fallback?: unknown;
}

export class AgentRequests {
  private readonly outgoing = new Map<number, Outgoing>();
  private nextId = 1;
  /**
   * Requests that arrived before the agent sent `notifications/initialized` (servers start before or
   * alongside the agent, and some ask for roots at once). MCP forbids sending the agent requests
   * before that, so they wait here, bounded, and go out when it arrives.
   */
  private early: ServerQuestion[] | undefined = [];

  /**
   * `send` writes one framed message to the agent, as part of its request `about` when known;
   * false when it could not (then the server is answered at once instead of left waiting).
   */
  constructor(
    private readonly agent: string,
    private readonly send: (line: string, about?: RequestId) => boolean,
  ) {}

  /**
   * Relays the server's request if the agent declared `capability`; otherwise the server gets
   * `fallback` as the answer when there is one (configured roots), else a clear error.
   */
  relay(question: ServerQuestion, agentCapabilities: Record<string, unknown>): void {
    const { conn, msg, capability, about, fallback } = question;
    if (this.early !== undefined) {
      if (this.early.length < MAX_EARLY_REQUESTS) return void this.early.push(question);
      conn.respondError(
        msg.id,
        new GatewayError('MCPG_AGENT_UNAVAILABLE', `agent "${this.agent}" has not finished initializing; ${msg.method} was refused`, {
          server: conn.name,
        }).toJsonRpc(),
      );
      return;
    }
    if (agentCapabilities[capability] === undefined) {
      if (fallback !== undefined) return void conn.respond(msg.id, fallback);
      conn.respondError(
        msg.id,
        new GatewayError(
          'MCPG_CAPABILITY_UNSUPPORTED',
          `agent "${this.agent}" did not declare the ${capability} capability, so ${msg.method} cannot be relayed`,
          { server: conn.name },
        ).toJsonRpc(),
      );
      return;
    }
    if (msg.method === 'elicitation/create' && msg.params?.mode === 'url' && !takesUrlMode(agentCapabilities)) {
      // A shared connection declares form-mode elicitation only; a server asking for URL mode anyway
      // is refused as the agent itself would refuse it, rather than shown a mode the agent lacks.
      conn.respondError(
        msg.id,
        new GatewayError(
          'MCPG_CAPABILITY_UNSUPPORTED',
          `agent "${this.agent}" did not declare URL-mode elicitation (capabilities.elicitation.url), so a URL-mode elicitation/create cannot be relayed`,
          { server: conn.name },
        ).toJsonRpc(),
      );
      return;
    }
    const id = this.nextId++;
    const inputKey = (msg as WithInputKey)[INPUT_KEY];
    this.outgoing.set(id, inputKey === undefined ? { conn, serverRequestId: msg.id } : { conn, serverRequestId: msg.id, inputKey });
    if (this.send(encodeRequest(id, msg.method, msg.params), about)) return;
    this.outgoing.delete(id);
    // Outside a call, an answer mcpgate may give itself (the entry's roots, else none) is better than an error.
    if (about === undefined && fallback !== undefined) return void conn.respond(msg.id, fallback);
    const why = `agent "${this.agent}" has no open stream to receive ${msg.method} (an HTTP agent gets requests outside its calls on its GET stream)`;
    conn.respondError(msg.id, new GatewayError('MCPG_AGENT_UNAVAILABLE', why, { server: conn.name }).toJsonRpc());
  }

  /** The agent is initialized: what waited for it goes out now (or is refused for lack of the capability). */
  agentReady(agentCapabilities: Record<string, unknown>): void {
    const early = this.early ?? [];
    this.early = undefined;
    for (const question of early) this.relay(question, agentCapabilities);
  }

  /** The server's own key of our request `id` to the agent, when a modern server's input request it is. */
  inputKey(id: number): string | undefined {
    return this.outgoing.get(id)?.inputKey;
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
    for (const { conn, msg, fallback } of this.early ?? []) {
      if (fallback !== undefined) {
        conn.respond(msg.id, fallback);
        continue;
      }
      conn.respondError(
        msg.id,
        new GatewayError('MCPG_AGENT_UNAVAILABLE', `agent "${this.agent}" disconnected before initializing`, {
          server: conn.name,
        }).toJsonRpc(),
      );
    }
    this.early = undefined;
    for (const entry of this.outgoing.values()) {
      entry.conn.respondError(
        entry.serverRequestId,
        new GatewayError('MCPG_AGENT_UNAVAILABLE', `agent "${this.agent}" disconnected`).toJsonRpc(),
      );
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

/** Whether an agent declared URL-mode elicitation (`capabilities.elicitation.url`). */
function takesUrlMode(capabilities: Record<string, unknown>): boolean {
  const elicitation = capabilities.elicitation;
  return typeof elicitation === 'object' && elicitation !== null && typeof (elicitation as Record<string, unknown>).url === 'object';
}
