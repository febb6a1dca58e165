// Tracing on (--otlp-endpoint): the open span of each of one agent session's requests, by the
// agent's id, bounded (past MAX_TRACED_REQUESTS open at once a request goes untraced); the session
// opens one per request and ends it with the final answer, and gives each call to a server a child
// span whose `traceparent` goes in the `_meta` the server gets. With tracing off the session has none.

import type { RequestSpan, ServerCallSpan, TraceOutcome, Tracing } from '../../observability/tracing.js';
import type { JsonRpcRequest, JsonRpcResponse, RequestId } from '../../wire/jsonrpc.js';
import type { OutboundRequest } from '../../servers/outbound-request.js';

/** Agent requests traced at once per session; requests past it (a flood of waiting ones) get no span. */
const MAX_TRACED_REQUESTS = 4096;

export class RequestSpans extends Map<RequestId, RequestSpan> {
  constructor(
    private readonly tracing: Tracing,
    /** The session's id, its agent and front: attributes of every span. */
    private readonly session: string,
    private readonly agent: string,
    private readonly transport: string,
  ) {
    super();
  }

  /** Opens the span of one agent request (tracing on); it ends when the agent is answered. */
  open(msg: JsonRpcRequest): void {
    if (this.has(msg.id) || this.size >= MAX_TRACED_REQUESTS) return;
    const params = msg.params;
    const name = typeof params?.name === 'string' ? params.name : undefined;
    const attributes: Record<string, string | number> = {
      'mcp.session.id': this.session,
      'mcpgate.agent': this.agent,
      'mcpgate.transport': this.transport,
      'jsonrpc.request.id': String(msg.id),
    };
    let target: string | undefined;
    if (name !== undefined && msg.method === 'tools/call') attributes['gen_ai.tool.name'] = target = name;
    else if (name !== undefined && msg.method === 'prompts/get') attributes['gen_ai.prompt.name'] = target = name;
    else if (msg.method === 'resources/read' && typeof params?.uri === 'string') attributes['mcp.resource.uri'] = params.uri;
    this.set(msg.id, this.tracing.request(msg.method, params?._meta, target, attributes));
  }

  /** The agent's request `id` was answered (or given up): its span ends. */
  end(id: RequestId, outcome: TraceOutcome, code?: string | number, server?: string): void {
    const span = this.get(id);
    if (span === undefined) return;
    this.delete(id);
    if (server !== undefined) span.set('mcpgate.server', server);
    span.end(outcome, code);
  }

  /**
   * Tracing on: a child span for this call to the server, and its \`traceparent\` in the \`_meta\` of
   * the request the server gets (the agent's own trace context there is replaced, its other keys kept).
   */
  serverCall(
    entry: { readonly conn: { readonly name: string }; trace: ServerCallSpan | undefined },
    agentId: RequestId,
    outbound: OutboundRequest,
  ): OutboundRequest {
    const span = this.get(agentId);
    if (span === undefined) return outbound;
    const params = outbound.params ?? {};
    const own = params._meta;
    const meta: Record<string, unknown> =
      typeof own === 'object' && own !== null && !Array.isArray(own) ? { ...(own as Record<string, unknown>) } : {};
    const tool =
      (outbound.method === 'tools/call' || outbound.method === 'prompts/get') && typeof params.name === 'string' ? params.name : undefined;
    span.set('mcpgate.server', entry.conn.name);
    entry.trace = span.serverCall(entry.conn.name, outbound.method, tool, meta);
    // New `_meta`: the agent's line no longer says what the server gets.
    return { ...outbound, params: { ...params, _meta: meta }, line: undefined };
  }

  /** The session ends: every open span fails with `code`. */
  endAll(code: string): void {
    for (const span of this.values()) span.end('failed', code);
    this.clear();
  }
}

/** A server's answer that is a failure: its JSON-RPC error code, or \`tool_error\` for a tool result with isError. */
export function failureOf(res: JsonRpcResponse): string | number | undefined {
  if ('error' in res) return res.error.code;
  return (res.result as { isError?: unknown } | undefined)?.isError === true ? 'tool_error' : undefined;
}
