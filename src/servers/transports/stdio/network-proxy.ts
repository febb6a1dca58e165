// mcpgate's side of a sandbox's network allow-list: an HTTP proxy on a unix socket (in a folder only
// mcpgate's user can enter) that the sandbox reaches through its bridge (transports/stdio/proxy-bridge-main.ts).
// It opens a connection only to a host and port the entry's `network` lists: `CONNECT host:port`
// becomes a tunnel, an absolute-form request (`GET http://host:port/…`) is sent on as that one
// request with `Connection: close`, so a later request on the same connection cannot reach another
// host. Anything else, and every host not listed, is answered 403 and remembered for the operator
// (the denial is the likeliest reason a sandboxed server fails). Hosts are matched as written in the
// request; names are resolved here, outside the sandbox.

import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SandboxHost } from '../../../config/types.js';

/** The longest request head the proxy reads before it decides. */
const MAX_HEAD = 16 * 1024;
/** Denials remembered for the operator's hint. */
const MAX_DENIALS = 8;
/** Connections (each side counted) one sandbox may hold open through the proxy at once. */
const MAX_SOCKETS = 512;

/** Whether `host:port` is on `allowed`. */
function allowListed(allowed: readonly SandboxHost[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return allowed.some((rule) => {
    if (rule.port !== undefined && rule.port !== port) return false;
    if (rule.host.startsWith('*.')) return name.endsWith(rule.host.slice(1)) && name.length > rule.host.length - 1;
    return rule.host === name;
  });
}

export class SandboxProxy {
  readonly socket: string;
  private readonly dir: string;
  private readonly server: Server;
  private readonly open = new Set<Socket>();
  /** The last hosts refused, `host:port`, newest last. */
  readonly denials: string[] = [];
  private closed = false;

  private constructor(
    private readonly allowed: readonly SandboxHost[],
    private readonly onDenied: (target: string) => void,
  ) {
    this.dir = mkdtempSync(path.join(tmpdir(), 'mcpgate-net-'));
    this.socket = path.join(this.dir, 'proxy.sock');
    this.server = createServer((client) => this.serve(client));
  }

  /**
   * A proxy about to listen on its socket. The sandbox is given the socket's folder, not the socket,
   * so it may start before the socket exists: its server connects only once it runs.
   */
  static open(allowed: readonly SandboxHost[], onDenied: (target: string) => void = () => {}): SandboxProxy {
    const proxy = new SandboxProxy(allowed, onDenied);
    proxy.server.on('error', () => proxy.close());
    proxy.server.listen(proxy.socket);
    return proxy;
  }

  /** The folder holding the socket (what the sandbox binds). */
  get folder(): string {
    return this.dir;
  }

  /** Stops listening, ends every connection and removes the socket's folder. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.server.close();
    for (const socket of this.open) socket.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private track(socket: Socket): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  private serve(client: Socket): void {
    if (this.open.size >= MAX_SOCKETS) {
      client.on('error', () => client.destroy());
      return this.refuse(client, 503, 'too many connections through the sandbox proxy');
    }
    this.track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_HEAD) this.refuse(client, 431, 'request head too large');
        return;
      }
      client.off('data', onData);
      client.pause();
      this.route(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4));
    };
    client.on('data', onData);
  }

  private route(client: Socket, head: string, rest: Buffer): void {
    const [requestLine = '', ...headers] = head.split('\r\n');
    const [method = '', target = '', version = 'HTTP/1.1'] = requestLine.split(' ');
    let host: string;
    let port: number;
    let forward: string | undefined;
    if (method === 'CONNECT') {
      const at = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
      if (at === null) return this.refuse(client, 400, 'CONNECT needs host:port');
      host = at[1]!;
      port = Number(at[2]);
    } else {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return this.refuse(client, 400, 'a proxy request names an absolute http:// URL');
      }
      if (url.protocol !== 'http:') return this.refuse(client, 400, 'only http:// URLs are proxied; use CONNECT for https');
      host = url.hostname;
      port = url.port === '' ? 80 : Number(url.port);
      const kept = headers.filter((line) => !/^(connection|proxy-connection|keep-alive|proxy-authorization)\s*:/i.test(line));
      forward = [`${method} ${url.pathname}${url.search} ${version}`, ...kept, 'Connection: close', '', ''].join('\r\n');
    }
    const name = host.replace(/^\[(.*)\]$/, '$1');
    if (!allowListed(this.allowed, name, port)) {
      const denied = `${host}:${port}`;
      this.denials.push(denied);
      if (this.denials.length > MAX_DENIALS) this.denials.shift();
      this.onDenied(denied);
      return this.refuse(client, 403, `${denied} is not on this server's sandbox network allow-list`);
    }
    const upstream = connect({ host: name, port });
    this.track(upstream);
    upstream.once('connect', () => {
      if (forward === undefined) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      else upstream.write(forward);
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.once('error', () => {
      if (client.writable && upstream.bytesRead === 0) this.refuse(client, 502, `cannot connect to ${host}:${port}`);
      else client.destroy();
    });
    client.once('close', () => upstream.destroy());
  }

  private refuse(client: Socket, status: number, why: string): void {
    const reason =
      status === 403
        ? 'Forbidden'
        : status === 502
          ? 'Bad Gateway'
          : status === 503
            ? 'Service Unavailable'
            : status === 431
              ? 'Request Header Fields Too Large'
              : 'Bad Request';
    const body = `mcpgate sandbox: ${why}\n`;
    client.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}
