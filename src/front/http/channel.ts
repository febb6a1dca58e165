// An HTTP channel: the AgentChannel of one agent session over Streamable HTTP, which decides where
// each message the agent session sends goes, with the open POSTs that carry its requests. A
// response, and what is sent while its request runs (progress, a server's sampling request), go on
// the POST that carried the request; everything else (list_changed, logs, requests that belong to no
// call) goes on the channel's GET stream. The table of channels is channels.ts. How a POST is
// answered, the bound on what an agent has not read yet, and resumable streams: src/front/README.md,
// "The channel".

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../errors.js';
import { DEFAULT_MAX_AGENT_BUFFER, MCP_PATH, VIEW_PREFIX } from './options.js';
import { sendError } from './exchange.js';
import type { AgentSession } from '../../gateway/session/session.js';
import type { AgentChannel } from '../../gateway/session/agent-channel.js';
import type { Logger } from '../../observability/logger.js';
import type { RequestId } from '../../wire/jsonrpc.js';
import { sseEvent } from '../../wire/sse.js';
import { SSE_RETRY_MS, parseEventId, type ReplayStore, type StreamLog } from './sse-replay.js';
import { TOO_MANY_REQUESTS, rateLimitedHeaders, type RateLimitedInfo } from './rate-limited.js';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' };

/** The first event of a resumable stream: its id, the reconnection delay, no data (SEP-1699). */
const priming = (log: StreamLog): string => `id: ${log.primingId}\nretry: ${SSE_RETRY_MS}\ndata: \n\n`;
/** Written before mcpgate ends a stream itself: when to come back (the SSE `retry` field). */
const RETRY = `retry: ${SSE_RETRY_MS}\n\n`;

/** Why a GET with `Last-Event-ID` cannot resume (the front answers 400). */
type ResumeRefusal = 'unknown' | 'gap';

/** The open POST of one agent request, until its response is written. */
class PendingPost {
  /** Set once the POST became an event stream: every event is logged there and can be replayed. */
  log: StreamLog | undefined;
  /** The agent's connection; undefined while a resumable stream waits for the agent to come back. */
  res: ServerResponse | undefined;
  /** Set while the server's stream for this call is paused (SSE polling): resumes it when the agent resumes. */
  resumeServer: (() => void) | undefined;
  /** Set when the request is refused as rate limited before any work: answered 429 with Retry-After. */
  rateLimited: RateLimitedInfo | undefined;

  constructor(
    res: ServerResponse,
    private readonly acceptsSse: boolean,
    private readonly replay: ReplayStore,
    private readonly logs: Map<string, StreamLog>,
  ) {
    this.res = res;
  }

  private get writable(): ServerResponse | undefined {
    const res = this.res;
    return res !== undefined && !res.writableEnded && !res.destroyed ? res : undefined;
  }

