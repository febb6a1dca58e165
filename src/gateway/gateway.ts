// The gateway: the composition of the room. It owns the connections to servers (made by an injected
// factory, so tests can put an in-memory server behind them), the catalog, the pins and the agent
// registry, and hands each helper the parts it needs: the router (router.ts) decides where a request
// goes, an agent session (session.ts) carries what flows left to right, server-events.ts what flows
// right to left. Nothing here is imported back by those helpers.

import type { RemoteServerConfig, ServerConfig, ServersConfig, SessionScope } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { AuditLog } from '../observability/audit.js';
import type { Tracing } from '../observability/tracing.js';
import { Catalog } from '../catalog/catalog.js';
import { Refresher } from '../catalog/refresher.js';
import { CatalogLimits } from '../catalog/limits.js';
import { Connection, type ConnectionHooks, type SupervisionSettings } from '../servers/connection.js';
import { DEFAULT_SEPARATOR } from '../catalog/names.js';
import { LIST_KINDS, fetchLists, type ListKind } from '../servers/lists.js';
import type { StopTimings } from '../servers/transport.js';
import type { UpstreamCredentials } from '../servers/credentials.js';
import { secretEnvNames } from '../config/child-env.js';
import { processGroups } from '../servers/process-groups.js';
import { ConnectionPool } from '../servers/pool.js';
import type { BreakerOptions } from '../servers/breaker.js';
import type { Clock } from '../servers/clock.js';
import { PinKeeper } from '../pins/keeper.js';
import type { Claims } from '../rules/decide.js';
import { OPEN_RULES, type Rules } from '../rules/load.js';
import { AgentViews } from './agent-views.js';
import { OwnSubscriptions, Subscriptions } from './subscriptions.js';
import { GatewayMetrics } from '../observability/gateway-metrics.js';
import { metricsSource } from './metrics-source.js';
import { GATEWAY_INFO } from '../version.js';
import { gatewayStatus } from './status.js';
import type { PinMode } from '../pins/review.js';
import { AgentSession, type AgentChannel, type SessionParts } from './session.js';
import { LOG_LEVEL_RANK } from './methods.js';
import { Agents } from './agents.js';
import { OwnCatalogs } from './own-catalogs.js';
import { Router } from './router.js';
import { ServerEvents } from './server-events.js';
import type { DiscoveryParts } from './discovery.js';
import { serveModern, type ModernCall, type ModernRequest, type ModernSink } from './modern.js';
import { RequestStateSealer } from './request-state.js';
import type { JsonRpcRequest } from '../wire/jsonrpc.js';
import type { Envelope } from '../wire/era.js';

/** Log levels by rank (methods.ts ranks them). */
const LOG_LEVELS = Object.keys(LOG_LEVEL_RANK).sort((a, b) => LOG_LEVEL_RANK[a]! - LOG_LEVEL_RANK[b]!);

/**
 * Makes the connection to one server. The default spawns or dials the real server; unit tests pass
 * one whose transport is an in-memory server (test/unit/gateway-routing.test.ts).
 */
export type ConnectionFactory = (config: ServerConfig, hooks: ConnectionHooks, log: Logger, account?: string) => Connection;

