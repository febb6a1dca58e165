// The HTTP plumbing both remote transports share (transports/http/transport.ts, transports/sse/transport.ts): one keep-alive
// agent per transport over node:http / node:https (not fetch: measurably slower per call), requests
// that can all be aborted at once, bounded body reading, and the errors a remote server's failures
// become. Only the configured headers and the transport's own protocol headers are ever sent: nothing
// an agent sent reaches a server. URLs in messages lose their query and credentials (a token may be
// in them). A server's error body never reaches an agent: it may echo the request's headers (the
// operator's shared `Authorization`), so the agent's error names the status only, and the body,
// redacted and cut, goes to the operator's log.

import http, { STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { GatewayError } from '../../../errors.js';
import type { Logger } from '../../../observability/logger.js';
import type { SseParser } from '../../../wire/sse.js';
import type { UpstreamCredentials } from '../../upstream-credentials.js';

/** One request in flight: its response head, and a way to abandon it. */
export interface Exchange {
  readonly response: Promise<IncomingMessage>;
  readonly aborted: boolean;
  abort(): void;
}

export class HttpClient {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private readonly live = new Set<http.ClientRequest>();
  private destroyed = false;

  constructor(
    secure: boolean,
    private readonly configured: Readonly<Record<string, string>>,
    /** The OAuth credentials presented on every request (never an agent's). */
    private readonly credentials?: Pick<UpstreamCredentials, 'header' | 'bound' | 'nonce'>,
  ) {
    const options = { keepAlive: true, scheduling: 'lifo' as const };
    this.agent = secure ? new https.Agent(options) : new http.Agent(options);
    this.request = secure ? https.request : http.request;
  }

  /**
   * Sends one request: the configured headers, then `headers` (ours win a clash). A request that
   * fails on a reused keep-alive socket before any answer is retried once on a new one: the server
   * closed an idle connection as we picked it, and never saw the request (the race Node documents).
   */
  send(url: URL, method: 'GET' | 'POST' | 'DELETE', headers: OutgoingHttpHeaders, body?: string, timeoutMs?: number): Exchange {
    let aborted = false;
    let current: http.ClientRequest | undefined;
    const credentials = this.credentials;
    // A key-bound token signs a proof for every attempt (a proof is used once); a bearer token costs nothing more.
    const attempt = (mayRetry: boolean): Promise<IncomingMessage> => {
      const bound = credentials?.bound(method, url);
      return bound === undefined
        ? issue(mayRetry, credentials?.header())
        : bound.then(({ authorization, dpop }) => issue(mayRetry, authorization, dpop));
    };
    const issue = (mayRetry: boolean, authorization: string | undefined, dpop?: string): Promise<IncomingMessage> =>
      new Promise((resolve, reject) => {
        if (this.destroyed || aborted) return reject(new Error('aborted'));
        const req = this.request(url, {
          method,
          agent: this.agent,
          headers: {
            ...this.configured,
            ...(authorization !== undefined && { authorization }),
            ...(dpop !== undefined && { dpop }),
            ...headers,
          },
        });
        current = req;
        this.live.add(req);
        let answered = false;
        const timer =
          timeoutMs === undefined
            ? undefined
            : setTimeout(() => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
        req.once('response', (res) => {
          answered = true;
          const nonce = dpop === undefined ? undefined : res.headers['dpop-nonce'];
          if (typeof nonce === 'string' && nonce !== '') credentials?.nonce(url, nonce);
          resolve(res);
        });
        req.on('error', (err: NodeJS.ErrnoException) => {
          if (answered) return; // the response stream reports its own end
          if (mayRetry && req.reusedSocket && !aborted && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) resolve(attempt(false));
          else reject(err);
        });
        req.once('close', () => {
          clearTimeout(timer);
          this.live.delete(req);
          if (!answered) reject(new Error('aborted'));
        });
        req.end(body);
      });
    return {
      response: attempt(true),
      get aborted() {
        return aborted;
      },
      abort: () => {
        aborted = true;
        current?.destroy();
      },
    };
  }

  /** Aborts every request in flight and closes every socket. Idempotent. */
  destroy(): void {
    this.destroyed = true;
    for (const req of this.live) req.destroy();
    this.live.clear();
    this.agent.destroy();
  }
}

type ResponseBody = { kind: 'body'; text: string } | { kind: 'overflow'; length: number };

/** Reads a whole body as UTF-8, up to `limit` bytes (past it the response is dropped). Rejects if the connection breaks. */
export function readResponseBody(res: IncomingMessage, limit: number): Promise<ResponseBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    res.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        res.destroy();
        resolve({ kind: 'overflow', length });
      } else chunks.push(chunk);
    });
    res.once('end', () => resolve({ kind: 'body', text: Buffer.concat(chunks, length).toString('utf8') }));
    res.on('error', () => {});
    res.once('close', () => reject(new Error('the connection closed before the body was complete')));
  });
}

