// Modern (2026-07-28) requests on the Streamable HTTP front: the same `/mcp` path, POST only, no
// session. The era is decided per request from the body (`wire/era.ts`); the standard headers must
// agree with the body (400, -32020 otherwise). The POST's response is the request's own stream:
// `application/json` when the answer is the only message, `text/event-stream` as soon as something
// must go before it (progress, logs, listen notifications). Closing it is cancellation.
// `ModernPost` is that stream, bounded by `--max-agent-buffer` like a session's. Shutdown ends listen
// streams at once (gracefully) and lets calls drain like a session's POSTs. The checks before it are
// the front's (front.ts `HttpFront.modern`; see src/front/README.md).

import type { ServerResponse } from 'node:http';
import type { ModernSink } from '../../gateway/modern/modern-requests.js';
import { sseEvent } from '../../wire/sse.js';
import { HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION } from '../../wire/era.js';
import { rpcCodeOf } from '../../errors.js';
import { forModernAgent } from '../../wire/modern-answers.js';
import { TOO_MANY_REQUESTS, rateLimitedHeaders, type RateLimitedInfo } from './rate-limited.js';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' };

/** The response stream of one modern request. */
export class ModernPost implements ModernSink {
  private streaming = false;
  /** Set once the answer is written (the request is over; a later close is no cancellation). */
  done = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly acceptsSse: boolean,
    /** Bytes the agent has not read past which the stream is dropped (--max-agent-buffer). */
    private readonly maxBuffer: number,
  ) {}

  during(line: string): boolean {
    const res = this.res;
    if (this.done || !this.acceptsSse || res.writableEnded || res.destroyed) return false;
    if (res.writableLength > this.maxBuffer) {
      // The agent is not reading its own stream: drop it (that cancels the request), never buffer without bound.
      res.destroy();
      return false;
    }
    if (!this.streaming) {
      this.streaming = true;
      res.writeHead(200, SSE_HEADERS);
    }
    res.write(sseEvent(line));
    return true;
  }

  final(answer: string): void {
    if (this.done) return;
    const line = forModernAgent(answer);
    this.done = true;
    const res = this.res;
    if (res.writableEnded || res.destroyed) return;
    if (this.streaming) {
      res.end(sseEvent(line));
      return;
    }
    const { status, headers } = statusOf(line);
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(line);
  }
}

/** Errors the spec gives an HTTP status of its own (SEP-2575, SEP-2243): 400 for these, 404 for method not found. */
const BAD_REQUEST_CODES: ReadonlySet<unknown> = new Set([
  HEADER_MISMATCH,
  MISSING_REQUIRED_CLIENT_CAPABILITY,
  UNSUPPORTED_PROTOCOL_VERSION,
]);
/** Error answers are small; a longer line is a result, never parsed here. */
const MAX_ERROR_LINE = 64 * 1024;

/**
 * The HTTP status of a modern request's only answer: 200, unless it is an error the spec gives
 * another (rate limited: 429 with Retry-After, http/rate-limited.ts).
 */
function statusOf(line: string): { status: number; headers?: Record<string, string> } {
  if (line.length > MAX_ERROR_LINE || !line.includes('"error"')) return OK;
  let error: { code?: unknown; data?: unknown } | undefined;
  try {
    error = (JSON.parse(line) as { error?: { code?: unknown; data?: unknown } }).error;
  } catch {
    return OK;
  }
  const code = error?.code;
  if (code === -32601) return { status: 404 };
  if (code === rpcCodeOf('MCPG_RATE_LIMITED')) {
    const data = error?.data as Partial<RateLimitedInfo> | undefined;
    return {
      status: TOO_MANY_REQUESTS,
      headers: rateLimitedHeaders({ ...data, retryAfterMs: typeof data?.retryAfterMs === 'number' ? data.retryAfterMs : 1000 }),
    };
  }
  return BAD_REQUEST_CODES.has(code) ? { status: 400 } : OK;
}

const OK = Object.freeze({ status: 200 });

/** Answers a modern request that is refused before it is served, with the spec's code and status. */
export function refuse(
  res: ServerResponse,
  status: number,
  id: string | number | null,
  code: number,
  message: string,
  data?: unknown,
): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined && { data }) } }));
}
