// The types of a server session (server-session.ts) that others share: the connection (a call's sink,
// the server's info, the session's options), sent-requests.ts, overdue.ts and input-rounds.ts (a request
// sent and not yet answered, with its input round).

import type { GatewayError } from '../errors.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../wire/jsonrpc.js';
import type { UpstreamCredentials } from './upstream-credentials.js';
import type { StopTimings, TransportFactory } from './transports/transport.js';
import type { SessionEra } from './modern-protocol.js';

export type SessionState = 'connecting' | 'ready' | 'failed' | 'closed';

/** Where the answer to one request goes. Exactly one of reply/fail is called, once. */
export interface CallSink {
  /** The server answered; `line` is the raw text, so the caller can relay it without re-encoding. */
  reply(msg: JsonRpcResponse, line: string): void;
  /** The call ended without an answer (timeout, server gone, shutdown). */
  fail(err: GatewayError): void;
  /** A progress notification for this call (its token was rewritten to the call's id). */
  progress?(params: Record<string, unknown>): void;
  /**
   * The server ended this call's answer stream to be polled (SEP-1699): it is resumed after
   * `retryMs`, or sooner by `resume()` (when the agent, told the same, comes back sooner).
   */
  paused?(retryMs: number, resume: () => void): void;
}

export interface SessionOptions {
  startupTimeoutMs: number;
  stopTimings?: StopTimings;
  /** Request ids shared by every session of one connection, so an id is never reused after a reconnect. */
  ids?: { next: number };
  /** How to reach the server; default: spawn a stdio child (remote servers pass theirs). */
  transport?: TransportFactory;
  /** Names of mcpgate's own secret variables, never inherited by a stdio server. */
  secretEnv?: () => ReadonlySet<string>;
  /** The era an `"era": "auto"` server was found to speak, shared by a connection's sessions (probe once). */
  era?: { known?: SessionEra };
  /** A Streamable HTTP server's OAuth credentials (kept by the connection across sessions). */
  credentials?: UpstreamCredentials;
  /** What mcpgate declares to the server (initialize, the modern envelope); default `CLIENT_CAPABILITIES`. */
  clientCapabilities?: Readonly<Record<string, unknown>>;
}

/** One round of a modern server's input requests for one call: the agent's answers as they come. */
export interface InputRound {
  answers: Record<string, unknown>;
  keys: Map<string, string>;
  requestState: string | undefined;
}

/** One request a server session sent and has not had answered (sent-requests.ts keeps them). */
export interface SentRequest {
  sink: CallSink;
  /** An agent's call (its outcome feeds the circuit breaker), not one of the gateway's own requests. */
  forwarded: boolean;
  method: string;
  timeoutMs: number;
  /** performance.now() by which the server must answer (pushed back by progress, never past `ceiling`). */
  deadline: number;
  /** performance.now() past which the call ends however much progress it reports. */
  ceiling: number;
  /** performance.now() of the call's last progress notification, if any. */
  progressAt?: number;
  /** A modern server's forwarded call: the request as sent, to retry it with the agent's input. */
  request?: JsonRpcRequest;
  /** The `Mcp-Param-*` headers it went with (sent again with each round). */
  paramHeaders?: Readonly<Record<string, string>> | undefined;
  /**
   * The id the call's latest round went to the server under, where it is not the call's own: each
   * retry after input is a new request with a new id. The call keeps its own id everywhere else (the
   * table of sent requests, progress token, cancellation, the agent's routing).
   */
  wireId?: number;
  /** Input-required rounds so far, and the one waiting for the agent's answers. */
  rounds?: number;
  input?: InputRound;
}

export interface ServerInfo {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string };
  instructions: string | undefined;
}