export interface GatewayOptions {
  config: ServersConfig;
  log: Logger;
  /**
   * A Streamable HTTP server's OAuth credentials, one per connection (the composition root makes them
   * from src/oauth); `account`: the agent whose own login a per-agent server's pooled connection uses.
   */
  credentials?: (config: RemoteServerConfig, account?: string) => UpstreamCredentials | undefined;
  separator?: string;
  startupTimeoutMs?: number;
  stopTimings?: StopTimings;
  /** Requests one agent may have in flight on servers at once (default 1000). */
  maxInflight?: number;
  /** Pinning of tool definitions; absent means off. */
  pins?: { mode: PinMode; dir: string };
  /** Neutralize escape sequences and invisible characters in what servers say (default true). */
  sanitize?: boolean;
  /** Reconnect, park and circuit-breaker settings (defaults in servers/connection.ts). */
  supervision?: SupervisionSettings;
  /** Per-agent rules; absent means every agent may use every server. */
  rules?: Rules;
  /** The AES-256 key sealing modern agents' requestState (MCPGATE_REQUEST_STATE_KEY); absent: made at start. */
  requestStateKey?: Buffer;
  /** `aggregate` (default): the full catalog; `discovery`: the meta-tools only. */
  mode?: 'aggregate' | 'discovery';
  /** Offer get_gateway_status in discovery mode. */
  debug?: boolean;
  /** How a connection is made (default: `new Connection` with the settings above); the pool uses it too. */
  connect?: ConnectionFactory;
  /** The pool's creation breaker per per-agent/per-session server (default: the connection breaker's defaults). */
  poolBreaker?: Partial<BreakerOptions>;
  /** The pool's clock (tests drive idle and TTL with a fake one). */
  poolClock?: Clock;
  /** The audit trail (--audit); the composition root owns and closes it. */
  audit?: AuditLog;
  /** OpenTelemetry traces (--otlp-endpoint); the composition root owns and closes it. */
  tracing?: Tracing;
}

export const DEFAULT_MAX_INFLIGHT = 1000;

/**
 * The pool scope of a session for a pooled server: its agent's identity (`agent:ID`) for
 * per-agent, itself (`session:N`) for per-session. An agent with no identity of its own (stdio
 * without --agent) gets its session's scope even on a per-agent server: never one shared by accident.
 */
export function scopeOf(session: { readonly agent: string; readonly identified: boolean; readonly serial: number }, mode: SessionScope): string {
  return mode === 'per-agent' && session.identified ? `agent:${session.agent}` : `session:${session.serial}`;
}

/**
 * The agent's own headers for a remote server (the rules' `serverHeaders`): only for a verified
 * identity, only from the agent's own entry (never `default`'s, which the rules refuse anyway).
 */
export function agentHeaders(rules: Rules, owner: { readonly agent: string; readonly identified: boolean }, server: string): Readonly<Record<string, string>> | undefined {
  if (!owner.identified) return undefined;
  return rules.agents.get(owner.agent)?.serverHeaders.get(server);
}

/** The key of one scope's view of one server (the own refresher's and `ownConns`'). */
function ownKey(server: string, scope: string): string {
  return `${server}\u0000${scope}`;
}

export interface ServerSummary {
  server: string;
  state: 'ready' | 'failed' | 'disabled';
  tools: number;
  resources: number;
  prompts: number;
  error?: string;
  note?: string;
}

export class Gateway {
  readonly catalog: Catalog;
  readonly log: Logger;
  readonly connections = new Map<string, Connection>();
  /** The servers configuration in force (replaced by a reload). */
  config: ServersConfig;
  /** The open agent sessions. */
  readonly sessions = new Agents();
  /** Resource subscriptions: each URI subscribed on its server once, while an agent holds it. */
  readonly subscriptions: Subscriptions<AgentSession>;
  /** Resource subscriptions on pooled connections: per connection, updates to its owners only. */
  readonly ownSubscriptions: OwnSubscriptions<AgentSession>;
  /** Resolves once every enabled server is ready or has failed (the first lists wait for it). */
  readonly settled: Promise<void>;
  private resolveSettled!: () => void;
  private isSettled = false;
  private readonly refresher: Refresher;
  /** What each server's limits cut from its lists (logged once, shown in the status). */
  readonly limits: CatalogLimits;
  readonly pins: PinKeeper;
  /** The rules in force: one immutable snapshot, swapped whole on reload. */
  rules: Rules;
  readonly views: AgentViews;
  /** Modern agents' calls waiting for their answers (input required), by the handle their requestState names. */
  private readonly waitingForInput = new Map<string, ModernCall>();
  private readonly requestStates: RequestStateSealer;
  /** Call outcomes, errors and HTTP requests as they happen; states read at scrape time. */
  readonly metrics: GatewayMetrics;
  /** Where a request goes, under the rules and the pins. */
  readonly router: Router;
  private readonly serverEvents: ServerEvents;
  /** What a connection tells the gateway (given to the connection factory). */
  readonly hooks: ConnectionHooks;
  /** What every agent session is given. */
  private readonly sessionParts: SessionParts;
  private readonly connect: ConnectionFactory;
  /** Connections of per-agent and per-session servers, one per (server, agent or agent session). */
  readonly pool: ConnectionPool;
  /** What those connections list, per scope: each owner's view of its per-agent/per-session servers. */
  readonly own: OwnCatalogs;
  /** Debounced refreshes of a pooled connection's lists (its list_changed), keyed `server\0scope`. */
  private readonly ownRefresher: Refresher;
  /** The pooled connection each own catalog's part was listed from, by the same key. */
  private readonly ownConns = new Map<string, Connection>();
  /** Servers whose instructions changed since they were approved: not passed to agents. */
  private readonly heldInstructions = new Set<string>();
  private closing: Promise<void> | undefined;