  /** Writes the response and ends the POST (logged first when the POST is an event stream). */
  finish(line: string): void {
    if (this.log !== undefined) {
      const frame = this.replay.append(this.log, (id) => sseEvent(line, id));
      this.log.complete = true;
      this.writable?.end(frame);
      return;
    }
    const res = this.res;
    if (res === undefined) return;
    if (this.rateLimited !== undefined && !res.headersSent) {
      res.writeHead(TOO_MANY_REQUESTS, { 'content-type': 'application/json', ...rateLimitedHeaders(this.rateLimited) });
      res.end(line);
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(line);
  }

  /**
   * The agent cancelled the request: MCP sends no answer to a cancelled request, so its POST ends now
   * with none — an event stream ends as it is, a POST not yet streaming gets an empty event stream
   * (a content type every client reads, with no message in it).
   */
  abandon(): void {
    if (this.log !== undefined) this.log.complete = true;
    const res = this.writable;
    if (res === undefined) return;
    if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
    res.end();
  }

  /** True when a message sent during the request can go on this POST (it upgrades to SSE). */
  get canStream(): boolean {
    return this.log !== undefined ? !this.log.discarded : this.acceptsSse && this.writable !== undefined;
  }

  /** Sends a message that belongs to this request before its response; false if it cannot go here. */
  during(line: string): boolean {
    if (!this.canStream) return false;
    const frame = this.replay.append(this.upgrade(), (id) => sseEvent(line, id));
    this.writable?.write(frame);
    return true;
  }

  /**
   * The server paused its stream of this call (SSE polling): the agent's stream is made resumable
   * if it is not yet, then ended with the server's `retry:`; the server is resumed when the agent
   * resumes. False when this POST cannot be an event stream (mcpgate then resumes on its own).
   */
  poll(retryMs: number, resume: () => void): boolean {
    if (!this.canStream) return false;
    this.upgrade();
    this.resumeServer = resume;
    this.writable?.end(`retry: ${retryMs}\n\n`);
    return true;
  }

  /** The POST as an event stream: headers and the priming event the first time. */
  private upgrade(): StreamLog {
    if (this.log === undefined) {
      this.log = this.replay.open(this.logs, 'post');
      this.res!.writeHead(200, SSE_HEADERS);
      this.res!.write(priming(this.log));
    }
    return this.log;
  }
}

export class HttpChannel implements AgentChannel {
  /** Set right after construction by the front (the agent session needs this channel to exist). */
  agentSession!: AgentSession;
  /** performance.now() of the last request on this channel. */
  lastActive = performance.now();
  private stream: ServerResponse | undefined;
  /** The GET stream's replay log: kept (and written to) while the agent is away, until a new GET. */
  private streamLog: StreamLog | undefined;
  /** This channel's replay logs by key (ids of another channel are never found here). */
  private readonly logs = new Map<string, StreamLog>();
  private readonly posts = new Map<RequestId, PendingPost>();
  private dropped = 0;
  /** Ended POSTs whose answer the agent has not taken in full yet, and how many bytes they hold. */
  private readonly flushing = new Set<ServerResponse>();
  private flushingBytes = 0;
  /** Set when the agent fell too far behind: nothing more is written, the front ends the channel. */
  private overflowed = false;
  /**
   * list_changed notifications sent while no GET stream was open: sent (once each) when a new one
   * opens, so an agent whose stream dropped and came back still learns that its catalog changed.
   */
  private readonly missed = new Set<string>();

  constructor(
    readonly id: string,
    readonly agent: string,
    private readonly log: Logger,
    /** The front's replay logs (bounded per stream, by age and in total). */
    private readonly replay: ReplayStore,
    /** Called whenever a POST is done (shutdown waits for the last one). */
    private readonly postDone: () => void = () => {},
    /** Bytes written and not yet read by the agent past which mcpgate stops writing (see the header). */
    private readonly maxBuffer = DEFAULT_MAX_AGENT_BUFFER,
    /** Called (on a later turn) when the channel must end because its agent is not reading. */
    private readonly onOverflow: (why: string) => void = () => {},
  ) {}

  /** Requests of this channel whose POST is still connected. */
  get openPosts(): number {
    let open = 0;
    for (const post of this.posts.values()) if (post.res !== undefined) open += 1;
    return open;
  }

  get hasStream(): boolean {
    return this.stream !== undefined;
  }

  /** A server's request outside the agent's calls reaches it on its GET stream only. */
  get canBeAsked(): boolean {
    return this.stream !== undefined;
  }

  /**
   * Registers the POST that carries request `id`; false when a request with that id is still
   * open (the caller refuses the new POST rather than answer the old one with its error).
   */
  expect(id: RequestId, res: ServerResponse, acceptsSse: boolean): boolean {
    if (this.posts.has(id)) return false;
    const post = new PendingPost(res, acceptsSse, this.replay, this.logs);
    this.posts.set(id, post);
    this.watchPost(id, post, res);
    return true;
  }

