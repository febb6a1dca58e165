// Forwarding one HTTP request to the worker that owns its agent session, and relaying
// the answer as it comes: a JSON answer, a POST's SSE stream (progress, a server's questions), the
// GET stream, DELETE. Worker-to-worker HTTP on a keep-alive agent: one hop, no broker in between,
// streams piped as they arrive (docs/architecture.md says why this and not Redis pub/sub).

// Reaching the owner is bounded (CONNECT_TIMEOUT_MS); an owner that cannot be reached is reported
// as such before anything was sent to the agent, so the caller can adopt the session. The owner
// answers `102 Processing` as soon as its process has read a forward's headers (front/http/front.ts): a
// request that fails before that line never reached a live owner's code — a kept-alive socket to a
// worker that just died (ECONNRESET, EPIPE, "socket hang up"), a listener closing under the
// connect — so it is tried once more on a fresh connection, and when that fails too the owner is
// taken for unreachable (adopt). Only a request the owner has acknowledged can have run: an owner
// that dies after that ends the agent's call with MCPG_SERVER_UNAVAILABLE and
// `outcome: "unknown"` — it may have run — the error agents already know from a dying server. So
// does an owner that took the connection but stopped answering (stopped, wedged: its kernel still
// accepts): while a forward is open its owner's heartbeat is checked every LIVENESS_CHECK_MS, and
// once it has expired the forward ends. No fixed answer timeout: a tools/call may rightly take
// minutes, and a GET stream lasts as long as the agent keeps it.
// What goes to the owner: only the MCP headers of the agent's request (never its `Authorization`,
// cookies or other headers) and who the agent is (`Identity`: the agent, whether identified, its
// token's claims), signed (signing.ts). The owner takes that identity instead of authenticating a
// token (front/http/front.ts `identify`) and checks the body against the signed digest once read. A
// relayed JSON answer keeps its `content-length`, so the agent gets it unchunked, as from the owner.

import { Agent, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import type { ForwardIdSource } from './forward-ids.js';
import type { RequestId } from '../wire/jsonrpc.js';
import { sseEvent } from '../wire/sse.js';
import {
  digest,
  encodeIdentity,
  FORWARD_DIGEST_HEADER,
  FORWARD_HEADER,
  FORWARD_ID_HEADER,
  FORWARD_IDENTITY_HEADER,
  FORWARD_SIG_HEADER,
  FORWARD_TS_HEADER,
  sign,
  type Identity,
} from './signing.js';

/** How long reaching the owner may take before it is taken for dead. */
const CONNECT_TIMEOUT_MS = 2000;
/** How often an open forward asks whether its owner's heartbeat still runs. */
const LIVENESS_CHECK_MS = 1000;

/** Headers of an answer that belong to one hop and are not relayed (RFC 9110 §7.6.1). */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'content-length']);

/**
 * The only headers of the agent's request that go on to the owner: what the MCP front reads. None
 * is a credential — the agent's Authorization, cookies and any other header stay on the worker
 * that checked them; the owner learns who the agent is from the signed identity.
 */
const RELAYED = new Set([
  'host',
  'content-type',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'mcp-method',
  'mcp-name',
]);
const relayed = (name: string): boolean => RELAYED.has(name) || name.startsWith('mcp-param-');

const agent = new Agent({ keepAlive: true, maxFreeSockets: 64 });

interface ForwardRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** http://HOST:PORT of the owner. */
  address: string;
  path: string;
  session: string;
  /** The agent, as this worker authenticated it. */
  who: Identity;
  body: string;
  id: RequestId | undefined;
  from: string;
  /** The owner's worker id (the forward is signed for it alone). */
  to: string;
  /** Where each try's single-use forward id comes from. */
  ids: ForwardIdSource;
  secret: string;
  /** Whether the owner's heartbeat still runs (true when that cannot be told, e.g. Redis down). */
  ownerAlive: () => Promise<boolean>;
}

/** 'unreachable': nothing was sent to the agent (adopt); 'relayed': the agent got the owner's answer or an error. */
export async function forward(f: ForwardRequest): Promise<'relayed' | 'unreachable'> {
  const first = await attempt(f, agent);
  if (first !== 'undelivered') return first;
  // Never acknowledged: nothing of it ran. A socket kept alive from before may have died with its
  // worker; a fresh connection tells a live owner (served) from a dead one (refused: adopt).
  const second = await attempt(f, false);
  return second === 'undelivered' ? 'unreachable' : second;
}

/**
 * One try on `via` (the keep-alive agent, or false: a fresh connection). 'undelivered': it failed
 * before the owner acknowledged it (102) or answered, and nothing was sent to the agent.
 */