  constructor(private readonly options: GatewayOptions) {
    this.log = options.log;
    this.config = options.config;
    this.catalog = new Catalog(options.config.servers, { separator: options.separator, sanitize: options.sanitize, onWarning: (warning) => this.log.warn(`catalog: ${warning}`) });
    this.limits = new CatalogLimits(this.log);
    this.pins = new PinKeeper({
      mode: options.pins?.mode ?? 'off',
      dir: options.pins?.dir ?? '.mcpgate',
      log: this.log,
      onStoreChanged: () => void this.reviewAll(),
    });
    this.rules = options.rules ?? OPEN_RULES;
    this.views = new AgentViews(this.catalog, () => this.rules);
    this.requestStates = new RequestStateSealer(options.requestStateKey);
    this.metrics = new GatewayMetrics({
      version: GATEWAY_INFO.version,
      source: metricsSource(this),
      onCollectError: (metric, error) => this.log.warn('a metric could not be collected', { metric, error }),
    });
    this.subscriptions = new Subscriptions(this.catalog, this.connections, this.log);
    this.ownSubscriptions = new OwnSubscriptions(this.log);
    this.refresher = new Refresher((server, kinds) => this.refresh(server, kinds), this.log);
    this.own = new OwnCatalogs(options.config.servers, { separator: options.separator, sanitize: options.sanitize });
    this.ownRefresher = new Refresher((key, kinds) => this.refreshOwn(key, kinds), this.log);
    this.settled = new Promise((resolve) => (this.resolveSettled = resolve));
    this.router = new Router({ catalog: this.catalog, connections: this.connections, rules: () => this.rules, hasSettled: () => this.isSettled, pinsDir: this.pins.dir });
    this.serverEvents = new ServerEvents({
      agents: this.sessions,
      catalog: this.catalog,
      subscriptions: this.subscriptions,
      ownSubscriptions: this.ownSubscriptions,
      refresh: (server, kind) => this.refresher.request(server, kind),
      refreshOwn: (conn, kind) => {
        const scope = this.pool.entryOf(conn)?.scope;
        const key = scope === undefined ? undefined : ownKey(conn.name, scope);
        if (key !== undefined && this.ownConns.get(key) === conn) this.ownRefresher.request(key, kind);
      },
      log: this.log,
    });
    // A pooled server's catalog connection (config.sessions is not "shared") lists it and nothing
    // more: what it sends besides list changes belongs to no agent.
    this.hooks = {
      notification: (conn, msg) => (conn.config.sessions === 'shared' ? this.serverEvents.notification(conn, msg) : this.serverEvents.owned(conn, msg, undefined)),
      serverRequest: (conn, msg, related) => this.serverEvents.serverRequest(conn, msg, related, conn.config.sessions === 'shared' ? undefined : new Set()),
      ready: (conn) => this.ready(conn),
      interrupted: (conn) => this.interrupted(conn),
      lost: (conn) => this.lost(conn),
    };
    const discovery: DiscoveryParts | undefined = this.mode === 'discovery' ? {
      servers: () => this.config,
      connections: this.connections,
      catalog: this.catalog,
      rules: () => this.rules,
      separator: options.separator ?? DEFAULT_SEPARATOR,
      debug: this.debug,
      status: () => this.status(),
    } : undefined;
    this.sessionParts = {
      router: this.router,
      views: this.views,
      settling: this,
      catalog: this.catalog,
      connections: this.connections,
      subscriptions: this.subscriptions,
      ownSubscriptions: this.ownSubscriptions,
      metrics: this.metrics,
      audit: options.audit,
      tracing: options.tracing,
      discovery,
      maxInflight: this.maxInflight,
      sanitize: this.sanitizes,
      instructions: () => this.instructions(),
      setServersLogLevel: (session) => Promise.all([this.setServersLogLevel(), this.setOwnLogLevel(session)]).then(() => undefined),
      closed: (session) => this.sessionClosed(session),
      scoped: (session, conn) => {
        const mode = conn.config.sessions;
        if (mode === 'shared') return conn;
        return this.pool.get(conn.config, scopeOf(session, mode), session, agentHeaders(this.rules, session, conn.config.name));
      },
      own: (session) => this.own.of(session),
      rootsChanged: (session) => {
        for (const conn of this.connections.values()) if (conn.config.sessions === 'shared' && conn.state === 'ready') conn.notify('notifications/roots/list_changed');
        for (const entry of this.pool.list()) {
          if (entry.started && entry.conn.state === 'ready' && entry.scope === scopeOf(session, entry.conn.config.sessions)) entry.conn.notify('notifications/roots/list_changed');
        }
      },
    };
    this.connect = options.connect ?? ((config, hooks, log, account) => new Connection(config, hooks, log, {
      startupTimeoutMs: options.startupTimeoutMs ?? 30_000,
      stopTimings: options.stopTimings,
      supervision: options.supervision,
      secretEnv: () => secretEnvNames(this.rules.raw),
      ...(config.type === 'http' && { credentials: options.credentials?.(config, account) }),
    }));
    this.pool = new ConnectionPool({
      // A per-agent scope (`agent:ID`, a verified identity) signs in upstream with that agent's own login.
      create: (config, scope) => this.connect(config, this.pooledHooks(scope), this.log.child({ server: config.name, scope }), scope.startsWith('agent:') ? scope.slice('agent:'.length) : undefined),
      busy: (conn) => this.sessions.callsOn(conn) > 0,
      log: this.log,
      breaker: options.poolBreaker ?? options.supervision?.breaker,
      clock: options.poolClock,
    });
  }

