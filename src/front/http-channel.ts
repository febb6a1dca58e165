// One agent's Streamable HTTP session: the AgentChannel that decides where each message the agent's
// session sends goes. A response, and what is sent while its request runs (progress, a server's
// sampling request), go on the POST that carried the request; everything else (list_changed, logs,
// requests that belong to no call) goes on the session's GET stream.
//
// A POST is answered lazily: `application/json` when the response is the only message (the hot
// path: one write, no framing), upgraded to `text/event-stream` the moment something must be sent
// before the response.
//
// Bounded (hardening §4, audit #5): what is written for an agent but not yet taken by it is counted
// from the responses' `writableLength` (node's buffer plus the socket's), read once per write, no
// copies. A GET stream holding more than the bound is dropped (the agent may open another; list_changed
// it missed is kept for it). Answers held for an agent that has stopped reading (ended POSTs still
// flushing, plus the open POST about to be written) past the bound end the session: its sockets are
// destroyed, which frees what they held, and the agent's next request gets 404.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentSession, AgentChannel } from '../gateway/session.js';
import type { Logger } from '../observability/logger.js';
import type { RequestId } from '../wire/jsonrpc.js';
import { sseEvent } from '../wire/sse.js';

/** Default bound on what is written for one session's agent and not yet read (`--max-agent-buffer`). */
export const DEFAULT_MAX_AGENT_BUFFER = 32 * 1024 * 1024;

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

  /** True when a message sent during the request can go on this POST (it upgrades to SSE). */
  get canStream(): boolean {
    return this.acceptsSse && !this.res.writableEnded && !this.res.destroyed;
  }

  /** Sends a message that belongs to this request before its response; false if it cannot go here. */
  during(line: string): boolean {
    if (!this.canStream) return false;
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, SSE_HEADERS);
    }
    this.res.write(sseEvent(line));
    return true;
  }
}

export class HttpChannel implements AgentChannel {
  /** Set right after construction by the front (the agent session needs this channel to exist). */
  session!: AgentSession;
  /** performance.now() of the last request on this session. */
  lastActive = performance.now();
  private stream: ServerResponse | undefined;
  private readonly posts = new Map<RequestId, PendingPost>();
  private dropped = 0;
  /** Ended POSTs whose answer the agent has not taken in full yet, and how many bytes they hold. */
  private readonly flushing = new Set<ServerResponse>();
  private flushingBytes = 0;
  /** Set when the agent fell too far behind: nothing more is written, the front ends the session. */
  private overflowed = false;
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
    /** Bytes written and not yet read by the agent past which mcpgate stops writing (see the header). */
    private readonly maxBuffer = DEFAULT_MAX_AGENT_BUFFER,
    /** Called (on a later turn) when the session must end because its agent is not reading. */
    private readonly onOverflow: (why: string) => void = () => {},
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
    if (this.overflowed) return false;
    if (about !== undefined) {
      const post = this.posts.get(about);
      if (final === true) {
        if (post === undefined) {
          this.log.debug('dropped a response: its POST was closed by the agent', { session: this.id, id: about });
          return false;
        }
        this.posts.delete(about);
        if (this.behind(post.res)) return false;
        post.finish(line);
        this.track(post.res);
        return true;
      }
      if (post?.canStream === true) {
        if (this.behind(post.res)) return false;
        return post.during(line);
      }
    }
    const stream = this.stream;
    if (stream !== undefined && !stream.writableEnded) {
      const queued = stream.writableLength;
      if (queued <= this.maxBuffer) {
        stream.write(sseEvent(line));
        return true;
      }
      this.log.warn(`dropped the GET stream: its agent has not read ${queued} bytes (the limit is ${this.maxBuffer}, --max-agent-buffer); it may open a new one`, { code: 'MCPG_AGENT_TOO_SLOW', session: this.id });
      this.stream = undefined;
      stream.destroy();
    }
    // Without a GET stream the agent has said it does not want unsolicited messages; only the news
    // that a list changed is kept for when it opens one.
    if (about === undefined && line.endsWith('/list_changed"}')) this.missed.add(line);
    if (this.dropped++ % 100 === 0) this.log.debug('dropped a message: the agent has no GET stream open', { session: this.id, dropped: this.dropped });
    return false;
  }

  /**
   * True (and the session is being ended) when the answers this agent has not read, plus what
   * `res` already holds, pass the bound: the agent stopped reading, so holding more would grow
   * without limit. One message is always let through into an empty buffer, however large.
   */
  private behind(res: ServerResponse): boolean {
    const queued = this.flushingBytes + res.writableLength;
    if (queued <= this.maxBuffer) return false;
    const why = `its agent has not read ${queued} bytes of answers (the limit is ${this.maxBuffer}, --max-agent-buffer)`;
    this.log.warn(`ending the session: ${why}`, { code: 'MCPG_AGENT_TOO_SLOW', session: this.id });
    this.overflowed = true;
    // Destroying the sockets frees what they hold now; the front ends the session on the next turn
    // (not from inside this send, which the agent session is in the middle of).
    for (const post of this.posts.values()) post.res.destroy();
    for (const pending of this.flushing) pending.destroy();
    this.stream?.destroy();
    this.stream = undefined;
    setImmediate(() => this.onOverflow(why));
    return true;
  }

  /** Counts an ended answer the socket has not taken in full yet, until it has (or is closed). */
  private track(res: ServerResponse): void {
    const bytes = res.writableLength;
    if (bytes === 0) return; // the common case: handed to the kernel in the write itself
    this.flushing.add(res);
    this.flushingBytes += bytes;
    res.once('close', () => {
      this.flushing.delete(res);
      this.flushingBytes -= bytes;
    });
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
