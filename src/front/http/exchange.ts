// Small HTTP pieces of the Streamable HTTP front: reading a body under a limit without buffering
// more than the limit, error answers that carry a JSON-RPC error object, and the one gate every
// request passes first (`admit`: Host, Origin, headers that must not be sent twice).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../errors.js';
import { encodeError } from '../../wire/jsonrpc.js';

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

type Body = { ok: true; text: string } | { ok: false; status: 413 | 400; error: GatewayError };

/**
 * Reads the body as UTF-8 text. A declared length over the limit is refused before a byte is read;
 * a chunked body is refused as soon as it passes the limit (the rest is never buffered).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve(tooLarge(Number(declared), limit));
  return new Promise((resolve) => {
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        return resolve(tooLarge(size, limit, true));
      }
      if (first === undefined) first = chunk;
      else (chunks ??= [first]).push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (size > limit) return;
      // One chunk is the common case: no concat copy.
      const buf = chunks !== undefined ? Buffer.concat(chunks, size) : first;
      resolve({ ok: true, text: buf === undefined ? '' : buf.toString('utf8') });
    });
    req.once('error', (err) =>
      resolve({
        ok: false,
        status: 400,
        error: new GatewayError('MCPG_INVALID_REQUEST', `could not read the request body: ${err.message}`),
      }),
    );
  });
}

function tooLarge(size: number, limit: number, partial = false): Body {
  const what = partial ? `more than ${limit} bytes` : `${size} bytes`;
  return {
    ok: false,
    status: 413,
    error: new GatewayError('MCPG_MESSAGE_TOO_LARGE', `request body of ${what} exceeds the limit of ${limit} bytes (--max-body)`),
  };
}

/** Answers with an HTTP status and a JSON-RPC error body (what SDK clients read and show). */
export function sendError(
  res: ServerResponse,
  status: number,
  error: GatewayError,
  headers: Record<string, string> = {},
  id: string | number | null = null,
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(encodeError(id, error.toJsonRpc()));
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/**
 * The one gate in front of every route (MCP, ops, and whatever is added later): a header sent
 * twice (400), a `Host` that is not this machine's or an allowed name (403, DNS rebinding), an
 * `Origin` not allowed (403). False after answering.
 */
export function admit(
  req: IncomingMessage,
  res: ServerResponse,
  allowedHosts: ReadonlySet<string>,
  loopbackOnly: boolean,
  allowedOrigins: ReadonlySet<string>,
): boolean {
  const repeated = repeatedHeader(req.rawHeaders);
  if (repeated !== undefined) {
    sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', `the ${repeated} header was sent more than once; send it once`), {
      connection: 'close',
    });
    return false;
  }
  const host = req.headers.host;
  if (!hostAllowed(host, allowedHosts, loopbackOnly)) {
    sendError(
      res,
      403,
      new GatewayError(
        'MCPG_HOST_FORBIDDEN',
        `host ${JSON.stringify(host)} is not allowed (this gateway answers to ${loopbackOnly ? 'localhost, 127.0.0.1 and [::1]' : 'IP addresses and localhost'}; allow a name with --allow-host)`,
      ),
    );
    return false;
  }
  if (!originAllowed(req.headers.origin, allowedOrigins)) {
    sendError(
      res,
      403,
      new GatewayError('MCPG_ORIGIN_FORBIDDEN', `origin ${req.headers.origin ?? ''} is not allowed (allow it with --allow-origin)`),
    );
    return false;
  }
  return true;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The spec's DNS-rebinding guard: a request from a browser page (it carries `Origin`) is served
 * only when the page is on this machine (any loopback origin) or on the allowed list. Requests
 * without `Origin` (CLI agents, SDK programs) pass.
 */
function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (origin === undefined || allowed.has('*')) return true;
  if (allowed.has(origin)) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/**
 * DNS-rebinding guard on the `Host` header: a page on a name the attacker controls, re-pointed at
 * this machine, reaches us with that name in `Host` (and, for a same-origin GET, no `Origin` at all).
 * Served: no `Host` (HTTP/1.0; no browser sends that), a name on the allowed list (`--allow-host`:
 * a bare name allows any port, `name:port` only that port, `*` turns the check off), and the
 * loopback names (`localhost`, `127.x.x.x`, `[::1]`, any port). Bound to a non-loopback address,
 * any IP literal is served too: a rebinding page always uses a DNS name, never an address.
 */
function hostAllowed(host: string | undefined, allowed: ReadonlySet<string>, loopbackOnly: boolean): boolean {
  if (host === undefined || allowed.has('*')) return true;
  const lower = host.toLowerCase();
  if (allowed.has(lower)) return true;
  const name = hostName(lower);
  if (name === undefined) return false;
  if (allowed.has(name) || name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) return true;
  return !loopbackOnly && (/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) || name.startsWith('['));
}

/** The name part of a `Host` value (`[v6]` keeps its brackets), or undefined when it is malformed. */
function hostName(host: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/.exec(host);
  return match?.[1];
}

/** Request headers that must not be sent twice; node:http would keep one or join them silently. */
const SINGLE_HEADERS: ReadonlySet<string> = new Set(['host', 'authorization', 'x-mcpgate-agent', 'mcp-session-id', 'origin']);

/**
 * The first header of SINGLE_HEADERS the request carries more than once, lower-cased, if any. One
 * pass over `rawHeaders` (names at even indexes) with a length filter before any lower-casing: it
 * runs on every request, the hot path included.
 */
function repeatedHeader(rawHeaders: readonly string[]): string | undefined {
  let seen: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i]!;
    const n = raw.length;
    if (n !== 4 && n !== 6 && n !== 13 && n !== 14 && n !== 15) continue;
    const name = raw.toLowerCase();
    if (!SINGLE_HEADERS.has(name)) continue;
    if (seen?.includes(name) === true) return name;
    (seen ??= []).push(name);
  }
  return undefined;
}

/** True when the Accept header admits `type` (or everything). A missing header admits everything. */
export function accepts(accept: string | undefined, type: string): boolean {
  return accept === undefined || accept.includes(type) || accept.includes('*/*');
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
