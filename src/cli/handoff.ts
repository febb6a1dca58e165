// The shared port of `serve --workers N`, owned by the primary. node:cluster's own sharing hands
// each connection to the next worker, blind to what it carries; an agent's session then lives on
// one worker while its requests arrive on several connections, and most of them needed a forward.
// Here the primary accepts each connection paused, reads its first request's head (bounded: at
// most MAX_HEAD_BYTES, within HEAD_TIMEOUT_MS), and hands the socket with the bytes read so far to
// the worker whose slot the `Mcp-Session-Id` names (front/http/session-ids.ts), or, naming none
// (initialize, the stateless era, ops routes), to the next worker in turn. The worker feeds it to
// its HTTP server as if it had accepted it (front/http/listeners.ts `accept`): Host and Origin
// checks, auth and every limit stay the worker's. Later requests on a kept-alive connection that
// name another worker's session are forwarded by the worker as before.

// The primary parses nothing else and never answers a request except when it cannot hand one on:
// a head over the bound (431), too slow (408), no worker ready (503); then the connection is
// closed. Each pending connection has one timer and one bounded buffer, both gone when it is handed
// or closed; at most MAX_PENDING wait at once (more are closed at once), so slow or hostile clients
// cost bounded memory and never hold up the others. There is no TLS here: `serve` speaks plain
// HTTP (TLS terminates in front of it, where the balancer is).

import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { slotOfSessionId } from '../front/http/session-ids.js';
import type { Logger } from '../observability/logger.js';

/** A first request's head (request line and headers) may be this long; as the workers' HTTP parser allows. */
const MAX_HEAD_BYTES = 16 * 1024;
/** A client must send its first request's head within this (the workers allow 15 s for any head). */
const HEAD_TIMEOUT_MS = 10_000;
/** Connections whose head is still being read, at most; more are closed at once. */
const MAX_PENDING = 1024;

/** What a worker reads from its environment: its slot, and the shared port the primary owns. */
export const WORKER_SLOT_ENV = 'MCPGATE_WORKER_SLOT';
export const SHARED_PORT_ENV = 'MCPGATE_SHARED_PORT';

/** A worker's slot and the shared port, from the environment the primary forked it with. */
export function handedSettings(env: NodeJS.ProcessEnv): { slot: number; port: number } | undefined {
  const slot = Number(env[WORKER_SLOT_ENV]);
  const port = Number(env[SHARED_PORT_ENV]);
  if (
    !Number.isInteger(slot) ||
    slot < 0 ||
    !Number.isInteger(port) ||
    port <= 0 ||
    port > 65_535 ||
    env[WORKER_SLOT_ENV] === '' ||
    env[SHARED_PORT_ENV] === ''
  )
    return undefined;
  return { slot, port };
}

const END_OF_HEAD = Buffer.from('\r\n\r\n');

/** One worker a connection can be handed to. */
export interface HandoffTarget {
  /**
   * Sends `socket` with the `head` bytes already read from it. The primary keeps its own copy of the
   * socket until the worker says it has it (then closes it: the connection lives on in the worker);
   * `failed` is called, at most once, if it was not delivered — the copy is intact and goes elsewhere.
   */
  send(head: Buffer, socket: Socket, failed: () => void): void;
  /** Connections sent to it and not yet acknowledged (a stopped or busy worker's grow). */
  pending(): number;
}

interface HandoffOptions {
  /** The worker in `slot` if it is ready for connections. */
  worker: (slot: number) => HandoffTarget | undefined;
  /** Every worker ready for connections, in slot order. */
  ready: () => HandoffTarget[];
  log: Logger;
}

/** The session a request head names, if exactly one `Mcp-Session-Id` line is there. */
function sessionOfHead(head: string): string | undefined {
  let found: string | undefined;
  for (const line of head.split('\r\n').slice(1)) {
    if (line.length < 15 || line.slice(0, 15).toLowerCase() !== 'mcp-session-id:') continue;
    if (found !== undefined) return undefined; // two: the worker refuses it, wherever it lands
    found = line.slice(15).trim();
  }
  return found;
}

export class Handoff {
  private readonly server: Server;
  private readonly pending = new Set<Socket>();
  private next = 0;
  /** Connections handed to the worker a session named, and to the next in turn (the primary's /metrics). */
  readonly handed = { owner: 0, next: 0 };

