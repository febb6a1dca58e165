// The Streamable HTTP front (MCP 2025-11-25): many agents on one port, each session with its own
// identity (from its bearer token), view of the catalog and GET stream. `/mcp` takes POST (one
// JSON-RPC message), GET (the session's stream) and DELETE (end the session); the ops routes
// (ops.ts) share the port and need no session.
//
// Hot path (a tools/call POST): auth (one hash and map lookup), body read, one JSON.parse, a map
// lookup for the session, then the agent session; the answer is written once as application/json.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../gateway/gateway.js';
import type { Logger } from '../observability/logger.js';
import { classify, wireLimits, type Classified } from '../wire/jsonrpc.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../wire/protocol.js';
import { authenticate, challenge, resourceMetadata, resourceMetadataUrl, type AuthClaims } from '../auth/auth.js';
import { IssuerKeys } from '../auth/issuers.js';
import { DEFAULT_MAX_AGENT_BUFFER, HttpChannel } from './http-channel.js';
import { ReplayStore, type ReplayCounters, type ReplayLimits } from './sse-replay.js';
import { DEFAULT_MAX_BODY_BYTES, accepts, hostAllowed, isLoopback, originAllowed, readBody, repeatedHeader, sendError, sendJson } from './http-util.js';
import { handleOps, type OpsContext } from './ops.js';
import { ModernPost, refuse } from './http-modern.js';
import { checkHeaders, eraOf, isModernVersion, paramHeaders, PARAM_HEADERS, type EraOf, type WithParamHeaders } from '../wire/era.js';
import type { ModernRequest } from '../gateway/modern.js';
import type { ClusterLink } from '../cluster/link.js';
import type { RequestId } from '../wire/jsonrpc.js';

export interface HttpFrontOptions {
  host: string;
  port: number;
  /** 'off' is refused unless `host` is a loopback address (checked by the CLI and here). */
  auth: 'on' | 'off';
  /** With auth off: the agent of requests without an `X-Mcpgate-Agent` header. */
  defaultAgent: string;
  /**
   * Whether `defaultAgent` was configured (--agent, MCPGATE_AGENT) rather than the built-in default.
   * If not, an unnamed agent has no identity of its own: a per-agent server gives each of its
   * sessions its own connection rather than one shared by every unnamed agent.
   */
  defaultAgentExplicit?: boolean;
  maxBodyBytes?: number;
  /** Browser origins allowed besides loopback ones (`*`: any). */
  allowedOrigins?: readonly string[];
  /** `Host` names allowed besides loopback ones (and, off loopback, IP literals); `*`: any. */
  allowedHosts?: readonly string[];
  /**
   * Bytes written for one session but not yet taken by its agent, past which mcpgate stops: a GET
   * stream over it is dropped, answers over it end the session (default DEFAULT_MAX_AGENT_BUFFER).
   */
  maxAgentBuffer?: number;
  /** A session with no request, no open POST and no GET stream for this long ends (default 30 min). */
  sessionIdleMs?: number;
  maxSessions?: number;
  maxSessionsPerAgent?: number;
  /** How long shutdown lets calls in flight finish before it ends them (default 10 s). */
  drainMs?: number;
  /** Counts requests by route and status (the metrics registry). */
  onRequest?: (route: string, status: number) => void;
  /** Bounds of the SSE replay logs (resumable streams, sse-replay.ts; defaults REPLAY_DEFAULTS). */
  replay?: Partial<ReplayLimits>;
  /** Counts replay-log events and resumptions (the metrics registry). */
  onReplay?: ReplayCounters;
  ops: Omit<OpsContext, 'draining' | 'url' | 'cluster'>;
  /** Routes under `prefix` (e.g. the console at /ui) answered by another room, behind the same gate. */
  mounted?: MountedRoutes;
  /**
   * With `--redis`: the cluster this worker is part of. A session not held here is forwarded to
   * its owner or adopted (cluster/link.ts); without it, such a session is 404 at once.
   */
  cluster?: ClusterLink;
  /**
   * With `--workers N`: `/metrics` on the shared port answers with every worker of the host (asked
   * through the primary, cli/host-metrics.ts); each worker's own port still answers for it alone.
   */
  hostMetrics?: () => Promise<string>;
}