  /** The sessions a pooled connection of `scope` belongs to. */
  owners(scope: string, mode: SessionScope): Set<AgentSession> {
    const owners = new Set<AgentSession>();
    for (const session of this.sessions) if (scopeOf(session, mode) === scope) owners.add(session);
    return owners;
  }

  /** The sessions that own a pool scope's connections (`agent:ID` or `session:N`), whatever the server's mode. */
  ownersOf(scope: string): Set<AgentSession> {
    const owners = new Set<AgentSession>();
    for (const session of this.sessions) if (scopeOf(session, 'per-agent') === scope || scopeOf(session, 'per-session') === scope) owners.add(session);
    return owners;
  }

  /**
   * What a pooled connection tells the gateway: its messages go to its owners only; what it lists
   * is its owners' view of the server (own-catalogs.ts), never the catalog every agent sees.
   */
  private pooledHooks(scope: string): ConnectionHooks {
    return {
      notification: (conn, msg) => this.serverEvents.owned(conn, msg, this.owners(scope, conn.config.sessions)),
      serverRequest: (conn, msg, related) => this.serverEvents.serverRequest(conn, msg, related, this.owners(scope, conn.config.sessions)),
      // A new pooled connection is listed for its owners and gets their log level before it serves them.
      ready: async (conn) => {
        this.ownConns.set(ownKey(conn.name, scope), conn);
        await Promise.all([this.listOwn(conn, scope, LIST_KINDS), this.setPooledLogLevel(conn, this.owners(scope, conn.config.sessions))]);
      },
      // Lost while serving (not closed by us): its state is gone, so it is not restarted in place but
      // reaped, and the next call makes a fresh one. Its owners meanwhile see the shared view of the
      // server (the catalog connection's lists, kept through its own restarts): the same tools unless
      // their own lists differed, so a crash is no list change for them either (issue 15).
      interrupted: (conn) => this.pooledLost(conn, scope, true),
      lost: (conn, reason) => this.pooledLost(conn, scope, reason !== undefined),
    };
  }