  /**
   * The agent hung up before the answer: the call runs on (MCP: a disconnect is not a cancel). A
   * POST that became an event stream waits for a resumption (its events are logged); any other's
   * answer is dropped when it comes.
   */
  private watchPost(id: RequestId, post: PendingPost, res: ServerResponse): void {
    res.once('close', () => {
      if (this.posts.get(id) === post && post.res === res) {
        if (post.log === undefined || post.log.discarded) this.posts.delete(id);
        else post.res = undefined;
      }
      this.postDone();
    });
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
        if (post.res !== undefined) this.track(post.res);
        return true;
      }
      if (post?.canStream === true) {
        if (this.behind(post.res)) return false;
        return post.during(line);
      }
    }
    const stream = this.stream;
    const log = this.streamLog;
    if (stream !== undefined && !stream.writableEnded && log !== undefined) {
      const queued = stream.writableLength;
      if (queued <= this.maxBuffer) {
        stream.write(this.replay.append(log, (id) => sseEvent(line, id)));
        return true;
      }
      this.log.warn(
        `dropped the GET stream: its agent has not read ${queued} bytes (the limit is ${this.maxBuffer}, --max-agent-buffer); it may resume it or open a new one`,
        { code: 'MCPG_AGENT_TOO_SLOW', session: this.id },
      );
      this.stream = undefined;
      stream.destroy();
    }
    // Without a GET stream the agent has said it does not want unsolicited messages, unless it had
    // one that was cut: then they are logged for its resumption. The news that a list changed is
    // also kept for a new stream.
    const listChanged = about === undefined && line.endsWith('/list_changed"}');
    if (listChanged) this.missed.add(line);
    if (log !== undefined && !log.discarded) {
      this.replay.append(log, (id) => sseEvent(line, id));
      return true;
    }
    if (this.dropped++ % 100 === 0)
      this.log.debug('dropped a message: the agent has no GET stream open', { session: this.id, dropped: this.dropped });
    return false;
  }

  /** The request `about` is refused as rate limited before any work: its POST is answered 429 (http/rate-limited.ts). */
  rateLimited(about: RequestId, info: RateLimitedInfo): void {
    const post = this.posts.get(about);
    if (post !== undefined && post.log === undefined) post.rateLimited = info;
  }

  /** The agent cancelled request `id` (the agent session has cancelled it on its server): its POST ends now. */
  cancelled(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const post = this.posts.get(id);
    if (post === undefined) return;
    this.posts.delete(id);
    post.abandon();
    if (post.res !== undefined) this.track(post.res);
  }

  pause(about: RequestId, retryMs: number, resume: () => void): void {
    if (this.overflowed) return;
    const post = this.posts.get(about);
    if (post !== undefined && post.poll(retryMs, resume))
      this.log.debug("the server paused a call's stream: ended the agent's, to be resumed", { session: this.id, id: about, retryMs });
  }

  /**
   * True (and the channel is being ended) when the answers this agent has not read, plus what
   * `res` already holds, pass the bound: the agent stopped reading, so holding more would grow
   * without limit. One message is always let through into an empty buffer, however large.
   */
  private behind(res: ServerResponse | undefined): boolean {
    const queued = this.flushingBytes + (res?.writableLength ?? 0);
    if (queued <= this.maxBuffer) return false;
    const why = `its agent has not read ${queued} bytes of answers (the limit is ${this.maxBuffer}, --max-agent-buffer)`;
    this.log.warn(`ending the session: ${why}`, { code: 'MCPG_AGENT_TOO_SLOW', session: this.id });
    this.overflowed = true;
    // Destroying the sockets frees what they hold now; the front ends the channel on the next turn
    // (not from inside this send, which the agent session is in the middle of).
    for (const post of this.posts.values()) post.res?.destroy();
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

  /** Opens a new GET stream; false when one is already open (one per channel). */
  openStream(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.stream !== undefined) return false;
    if (this.streamLog !== undefined) this.replay.discard(this.streamLog);
    const log = (this.streamLog = this.replay.open(this.logs, 'get'));
    this.attachStream(req, res);
    res.write(priming(log));
    for (const line of this.missed) res.write(this.replay.append(log, (id) => sseEvent(line, id)));
    this.missed.clear();
    this.agentSession.canBeAsked();
    return true;
  }

  /**
   * A GET with `Last-Event-ID`: replays what the agent missed on the stream that id belongs to
   * (this channel's GET stream, or one of its POSTs), then goes on live on `res` (a POST's stream
   * whose response was already sent ends after the replay). A connection of that stream still open
   * (the agent gave up on it) is replaced. Refused (nothing written) when the id is not one of this
   * channel's, or events after it were dropped from the log.
   */
  resume(req: IncomingMessage, res: ServerResponse, lastEventId: string): ResumeRefusal | undefined {
    const parsed = parseEventId(lastEventId);
    const log = parsed === undefined ? undefined : this.logs.get(parsed.key);
    if (parsed === undefined || log === undefined || log.discarded) return this.refuse('unknown');
    const post = log.kind === 'post' ? [...this.posts.values()].find((p) => p.log === log) : undefined;
    if (log.kind === 'get' && log !== this.streamLog) return this.refuse('unknown');
    const frames = this.replay.after(log, parsed.seq);
    if (frames === undefined) return this.refuse('gap');
    this.replay.resumption('resumed');
    if (log.kind === 'get') {
      const old = this.stream;
      this.stream = undefined;
      old?.destroy();
      this.attachStream(req, res);
      for (const frame of frames) res.write(frame);
      this.missed.clear();
      this.agentSession.canBeAsked();
      return undefined;
    }
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    for (const frame of frames) res.write(frame);
    if (post === undefined) {
      res.end(); // the response was among the frames (or was sent before the agent left)
      return undefined;
    }
    const old = post.res;
    post.res = res;
    old?.destroy();
    const id = [...this.posts].find(([, p]) => p === post)![0];
    this.watchPost(id, post, res);
    const resumeServer = post.resumeServer;
    post.resumeServer = undefined;
    resumeServer?.();
    return undefined;
  }

  private refuse(why: ResumeRefusal): ResumeRefusal {
    this.replay.resumption('refused');
    return why;
  }

  private attachStream(req: IncomingMessage, res: ServerResponse): void {
    this.stream = res;
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    const done = (): void => {
      if (this.stream === res) this.stream = undefined;
    };
    req.once('close', done);
    res.once('close', done);
  }

  /** A comment on the GET stream keeps proxies from closing it and finds dead sockets. */
  keepAlive(): void {
    if (this.stream !== undefined && !this.stream.writableEnded) this.stream.write(': keep-alive\n\n');
  }

  /**
   * Ends the channel: the agent session answers what is open (through the POSTs), then the streams
   * end, each with a `retry:` (mcpgate ends them, not the agent), and the replay logs are freed.
   */
  close(): void {
    this.agentSession.close();
    for (const post of this.posts.values()) {
      const res = post.res;
      if (res !== undefined && !res.writableEnded) res.end(post.log === undefined ? undefined : RETRY);
    }
    this.posts.clear();
    if (this.stream !== undefined && !this.stream.writableEnded) this.stream.end(RETRY);
    this.stream = undefined;
    for (const log of [...this.logs.values()]) this.replay.discard(log);
    this.streamLog = undefined;
  }
}

