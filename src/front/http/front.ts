// The Streamable HTTP front (MCP 2025-11-25): many agents on one port, each session with its own
// identity (from its bearer token), view of the catalog and GET stream. `/mcp` takes POST (one
// JSON-RPC message), GET (the session's stream) and DELETE (end the session); the ops routes
// (http/ops.ts) share the port and need no session. Here: routing, identity and the POST; the sessions'
// lifecycle, GET and DELETE are `HttpChannels`' (http/channels.ts), the sockets http/listeners.ts's.
//
// Hot path (a tools/call POST): auth (one hash and map lookup), body read, one JSON.parse, a map
// lookup for the session, then the agent session; the answer is written once as application/json.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../errors.js';
import type { Gateway } from '../../gateway/gateway.js';
import type { Logger } from '../../observability/logger.js';
import { classify, wireLimits, type Classified, type JsonRpcRequest } from '../../wire/jsonrpc.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../wire/protocol.js';
import { adminOf, authenticate, challenge, resourceMetadataUrl, type AuthClaims } from '../../auth/auth.js';
import { IssuerKeys } from '../../auth/issuers.js';
import { type HttpChannel, findChannel, onItsPath, viewNamed } from './channel.js';
import { FORWARDED, HttpChannels, isIdentified, type WithForwarded } from './channels.js';
import { ReplayStore } from './sse-replay.js';
import { DEFAULT_MAX_BODY_BYTES, accepts, admit, isLoopback, readBody, sendError } from './exchange.js';
import { handleOps } from './ops.js';
import { ModernPost, refuse } from './modern-post.js';
import { checkHeaders, eraOf, isModernVersion, paramHeaders, type EraOf, type Envelope } from '../../wire/era.js';
import type { ModernRequest } from '../../gateway/modern/modern-requests.js';
import { agentIdentity } from '../../gateway/session/agent-identity.js';
import { limitsOf, MCP_PATH, METADATA_PATH, VIEW_PREFIX, type HttpFrontOptions, type HttpLimits } from './options.js';
import { HttpListeners } from './listeners.js';
import type { ForwardIdentity } from '../../cluster/link.js';
import { serveMetadata } from './metadata.js';
import { mintSessionId } from './session-ids.js';
import type { Socket } from 'node:net';

export { HTTP_DEFAULTS, type HttpFrontOptions, type MountedRoutes } from './options.js';