  private pooledLost(conn: Connection, scope: string, reap: boolean): void {
    this.dropOwn(conn, scope);
    this.ownSubscriptions.forget(conn);
    for (const session of this.sessions) session.connectionLost(conn);
    if (reap) this.pool.reap(conn);
  }

  /**
   * Lists a pooled connection (all kinds when it becomes ready, the changed ones on its
   * list_changed), reviews its tools against the pins as a shared server's are (a new tool is
   * pinned or held the same way), and tells the owners whose view changed.
   */
  private async listOwn(conn: Connection, scope: string, kinds: readonly ListKind[]): Promise<void> {
    const key = ownKey(conn.name, scope);
    const { lists } = await fetchLists(conn, kinds);
    if (this.ownConns.get(key) !== conn || conn.state !== 'ready') return;
    const review = lists.tools === undefined ? undefined : await this.pins.check(conn.name, lists.tools, undefined, scope);
    if (this.ownConns.get(key) !== conn || conn.state !== 'ready') return;
    const changed = this.own.set(scope, conn.name, lists, review?.held);
    if (changed.length > 0) this.log.debug('own catalog listed', { server: conn.name, scope, changed });
    this.sessions.announce(changed, this.ownersOf(scope));
  }

  private async refreshOwn(key: string, kinds: ListKind[]): Promise<void> {
    const conn = this.ownConns.get(key);
    const scope = conn === undefined ? undefined : this.pool.entryOf(conn)?.scope;
    if (conn?.state !== 'ready' || scope === undefined) return;
    await this.listOwn(conn, scope, kinds);
  }

  /** A pooled connection is gone: its owners' view of the server is the shared one again. */
  private dropOwn(conn: Connection, scope: string): void {
    const key = ownKey(conn.name, scope);
    if (this.ownConns.get(key) !== conn) return;
    this.ownConns.delete(key);
    this.ownRefresher.forget(key);
    this.pins.forget(conn.name, scope);
    this.sessions.announce(this.own.remove(scope, conn.name), this.ownersOf(scope));
  }

  get mode(): 'aggregate' | 'discovery' {
    return this.options.mode ?? 'aggregate';
  }

  get debug(): boolean {
    return this.options.debug ?? false;
  }

  /** Set by the composition root: the parts of the status only it knows (reload status). */
  statusSource: () => Record<string, unknown> = () => ({});

  /** What an operator needs to see (get_gateway_status): reloads, rules, servers, paths. */
  status(): Record<string, unknown> {
    return gatewayStatus(this);
  }

  get sanitizes(): boolean {
    return this.options.sanitize ?? true;
  }

  get maxInflight(): number {
    return this.options.maxInflight ?? DEFAULT_MAX_INFLIGHT;
  }

  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  get hasSettled(): boolean {
    return this.isSettled;
  }

  /** Starts every enabled server in parallel; one that fails is reported and left out. */
  async start(): Promise<ServerSummary[]> {
    await this.pins.start();
    const summaries = await Promise.all(this.config.servers.map((config) => this.launch(config)));
    this.isSettled = true;
    this.resolveSettled();
    return summaries;
  }