export interface MountedRoutes {
  /** A path such as `/ui`: it and everything under `/ui/` go to `handle`. */
  prefix: string;
  handle(path: string, req: IncomingMessage, res: ServerResponse): void;
}

export const HTTP_DEFAULTS = { sessionIdleMs: 30 * 60_000, maxSessions: 1000, maxSessionsPerAgent: 100, drainMs: 10_000, maxAgentBuffer: DEFAULT_MAX_AGENT_BUFFER };

const MCP_PATH = '/mcp';
const METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Why sessions end at shutdown: in a cluster their records stay, for another worker to adopt. */
const SHUTDOWN = 'closed at shutdown';

export class HttpFront {
  readonly sessions = new Map<string, HttpChannel>();
  /** Modern (2026-07-28) requests whose POST is open; listen streams apart (shutdown ends them first). */
  private readonly modernCalls = new Set<ModernRequest>();
  private readonly modernListens = new Set<ModernRequest>();
  private readonly perAgent = new Map<string, number>();
  private readonly server: Server;
  /** `--workers N`: this worker's own port beside the shared one, where other workers forward to. */
  private privateServer: Server | undefined;
  private readonly allowed: ReadonlySet<string>;
  private readonly allowedHosts: ReadonlySet<string>;
  private readonly loopbackOnly: boolean;
  private readonly limit: number;
  private readonly opts: typeof HTTP_DEFAULTS;
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

