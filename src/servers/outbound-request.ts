// An agent's request as it goes to a server: built once by the agent session, then read — never
// written — by the connection, its server session and the transport. The agent's parsed request is
// left as it came; everything a server needs of it is named here: its params in the server's own
// names, the agent's own line where it may be sent with only its id and tool name replaced, what the
// agent declared (a modern server is told what this agent can answer), and the `Mcp-Param-*`
// headers a modern HTTP server gets. The server session adds only what is its own to add: its id,
// its progress token, and the modern envelope.

export interface OutboundRequest {
  readonly method: string;
  /** The params in the server's own names (a tool's or prompt's name, a resource's URI, a task's id). */
  readonly params?: Record<string, unknown> | undefined;
  /**
   * The agent's line, when the server may get it with only the top-level `id` and `params.name`
   * replaced (`wire/request-splice.ts`): a tools/call relayed unchanged but for its name, without
   * `_meta` (a progress token or trace context is rewritten, so such a request is encoded). A 2025-era
   * server gets the splice; a modern one the encoded request with its envelope.
   */
  readonly line?: string;
  /** What the agent declared: a modern server's envelope declares sampling and elicitation only where the agent did. */
  readonly agentCapabilities?: Record<string, unknown>;
  /**
   * The least severe log level the agent asked for (a modern agent's envelope, a 2025 agent's
   * `logging/setLevel`): a modern server logs per request, only where the request's envelope asks.
   */
  readonly logLevel?: string | undefined;
  /** `Mcp-Param-*` headers (the agent's own, or mirrored from a tool's `x-mcp-header` parameters): a modern HTTP server's. */
  readonly paramHeaders?: Readonly<Record<string, string>>;
}