  constructor(private readonly o: HandoffOptions) {
    this.server = createServer({ pauseOnConnect: true }, (socket) => this.accepted(socket));
    this.server.on('error', (err) => o.log.error('the shared port failed', { error: err.message }));
  }

  /** Binds the shared port; resolves with its address. */
  listen(host: string, port: number): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`));
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** Stops accepting; connections still being read are closed (handed ones are the workers' to drain). */
  close(): void {
    this.server.close();
    for (const socket of this.pending) socket.destroy();
    this.pending.clear();
  }

  private accepted(socket: Socket): void {
    // An error on a connection (reset, EPIPE) is that connection's end, never the primary's.
    socket.on('error', () => socket.destroy());
    if (this.pending.size >= MAX_PENDING) return void socket.destroy();
    this.pending.add(socket);
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (): void => {
      this.pending.delete(socket);
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onClose);
    };
    const refuse = (status: string): void => {
      finish();
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      socket.destroySoon();
    };
    const timer = setTimeout(() => refuse('408 Request Timeout'), HEAD_TIMEOUT_MS);
    timer.unref();
    const onData = (chunk: Buffer): void => {
      // The head's end may straddle two chunks: search from just before the new one.
      const from = Math.max(0, length - 3);
      chunks.push(chunk);
      length += chunk.length;
      const all = chunks.length === 1 ? chunk : Buffer.concat(chunks, length);
      const end = all.indexOf(END_OF_HEAD, from);
      if (end === -1 || end + 4 > MAX_HEAD_BYTES) {
        if (length >= MAX_HEAD_BYTES) refuse('431 Request Header Fields Too Large');
        else if (chunks.length > 1) chunks.splice(0, chunks.length, all);
        return;
      }
      finish();
      // Nothing more may be read here: the bytes after this chunk stay in the kernel and go with the
      // socket. (A paused stream keeps reading into its buffer; stopping the handle is what holds.)
      socket.pause();
      const rest = socket.readableLength > 0 ? (socket.read() as Buffer | null) : null;
      stopReading(socket);
      this.handOn(socket, rest === null ? all : Buffer.concat([all, rest]), sessionOfHead(all.toString('latin1', 0, end)));
    };
    const onEnd = (): void => {
      finish();
      socket.destroy();
    };
    const onClose = (): void => finish();
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onClose);
    socket.resume();
  }

  private handOn(socket: Socket, head: Buffer, session: string | undefined): void {
    const slot = session === undefined ? undefined : slotOfSessionId(session);
    const owner = slot === undefined ? undefined : this.o.worker(slot);
    if (owner !== undefined) {
      this.handed.owner++;
      return owner.send(head, socket, () => this.redeliver(socket, head, new Set([owner])));
    }
    this.handed.next++;
    this.redeliver(socket, head, new Set());
  }

  /**
   * Hands a connection to the next ready worker in turn, among those with the fewest connections
   * not yet acknowledged (a stopped worker is passed over while others answer), except those tried;
   * none left: 503 and closed.
   */
  redeliver(socket: Socket, head: Buffer, tried: Set<HandoffTarget>): void {
    if (socket.destroyed) return;
    const ready = this.o.ready().filter((t) => !tried.has(t));
    if (ready.length === 0) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n');
      socket.destroySoon();
      return;
    }
    const least = Math.min(...ready.map((t) => t.pending()));
    const candidates = ready.filter((t) => t.pending() === least);
    const target = candidates[this.next++ % candidates.length]!;
    tried.add(target);
    target.send(head, socket, () => this.redeliver(socket, head, tried));
  }
}

/**
 * Stops the socket reading for good in this process (net.Socket has no public way: `pause` only
 * stops the flow). Stopping the handle is not enough: the stream asks for more on the next tick
 * (it is below its high-water mark) and its `_read` would start the handle again, taking bytes
 * that belong to the worker the socket is handed to. So `_read` becomes a no-op first.
 */
function stopReading(socket: Socket): void {
  (socket as unknown as { _read: () => void })._read = () => undefined;
  const handle = (socket as unknown as { _handle?: { readStop?: () => number } })._handle;
  handle?.readStop?.();
}
