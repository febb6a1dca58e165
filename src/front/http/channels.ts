// The table of an HTTP front's channels, one per agent session (`Mcp-Session-Id`): opened within
// the limits (per agent, in total, across the cluster), located in the cluster (forwarded to their
// owner, or adopted), ended, expired when idle; and the two requests that act on an agent session
// rather than carry a message — GET (its channel's event stream, opened or resumed) and DELETE (end
// it); all of them are ended at shutdown. The front owns the map and looks a POST's channel up
// itself (channel.ts `findChannel`, which GET and DELETE share). A request forwarded by another
// worker carries the agent's identity (`FORWARDED`).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../errors.js';
import type { Gateway } from '../../gateway/gateway.js';
import { agentIdentity } from '../../gateway/session/agent-identity.js';
import type { ForwardIdentity } from '../../cluster/link.js';
import type { Logger } from '../../observability/logger.js';
import type { RequestId } from '../../wire/jsonrpc.js';
import { isModernVersion } from '../../wire/era.js';
import { refuse } from './modern-post.js';
import { MCP_PATH, type HttpFrontOptions, type HttpLimits } from './options.js';
import { accepts, sendError } from './exchange.js';
import type { ReplayStore } from './sse-replay.js';
import { HttpChannel, findChannel, onItsPath } from './channel.js';

/** Why channels end at shutdown: in a cluster their records stay, for another worker to adopt. */
const SHUTDOWN = 'closed at shutdown';

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
    /** The front's map of channels by session id. */
    private readonly channels: Map<string, HttpChannel>,
    private readonly gateway: Gateway,
    private readonly options: HttpFrontOptions,
    private readonly opts: HttpLimits,
    private readonly replay: ReplayStore,
    private readonly log: Logger,
    /** Called whenever a channel's POST is done (shutdown waits for the last one). */
    private readonly postDone: () => void,
  ) {}

  /**
   * With a cluster: the channel a request names, held here, or adopted here; undefined after
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
   * A new channel and agent session for `agent` (or one adopted from another worker, which starts initialized), within
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
    const channel = new HttpChannel(id, agent, log, this.replay, this.postDone, this.opts.maxAgentBuffer, (why) => this.end(channel, why));
    channel.agentSession = this.gateway.openSession(channel, agentIdentity(agent, { transport: 'http', identified }), id);
    channel.agentSession.view = view;
    if (adopted) channel.agentSession.resume(capabilities);
    this.channels.set(id, channel);
    this.perAgent.set(agent, mine + 1);
    this.options.cluster?.opened(id, { agent, capabilities, identified });
    if (!adopted) res.setHeader('mcp-session-id', id);
    log.debug('session opened');
    return channel;
  }

  /** GET: the channel's event stream, opened or resumed from `Last-Event-ID`. */
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
        .then((channel) => channel !== undefined && onItsPath(channel, view, res) && this.stream(channel, req, res))
        .catch((err: unknown) => this.failed(res, err));
      return;
    }
    const channel = findChannel(this.channels, sessionId, agent, res);
    if (channel !== undefined && onItsPath(channel, view, res)) this.stream(channel, req, res);
  }

  private stream(channel: HttpChannel, req: IncomingMessage, res: ServerResponse): void {
    channel.lastActive = performance.now();
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId === 'string' && lastEventId !== '') return this.resume(channel, req, res, lastEventId);
    if (!channel.openStream(req, res)) {
      sendError(res, 409, new GatewayError('MCPG_INVALID_REQUEST', 'this session already has a GET stream open'));
    }
  }

  /**
   * Resumption (MCP 2025-11-25): the spec leaves an id that cannot be resumed undefined
   * (modelcontextprotocol#1939); it is answered 400, as the SDKs' servers do, never 404 (which
   * would tell the agent its session is gone). Another session's id is unknown here.
   */
  private resume(channel: HttpChannel, req: IncomingMessage, res: ServerResponse, lastEventId: string): void {
    const refused = channel.resume(req, res, lastEventId);
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
    const ended = (channel: HttpChannel | undefined): void => {
      if (channel === undefined) return;
      this.end(channel, 'ended by the agent');
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

  private end(channel: HttpChannel, why: string): void {
    if (!this.channels.delete(channel.id)) return;
    const left = (this.perAgent.get(channel.agent) ?? 1) - 1;
    if (left <= 0) this.perAgent.delete(channel.agent);
    else this.perAgent.set(channel.agent, left);
    channel.close();
    this.options.cluster?.ended(channel.id, why !== SHUTDOWN);
    this.log.debug(`session ${why}`, { agent: channel.agent, session: channel.id });
  }

  /** Expires idle channels and keeps GET streams alive. */
  sweep(): void {
    const cutoff = performance.now() - this.opts.sessionIdleMs;
    this.replay.sweep();
    for (const channel of [...this.channels.values()]) {
      channel.keepAlive();
      if (channel.lastActive < cutoff && channel.openPosts === 0 && !channel.hasStream) this.end(channel, 'expired after being idle');
    }
  }

  /** Shutdown: ends every channel (in a cluster their records stay, for another worker to adopt). */
  endAll(): void {
    for (const channel of [...this.channels.values()]) this.end(channel, SHUTDOWN);
  }
}
