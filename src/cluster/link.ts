// The contract between the HTTP front and the cluster: what the front asks of it. The
// front imports only these types; the composition root gives it a `Cluster` (cluster.ts). Without
// `--redis` the front has no link and its hot path is unchanged: a session id not held here is 404.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestId } from '../wire/jsonrpc.js';
import type { Identity as ForwardIdentity } from './signing.js';

/** What the cluster keeps about an agent session, enough for another worker to adopt it. */
export interface SessionRecord {
  agent: string;
  /** The capabilities the agent declared in `initialize`. */
  capabilities: Record<string, unknown>;
  identified: boolean;
}

/** Where a request for a session not held by this worker goes. */
export type Placement =
  /** Unknown, expired, or another agent's: answered 404 like an unknown id. */
  | { kind: 'unknown' }
  /** Served here: the session is adopted (record undefined when Redis cannot be asked). */
  | { kind: 'adopt'; record: SessionRecord | undefined }
  /** Forwarded to its owner, whose answer was relayed (or the request was refused and answered). */
  | { kind: 'answered' };

/** Who a forwarded request speaks for: the agent as the worker that authenticated it found it. */
export type { Identity as ForwardIdentity } from './signing.js';

export interface ClusterLink {
  /** True when the request carries the headers of a forward from another worker. */
  isForwarded(req: IncomingMessage): boolean;
  /**
   * A forward's headers checked (signature, time, the agent it speaks for): the agent, or why it is
   * refused. A forward carries no credential of the agent's: this is its authentication. `path` is
   * the request's URL.
   */
  acceptForward(req: IncomingMessage, path: string): ForwardIdentity | string;
  /** An accepted forward's body checked against the digest it was signed with: why not, or undefined. */
  refuseBody(req: IncomingMessage, body: string): string | undefined;
  /**
   * A request (already authenticated as `who`) for a session this worker does not hold: forward
   * it to the owner, or tell the front to adopt it, or that it is unknown. `body` is the POST body
   * ('' for GET and DELETE), `id` the JSON-RPC request id if it is a request.
   */
  place(
    req: IncomingMessage,
    res: ServerResponse,
    session: string,
    who: ForwardIdentity,
    body: string,
    id: RequestId | undefined,
  ): Promise<Placement>;
  /**
   * A request for worker `worker` (a modern retry whose waiting call is in its memory): forwarded
   * there and its answer relayed (true), or false when that worker is gone or cannot be reached
   * (nothing was sent to the agent).
   */
  forwardTo(
    worker: string,
    req: IncomingMessage,
    res: ServerResponse,
    who: ForwardIdentity,
    body: string,
    id: RequestId | undefined,
  ): Promise<boolean>;
  /** This worker now holds the session (new or adopted). */
  opened(session: string, record: SessionRecord): void;
  /** The session ended here; `forget`: ended for good (by the agent, or idle), not by this worker's shutdown. */
  ended(session: string, forget: boolean): void;
  /**
   * Agent sessions the other live workers hold, as of this worker's last heartbeat (so `--max-sessions`
   * counts across the cluster); undefined while Redis is down (the limit is then this worker's own).
   */
  sessionsElsewhere(): number | undefined;
  /** Cluster-wide part of `/status` (every worker). */
  status(): Promise<Record<string, unknown>>;
}