/** The start of an error body, one line, credentials blanked, for the operator's log (never throws). */
async function excerpt(res: IncomingMessage, max = 200): Promise<string> {
  try {
    const body = await readResponseBody(res, 64 * 1024);
    if (body.kind !== 'body') return '';
    const text = redacted(body.text.replace(/\s+/g, ' ').trim());
    return text.length > max ? `${text.slice(0, max)}…` : text;
  } catch {
    return '';
  }
}

/**
 * Credentials an error body may echo, blanked: an auth scheme's value (`Bearer …`, `Basic …`), and
 * the value after a name that holds a secret (`authorization`, `cookie`, `x-api-key`, `token`, …).
 */
export function redacted(text: string): string {
  return text
    .replace(/\b(Bearer|Basic|Digest|DPoP|Token)\s+[A-Za-z0-9\-._~+/=:]+/gi, '$1 [redacted]')
    .replace(
      /((?:authorization|cookie|set-cookie|api[-_]?key|[a-z-]*token|secret|password|passwd)["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic) )?[^"'\s,;&}]+/gi,
      '$1[redacted]',
    );
}

/**
 * What a server's HTTP error status becomes: the error for the call (status and its standard
 * phrase, never the body nor the server's own reason phrase), and the body, redacted and cut, in
 * the operator's log.
 */
export async function refusal(server: string, res: IncomingMessage, log: Logger): Promise<GatewayError> {
  const reason = httpStatusError(server, res);
  const body = await excerpt(res);
  if (body !== '') log.warn(`${reason.message}; its body (for the operator only): ${body}`, { server, httpStatus: res.statusCode ?? 0 });
  return reason;
}

/** Feeds an SSE body into `parser`; resolves when it ends: true if complete, false if the connection broke. */
export function pipeSse(res: IncomingMessage, parser: SseParser): Promise<boolean> {
  return new Promise((resolve) => {
    res.on('data', (chunk: Buffer) => parser.push(chunk));
    res.on('error', () => {});
    res.once('close', () => {
      parser.end();
      resolve(res.complete);
    });
  });
}

/** The media type of a response, lower-case, without parameters. */
export function mediaType(res: IncomingMessage): string {
  return (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** A URL fit for messages: origin and path only. */
export function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export function unreachable(server: string, url: URL, err: unknown): GatewayError {
  const e = err as NodeJS.ErrnoException & { errors?: NodeJS.ErrnoException[] };
  const why = e.code ?? e.errors?.[0]?.code ?? e.message;
  return new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${server}" at ${displayUrl(url)} is unreachable: ${why}`, {
    server,
    cause: err,
  });
}

/**
 * An HTTP error status from a server. Overload, outage and refused credentials mean the server cannot
 * serve (unavailable); anything else means it did not speak the protocol as expected.
 */
export function httpStatusError(server: string, res: IncomingMessage): GatewayError {
  const status = res.statusCode ?? 0;
  const unavailable = status >= 500 || status === 401 || status === 403 || status === 429;
  const phrase = STATUS_CODES[status];
  const text = `HTTP ${status}${phrase !== undefined ? ` ${phrase}` : ''}`;
  return new GatewayError(unavailable ? 'MCPG_SERVER_UNAVAILABLE' : 'MCPG_SERVER_BAD_RESPONSE', `server "${server}" answered ${text}`, {
    server,
    detail: { httpStatus: status },
  });
}

/** Waits that a transport can cut short all at once: no timer outlives the transport that set it. */
export class Pauses {
  private readonly waiting = new Map<NodeJS.Timeout, (ok: boolean) => void>();
  private ended = false;

  /** Resolves true after `ms`, or false at once if `end()` is called first. */
  wait(ms: number): Promise<boolean> {
    if (this.ended) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(timer);
        resolve(!this.ended);
      }, ms);
      this.waiting.set(timer, resolve);
    });
  }

  end(): void {
    this.ended = true;
    for (const [timer, resolve] of this.waiting) {
      clearTimeout(timer);
      resolve(false);
    }
    this.waiting.clear();
  }
}

/** A response header's single value, if non-empty. */
export function headerOf(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