/** The channel of the session a request names; answers 400 (none named) or 404 (unknown, or another agent's). */
export function findChannel(
  channels: ReadonlyMap<string, HttpChannel>,
  sessionId: string | string[] | undefined,
  agent: string,
  res: ServerResponse,
): HttpChannel | undefined {
  if (typeof sessionId !== 'string') {
    sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', 'Mcp-Session-Id header is required (send initialize first to get one)'));
    return undefined;
  }
  const channel = channels.get(sessionId);
  // Another agent's session is answered exactly like an unknown one: ids reveal nothing.
  if (channel === undefined || channel.agent !== agent) {
    sendError(
      res,
      404,
      new GatewayError(
        'MCPG_SESSION_NOT_FOUND',
        `session ${sessionId} not found (it expired, was ended, or the gateway restarted); send initialize to start a new one`,
      ),
    );
    return undefined;
  }
  return channel;
}

/**
 * The curated view a `/mcp/v/NAME` path names: NAME when the rules define it, null when they do not
 * (the path is answered 404). NAME is one path segment, taken as written (views' names need no escapes).
 */
export function viewNamed(rest: string, views: ReadonlyMap<string, unknown>): string | null {
  return rest !== '' && !rest.includes('/') && views.has(rest) ? rest : null;
}

/**
 * A channel serves the path its session was opened on: its view's (`/mcp/v/NAME`) or the whole catalog's
 * (`/mcp`). A request on another path is refused rather than shown another view under the same id.
 */
export function onItsPath(channel: HttpChannel, view: string | undefined, res: ServerResponse): boolean {
  const own = channel.agentSession.view;
  if (own === view) return true;
  const path = (name: string | undefined): string => (name === undefined ? MCP_PATH : `${VIEW_PREFIX}${name}`);
  sendError(
    res,
    400,
    new GatewayError(
      'MCPG_INVALID_REQUEST',
      `session ${channel.id} was opened at ${path(own)}: send its requests there (this request came to ${path(view)})`,
    ),
  );
  return false;
}