  /** Starts one configured server (or reports why not) and logs its summary line. */
  async launch(config: ServerConfig): Promise<ServerSummary> {
    if (config.disabled) return this.report({ server: config.name, state: 'disabled', tools: 0, resources: 0, prompts: 0 });
    return this.report(await this.startServer(config));
  }

  private async startServer(config: ServerConfig): Promise<ServerSummary> {
    const log = this.log.child({ server: config.name });
    const conn = this.connect(config, this.hooks, log);
    this.connections.set(config.name, conn);
    const ready = await conn.start();
    if (!ready) {
      const next = conn.nextStep;
      const error = `${conn.lastError?.message ?? `server "${config.name}" failed to start`}${next !== undefined ? `; ${next}` : ''}`;
      return { server: config.name, state: 'failed', tools: 0, resources: 0, prompts: 0, error };
    }
    const counts = this.catalog.counts(config.name);
    const heldCount = this.catalog.heldCount(config.name);
    const note = heldCount > 0 ? ` (${heldCount} held until approved)` : undefined;
    return { server: config.name, state: 'ready', tools: counts.tools, resources: counts.resources + counts.resourceTemplates, prompts: counts.prompts, ...(note !== undefined && { note }) };
  }

  /**
   * A session is ready (first start or reconnect): list everything (a list its 2026-07-28 server
   * called fresh for longer is reused), review pins, publish.
   */
  async ready(conn: Connection): Promise<void> {
    const { lists, trims } = await fetchLists(conn, LIST_KINDS, { reuse: true });
    this.limits.record(conn.name, LIST_KINDS, trims);
    const review = await this.pins.check(conn.name, lists.tools ?? [], conn.info?.instructions);
    if (conn.state !== 'ready') throw conn.lastError ?? new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${conn.name}" went away while being listed`, { server: conn.name });
    const changed = this.catalog.set(conn.name, lists, review.held);
    this.holdInstructions(conn.name, review.instructionsHeld !== undefined);
    if (this.isSettled) this.announce(changed);
    this.subscriptions.renew(conn);
  }

  /**
   * The server's session was lost and its connection restarts it (backoff): what the agents asked
   * of that session ends, but the server stays listed (issue 15: a restart is no list change, and
   * a call meanwhile gets the connection's retryable MCPG_SERVER_UNAVAILABLE). Its pins' record
   * stays too; the restarted server's lists are reviewed again when it is ready.
   */
  interrupted(conn: Connection): void {
    this.refresher.forget(conn.name);
    for (const session of this.sessions) session.connectionLost(conn);
  }

  /** The server is not served any more (parked, closed): withdraw it and tell the agents. */
  lost(conn: Connection): void {
    this.refresher.forget(conn.name);
    this.pins.forget(conn.name);
    for (const session of this.sessions) session.connectionLost(conn);
    this.announce(this.catalog.remove(conn.name));
  }

  /** SIGHUP: every parked or backing-off server tries again now. */
  reviveAll(why: string): void {
    for (const conn of this.connections.values()) conn.revive(why);
  }

  private report(summary: ServerSummary): ServerSummary {
    if (summary.state === 'ready') {
      this.log.info(`server "${summary.server}" ready: ${summary.tools} tools${summary.note ?? ''}, ${summary.resources} resources, ${summary.prompts} prompts`, { server: summary.server, tools: summary.tools, resources: summary.resources, prompts: summary.prompts });
    } else if (summary.state === 'disabled') {
      this.log.info(`server "${summary.server}" disabled in config`, { server: summary.server });
    } else {
      this.log.warn(summary.error ?? `server "${summary.server}" failed`, { server: summary.server });
    }
    return summary;
  }