  constructor(private readonly gateway: Gateway, private readonly options: HttpFrontOptions, private readonly log: Logger) {
    if (options.auth === 'off' && !isLoopback(options.host)) {
      throw new GatewayError('MCPG_USAGE', `auth may be turned off only on a loopback address, not on ${options.host}`);
    }
    this.allowed = new Set(options.allowedOrigins ?? []);
    this.allowedHosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()));
    this.loopbackOnly = isLoopback(options.host);
    this.limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.opts = {
      sessionIdleMs: options.sessionIdleMs ?? HTTP_DEFAULTS.sessionIdleMs,
      maxSessions: options.maxSessions ?? HTTP_DEFAULTS.maxSessions,
      maxSessionsPerAgent: options.maxSessionsPerAgent ?? HTTP_DEFAULTS.maxSessionsPerAgent,
      drainMs: options.drainMs ?? HTTP_DEFAULTS.drainMs,
      maxAgentBuffer: options.maxAgentBuffer ?? HTTP_DEFAULTS.maxAgentBuffer,
    };
    this.replay = new ReplayStore(options.replay, options.onReplay);
    // A client that sends its headers or body too slowly is cut off (never a hang); GET streams are
    // not affected (their request is complete once its headers are in).
    this.server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 15_000, requestTimeout: 60_000 }, (req, res) => this.guarded(req, res));
    this.server.on('clientError', (err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      this.log.debug('malformed HTTP request', { error: err.message });
    });
  }

  /** Binds the port; resolves with the `/mcp` URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`cannot listen on ${this.options.host}:${this.options.port}: ${err.message}`));
      this.server.once('error', onError);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    const address = this.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}${MCP_PATH}`;
    const period = Math.max(1000, Math.min(30_000, Math.floor(this.opts.sessionIdleMs / 4)));
    this.sweepTimer = setInterval(() => this.sweep(), period);
    this.sweepTimer.unref();
    return this.url;
  }

  /**
   * A second listener of this worker alone (`--workers N`: under node:cluster the shared port cannot
   * say which worker a connection reaches, so other workers forward to this one). Same routes and
   * gate; the port is not shared (`exclusive`). Resolves with the port.
   */
  async listenPrivate(host: string): Promise<number> {
    const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 15_000, requestTimeout: 60_000 }, (req, res) => this.guarded(req, res, false));
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

  get sessionCount(): number {
    return this.sessions.size;
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
    if (this.options.onRequest !== undefined) {
      const count = this.options.onRequest;
      res.once('finish', () => count(path === MCP_PATH ? `${req.method ?? ''} ${MCP_PATH}` : path, res.statusCode));
    }
    if (!this.admit(req, res)) return;
    const mounted = this.options.mounted;
    if (mounted !== undefined && (path === mounted.prefix || path.startsWith(`${mounted.prefix}/`))) return mounted.handle(path, req, res);
    if (path === METADATA_PATH || path.startsWith(`${METADATA_PATH}/`)) return this.metadata(path, req, res);
    if (path !== MCP_PATH) {
      const { cluster, hostMetrics } = this.options;
      const ops = { ...this.options.ops, draining: this.draining, url: () => this.url, ...(cluster !== undefined && { cluster: () => cluster.status() }), ...(shared && hostMetrics !== undefined && { metrics: hostMetrics }) };
      return handleOps(path, req, res, ops, (r) => this.identify(req, r));
    }
    if (this.draining) return sendError(res, 503, new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down'), { connection: 'close' });
    void this.identify(req, res).then((agent) => {
      if (agent !== undefined) this.dispatch(req, res, agent);
    }).catch((err: unknown) => {
      this.log.error('internal error handling an HTTP request', { error: err });
      if (!res.headersSent) sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
      else res.destroy();
    });
  }

  private dispatch(req: IncomingMessage, res: ServerResponse, agent: string): void {
    switch (req.method) {
      case 'POST':
        return void this.post(req, res, agent).catch((err: unknown) => {
          this.log.error('internal error handling a POST', { error: err });
          sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
        });
      case 'GET':
        return this.get(req, res, agent);
      case 'DELETE':
        return this.delete(req, res, agent);
      default:
        return sendError(res, 405, new GatewayError('MCPG_INVALID_REQUEST', `method ${req.method ?? ''} is not allowed on ${MCP_PATH} (use POST, GET or DELETE)`), { allow: 'POST, GET, DELETE' });
    }
  }

  /**
   * The one gate in front of every route (MCP, ops, and whatever is added later): a header sent
   * twice (400), a `Host` that is not this machine's or an allowed name (403, DNS rebinding), an
   * `Origin` not allowed (403). False after answering.
   */
  private admit(req: IncomingMessage, res: ServerResponse): boolean {
    const repeated = repeatedHeader(req.rawHeaders);
    if (repeated !== undefined) {
      sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', `the ${repeated} header was sent more than once; send it once`), { connection: 'close' });
      return false;
    }
    const host = req.headers.host;
    if (!hostAllowed(host, this.allowedHosts, this.loopbackOnly)) {
      sendError(res, 403, new GatewayError('MCPG_HOST_FORBIDDEN', `host ${JSON.stringify(host)} is not allowed (this gateway answers to ${this.loopbackOnly ? 'localhost, 127.0.0.1 and [::1]' : 'IP addresses and localhost'}; allow a name with --allow-host)`));
      return false;
    }
    if (!originAllowed(req.headers.origin, this.allowed)) {
      sendError(res, 403, new GatewayError('MCPG_ORIGIN_FORBIDDEN', `origin ${req.headers.origin ?? ''} is not allowed (allow it with --allow-origin)`));
      return false;
    }
    return true;
  }

  /**
   * mcpgate's resource URI (RFC 8707): the rules' `auth.resource`, or the `/mcp` URL of the listen
   * address. OAuth access tokens must name it as audience; the resource metadata publishes it.
   */
  resourceUri(): string {
    return this.gateway.rules.auth?.resource ?? this.url;
  }

  /** The agent the request speaks for, or undefined after answering 401 (403 for a missing scope, 503 when the issuer's keys are unavailable). */
  private async identify(req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
    if (this.options.auth === 'off') {
      const named = req.headers['x-mcpgate-agent'];
      return typeof named === 'string' && named !== '' ? named : this.options.defaultAgent;
    }
    const rules = this.gateway.rules;
    const resource = this.resourceUri();
    const outcome = await authenticate(rules, req.headers.authorization, { issuers: this.issuers, resource });
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

  /**
   * RFC 9728 protected-resource metadata, at `/.well-known/oauth-protected-resource` and at that
   * path followed by the resource URI's path (where MCP clients look first). Behind the front's
   * gate like every route; no token needed. Served only with OAuth issuers in the rules.
   */
  private metadata(path: string, req: IncomingMessage, res: ServerResponse): void {
    const rules = this.gateway.rules;
    const resource = this.resourceUri();
    const suffix = path.slice(METADATA_PATH.length);
    const known = suffix === '' || suffix === MCP_PATH || suffix === new URL(resource).pathname;
    if (!known || (rules.auth?.oauth.length ?? 0) === 0) {
      return sendError(res, 404, new GatewayError('MCPG_INVALID_REQUEST', known
        ? 'no protected-resource metadata: the rules configure no OAuth issuer ("auth": {"oauth": …})'
        : `no route ${path} (the protected-resource metadata is at ${METADATA_PATH}${MCP_PATH})`));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, new GatewayError('MCPG_INVALID_REQUEST', `${path} answers GET only`), { allow: 'GET, HEAD' });
    sendJson(res, 200, resourceMetadata(rules, resource));
  }

  private async post(req: IncomingMessage, res: ServerResponse, agent: string): Promise<void> {
    const type = req.headers['content-type'];
    if (type === undefined || !type.includes('application/json')) {
      return sendError(res, 415, new GatewayError('MCPG_INVALID_REQUEST', `POST ${MCP_PATH} needs Content-Type: application/json (got ${type ?? 'none'})`));
    }
    const accept = req.headers.accept;
    if (!accepts(accept, 'application/json') && !accepts(accept, 'text/event-stream')) {
      return sendError(res, 406, new GatewayError('MCPG_INVALID_REQUEST', 'the Accept header must admit application/json and text/event-stream'));
    }
    const body = await readBody(req, this.limit);
    if (!body.ok) return sendError(res, body.status, body.error, body.status === 413 ? { connection: 'close' } : {});
    let value: unknown;
    try {
      value = JSON.parse(body.text);
    } catch (err) {
      return sendError(res, 400, new GatewayError('MCPG_PARSE_ERROR', `parse error: ${(err as Error).message}`));
    }
    if (Array.isArray(value)) return sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', 'JSON-RPC batches are not supported (MCP 2025-06-18 and later send one message per POST)'));
    const parsed = classify(value, body.text.length > 2 * wireLimits.maxDepth);
    if (parsed.kind === 'invalid') return sendError(res, 400, parsed.error, {}, parsed.id);
    if (parsed.kind === 'request' || parsed.kind === 'notification') {
      // The era is chosen per request, body first (the spec's compatibility section).
      const era = eraOf(parsed.msg.method, parsed.msg.params, parsed.kind === 'request');
      if (era.era !== 'legacy') return this.modern(req, res, agent, parsed, era);
      const header = req.headers['mcp-protocol-version'];
      if (typeof header === 'string' && isModernVersion(header.trim())) {
        return refuse(res, 400, parsed.kind === 'request' ? parsed.msg.id : null, -32602, `Invalid params: the MCP-Protocol-Version header names protocol revision ${header.trim()}, but the request is missing the required per-request _meta envelope (io.modelcontextprotocol/protocolVersion, io.modelcontextprotocol/clientCapabilities)`);
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    if (parsed.kind === 'request' && parsed.msg.method === 'initialize') {
      if (sessionId !== undefined) return sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', 'initialize starts a new session: send it without Mcp-Session-Id'), {}, parsed.msg.id);
      const capabilities = parsed.msg.params?.capabilities;
      const session = this.open(res, agent, this.identified(req), randomUUID(), typeof capabilities === 'object' && capabilities !== null && !Array.isArray(capabilities) ? capabilities as Record<string, unknown> : {}, false);
      if (session === undefined) return;
      return this.deliver(session, parsed, req, res);
    }
    const session = this.options.cluster === undefined ? this.find(sessionId, agent, res) : await this.locate(sessionId, agent, req, res, body.text, parsed.kind === 'request' ? parsed.msg.id : undefined);
    if (session === undefined) return;
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', `unsupported MCP-Protocol-Version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`));
    }
    this.deliver(session, parsed, req, res);
  }

  /** A modern (2026-07-28) request or notification: no session; its POST is its stream (http-modern.ts). */
  private modern(req: IncomingMessage, res: ServerResponse, agent: string, parsed: Classified & { kind: 'request' | 'notification' }, era: Exclude<EraOf, { era: 'legacy' }>): void {
    const id = parsed.kind === 'request' ? parsed.msg.id : null;
    const header = (name: string): string | undefined => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const refused = era.era === 'refused' ? era : checkHeaders(
      { protocolVersion: header('mcp-protocol-version'), method: header('mcp-method'), name: header('mcp-name') },
      parsed.msg.method, parsed.msg.params, era.envelope, parsed.kind === 'request',
    );
    if (refused !== undefined && refused.era === 'refused') return refuse(res, refused.status, id, refused.code, refused.message, refused.data);
    // A modern notification needs no answer; cancellation is closing the request's stream.
    if (parsed.kind === 'notification' || era.era !== 'modern' || era.envelope === undefined) return void res.writeHead(202).end();
    // Mcp-Param-* headers go on with the request to a modern HTTP server (the only place they mean anything).
    const params = paramHeaders(req.headers);
    if (typeof params === 'string') return refuse(res, 400, id, -32602, `Invalid params: ${params}`);
    if (params !== undefined) (parsed.msg as WithParamHeaders)[PARAM_HEADERS] = params;
    const identified = this.options.auth === 'on' || req.headers['x-mcpgate-agent'] !== undefined || this.options.defaultAgentExplicit === true;
    const post = new ModernPost(res, accepts(req.headers.accept, 'text/event-stream'), this.opts.maxAgentBuffer);
    const request = this.gateway.serveModern(parsed.msg, era.envelope, post, agent, true, 'http', identified, this.claims.get(req));
    if (post.done) return;
    const open = parsed.msg.method === 'subscriptions/listen' ? this.modernListens : this.modernCalls;
    open.add(request);
    res.once('close', () => {
      open.delete(request);
      if (!post.done) request.cancel();
      if (this.onDrained !== undefined && this.openPosts() === 0) this.onDrained();
    });
  }

  private deliver(session: HttpChannel, parsed: Classified, req: IncomingMessage, res: ServerResponse): void {
    session.lastActive = performance.now();
    // The grants of the rules follow the token of the latest request (a refreshed token may carry new claims).
    session.session.claims = this.claims.get(req);
    if (parsed.kind === 'request') {
      if (!session.expect(parsed.msg.id, res, accepts(req.headers.accept, 'text/event-stream'))) {
        return sendError(res, 409, new GatewayError('MCPG_INVALID_REQUEST', `request id ${JSON.stringify(parsed.msg.id)} is already in use by a request in flight on this session`), {}, parsed.msg.id);
      }
      return session.session.handleMessage(parsed);
    }
    session.session.handleMessage(parsed);
    res.writeHead(202).end();
  }

  /** Whether the agent has an identity of its own (authenticated, named, or configured). */
  private identified(req: IncomingMessage): boolean {
    return this.options.auth === 'on' || req.headers['x-mcpgate-agent'] !== undefined || this.options.defaultAgentExplicit === true;
  }

  /**
   * With a cluster: the session a request names, held here, or adopted here; undefined after
   * answering (forwarded to its owner and relayed, refused, or unknown).
   */
  private async locate(sessionId: string | string[] | undefined, agent: string, req: IncomingMessage, res: ServerResponse, body: string, id: RequestId | undefined): Promise<HttpChannel | undefined> {
    const cluster = this.options.cluster!;
    if (typeof sessionId !== 'string') return this.find(sessionId, agent, res);
    if (cluster.isForwarded(req)) {
      const why = cluster.refuseForward(req, req.url ?? MCP_PATH, sessionId, body);
      if (why !== undefined) {
        this.log.warn(`refused a forwarded request: ${why}`, { code: 'MCPG_FORWARD_REFUSED', session: sessionId });
        sendError(res, 403, new GatewayError('MCPG_FORWARD_REFUSED', `a request forwarded by another worker was refused: ${why}`));
        return undefined;
      }
    }
    if (this.sessions.has(sessionId)) return this.find(sessionId, agent, res);
    const placed = await cluster.place(req, res, sessionId, agent, body, id);
    if (placed.kind === 'answered') return undefined;
    // Another request of this session may have adopted it meanwhile.
    if (placed.kind === 'unknown' || this.sessions.has(sessionId)) return this.find(sessionId, agent, res);
    const record = placed.record;
    return this.open(res, agent, record?.identified ?? this.identified(req), sessionId, record?.capabilities ?? {}, true);
  }

  /**
   * A new session for `agent` (or one adopted from another worker, which starts initialized), within
   * the limits; undefined after answering why not.
   */
  private open(res: ServerResponse, agent: string, identified: boolean, id: string, capabilities: Record<string, unknown>, adopted: boolean): HttpChannel | undefined {
    const mine = this.perAgent.get(agent) ?? 0;
    if (mine >= this.opts.maxSessionsPerAgent) {
      sendError(res, 429, new GatewayError('MCPG_SESSION_LIMIT', `agent "${agent}" already has ${mine} sessions (the limit is ${this.opts.maxSessionsPerAgent}); end one with DELETE or let idle ones expire`));
      return undefined;
    }
    if (this.sessions.size >= this.opts.maxSessions) {
      sendError(res, 503, new GatewayError('MCPG_SESSION_LIMIT', `the gateway already serves ${this.sessions.size} sessions (the limit is ${this.opts.maxSessions})`), { 'retry-after': '5' });
      return undefined;
    }
    // In a cluster the limit is the cluster's (an adopted session is already one of them).
    const elsewhere = adopted ? undefined : this.options.cluster?.sessionsElsewhere();
    if (elsewhere !== undefined && this.sessions.size + elsewhere >= this.opts.maxSessions) {
      sendError(res, 503, new GatewayError('MCPG_SESSION_LIMIT', `the cluster already serves ${this.sessions.size + elsewhere} sessions (the limit is ${this.opts.maxSessions}, counted across its workers)`), { 'retry-after': '5' });
      return undefined;
    }
    const log = this.log.child({ agent, session: id });
    const session = new HttpChannel(id, agent, log, this.replay, () => {
      if (this.onDrained !== undefined && this.openPosts() === 0) this.onDrained();
    }, this.opts.maxAgentBuffer, (why) => this.end(session, why));
    session.session = this.gateway.openSession(session, agent, true, 'http', identified, id);
    if (adopted) session.session.resume(capabilities);
    this.sessions.set(id, session);
    this.perAgent.set(agent, mine + 1);
    this.options.cluster?.opened(id, { agent, capabilities, identified });
    if (!adopted) res.setHeader('mcp-session-id', id);
    log.debug('session opened');
    return session;
  }

  /** The session a request names; answers 400 (none named) or 404 (unknown, or another agent's). */
  private find(sessionId: string | string[] | undefined, agent: string, res: ServerResponse): HttpChannel | undefined {
    if (typeof sessionId !== 'string') {
      sendError(res, 400, new GatewayError('MCPG_INVALID_REQUEST', 'Mcp-Session-Id header is required (send initialize first to get one)'));
      return undefined;
    }
    const session = this.sessions.get(sessionId);
    // Another agent's session is answered exactly like an unknown one: ids reveal nothing.
    if (session === undefined || session.agent !== agent) {
      sendError(res, 404, new GatewayError('MCPG_SESSION_NOT_FOUND', `session ${sessionId} not found (it expired, was ended, or the gateway restarted); send initialize to start a new one`));
      return undefined;
    }
    return session;
  }

  private get(req: IncomingMessage, res: ServerResponse, agent: string): void {
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && isModernVersion(version.trim())) {
      return refuse(res, 405, null, -32000, `Method not allowed: protocol revision ${version.trim()} is POST only (change notifications come on a subscriptions/listen stream)`);
    }
    if (!accepts(req.headers.accept, 'text/event-stream')) {
      return sendError(res, 406, new GatewayError('MCPG_INVALID_REQUEST', `GET ${MCP_PATH} opens an event stream: Accept must admit text/event-stream`));
    }
    const sessionId = req.headers['mcp-session-id'];
    if (this.options.cluster !== undefined) {
      this.locate(sessionId, agent, req, res, '', undefined).then((session) => session !== undefined && this.stream(session, req, res)).catch((err: unknown) => this.failed(res, err));
      return;
    }
    const session = this.find(sessionId, agent, res);
    if (session !== undefined) this.stream(session, req, res);
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
    const why = refused === 'gap' ? 'events after it are no longer kept (the replay buffer is bounded by --replay-buffer, --replay-age and --replay-total)' : 'it is not an event id of this session';
    sendError(res, 400, new GatewayError('MCPG_EVENT_ID_UNKNOWN', `cannot resume from Last-Event-ID ${JSON.stringify(lastEventId.slice(0, 64))}: ${why}; open a new stream with GET without Last-Event-ID`));
  }

  private delete(req: IncomingMessage, res: ServerResponse, agent: string): void {
    const ended = (session: HttpChannel | undefined): void => {
      if (session === undefined) return;
      this.end(session, 'ended by the agent');
      res.writeHead(200).end();
    };
    const sessionId = req.headers['mcp-session-id'];
    if (this.options.cluster !== undefined) return void this.locate(sessionId, agent, req, res, '', undefined).then(ended).catch((err: unknown) => this.failed(res, err));
    ended(this.find(sessionId, agent, res));
  }

  private failed(res: ServerResponse, err: unknown): void {
    this.log.error('internal error locating a session in the cluster', { error: err });
    if (!res.headersSent) sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
    else res.destroy();
  }

  private end(session: HttpChannel, why: string): void {
    if (!this.sessions.delete(session.id)) return;
    const left = (this.perAgent.get(session.agent) ?? 1) - 1;
    if (left <= 0) this.perAgent.delete(session.agent);
    else this.perAgent.set(session.agent, left);
    session.close();
    this.options.cluster?.ended(session.id, why !== SHUTDOWN);
    this.log.debug(`session ${why}`, { agent: session.agent, session: session.id });
  }

  /** Expires idle sessions and keeps GET streams alive. */
  private sweep(): void {
    const cutoff = performance.now() - this.opts.sessionIdleMs;
    this.replay.sweep();
    for (const session of [...this.sessions.values()]) {
      session.keepAlive();
      if (session.lastActive < cutoff && session.openPosts === 0 && !session.hasStream) this.end(session, 'expired after being idle');
    }
  }

  /**
   * Graceful: stop accepting, let calls in flight finish (up to the drain deadline), then end every
   * session (what is still open is answered with MCPG_SHUTTING_DOWN) and close every socket.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.draining = true;
      clearInterval(this.sweepTimer);
      const servers = this.privateServer === undefined ? [this.server] : [this.server, this.privateServer];
      const closed = Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
      this.server.closeIdleConnections();
      this.privateServer?.closeIdleConnections();
      // Listen streams never end by themselves: they end now, gracefully (the empty listen result).
      for (const listen of [...this.modernListens]) listen.close();
      if (this.openPosts() > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (this.onDrained = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, this.opts.drainMs))),
        ]);
        clearTimeout(timer);
        if (this.openPosts() > 0) this.log.warn(`shutdown: ${this.openPosts()} calls still running after ${this.opts.drainMs} ms; ending them`);
      }
      for (const session of [...this.sessions.values()]) this.end(session, SHUTDOWN);
      for (const request of [...this.modernCalls]) request.close();
      this.server.closeAllConnections();
      this.privateServer?.closeAllConnections();
      await closed;
    })();
    return this.closing;
  }

  private openPosts(): number {
    let open = this.modernCalls.size;
    for (const session of this.sessions.values()) open += session.openPosts;
    return open;
  }
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
