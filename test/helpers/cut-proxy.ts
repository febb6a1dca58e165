// A TCP proxy in front of the gateway that cuts connections the way a proxy with a stream timeout
// or a flaky network does: `cutAfter(marker, bytes)` lets the server's bytes through until `bytes`
// past the first `marker` on a connection, then destroys both sides (once); `cutAll()` drops every
// open connection now; `hold()` keeps new connections waiting (not connected upstream) until
// `release()`, so a test decides when a client's reconnection gets through.

import { connect, createServer, type Server, type Socket } from 'node:net';

interface Cut {
  marker: string;
  bytes: number;
  done: () => void;
}

export class CutProxy {
  private readonly server: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private cut: Cut | undefined;
  private held: Socket[] | undefined;
  private watchers: { marker: string; resolve: () => void }[] = [];
  port = 0;
  /** Connections cut by `cutAfter`. */
  cuts = 0;

  constructor(private readonly targetPort: number) {
    this.server = createServer((client) => {
      client.on('error', () => {});
      if (this.held !== undefined) {
        client.pause();
        this.held.push(client);
        return;
      }
      this.pipe(client);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** Cuts the next connection whose server bytes contain `marker`, `bytes` after it; resolves when cut. */
  cutAfter(marker: string, bytes: number): Promise<void> {
    return new Promise((resolve) => (this.cut = { marker, bytes, done: resolve }));
  }

  /** Resolves once the server's bytes on some connection contain `marker` (from now on). */
  waitFor(marker: string): Promise<void> {
    return new Promise((resolve) => this.watchers.push({ marker, resolve }));
  }

  cutAll(): void {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
  }

  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const client of held) {
      this.pipe(client);
      client.resume();
    }
  }

  async close(): Promise<void> {
    this.release();
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    const pair = { client, upstream };
    this.pairs.add(pair);
    upstream.on('error', () => client.destroy());
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    let seen = ''; // the server's bytes so far on this connection, while a cut is armed
    let sinceMarker = -1;
    let tail = '';
    upstream.on('data', (chunk: Buffer) => {
      if (this.watchers.length > 0) {
        const text = tail + chunk.toString('latin1');
        tail = text.slice(-256);
        this.watchers = this.watchers.filter((w) => (text.includes(w.marker) ? (w.resolve(), false) : true));
      }
      const cut = this.cut;
      if (cut === undefined) return void client.write(chunk);
      if (sinceMarker < 0) {
        seen = (seen + chunk.toString('latin1')).slice(-64 * 1024);
        const at = seen.indexOf(cut.marker);
        if (at < 0) return void client.write(chunk);
        // Bytes of this chunk from the marker on count towards the cut.
        const chunkStart = seen.length - chunk.length;
        const markerInChunk = Math.max(0, at - chunkStart);
        sinceMarker = 0;
        const allowed = markerInChunk + cut.bytes;
        if (chunk.length <= allowed) {
          sinceMarker = chunk.length - markerInChunk;
          return void client.write(chunk);
        }
        return this.finishCut(cut, client, chunk.subarray(0, allowed), drop);
      }
      const left = cut.bytes - sinceMarker;
      if (chunk.length <= left) {
        sinceMarker += chunk.length;
        return void client.write(chunk);
      }
      this.finishCut(cut, client, chunk.subarray(0, left), drop);
    });
  }

  private finishCut(cut: Cut, client: Socket, last: Buffer, drop: () => void): void {
    this.cut = undefined;
    this.cuts += 1;
    client.write(last, () => {
      drop();
      cut.done();
    });
  }
}
