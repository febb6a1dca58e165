// The sockets of the HTTP front: the `--http` listener and, under `--workers N`, this worker's own
// (`listenPrivate`) or, when the primary owns the shared port, the connections it hands over
// (`listenHanded`, `accept`), with the timeouts that cut off a client too slow to send its request,
// and their closing at shutdown (stop accepting, then end every connection).
// The handler they call is `HttpFront.handle`, which the in-process tests drive without a socket.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../../observability/logger.js';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

// A client that sends its headers or body too slowly is cut off (never a hang); GET streams are
// not affected (their request is complete once its headers are in).
const TIMEOUTS = { keepAliveTimeout: 65_000, headersTimeout: 15_000, requestTimeout: 60_000 };

export class HttpListeners {
  private readonly server: Server;
  /** `--workers N`: this worker's own port beside the shared one, where other workers forward to. */
  private privateServer: Server | undefined;
  /** Connections handed over by the primary (they came to the shared port); see `accept`. */
  private readonly handed = new WeakSet<Socket>();
  private accepting = true;

  /** `onRequest` answers each request of the shared port. */
  constructor(
    onRequest: RequestListener,
    private readonly log: Logger,
  ) {
    this.server = createServer(TIMEOUTS, onRequest);
    this.server.on('clientError', (err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      this.log.debug('malformed HTTP request', { error: err.message });
    });
  }

  /** Binds the shared port; resolves with its address. */
  async listen(host: string, port: number): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`));
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    return this.server.address() as AddressInfo;
  }

  /**
   * Under a primary that owns the shared port: binds only this worker's own port (`host`, a free
   * port, not shared), where other workers forward to; the shared port's connections come through
   * `accept`. Both are served by the one server, so its timeouts and connection tracking hold for
   * handed connections too. Resolves with the port.
   */
  async listenHanded(host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`cannot listen on ${host}:0 (this worker's forwarding port): ${err.message}`));
      this.server.once('error', onError);
      this.server.listen({ port: 0, host, exclusive: true }, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    return (this.server.address() as AddressInfo).port;
  }

  /**
   * A connection of the shared port, handed over by the primary with `head`, the bytes it already
   * read from it (the first request's head, maybe more): served as if accepted here. After
   * `stopAccepting` it is closed.
   */
  accept(socket: Socket, head: Buffer): void {
    if (!this.accepting) return void socket.destroy();
    this.handed.add(socket);
    this.server.emit('connection', socket);
    // Fed before any byte the socket reads itself: those arrive on a later turn of the event loop.
    if (head.length > 0) socket.unshift(head);
  }

  /** Whether a request came over a connection of the shared port that the primary handed over. */
  isHanded(req: IncomingMessage): boolean {
    return this.handed.has(req.socket);
  }

  /**
   * A second listener of this worker alone (`--workers N`: under node:cluster the shared port cannot
   * say which worker a connection reaches, so other workers forward to this one); `onRequest`
   * answers its requests. The port is not shared (`exclusive`). Resolves with the port.
   */
  async listenPrivate(host: string, onRequest: RequestListener): Promise<number> {
    const server = createServer(TIMEOUTS, onRequest);
    server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new Error(`cannot listen on ${host}:0 (this worker's forwarding port): ${err.message}`)));
      server.listen({ port: 0, host, exclusive: true }, () => resolve());
    });
    this.privateServer = server;
    return (server.address() as AddressInfo).port;
  }

  /** Stops accepting and closes idle connections; resolves once every connection is gone. */
  stopAccepting(): Promise<void> {
    this.accepting = false;
    const servers = this.privateServer === undefined ? [this.server] : [this.server, this.privateServer];
    const closed = Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    this.server.closeIdleConnections();
    this.privateServer?.closeIdleConnections();
    return closed.then(() => undefined);
  }

  /** Ends every connection still open (after the drain). */
  closeAllConnections(): void {
    this.server.closeAllConnections();
    this.privateServer?.closeAllConnections();
  }
}
