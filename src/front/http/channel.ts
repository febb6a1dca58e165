// One agent's Streamable HTTP session (its channel) and the table of them (`HttpChannels`, below).
// A channel is the AgentChannel that decides where each message the agent's
// session sends goes. A response, and what is sent while its request runs (progress, a server's
// sampling request), go on the POST that carried the request; everything else (list_changed, logs,
// requests that belong to no call) goes on the session's GET stream.
//
// A POST is answered lazily: `application/json` when the response is the only message (the hot
// path: one write, no framing), upgraded to `text/event-stream` the moment something must be sent
// before the response.
//
// Bounded, so an agent that stops reading cannot grow mcpgate's memory: what is written for an
// agent but not yet taken by it is counted from the responses' `writableLength` (node's buffer plus
// the socket's), read once per write, no copies. A GET stream holding more than the bound is dropped
// (the agent may open another; list_changed it missed is kept for it). Answers held for an agent
// that has stopped reading (ended POSTs still flushing, plus the open POST about to be written) past
// the bound end the session: its sockets are destroyed, which frees what they held, and the agent's
// next request gets 404.
//
// Resumable (MCP 2025-11-25 "Resumability and Redelivery", http/sse-replay.ts): a POST upgraded to SSE
// and the GET stream start with a priming event (an id, `retry:`, empty data) and every event on
// them has an id and is kept in the stream's replay log. When the agent's connection is cut, the
// stream stays: what belongs to it is logged, and a GET with `Last-Event-ID` replays what the agent
// missed and continues live (a POST's stream whose response was logged ends after the replay).
//
// A channel has no `sendParts` yet: a list answer reaches it as text (stdio writes a list's cached
// pieces in one `writev`).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../errors.js';
import type { Gateway } from '../../gateway/gateway.js';
import type { ForwardIdentity } from '../../cluster/link.js';
import { isModernVersion } from '../../wire/era.js';
import { refuse } from './modern-post.js';
import { DEFAULT_MAX_AGENT_BUFFER, MCP_PATH, VIEW_PREFIX, type HttpFrontOptions, type HttpLimits } from './options.js';
import { accepts, sendError } from './exchange.js';
import type { AgentSession } from '../../gateway/session/session.js';
import type { AgentChannel } from '../../gateway/session/agent-channel.js';
import { agentIdentity } from '../../gateway/session/agent-identity.js';
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
export type ResumeRefusal = 'unknown' | 'gap';

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
  /** performance.now() of the last request on this session. */
  lastActive = performance.now();
  private stream: ServerResponse | undefined;
  /** The GET stream's replay log: kept (and written to) while the agent is away, until a new GET. */
  private streamLog: StreamLog | undefined;
  /** This session's replay logs by key (ids of another session are never found here). */
  private readonly logs = new Map<string, StreamLog>();
  private readonly posts = new Map<RequestId, PendingPost>();
  private dropped = 0;
  /** Ended POSTs whose answer the agent has not taken in full yet, and how many bytes they hold. */
  private readonly flushing = new Set<ServerResponse>();
  private flushingBytes = 0;
  /** Set when the agent fell too far behind: nothing more is written, the front ends the session. */
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
    /** Called (on a later turn) when the session must end because its agent is not reading. */
    private readonly onOverflow: (why: string) => void = () => {},
  ) {}

  /** Requests of this session whose POST is still connected. */
  get openPosts(): number {
    let open = 0;
    for (const post of this.posts.values()) if (post.res !== undefined) open += 1;
    return open;
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

  /** The agent cancelled request `id` (the session has cancelled it on its server): its POST ends now. */
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
   * True (and the session is being ended) when the answers this agent has not read, plus what
   * `res` already holds, pass the bound: the agent stopped reading, so holding more would grow
   * without limit. One message is always let through into an empty buffer, however large.
   */
  private behind(res: ServerResponse | undefined): boolean {
    const queued = this.flushingBytes + (res?.writableLength ?? 0);
    if (queued <= this.maxBuffer) return false;
    const why = `its agent has not read ${queued} bytes of answers (the limit is ${this.maxBuffer}, --max-agent-buffer)`;
    this.log.warn(`ending the session: ${why}`, { code: 'MCPG_AGENT_TOO_SLOW', session: this.id });
    this.overflowed = true;
    // Destroying the sockets frees what they hold now; the front ends the session on the next turn
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

  /** Opens a new GET stream; false when one is already open (one per session). */
  openStream(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.stream !== undefined) return false;
    if (this.streamLog !== undefined) this.replay.discard(this.streamLog);
    const log = (this.streamLog = this.replay.open(this.logs, 'get'));
    this.attachStream(req, res);
    res.write(priming(log));
    for (const line of this.missed) res.write(this.replay.append(log, (id) => sseEvent(line, id)));
    this.missed.clear();
    return true;
  }

  /**
   * A GET with `Last-Event-ID`: replays what the agent missed on the stream that id belongs to
   * (this session's GET stream, or one of its POSTs), then goes on live on `res` (a POST's stream
   * whose response was already sent ends after the replay). A connection of that stream still open
   * (the agent gave up on it) is replaced. Refused (nothing written) when the id is not one of this
   * session's, or events after it were dropped from the log.
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
   * Ends the session: the agent session answers what is open (through the POSTs), then the streams
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

// ── the table of HTTP channels ──────────────────────────────────────────────────────────────────────
// The HTTP front's sessions (`Mcp-Session-Id`): opened within the limits (per agent, in total,
// across the cluster), located in the cluster (forwarded to their owner, or adopted), ended, expired
// when idle; and the two requests that act on a session rather than carry a message — GET (its
// event stream, opened or resumed) and DELETE (end it); all of them are ended at shutdown. The
// front owns the map and looks a POST's session up itself (`findChannel`, which GET and DELETE share).

/** Why sessions end at shutdown: in a cluster their records stay, for another worker to adopt. */
const SHUTDOWN = 'closed at shutdown';

/** The session a request names; answers 400 (none named) or 404 (unknown, or another agent's). */
export function findChannel(
  sessions: ReadonlyMap<string, HttpChannel>,
  sessionId: string | string[] | undefined,
  agent: string,
  res: ServerResponse,
): HttpChannel | undefined {
  if (typeof sessionId !== 'string') {
    sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', 'Mcp-Session-Id header is required (send initialize first to get one)'));
    return undefined;
  }
  const session = sessions.get(sessionId);
  // Another agent's session is answered exactly like an unknown one: ids reveal nothing.
  if (session === undefined || session.agent !== agent) {
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
  return session;
}

/**
 * The curated view a `/mcp/v/NAME` path names: NAME when the rules define it, null when they do not
 * (the path is answered 404). NAME is one path segment, taken as written (views' names need no escapes).
 */
export function viewNamed(rest: string, views: ReadonlyMap<string, unknown>): string | null {
  return rest !== '' && !rest.includes('/') && views.has(rest) ? rest : null;
}

/**
 * A session serves the path it was opened on: its view's (`/mcp/v/NAME`) or the whole catalog's
 * (`/mcp`). A request on another path is refused rather than shown another view under the same id.
 */
export function onItsPath(session: HttpChannel, view: string | undefined, res: ServerResponse): boolean {
  const own = session.agentSession.view;
  if (own === view) return true;
  const path = (name: string | undefined): string => (name === undefined ? MCP_PATH : `${VIEW_PREFIX}${name}`);
  sendError(
    res,
    400,
    new GatewayError(
      'MCPG_INVALID_REQUEST',
      `session ${session.id} was opened at ${path(own)}: send its requests there (this request came to ${path(view)})`,
    ),
  );
  return false;
}

/** A request forwarded by another worker carries the agent's identity, signed (set once accepted). */
export const FORWARDED: unique symbol = Symbol('mcpgate.forwardedIdentity');
export type WithForwarded = IncomingMessage & { [FORWARDED]?: ForwardIdentity };

/** Whether the agent has an identity of its own (authenticated, named, or configured; as the forwarding worker found it). */
export function isIdentified(options: HttpFrontOptions, req: IncomingMessage): boolean {
  const forwarded = (req as WithForwarded)[FORWARDED];
  if (forwarded !== undefined) return forwarded.identified;
  return options.auth === 'on' || req.headers['x-mcpgate-agent'] !== undefined || options.defaultAgentExplicit === true;
}

export class HttpChannels {
  private readonly perAgent = new Map<string, number>();

  constructor(
    /** The front's map of sessions by id. */
    private readonly channels: Map<string, HttpChannel>,
    private readonly gateway: Gateway,
    private readonly options: HttpFrontOptions,
    private readonly opts: HttpLimits,
    private readonly replay: ReplayStore,
    private readonly log: Logger,
    /** Called whenever a session's POST is done (shutdown waits for the last one). */
    private readonly postDone: () => void,
  ) {}

  /**
   * With a cluster: the session a request names, held here, or adopted here; undefined after
   * answering (forwarded to its owner and relayed, refused, or unknown).
   */
  async locate(
    sessionId: string | string[] | undefined,
    who: ForwardIdentity,
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    id: RequestId | undefined,
    view?: string,
  ): Promise<HttpChannel | undefined> {
    const cluster = this.options.cluster!;
    const agent = who.agent;
    if (typeof sessionId !== 'string') return findChannel(this.channels, sessionId, agent, res);
    if (this.channels.has(sessionId)) return findChannel(this.channels, sessionId, agent, res);
    const placed = await cluster.place(req, res, sessionId, who, body, id);
    if (placed.kind === 'answered') return undefined;
    // Another request of this session may have adopted it meanwhile.
    if (placed.kind === 'unknown' || this.channels.has(sessionId)) return findChannel(this.channels, sessionId, agent, res);
    const record = placed.record;
    // Adopted on the path its requests come to: a session's view is the one its agent connected through.
    return this.open(res, agent, record?.identified ?? isIdentified(this.options, req), sessionId, record?.capabilities ?? {}, true, view);
  }

  /**
   * A new session for `agent` (or one adopted from another worker, which starts initialized), within
   * the limits; undefined after answering why not.
   */
  open(
    res: ServerResponse,
    agent: string,
    identified: boolean,
    id: string,
    capabilities: Record<string, unknown>,
    adopted: boolean,
    view?: string,
  ): HttpChannel | undefined {
    const mine = this.perAgent.get(agent) ?? 0;
    if (mine >= this.opts.maxSessionsPerAgent) {
      sendError(
        res,
        429,
        new GatewayError(
          'MCPG_SESSION_LIMIT',
          `agent "${agent}" already has ${mine} sessions (the limit is ${this.opts.maxSessionsPerAgent}); end one with DELETE or let idle ones expire`,
        ),
      );
      return undefined;
    }
    if (this.channels.size >= this.opts.maxSessions) {
      sendError(
        res,
        503,
        new GatewayError(
          'MCPG_SESSION_LIMIT',
          `the gateway already serves ${this.channels.size} sessions (the limit is ${this.opts.maxSessions})`,
        ),
        { 'retry-after': '5' },
      );
      return undefined;
    }
    // In a cluster the limit is the cluster's (an adopted session is already one of them).
    const elsewhere = adopted ? undefined : this.options.cluster?.sessionsElsewhere();
    if (elsewhere !== undefined && this.channels.size + elsewhere >= this.opts.maxSessions) {
      sendError(
        res,
        503,
        new GatewayError(
          'MCPG_SESSION_LIMIT',
          `the cluster already serves ${this.channels.size + elsewhere} sessions (the limit is ${this.opts.maxSessions}, counted across its workers)`,
        ),
        { 'retry-after': '5' },
      );
      return undefined;
    }
    const log = this.log.child({ agent, session: id });
    const session = new HttpChannel(id, agent, log, this.replay, this.postDone, this.opts.maxAgentBuffer, (why) => this.end(session, why));
    session.agentSession = this.gateway.openSession(session, agentIdentity(agent, { transport: 'http', identified }), id);
    session.agentSession.view = view;
    if (adopted) session.agentSession.resume(capabilities);
    this.channels.set(id, session);
    this.perAgent.set(agent, mine + 1);
    this.options.cluster?.opened(id, { agent, capabilities, identified });
    if (!adopted) res.setHeader('mcp-session-id', id);
    log.debug('session opened');
    return session;
  }

  /** GET: the session's event stream, opened or resumed from `Last-Event-ID`. */
  getStream(req: IncomingMessage, res: ServerResponse, who: ForwardIdentity, view?: string): void {
    const agent = who.agent;
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && isModernVersion(version.trim())) {
      return refuse(
        res,
        405,
        null,
        -32000,
        `Method not allowed: protocol revision ${version.trim()} is POST only (change notifications come on a subscriptions/listen stream)`,
      );
    }
    if (!accepts(req.headers.accept, 'text/event-stream')) {
      return sendError(
        res,
        406,
        new GatewayError('MCPG_INVALID_REQUEST', `GET ${MCP_PATH} opens an event stream: Accept must admit text/event-stream`),
      );
    }
    const sessionId = req.headers['mcp-session-id'];
    if (this.options.cluster !== undefined) {
      this.locate(sessionId, who, req, res, '', undefined, view)
        .then((session) => session !== undefined && onItsPath(session, view, res) && this.stream(session, req, res))
        .catch((err: unknown) => this.failed(res, err));
      return;
    }
    const session = findChannel(this.channels, sessionId, agent, res);
    if (session !== undefined && onItsPath(session, view, res)) this.stream(session, req, res);
  }

  private stream(session: HttpChannel, req: IncomingMessage, res: ServerResponse): void {
    session.lastActive = performance.now();
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId === 'string' && lastEventId !== '') return this.resume(session, req, res, lastEventId);
    if (!session.openStream(req, res)) {
      sendError(res, 409, new GatewayError('MCPG_INVALID_REQUEST', 'this session already has a GET stream open'));
    }
  }

  /**
   * Resumption (MCP 2025-11-25): the spec leaves an id that cannot be resumed undefined
   * (modelcontextprotocol#1939); it is answered 400, as the SDKs' servers do, never 404 (which
   * would tell the agent its session is gone). Another session's id is unknown here.
   */
  private resume(session: HttpChannel, req: IncomingMessage, res: ServerResponse, lastEventId: string): void {
    const refused = session.resume(req, res, lastEventId);
    if (refused === undefined) return;
    const why =
      refused === 'gap'
        ? 'events after it are no longer kept (the replay buffer is bounded by --replay-buffer, --replay-age and --replay-total)'
        : 'it is not an event id of this session';
    sendError(
      res,
      400,
      new GatewayError(
        'MCPG_EVENT_ID_UNKNOWN',
        `cannot resume from Last-Event-ID ${JSON.stringify(lastEventId.slice(0, 64))}: ${why}; open a new stream with GET without Last-Event-ID`,
      ),
    );
  }

  /** DELETE: the agent ends its session. */
  deleteSession(req: IncomingMessage, res: ServerResponse, who: ForwardIdentity): void {
    const agent = who.agent;
    const ended = (session: HttpChannel | undefined): void => {
      if (session === undefined) return;
      this.end(session, 'ended by the agent');
      res.writeHead(200).end();
    };
    const sessionId = req.headers['mcp-session-id'];
    if (this.options.cluster !== undefined)
      return void this.locate(sessionId, who, req, res, '', undefined)
        .then(ended)
        .catch((err: unknown) => this.failed(res, err));
    ended(findChannel(this.channels, sessionId, agent, res));
  }

  private failed(res: ServerResponse, err: unknown): void {
    this.log.error('internal error locating a session in the cluster', { error: err });
    if (!res.headersSent) sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
    else res.destroy();
  }

  private end(session: HttpChannel, why: string): void {
    if (!this.channels.delete(session.id)) return;
    const left = (this.perAgent.get(session.agent) ?? 1) - 1;
    if (left <= 0) this.perAgent.delete(session.agent);
    else this.perAgent.set(session.agent, left);
    session.close();
    this.options.cluster?.ended(session.id, why !== SHUTDOWN);
    this.log.debug(`session ${why}`, { agent: session.agent, session: session.id });
  }

  /** Expires idle sessions and keeps GET streams alive. */
  sweep(): void {
    const cutoff = performance.now() - this.opts.sessionIdleMs;
    this.replay.sweep();
    for (const session of [...this.channels.values()]) {
      session.keepAlive();
      if (session.lastActive < cutoff && session.openPosts === 0 && !session.hasStream) this.end(session, 'expired after being idle');
    }
  }

  /** Shutdown: ends every session (in a cluster their records stay, for another worker to adopt). */
  endAll(): void {
    for (const session of [...this.channels.values()]) this.end(session, SHUTDOWN);
  }
}