  openSession(channel: AgentChannel, agent: string, agentExplicit = true, transport: 'stdio' | 'http' = 'stdio', identified = agentExplicit, id?: string): AgentSession {
    const session = new AgentSession(this.sessionParts, channel, agent, this.log.child({ agent }), agentExplicit, transport, identified, id);
    this.sessions.add(session);
    return session;
  }

  /**
   * Serves one modern (2026-07-28) request of `agent` (modern.ts): an agent session that lives as
   * long as the request, under the same rules as a legacy session of that agent.
   */
  serveModern(msg: JsonRpcRequest, envelope: Envelope, sink: ModernSink, agent: string, agentExplicit = true, transport: 'stdio' | 'http' = 'stdio', identified = agentExplicit, claims?: Claims): ModernRequest {
    return serveModern({
      agent,
      waiting: this.waitingForInput,
      requestStates: this.requestStates,
      open: (channel) => {
        const session = this.openSession(channel, agent, agentExplicit, transport, identified);
        session.claims = claims;
        return session;
      },
      sameForAll: () => this.rules.open,
      instructions: () => this.instructions(),
    }, msg, envelope, sink);
  }

  /** Called by a session when it ends: drop its subscriptions, answer its servers' pending questions. */
  private sessionClosed(session: AgentSession): void {
    this.sessions.delete(session);
    this.subscriptions.drop(session);
    this.ownSubscriptions.drop(session);
    // Its per-session connections go with it; an agent's per-agent ones stay until idle or TTL.
    void this.pool.closeScope(`session:${session.serial}`);
  }

  /** Graceful shutdown: refuse new work, end sessions, close every connection in parallel. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.refresher.close();
      this.ownRefresher.close();
      this.pins.close();
      for (const session of [...this.sessions]) session.close();
      const conns = [...this.connections.values()];
      const pooled = this.pool.close();
      const results = await Promise.allSettled(conns.map((conn) => conn.close()));
      await pooled;
      results.forEach((result, i) => {
        if (result.status === 'rejected') this.log.warn('a connection failed to close; continuing', { server: conns[i]!.name, error: result.reason });
      });
      this.connections.clear();
      this.subscriptions.clear();
      this.ownSubscriptions.clear();
      this.own.clear();
      this.ownConns.clear();
      this.isSettled = true;
      this.resolveSettled();
    })();
    return this.closing;
  }

  /**
   * Sets every ready server that logs to the most verbose level any agent asked for (each agent's
   * own level is applied when its messages are delivered).
   */
  async setServersLogLevel(): Promise<void> {
    await this.settled;
    const rank = this.sessions.lowestLogRank();
    const level = rank === undefined ? undefined : LOG_LEVELS[rank];
    if (level === undefined) return;
    const servers = [...this.connections.values()].filter((c) => c.state === 'ready' && c.info?.capabilities.logging !== undefined);
    await Promise.allSettled(servers.map((c) => c.request('logging/setLevel', { level })));
  }

  /** The pooled connections `session` owns get their owners' level (the most verbose any of them asked). */
  async setOwnLogLevel(session: AgentSession): Promise<void> {
    const mine = this.pool.list().filter((e) => e.started && e.scope === scopeOf(session, e.conn.config.sessions));
    await Promise.allSettled(mine.map((e) => this.setPooledLogLevel(e.conn, this.owners(e.scope, e.conn.config.sessions))));
  }

  private async setPooledLogLevel(conn: Connection, owners: ReadonlySet<AgentSession>): Promise<void> {
    let rank: number | undefined;
    for (const session of owners) if (session.logRank !== undefined) rank = Math.min(rank ?? Infinity, session.logRank);
    const level = rank === undefined ? undefined : LOG_LEVELS[rank];
    if (level === undefined || conn.state !== 'ready' || conn.info?.capabilities.logging === undefined) return;
    await conn.request('logging/setLevel', { level }).catch((err: unknown) => this.log.debug('a pooled connection refused logging/setLevel', { server: conn.name, error: err }));
  }

