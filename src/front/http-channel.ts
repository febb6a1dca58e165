// One agent's Streamable HTTP session: the AgentChannel that decides where each message the agent's
// session sends goes. A response, and what is sent while its request runs (progress, a server's
// sampling request), go on the POST that carried the request; everything else (list_changed, logs,
// requests that belong to no call) goes on the session's GET stream.
//
// A POST is answered lazily: `application/json` when the response is the only message (the hot
// path: one write, no framing), upgraded to `text/event-stream` the moment something must be sent
// before the response.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentSession, AgentChannel } from '../gateway/session.js';
import type { Logger } from '../observability/logger.js';
import type { RequestId } from '../wire/jsonrpc.js';
import { sseEvent } from '../wire/sse.js';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' };

/** The open POST of one agent request, until its response is written. */
class PendingPost {
  private streaming = false;

  constructor(readonly res: ServerResponse, private readonly acceptsSse: boolean) {}

  /** Writes the response and ends the POST. */
  finish(line: string): void {
    if (this.streaming) {
      this.res.end(sseEvent(line));
      return;
    }
    this.res.setHeader('content-type', 'application/json');
    this.res.end(line);
  }

  /** Sends a message that belongs to this request before its response; false if it cannot go here. */
  during(line: string): boolean {
    if (!this.acceptsSse || this.res.writableEnded || this.res.destroyed) return false;
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, SSE_HEADERS);
    }
    this.res.write(sseEvent(line));
    return true;
  }
}

export class HttpSession implements AgentChannel {
  /** Set right after construction by the front (the agent session needs this channel to exist). */
  session!: AgentSession;
  /** performance.now() of the last request on this session. */
  lastActive = performance.now();
  private stream: ServerResponse | undefined;
  private readonly posts = new Map<RequestId, PendingPost>();
  private dropped = 0;
  /**
   * list_changed notifications that found no GET stream open: sent (once each) when one opens, so
   * an agent whose stream dropped and came back still learns that its catalog changed.
   */
  private readonly missed = new Set<string>();

  constructor(
    readonly id: string,
    readonly agent: string,
    private readonly log: Logger,
    /** Called whenever a POST is done (shutdown waits for the last one). */
    private readonly postDone: () => void = () => {},
  ) {}

  /** Requests of this session whose POST is still open. */
  get openPosts(): number {
    return this.posts.size;
  }

  get hasStream(): boolean {
    return this.stream !== undefined;
  }

  /**
   * Registers the POST that carries request `id`; false when a request with that id is still
   * open (the caller refuses the new POST rather than answer the old one with its error).
   */
  expect(id: RequestId, res: ServerResponse, acceptsSse: boolean): boolean {
    if (this.posts.has(id)) return false;
    const post = new PendingPost(res, acceptsSse);
    this.posts.set(id, post);
    // The agent hung up before the answer: the call runs on (MCP: a disconnect is not a cancel),
    // and its answer is dropped when it comes.
    res.once('close', () => {
      if (this.posts.get(id) === post) this.posts.delete(id);
      this.postDone();
    });
    return true;
  }

  send(line: string, about?: RequestId, final?: boolean): boolean {
    if (about !== undefined) {
      const post = this.posts.get(about);
      if (final === true) {
        if (post === undefined) {
          this.log.debug('dropped a response: its POST was closed by the agent', { session: this.id, id: about });
          return false;
        }
        this.posts.delete(about);
        post.finish(line);
        return true;
      }
      if (post?.during(line) === true) return true;
    }
    if (this.stream !== undefined && !this.stream.writableEnded) {
      this.stream.write(sseEvent(line));
      return true;
    }
    // Without a GET stream the agent has said it does not want unsolicited messages; only the news
    // that a list changed is kept for when it opens one.
    if (about === undefined && line.endsWith('/list_changed"}')) this.missed.add(line);
    if (this.dropped++ % 100 === 0) this.log.debug('dropped a message: the agent has no GET stream open', { session: this.id, dropped: this.dropped });
    return false;
  }

  /** Opens the GET stream; false when one is already open (one per session). */
  openStream(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.stream !== undefined) return false;
    this.stream = res;
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    for (const line of this.missed) res.write(sseEvent(line));
    this.missed.clear();
    const done = (): void => {
      if (this.stream === res) this.stream = undefined;
    };
    req.once('close', done);
    res.once('close', done);
    return true;
  }

  /** A comment on the GET stream keeps proxies from closing it and finds dead sockets. */
  keepAlive(): void {
    if (this.stream !== undefined && !this.stream.writableEnded) this.stream.write(': keep-alive\n\n');
  }

  /** Ends the session: the agent session answers what is open (through the POSTs), then the stream ends. */
  close(): void {
    this.session.close();
    for (const post of this.posts.values()) if (!post.res.writableEnded) post.res.end();
    this.posts.clear();
    this.stream?.end();
    this.stream = undefined;
  }
}