export class HttpFront {
  readonly channels = new Map<string, HttpChannel>();
  /** Opens, locates, ends and expires the channels of `sessions`; GET and DELETE (http/channels.ts). */
  private readonly table: HttpChannels;
  /** Modern (2026-07-28) requests whose POST is open; listen streams apart (shutdown ends them first). */
  private readonly modernCalls = new Set<ModernRequest>();
  private readonly modernListens = new Set<ModernRequest>();
  private readonly listeners: HttpListeners;
  private readonly allowed: ReadonlySet<string>;
  private readonly allowedHosts: ReadonlySet<string>;
  private readonly loopbackOnly: boolean;
  private readonly limit: number;
  private readonly opts: HttpLimits;
  private sweepTimer: NodeJS.Timeout | undefined;
  private draining = false;
  /** Set while shutdown waits for the last open POST to be answered. */
  private onDrained: (() => void) | undefined;
  private closing: Promise<void> | undefined;
  private readonly replay: ReplayStore;
  /** The OAuth issuers' JWKS caches (rules' auth.oauth): they outlive reloads of the rules. */
  private readonly issuers = new IssuerKeys();
  /** The verified claims of each authenticated request's token (for the rules' grants), until the request is gone. */
  private readonly claims = new WeakMap<IncomingMessage, AuthClaims>();
  url = '';
  /** Under a primary that owns the shared port (`handedSlot`): this worker's own port, bound by `listen`. */
  private handedPort: number | undefined;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: HttpFrontOptions,
    private readonly log: Logger,
  ) {
    if (options.auth === 'off' && !isLoopback(options.host)) {
      throw new GatewayError('MCPG_USAGE', `auth may be turned off only on a loopback address, not on ${options.host}`);
    }
    this.allowed = new Set(options.allowedOrigins ?? []);
    this.allowedHosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()));
    this.loopbackOnly = isLoopback(options.host);
    this.limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.opts = limitsOf(options);
    this.replay = new ReplayStore(options.replay, options.onReplay);
    this.table = new HttpChannels(this.channels, gateway, options, this.opts, this.replay, log, () => {
      if (this.onDrained !== undefined && this.openPosts() === 0) this.onDrained();
    });
    // Handed connections and forwards share one server: which port a request came to is the socket's.
    this.listeners = new HttpListeners(
      (req, res) => this.guarded(req, res, options.handedSlot === undefined || this.listeners.isHanded(req)),
      log,
    );
  }

  /**
   * Binds the port; resolves with the `/mcp` URL. Under a primary that owns the shared port
   * (`handedSlot`), binds this worker's own port instead, and the URL is the shared port's.
   */
  async listen(): Promise<string> {
    if (this.options.handedSlot !== undefined) {
      this.handedPort = await this.listeners.listenHanded(this.options.host);
      const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
      this.url = `http://${host}:${this.options.port}${MCP_PATH}`;
    } else {
      const address = await this.listeners.listen(this.options.host, this.options.port);
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      this.url = `http://${host}:${address.port}${MCP_PATH}`;
    }
    const period = Math.max(1000, Math.min(30_000, Math.floor(this.opts.sessionIdleMs / 4)));
    this.sweepTimer = setInterval(() => this.table.sweep(), period);
    this.sweepTimer.unref();
    return this.url;
  }

  /**
   * A second listener of this worker alone (`--workers N`: under node:cluster the shared port cannot
   * say which worker a connection reaches, so other workers forward to this one). Same routes and
   * gate; the port is not shared (`exclusive`). Resolves with the port.
   */
  listenPrivate(host: string): Promise<number> {
    if (this.handedPort !== undefined) return Promise.resolve(this.handedPort);
    return this.listeners.listenPrivate(host, (req, res) => this.guarded(req, res, false));
  }

  /** A connection of the shared port, handed over by the primary with the bytes it read from it. */
  accept(socket: Socket, head: Buffer): void {
    this.listeners.accept(socket, head);
  }

  /**
   * Answers one request as the `--http` port's listener does, with no socket of its own: the
   * in-process test harness drives the front through it.
   */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.guarded(req, res);
  }

  get sessionCount(): number {
    return this.channels.size;
  }

  /** A bug while routing one request answers that request with 500 and never reaches the process. */
  private guarded(req: IncomingMessage, res: ServerResponse, shared = true): void {
    try {
      this.route(req, res, shared);
    } catch (err) {
      this.log.error('internal error handling an HTTP request', { error: err });
      if (!res.headersSent) sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
      else res.destroy();
    }
  }

  /** `shared`: the request came to the `--http` port, not this worker's own (listenPrivate). */
  private route(req: IncomingMessage, res: ServerResponse, shared: boolean): void {
    const path = pathOf(req.url);
    // A curated view's path (`/mcp/v/NAME`): the name if the rules define that view, null if not.
    const view = path.startsWith(VIEW_PREFIX) ? viewNamed(path.slice(VIEW_PREFIX.length), this.gateway.rules.views) : undefined;
    if (this.options.onRequest !== undefined) {
      const count = this.options.onRequest;
      const label =
        path === MCP_PATH
          ? `${req.method ?? ''} ${MCP_PATH}`
          : typeof view === 'string'
            ? `${req.method ?? ''} ${VIEW_PREFIX}${view}`
            : view === null
              ? `${VIEW_PREFIX}?`
              : path;
      res.once('finish', () => count(label, res.statusCode));
    }
    if (!admit(req, res, this.allowedHosts, this.loopbackOnly, this.allowed)) return;
    const mounted = this.options.mounted;
    if (mounted !== undefined && (path === mounted.prefix || path.startsWith(`${mounted.prefix}/`))) return mounted.handle(path, req, res);
    if (path === METADATA_PATH || path.startsWith(`${METADATA_PATH}/`))
      return serveMetadata(path, req, res, this.gateway.rules, this.resourceUri());
    if (view === null)
      return sendError(
        res,
        404,
        new GatewayError(
          'MCPG_INVALID_REQUEST',
          `no route ${path.slice(0, 200)}: the rules file defines no view of that name (a view is served at ${VIEW_PREFIX}NAME)`,
        ),
      );
    if (path !== MCP_PATH && view === undefined) {
      const { cluster, hostMetrics } = this.options;
      const ops = {
        ...this.options.ops,
        draining: this.draining,
        url: () => this.url,
        adminName: (r: IncomingMessage) => this.adminName(r),
        ...(cluster !== undefined && { cluster: () => cluster.status() }),
        ...(shared && hostMetrics !== undefined && { metrics: hostMetrics }),
      };
      return handleOps(path, req, res, ops, (r) => this.asker(req, r));
    }
    if (this.draining)
      return sendError(res, 503, new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down'), { connection: 'close' });
    // A forward is acknowledged at once: the forwarding worker then knows this process read it (it
    // may run), and that one reset before this line never reached a live owner (cluster/forward.ts).
    if (this.options.cluster?.isForwarded(req) === true) res.writeProcessing();
    void this.identify(req, res)
      .then((agent) => {
        if (agent !== undefined) this.dispatch(req, res, agent, view);
      })
      .catch((err: unknown) => {
        this.log.error('internal error handling an HTTP request', { error: err });
        if (!res.headersSent) sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
        else res.destroy();
      });
  }

  /** The agent of a request, whether it is identified, and its token's claims: what a forward says of it. */
  private who(req: IncomingMessage, agent: string): ForwardIdentity {
    return { agent, identified: isIdentified(this.options, req), claims: this.claims.get(req) };
  }

  private dispatch(req: IncomingMessage, res: ServerResponse, agent: string, view: string | undefined): void {
    switch (req.method) {
      case 'POST':
        return void this.post(req, res, agent, view).catch((err: unknown) => {
          this.log.error('internal error handling a POST', { error: err });
          sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
        });
      case 'GET':
        return this.table.getStream(req, res, this.who(req, agent), view);
      case 'DELETE':
        return this.table.deleteSession(req, res, this.who(req, agent));
      default:
        return sendError(
          res,
          405,
          new GatewayError('MCPG_INVALID_REQUEST', `method ${req.method ?? ''} is not allowed on ${MCP_PATH} (use POST, GET or DELETE)`),
          { allow: 'POST, GET, DELETE' },
        );
    }
  }

  /**
   * mcpgate's resource URI (RFC 8707): the rules' `auth.resource`, or the `/mcp` URL of the listen
   * address. OAuth access tokens must name it as audience; the resource metadata publishes it.
   */
  resourceUri(): string {
    return this.gateway.rules.auth?.resource ?? this.url;
  }

  /** An operator's route: an admin's token, or no tokens in use; else a valid agent's (refused by the caller) or a 401 answered here. */
  /** The operator making a request to an ops route, as decisions name them. */
  private adminName(req: IncomingMessage): string {
    const admin = adminOf(this.gateway.rules, req.headers.authorization);
    return admin !== undefined ? `admin:${admin}` : 'operator';
  }

  private async asker(req: IncomingMessage, res: ServerResponse): Promise<'operator' | 'agent' | undefined> {
    if (this.options.auth === 'off' || adminOf(this.gateway.rules, req.headers.authorization) !== undefined) return 'operator';
    return (await this.identify(req, res)) === undefined ? undefined : 'agent';
  }

  /** The agent the request speaks for, or undefined after answering 401 (403 for a missing scope, 503 when the issuer's keys are unavailable). */
  private async identify(req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
    const cluster = this.options.cluster;
    if (cluster !== undefined && cluster.isForwarded(req)) {
      // Another worker authenticated the agent and says so, signed: the forward carries no token.
      const who = cluster.acceptForward(req, req.url ?? MCP_PATH);
      if (typeof who === 'string') {
        this.refuseForward(res, who);
        return undefined;
      }
      (req as WithForwarded)[FORWARDED] = who;
      if (who.claims !== undefined) this.claims.set(req, who.claims);
      return who.agent;
    }
    if (this.options.auth === 'off') {
      const named = req.headers['x-mcpgate-agent'];
      return typeof named === 'string' && named !== '' ? named : this.options.defaultAgent;
    }
    const rules = this.gateway.rules;
    const resource = this.resourceUri();
    const outcome = await authenticate(rules, req.headers.authorization, {
      issuers: this.issuers,
      resource,
      ...(req.socket.remoteAddress !== undefined && { source: req.socket.remoteAddress }),
    });
    if (outcome.ok) {
      if (outcome.claims !== undefined) this.claims.set(req, outcome.claims);
      return outcome.agent;
    }
    const oauth = rules.auth?.oauth ?? [];
    const scope = outcome.scope ?? [...new Set(oauth.flatMap((o) => o.scopes))].join(' ');
    const header = challenge(outcome.reason, {
      ...(oauth.length > 0 && { resourceMetadata: resourceMetadataUrl(resource), scope }),
      insufficientScope: outcome.status === 403,
    });
    sendError(res, outcome.status ?? 401, new GatewayError('MCPG_UNAUTHORIZED', outcome.reason), { 'www-authenticate': header });
    return undefined;
  }

  private async post(req: IncomingMessage, res: ServerResponse, agent: string, view: string | undefined): Promise<void> {
    const type = req.headers['content-type'];
    if (type === undefined || !type.includes('application/json')) {
      return sendError(
        res,
        415,
        new GatewayError('MCPG_INVALID_REQUEST', `POST ${MCP_PATH} needs Content-Type: application/json (got ${type ?? 'none'})`),
      );
    }
    const accept = req.headers.accept;
    if (!accepts(accept, 'application/json') && !accepts(accept, 'text/event-stream')) {
      return sendError(
        res,
        406,
        new GatewayError('MCPG_INVALID_REQUEST', 'the Accept header must admit application/json and text/event-stream'),
      );
    }
    const body = await readBody(req, this.limit);
    if (!body.ok) return sendError(res, body.status, body.error, body.status === 413 ? { connection: 'close' } : {});
    if ((req as WithForwarded)[FORWARDED] !== undefined) {
      const why = this.options.cluster?.refuseBody(req, body.text);
      if (why !== undefined) return this.refuseForward(res, why);
    }
    let value: unknown;
    try {
      value = JSON.parse(body.text);
    } catch (err) {
      return sendError(res, 400, new GatewayError('MCPG_PARSE_ERROR', `parse error: ${(err as Error).message}`));
    }
    if (Array.isArray(value))
      return sendError(
        res,
        400,
        new GatewayError('MCPG_INVALID_REQUEST', 'JSON-RPC batches are not supported (MCP 2025-06-18 and later send one message per POST)'),
      );
    const parsed = classify(value, body.text.length > 2 * wireLimits.maxDepth);
    if (parsed.kind === 'invalid') return sendError(res, 400, parsed.error, {}, parsed.id);
    if (parsed.kind === 'request' || parsed.kind === 'notification') {
      // The era is chosen per request, body first (the spec's compatibility section): without `_meta`
      // there is no envelope, so the request is of the legacy era with no closer look.
      if (parsed.msg.params?._meta !== undefined) {
        const era = eraOf(parsed.msg.method, parsed.msg.params, parsed.kind === 'request');
        if (era.era !== 'legacy') return this.modern(req, res, agent, parsed, era, body.text, view);
      }
      // A legacy body under a modern revision's header is refused; a 2025 revision needs no closer look.
      const header = req.headers['mcp-protocol-version'];
      if (typeof header === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(header) && isModernVersion(header.trim())) {
        return refuse(
          res,
          400,
          parsed.kind === 'request' ? parsed.msg.id : null,
          -32602,
          `Invalid params: the MCP-Protocol-Version header names protocol revision ${header.trim()}, but the request is missing the required per-request _meta envelope (io.modelcontextprotocol/protocolVersion, io.modelcontextprotocol/clientCapabilities)`,
        );
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    if (parsed.kind === 'request' && parsed.msg.method === 'initialize') {
      if (sessionId !== undefined)
        return sendError(
          res,
          400,
          new GatewayError('MCPG_INVALID_REQUEST', 'initialize starts a new session: send it without Mcp-Session-Id'),
          {},
          parsed.msg.id,
        );
      const capabilities = parsed.msg.params?.capabilities;
      const session = this.table.open(
        res,
        agent,
        isIdentified(this.options, req),
        mintSessionId(this.options.handedSlot),
        typeof capabilities === 'object' && capabilities !== null && !Array.isArray(capabilities)
          ? (capabilities as Record<string, unknown>)
          : {},
        false,
        view,
      );
      if (session === undefined) return;
      return this.deliver(session, parsed, req, res);
    }
    const session =
      this.options.cluster === undefined
        ? findChannel(this.channels, sessionId, agent, res)
        : await this.table.locate(
            sessionId,
            this.who(req, agent),
            req,
            res,
            body.text,
            parsed.kind === 'request' ? parsed.msg.id : undefined,
            view,
          );
    if (session === undefined || !onItsPath(session, view, res)) return;
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return sendError(
        res,
        400,
        new GatewayError(
          'MCPG_INVALID_REQUEST',
          `unsupported MCP-Protocol-Version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        ),
      );
    }
    this.deliver(session, parsed, req, res);
  }

  /** A modern (2026-07-28) request or notification: no session; its POST is its stream (http/modern-post.ts). */
  private modern(
    req: IncomingMessage,
    res: ServerResponse,
    agent: string,
    parsed: Classified & { kind: 'request' | 'notification' },
    era: Exclude<EraOf, { era: 'legacy' }>,
    body: string,
    view: string | undefined,
  ): void {
    const id = parsed.kind === 'request' ? parsed.msg.id : null;
    const header = (name: string): string | undefined => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    // Headers that disagree with the body are refused first (-32020), before what the body claims is
    // judged (an unserved version: -32022), as the spec orders the checks.
    const refused =
      checkHeaders(
        { protocolVersion: header('mcp-protocol-version'), method: header('mcp-method'), name: header('mcp-name') },
        parsed.msg.method,
        parsed.msg.params,
        era.era === 'modern' ? era.envelope : undefined,
        parsed.kind === 'request',
      ) ?? (era.era === 'refused' ? era : undefined);
    if (refused !== undefined && refused.era === 'refused')
      return refuse(res, refused.status, id, refused.code, refused.message, refused.data);
    // A modern notification needs no answer; cancellation is closing the request's stream.
    if (parsed.kind === 'notification' || era.era !== 'modern' || era.envelope === undefined) return void res.writeHead(202).end();
    // Mcp-Param-* headers go on with the request to a modern HTTP server (the only place they mean anything).
    const params = paramHeaders(req.headers);
    if (typeof params === 'string') return refuse(res, 400, id, -32602, `Invalid params: ${params}`);
    const envelope = params === undefined ? era.envelope : { ...era.envelope, paramHeaders: params };
    // A retry whose waiting call is in another worker's memory goes to that worker (once: a
    // forwarded request is served here). If it is gone, the retry is served here and refused.
    const cluster = this.options.cluster;
    const holder =
      cluster === undefined || cluster.isForwarded(req) ? undefined : this.gateway.requestStateHolder(agent, parsed.msg.params);
    if (cluster !== undefined && holder !== undefined) {
      void cluster
        .forwardTo(holder, req, res, this.who(req, agent), body, parsed.msg.id)
        .then((answered) => {
          if (!answered) this.serveModern(req, res, agent, parsed.msg, envelope, view);
        })
        .catch((err: unknown) => this.failed(res, err));
      return;
    }
    this.serveModern(req, res, agent, parsed.msg, envelope, view);
  }

  private serveModern(
    req: IncomingMessage,
    res: ServerResponse,
    agent: string,
    msg: JsonRpcRequest,
    envelope: Envelope,
    view: string | undefined,
  ): void {
    const identified = isIdentified(this.options, req);
    const post = new ModernPost(res, accepts(req.headers.accept, 'text/event-stream'), this.opts.maxAgentBuffer);
    const who = agentIdentity(agent, { transport: 'http', identified });
    const request = this.gateway.serveModern(msg, envelope, post, { who, claims: this.claims.get(req), view });
    if (post.done) return;
    const open = msg.method === 'subscriptions/listen' ? this.modernListens : this.modernCalls;
    open.add(request);
    res.once('close', () => {
      open.delete(request);
      if (!post.done) request.cancel();
      if (this.onDrained !== undefined && this.openPosts() === 0) this.onDrained();
    });
  }

  private failed(res: ServerResponse, err: unknown): void {
    this.log.error('internal error forwarding a request in the cluster', { error: err });
    if (!res.headersSent) sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
    else res.destroy();
  }

  private refuseForward(res: ServerResponse, why: string): void {
    this.log.warn(`refused a forwarded request: ${why}`, { code: 'MCPG_FORWARD_REFUSED' });
    sendError(res, 403, new GatewayError('MCPG_FORWARD_REFUSED', `a request forwarded by another worker was refused: ${why}`));
  }

  private deliver(session: HttpChannel, parsed: Classified, req: IncomingMessage, res: ServerResponse): void {
    session.lastActive = performance.now();
    // The grants of the rules follow the token of the latest request (a refreshed token may carry new claims).
    session.agentSession.claims = this.claims.get(req);
    if (parsed.kind === 'request') {
      if (!session.expect(parsed.msg.id, res, accepts(req.headers.accept, 'text/event-stream'))) {
        return sendError(
          res,
          409,
          new GatewayError(
            'MCPG_INVALID_REQUEST',
            `request id ${JSON.stringify(parsed.msg.id)} is already in use by a request in flight on this session`,
          ),
          {},
          parsed.msg.id,
        );
      }
      return session.agentSession.handleMessage(parsed);
    }
    session.agentSession.handleMessage(parsed);
    if (parsed.kind === 'notification' && parsed.msg.method === 'notifications/cancelled') session.cancelled(parsed.msg.params?.requestId);
    res.writeHead(202).end();
  }

  /**
   * Graceful: stop accepting, let calls in flight finish (up to the drain deadline), then end every
   * session (what is still open is answered with MCPG_SHUTTING_DOWN) and close every socket.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.draining = true;
      clearInterval(this.sweepTimer);
      const closed = this.listeners.stopAccepting();
      // Listen streams never end by themselves: they end now, gracefully (the empty listen result).
      for (const listen of [...this.modernListens]) listen.close();
      if (this.openPosts() > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (this.onDrained = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, this.opts.drainMs))),
        ]);
        clearTimeout(timer);
        if (this.openPosts() > 0)
          this.log.warn(`shutdown: ${this.openPosts()} calls still running after ${this.opts.drainMs} ms; ending them`);
      }
      this.table.endAll();
      for (const request of [...this.modernCalls]) request.close();
      this.listeners.closeAllConnections();
      await closed;
    })();
    return this.closing;
  }

  private openPosts(): number {
    let open = this.modernCalls.size;
    for (const session of this.channels.values()) open += session.openPosts;
    return open;
  }
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