  /** The ready servers' own instructions, each under its server's name, for `initialize`. */
  instructions(): string | undefined {
    const parts: string[] = [];
    for (const conn of this.connections.values()) {
      const text = conn.info?.instructions;
      if (conn.state === 'ready' && text !== undefined && text.trim() !== '' && !this.heldInstructions.has(conn.name)) parts.push(`## ${conn.name}\n${text.trim()}`);
    }
    if (parts.length === 0) return undefined;
    return `mcpgate fronts several MCP servers; their tools are named SERVER${this.options.separator ?? DEFAULT_SEPARATOR}TOOL. Instructions from each server:\n\n${parts.join('\n\n')}`;
  }

  /** Immediate: kill every server's process group now (a second signal). */
  /** A signal during shutdown: every server's stop skips to SIGTERM now, SIGKILL after `termGraceMs`. */
  hurry(termGraceMs: number): void {
    processGroups.hurryAll(termGraceMs);
  }

  destroy(): void {
    for (const conn of this.connections.values()) conn.destroy();
    this.pool.destroy();
  }

  private async refresh(server: string, kinds: ListKind[]): Promise<void> {
    const conn = this.connections.get(server);
    if (conn?.state !== 'ready') return;
    const { lists, trims } = await fetchLists(conn, kinds);
    if (conn.state !== 'ready') return;
    this.limits.record(server, kinds, trims);
    const review = lists.tools === undefined ? undefined : await this.pins.check(server, lists.tools, conn.info?.instructions);
    if (conn.state !== 'ready') return;
    const changed = this.catalog.set(server, lists, review?.held);
    if (changed.length > 0) this.log.info('catalog refreshed', { server, changed });
    this.announce(changed);
  }

  /** Approvals changed on disk: review every server's current tools again; release or hold as they say. */
  private async reviewAll(): Promise<void> {
    for (const conn of this.connections.values()) {
      if (conn.state !== 'ready') continue;
      const review = await this.pins.check(conn.name, this.catalog.serverTools(conn.name), conn.info?.instructions);
      if (conn.state !== 'ready' || this.closing !== undefined) continue;
      this.holdInstructions(conn.name, review.instructionsHeld !== undefined);
      const before = this.catalog.heldTools(conn.name);
      if (this.catalog.setHeld(conn.name, review.held)) {
        this.auditReleased(conn.name, before, review.held);
        this.log.info('pins changed: catalog updated', { server: conn.name, held: review.held.size });
        this.announce(['tools']);
      }
    }
    // The own catalogs' tools too: an approval releases a tool first seen on a pooled connection.
    for (const [scope, catalog] of [...this.own.entries()]) {
      for (const server of catalog.listedServers()) {
        const review = await this.pins.check(server, catalog.serverTools(server), undefined, scope);
        if (this.closing !== undefined) return;
        if (this.own.get(scope) !== catalog || !catalog.lists(server)) continue;
        const before = catalog.heldTools(server);
        if (catalog.setHeld(server, review.held)) {
          this.auditReleased(server, before, review.held);
          this.sessions.announce(['tools'], this.ownersOf(scope));
        }
      }
    }
  }

  /** The audit trail's `released` lines: tools held before this review and approved now. */
  private auditReleased(server: string, before: ReadonlyMap<string, unknown>, after: ReadonlyMap<string, unknown>): void {
    const audit = this.options.audit;
    if (audit === undefined) return;
    for (const tool of before.keys()) {
      const pin = after.has(tool) ? undefined : this.pins.pinOf(server, tool);
      if (pin !== undefined) audit.record({ event: 'released', server, tool, digest: pin.digest, by: pin.by });
    }
  }

  private holdInstructions(server: string, held: boolean): void {
    if (held) this.heldInstructions.add(server);
    else this.heldInstructions.delete(server);
  }

  /** Tells each agent whose view of these lists changed (templates belong to the resources list). */
  announce(kinds: readonly ListKind[]): void {
    this.sessions.announce(kinds);
  }
}