function attempt(f: ForwardRequest, via: Agent | false): Promise<'relayed' | 'unreachable' | 'undelivered'> {
  return new Promise((resolve) => {
    const at = Date.now();
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(f.req.headers)) if (value !== undefined && relayed(name)) headers[name] = value;
    const identity = encodeIdentity(f.who);
    const bodyDigest = digest(f.body);
    headers[FORWARD_HEADER] = f.from;
    headers[FORWARD_TS_HEADER] = String(at);
    headers[FORWARD_IDENTITY_HEADER] = identity;
    headers[FORWARD_DIGEST_HEADER] = bodyDigest;
    const forwardId = f.ids.next();
    headers[FORWARD_ID_HEADER] = forwardId;
    headers[FORWARD_SIG_HEADER] = sign(f.secret, {
      method: f.req.method ?? '',
      path: f.path,
      session: f.session,
      from: f.from,
      to: f.to,
      id: forwardId,
      at,
      identity,
      digest: bodyDigest,
    });
    if (f.body !== '') headers['content-length'] = String(Buffer.byteLength(f.body));
    const target = new URL(f.path, f.address);
    let connected = false;
    /** The owner's process has read the request (102) or answered: it may have run. */
    let acknowledged = false;
    /** Our own liveness check ended it: the owner may hold it unread and run it when it wakes. */
    let expired = false;
    let settled = false;
    let liveness: NodeJS.Timeout | undefined;
    const done = (how: 'relayed' | 'unreachable' | 'undelivered'): void => {
      if (settled) return;
      settled = true;
      clearInterval(liveness);
      resolve(how);
    };
    const up = request(target, { method: f.req.method, headers, agent: via }, (answer) => {
      acknowledged = true;
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP.has(name)) out[name] = value;
      // A JSON answer keeps its length: the agent gets it unchunked, in one write, as from the owner
      // (the same bytes are piped; chunking it would cost an extra write and segment per call).
      const length = answer.headers['content-length'];
      if (length !== undefined && answer.headers['transfer-encoding'] === undefined) out['content-length'] = length;
      f.res.writeHead(answer.statusCode ?? 502, out);
      if (typeof f.res.flushHeaders === 'function' && out['content-type'] === 'text/event-stream') f.res.flushHeaders();
      answer.pipe(f.res);
      answer.once('aborted', () => lost(f, 'the owning worker went away mid-answer'));
      answer.once('error', () => lost(f, 'the owning worker went away mid-answer'));
      answer.once('end', () => done('relayed'));
      f.res.once('close', () => {
        // The agent hung up: stop the relay (MCP: a disconnect is not a cancel; the owner sees its POST close).
        if (!answer.complete) up.destroy();
        done('relayed');
      });
    });
    up.once('information', () => (acknowledged = true));
    const timer = setTimeout(() => {
      if (!connected) up.destroy(new Error('connect timeout'));
    }, CONNECT_TIMEOUT_MS);
    timer.unref();
    const onConnected = (): void => {
      connected = true;
      clearTimeout(timer);
      liveness = setInterval(() => {
        void f.ownerAlive().then((alive) => {
          if (alive || settled) return;
          expired = true;
          up.destroy(new Error('it stopped answering: its heartbeat expired'));
        });
      }, LIVENESS_CHECK_MS);
      liveness.unref();
    };
    up.once('socket', (socket) => {
      if (!socket.connecting) onConnected();
      else socket.once('connect', onConnected);
    });
    up.once('error', (err) => {
      clearTimeout(timer);
      if (f.res.headersSent) {
        lost(f, err.message);
        return done('relayed');
      }
      // Refused or timed out before anything was sent to the owner's process: it is not there.
      if (!connected) return done('unreachable');
      // Reset before the owner's code read it (its process was gone or going): it did not run.
      if (!acknowledged && !expired) return done('undelivered');
      lost(f, err.message);
      done('relayed');
    });
    up.end(f.body === '' ? undefined : f.body);
  });
}

/** The owner died with the request: the agent's call ends with the outcome-unknown error. */
function lost(f: ForwardRequest, why: string): void {
  const { res, id } = f;
  if (res.writableEnded || res.destroyed) return;
  const error = new GatewayError(
    'MCPG_SERVER_UNAVAILABLE',
    `the worker that owned this session stopped while handling the request (${why}); it may or may not have run`,
    { detail: { outcome: 'unknown', worker: 'lost' } },
  );
  if (id === undefined) {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
    return;
  }
  const line = JSON.stringify({ jsonrpc: '2.0', id, error: error.toJsonRpc() });
  if (!res.headersSent) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(line);
  } else if (res.getHeader('content-type') === 'text/event-stream') {
    res.end(sseEvent(line));
  } else {
    res.destroy();
  }
}
