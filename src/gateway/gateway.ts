// The gateway: the composition of the room. It owns the connections to servers (made by an injected
// factory, so tests can put an in-memory server behind them), the catalog, the pins and the agent
// registry, and hands each helper the parts it needs: the router (router.ts) decides where a request
// goes, an agent session (session.ts) carries what flows left to right, server-events.ts what flows
// right to left, catalog-listing.ts keeps the catalog and the own catalogs in step with the
// connections. Nothing here is imported back by those helpers. It starts servers in parallel and
// closes everything; gateway-options.ts is what it is made with. How servers start, and how a resting
// on-demand server wakes for a call: src/gateway/README.md, "Starting servers".

import type { ServerConfig, ServersConfig } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import { Catalog } from '../catalog/catalog.js';
import { SizeCaps } from '../catalog/size-caps.js';
import { join } from 'node:path';
import { Connection, type ConnectionHooks } from '../servers/connection.js';
import { KnownCatalogs } from '../servers/known-catalog.js';
import { DEFAULT_SEPARATOR } from '../catalog/names.js';
import { secretEnvNames } from '../config/child-env.js';
import { processGroups } from '../servers/process-groups.js';
import { ConnectionPool, scopeOf } from '../servers/pool.js';
import { PinKeeper } from '../pins/keeper.js';
import type { Claims } from '../rules/decide.js';
import { OPEN_RULES, type Rules } from '../rules/load.js';
import type { ListKind } from '../servers/lists.js';
import { AgentViews } from './session/agent-views.js';
import { Subscriptions } from './session/subscriptions.js';
import { GatewayMetrics } from '../observability/metrics.js';
import { Quotas } from '../policy/quotas.js';
import { metricsSource } from './metrics-source.js';
import { GATEWAY_INFO } from '../version.js';
import { gatewayStatus } from './status.js';
import { CodeBoard } from './modes/code-board.js';
import { CodeRunner } from '../code/code-runner.js';
import { AgentSession } from './session/session.js';
import type { SessionParts } from './session/session-parts.js';
import type { AgentIdentity } from './session/agent-identity.js';
import type { AgentChannel } from './session/agent-channel.js';
import { MCP_LOG_LEVELS, gatewayCapabilities } from './routing/method-tables.js';
import { Agents } from './open-agents.js';
import { OwnCatalogs } from './routing/own-catalogs.js';
import { Router } from './routing/router.js';
import { ServerEvents } from './routing/server-events.js';
import type { DiscoveryParts } from './modes/discovery.js';
import { serveModern, type ModernCall, type ModernRequest, type ModernSink } from './modern/modern-requests.js';
import { RequestStateSealer } from './modern/request-state.js';
import type { JsonRpcRequest } from '../wire/jsonrpc.js';
import type { Envelope } from '../wire/era.js';
import { DEFAULT_LIST_WAIT_MS, DEFAULT_MAX_INFLIGHT, type ConnectionFactory, type GatewayOptions } from './gateway-options.js';
import { CatalogListing, SHARED_SCOPE } from './routing/catalog-listing.js';
import { SkillMethods } from './routing/skill-methods.js';
import { SkillShelf } from '../catalog/skill-shelf.js';
import { LOCAL_ORIGIN, SkillFolders } from './routing/skill-folders.js';
import { SKILLS_EXTENSION } from '../wire/skills.js';
import { launchServer, type ServerSummary } from './launch.js';
import { extensionsOf, mergeExtensions, PASSED_THROUGH, routableExtensions } from './session/extensions.js';
import { TaskTable, tasksCapability } from './routing/tasks.js';
import { clientCapabilities } from '../servers/modern-protocol.js';
import { ApprovalDesk } from '../policy/approval-desk.js';
import { CallGate } from '../policy/call-gate.js';
import { GuardChecks } from '../policy/guard-checks.js';
import { Interceptors } from '../policy/interceptors.js';
import { InterceptorServers } from './interceptor-servers.js';
import type { AgentMode } from '../rules/agent-mode.js';
import { SearchIndexes } from './modes/search-indexes.js';
import { ToolSearch } from './modes/tool-search.js';
import { HybridRanking } from './modes/hybrid-ranking.js';
import { EmbeddingsClient } from './modes/embeddings.js';
import { CapabilityDirectory, withDirectory } from './modes/capability-directory.js';

export type { GatewayOptions } from './gateway-options.js';
export type { ServerSummary } from './launch.js';

/** How long a modern agent's `server/discover` waits at start-up for the servers to be listed (as initialize does). */
const DISCOVER_WAIT_MS = 5000;

export class Gateway {
  readonly catalog: Catalog;
  /** Every shared server's skills (the Skills extension) and which the pins hold. */
  readonly skills = new SkillShelf();
  /** The Skills extension's methods, as agents see them (skill-methods.ts). */
  readonly skillMethods: SkillMethods;
  /** mcpgate's own skill folders (`serve --skills`), the origin `mcpgate`; undefined without any. */
  private readonly skillFolders: SkillFolders | undefined;
  readonly log: Logger;
  readonly connections = new Map<string, Connection>();
  /** How long a modern agent's `server/discover` waits at start-up for the servers to be listed (as initialize does). */
  DISCOVER_WAIT_MS = 5000;

  /** The servers configuration in force (replaced by a reload). */
  config: ServersConfig;
  /** The open agent sessions. */
  readonly agents = new Agents();
  /** Resource subscriptions, shared and pooled: each URI subscribed on its connection once, while an agent session holds it. */
  readonly subscriptions: Subscriptions<AgentSession>;
  /** Resolves once every enabled server is ready or has failed (the first lists wait for it). */
  readonly settled: Promise<void>;
  private resolveSettled!: () => void;
  private isSettled = false;
  /** Resolves once settled, or `listWaitMs` after the first server was ready: a first list waits no longer. */
  readonly listable: Promise<void>;
  private resolveListable!: () => void;
  private listableNow = false;
  private listWaitTimer: NodeJS.Timeout | undefined;
  /** What each server's limits cut from its lists (logged once, shown in the status). */
  readonly limits: SizeCaps;
  readonly pins: PinKeeper;
  /** The rules in force: one immutable snapshot, swapped whole on reload. */
  rules: Rules;
  readonly views: AgentViews;
  /** Modern agents' calls waiting for their answers (input required), by the handle their requestState names. */
  private readonly waitingForInput = new Map<string, ModernCall>();
  /** The tasks agents' calls created on servers (tasks.ts). */
  private readonly tasks: TaskTable;
  private readonly requestStates: RequestStateSealer;
  /** Call outcomes, errors and HTTP requests as they happen; states read at scrape time. */
  readonly metrics: GatewayMetrics;
  /** Where a request goes, under the rules and the pins. */
  readonly router: Router;
  /** Where calls the rules hold for a person's approval wait (approval-desk.ts). */
  readonly approvals: ApprovalDesk;
  /** The rules' quotas and rate limits on tool calls, and their counters (quotas.ts). */
  readonly quotas: Quotas;
  /** What the rules hold some tool calls to (approvals, limits), in one order (policy/call-gate.ts). */
  readonly gate: CallGate;
  private readonly serverEvents: ServerEvents;
  /** What a connection tells the gateway (given to the connection factory). */
  readonly hooks: ConnectionHooks;
  /** What every agent session is given. */
  private readonly sessionParts: SessionParts<AgentSession>;
  private readonly connect: ConnectionFactory;
  /** The interceptor servers' connections (interceptor-servers.ts); the gate's `interceptors` use them. */
  private readonly interceptorServers: InterceptorServers;
  /** Connections of per-agent and per-session servers, one per (server, agent or agent session). */
  readonly pool: ConnectionPool;
  /** What those connections list, per scope: each owner's view of its per-agent/per-session servers. */
  readonly own: OwnCatalogs;
  /**
   * Every connection's lists in its scope's catalog, the shared one or an own one (listed, refreshed,
   * reviewed again), its hooks, and the shared servers' instructions.
   */
  private readonly listing: CatalogListing;
  /** On-demand servers' last known catalogs, in the state directory. */
  readonly known: KnownCatalogs;
  private closing: Promise<void> | undefined;
  /** True from the start of `close()`: a field, read by every request of every agent session. */
  isClosing = false;
  /** Search mode: each agent's mode, the indexes, search_tools. */
  readonly search: ToolSearch;
  /** The capability directory in the instructions of an agent in search or code mode. */
  private readonly capabilityDirectory: CapabilityDirectory;
  /** Code mode's runs since start (status, metrics). */
  readonly codeBoard: CodeBoard;
  /** Code mode's pool of sandbox worker threads: started when a run needs one, closed with the gateway. */
  readonly codeRunner = new CodeRunner();
  private readonly hybrid: HybridRanking | undefined;

  constructor(private readonly options: GatewayOptions) {
    this.log = options.log;
    this.config = options.config;
    this.tasks = new TaskTable(this.log);
    this.catalog = new Catalog(options.config.servers, {
      separator: options.separator,
      sanitize: options.sanitize,
      onWarning: (warning) => this.log.warn(`catalog: ${warning}`),
    });
    this.limits = new SizeCaps(this.log);
    this.pins = new PinKeeper({
      mode: options.pins?.mode ?? 'off',
      dir: options.pins?.dir ?? '.mcpgate',
      log: this.log,
      onStoreChanged: () => {
        void this.listing.reviewAll();
        void this.skillFolders?.review();
      },
    });
    this.rules = options.rules ?? OPEN_RULES;
    this.known = new KnownCatalogs(join(this.pins.dir, 'catalogs'), this.log);
    this.views = new AgentViews(this.catalog, () => this.rules);
    this.requestStates = new RequestStateSealer(options.requestStateKey, options.requestStateHolder);
    this.metrics = new GatewayMetrics({
      version: GATEWAY_INFO.version,
      source: metricsSource(this),
      onCollectError: (metric, error) => this.log.warn('a metric could not be collected', { metric, error }),
    });
    this.quotas = new Quotas({ rules: () => this.rules, metrics: this.metrics, log: this.log, shared: options.shared?.counters });
    this.subscriptions = new Subscriptions(this.connections, this.log);
    this.own = new OwnCatalogs(options.config.servers, { separator: options.separator, sanitize: options.sanitize });
    this.settled = new Promise((resolve) => (this.resolveSettled = resolve));
    this.listable = new Promise((resolve) => (this.resolveListable = resolve));
    this.approvals = new ApprovalDesk({
      audit: options.audit,
      log: this.log.child({ room: 'approvals' }),
      ...(options.shared !== undefined && { board: options.shared.board, worker: options.shared.worker }),
      ...(options.consoleBase !== undefined && { consoleBase: options.consoleBase }),
    });
    const interceptors = new Interceptors({ inForce: this, audit: options.audit, log: this.log.child({ room: 'interceptors' }) });
    this.interceptorServers = new InterceptorServers(options.config.interceptors ?? [], interceptors, this.log);
    this.gate = new CallGate({
      interceptors,
      rules: () => this.rules,
      quotas: this.quotas,
      approvals: this.approvals,
      guards: new GuardChecks({
        inForce: this,
        audit: options.audit,
        log: this.log.child({ room: 'guards' }),
        counted: (direction, detector, action) => this.metrics.guardFound(direction, detector, action),
      }),
      resultCut: (server) => this.metrics.resultCut(server),
      inputSchema: (server, tool) => {
        const name = this.catalog.publicName(server, tool);
        return name === undefined ? undefined : this.catalog.tool(name)?.tool.inputSchema;
      },
    });
    this.pool = new ConnectionPool({
      // A per-agent scope (`agent:ID`, a verified identity) signs in upstream with that agent's own login.
      create: (config, scope, owner) =>
        this.connect(config, this.listing.hooks(scope), this.log.child({ server: config.name, scope: scope.key }), {
          account: scope.kind === 'agent' ? scope.agent : undefined,
          extensions: owner.extensions ?? {},
          agentCapabilities: owner.agentCapabilities,
        }),
      busy: (conn) => this.agents.callsOn(conn) > 0,
      log: this.log,
      breaker: options.poolBreaker ?? options.supervision?.breaker,
      clock: options.poolClock,
    });
    this.router = new Router({
      catalog: this.catalog,
      connections: this.connections,
      inForce: this,
      hasSettled: () => this.isSettled,
      pinsDir: this.pins.dir,
      pool: this.pool,
    });
    this.serverEvents = new ServerEvents({
      agents: this.agents,
      catalog: this.catalog,
      subscriptions: this.subscriptions,
      tasks: this.tasks,
      log: this.log,
    });
    this.listing = new CatalogListing({
      connections: this.connections,
      catalog: this.catalog,
      skills: this.skills,
      own: this.own,
      pool: this.pool,
      limits: this.limits,
      pins: this.pins,
      known: this.known,
      agents: this.agents,
      subscriptions: this.subscriptions,
      serverEvents: this.serverEvents,
      log: this.log,
      audit: options.audit,
      separator: options.separator ?? DEFAULT_SEPARATOR,
      isClosing: () => this.closing !== undefined,
    });
    this.hooks = this.listing.hooks(SHARED_SCOPE);
    this.skillFolders =
      options.skillFolders === undefined || options.skillFolders.length === 0
        ? undefined
        : new SkillFolders({
            folders: options.skillFolders,
            pins: this.pins,
            skills: this.skills,
            announce: () => this.agents.announceSkills(),
            log: this.log.child({ server: LOCAL_ORIGIN }),
          });
    this.skillMethods = new SkillMethods({
      local: this.skillFolders,
      router: this.router,
      catalog: this.catalog,
      skills: this.skills,
      inForce: this,
      pins: this.pins,
      relist: (server) =>
        server === LOCAL_ORIGIN
          ? void this.skillFolders?.rescan()
          : void this.listing
              .relistSkills(server)
              .catch((err: unknown) => this.log.debug('listing skills again failed', { server, error: err })),
    });
    this.hybrid =
      options.embeddings === undefined
        ? undefined
        : new HybridRanking(
            new EmbeddingsClient(options.embeddings),
            options.pins === undefined ? undefined : join(options.pins.dir, 'search-vectors.json'),
            this.log.child({ part: 'embeddings' }),
          );
    this.search = new ToolSearch({
      catalog: this.catalog,
      rules: () => this.rules,
      indexes: new SearchIndexes(this.catalog, (server) => this.listing.serverInstructions(server)),
      metrics: this.metrics,
      log: this.log,
      mode: this.mode,
      hybrid: this.hybrid,
    });
    this.capabilityDirectory = new CapabilityDirectory({
      catalog: this.catalog,
      search: this.search,
      serverInstructions: (server) => this.listing.serverInstructions(server),
    });
    this.codeBoard = new CodeBoard(this.metrics);
    const discovery: DiscoveryParts = {
      servers: () => this.config,
      connections: this.connections,
      catalog: this.catalog,
      rules: () => this.rules,
      separator: options.separator ?? DEFAULT_SEPARATOR,
      debug: this.debug,
      status: () => this.status(),
    };
    this.sessionParts = {
      router: this.router,
      skills: this.skillMethods,
      inForce: this,
      views: this.views,
      settling: this,
      catalog: this.catalog,
      connections: this.connections,
      subscriptions: this.subscriptions,
      metrics: this.metrics,
      audit: options.audit,
      tracing: options.tracing,
      discovery,
      gate: this.gate,
      search: this.search,
      codeBoard: this.codeBoard,
      codeRunner: this.codeRunner,
      maxInflight: this.maxInflight,
      sanitize: this.sanitizes,
      instructions: (reader) => withDirectory(this.listing.instructions(), this.capabilityDirectory.for(reader)),
      capabilities: () => this.capabilities(),
      tasks: this.tasks,
      setServersLogLevel: (session) => Promise.all([this.setServersLogLevel(), this.listing.setOwnLogLevel(session)]).then(() => undefined),
      closed: (session) => this.sessionClosed(session),
      own: this.own,
      rootsArrived: () => this.serverEvents.rootsArrived(),
      rootsChanged: (session) => {
        for (const conn of this.connections.values())
          if (conn.config.sessions === 'shared' && conn.state === 'ready') conn.notify('notifications/roots/list_changed');
        for (const entry of this.pool.list()) {
          if (entry.started && entry.conn.state === 'ready' && entry.scope.key === scopeOf(session, entry.conn.config.sessions).key)
            entry.conn.notify('notifications/roots/list_changed');
        }
      },
    };
    this.connect =
      options.connect ??
      ((config, hooks, log, pooled) =>
        new Connection(config, hooks, log, {
          clientCapabilities: clientCapabilities(
            pooled?.extensions ?? PASSED_THROUGH,
            pooled?.agentCapabilities,
            config.roots !== undefined,
          ),
          startupTimeoutMs: options.startupTimeoutMs ?? 30_000,
          stopTimings: options.stopTimings,
          supervision: options.supervision,
          secretEnv: () => secretEnvNames(this.rules.raw),
          ...(config.type === 'http' && { credentials: options.credentials?.(config, pooled?.account) }),
        }));
  }

  get mode(): AgentMode {
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

  get hasSettled(): boolean {
    return this.isSettled;
  }

  get isListable(): boolean {
    return this.listableNow;
  }

  /**
   * Starts every enabled server in parallel; one that fails is reported and left out. The catalog
   * is listable once every server has settled, or `listWaitMs` after the first one was ready.
   */
  async start(): Promise<ServerSummary[]> {
    // The servers are spawned first: reading the pin store (a large pins.json takes a while) then
    // overlaps their boot; each server's review waits for the store (PinKeeper.start).
    const pinsRead = this.pins.start();
    const localSkills = this.skillFolders
      ?.start()
      .catch((err: unknown) => this.log.warn('the skills folders could not be read', { error: err }));
    pinsRead.catch(() => {}); // awaited below, once the servers are started
    // Hybrid search's vector cache is read beside the servers' boot too; the first search waits for it.
    const vectorsRead = this.hybrid?.load();
    vectorsRead?.catch(() => {});
    this.interceptorServers.start(this.connect, this.rules.interceptors);
    const summaries = await Promise.all(
      this.config.servers.map(async (config) => {
        const summary = await this.launch(config);
        if (summary.state === 'ready' || summary.state === 'idle') this.oneReady();
        return summary;
      }),
    );
    await pinsRead;
    await vectorsRead;
    // mcpgate's own skills are listed (and reviewed) before the gateway counts as settled.
    await localSkills;
    this.settle();
    // Search mode's first search would otherwise index the whole catalog while the agent waits.
    if (this.search.inUse)
      setImmediate(() => {
        if (this.closing === undefined) this.search.warm();
      }).unref();
    return summaries;
  }

  /**
   * A server is ready: the first one starts the list grace (a server that fails at once starts
   * none: a list with nothing in it is no reason to stop waiting).
   */
  private oneReady(): void {
    if (this.listWaitTimer !== undefined || this.listableNow || this.closing !== undefined) return;
    this.listWaitTimer = setTimeout(() => this.makeListable(), this.options.listWaitMs ?? DEFAULT_LIST_WAIT_MS);
    this.listWaitTimer.unref();
  }

  private makeListable(): void {
    clearTimeout(this.listWaitTimer);
    if (this.listableNow) return;
    this.listableNow = true;
    this.resolveListable();
  }

  private settle(): void {
    this.isSettled = true;
    this.resolveSettled();
    this.makeListable();
  }

  /** Starts one configured server (or reports why not) and logs its summary line (launch.ts). */
  launch(config: ServerConfig): Promise<ServerSummary> {
    return launchServer(
      {
        connect: this.connect,
        hooks: this.hooks,
        connections: this.connections,
        catalog: this.catalog,
        log: this.log,
        known: this.known,
        listKnown: (conn, known) => this.listing.listKnown(conn, known),
      },
      config,
    );
  }

  /** SIGHUP: every parked or backing-off server tries again now. */
  reviveAll(why: string): void {
    for (const conn of this.connections.values()) conn.revive(why);
  }

  openSession(channel: AgentChannel, who: AgentIdentity, id?: string): AgentSession {
    const session = new AgentSession(this.sessionParts, channel, who, { log: this.log.child({ agent: who.agent }), id });
    this.agents.add(session);
    return session;
  }

  /**
   * Serves one modern (2026-07-28) request of `agent` (modern-requests.ts): an agent session that lives as
   * long as the request, under the same rules as a legacy session of that agent.
   */
  serveModern(
    msg: JsonRpcRequest,
    envelope: Envelope,
    sink: ModernSink,
    as: { readonly who: AgentIdentity; readonly claims?: Claims | undefined; readonly view?: string | undefined },
  ): ModernRequest {
    const { who, claims, view } = as;
    return serveModern(
      {
        agent: who.agent,
        waiting: this.waitingForInput,
        requestStates: this.requestStates,
        open: (channel) => {
          const session = this.openSession(channel, who);
          session.claims = claims;
          session.view = view;
          return session;
        },
        sameForAll: () => this.rules.open,
        instructions: () =>
          withDirectory(
            this.listing.instructions(),
            this.capabilityDirectory.for({
              agent: who.agent,
              claims,
              mode: view !== undefined ? 'aggregate' : this.search.modeOf(who.agent),
            }),
          ),
        listed: () =>
          this.listableNow
            ? undefined
            : Promise.race([this.listable, new Promise<void>((resolve) => setTimeout(resolve, DISCOVER_WAIT_MS).unref())]),
        capabilities: () => this.capabilities(),
      },
      msg,
      envelope,
      sink,
    );
  }

  /**
   * In a cluster: the worker whose memory holds the call a modern retry's `requestState` names, when
   * that is another worker (the retry goes there); undefined for anything else, served here as ever.
   */
  requestStateHolder(agent: string, params: Readonly<Record<string, unknown>> | undefined): string | undefined {
    const state = params?.requestState;
    if (typeof state !== 'string' || this.requestStates.holder === undefined) return undefined;
    const opened = this.requestStates.open(agent, state);
    if (typeof opened === 'string' || opened.holder === undefined || opened.holder === this.requestStates.holder) return undefined;
    return opened.holder;
  }

  /** What mcpgate declares to agents: what it relays, and the merge of its ready servers' extensions it can route. */
  private capabilities(): Record<string, unknown> {
    const ready = [...this.connections.values()].filter((conn) => conn.state === 'ready');
    // mcpgate's own skill folders serve the Skills extension, directory reads included.
    const own = this.skillFolders === undefined ? undefined : { [SKILLS_EXTENSION]: { directoryRead: true } };
    return gatewayCapabilities(
      routableExtensions(mergeExtensions([own, ...ready.map((conn) => extensionsOf(conn.info?.capabilities))])),
      tasksCapability(ready.map((conn) => conn.info?.capabilities.tasks)),
    );
  }

  /** Called by a session when it ends: drop its subscriptions, answer its servers' pending questions. */
  private sessionClosed(session: AgentSession): void {
    this.agents.delete(session);
    this.subscriptions.drop(session);
    // Its per-session connections go with it; an agent's per-agent ones stay until idle or TTL.
    void this.pool.closeScope(scopeOf(session, 'per-session'));
  }

  /** Graceful shutdown: refuse new work, end sessions, close every connection in parallel. Idempotent. */
  close(): Promise<void> {
    this.isClosing = true;
    this.closing ??= (async () => {
      this.listing.close();
      this.skillFolders?.close();
      this.pins.close();
      for (const session of [...this.agents]) session.close();
      await this.approvals.close();
      await this.codeRunner.close();
      const conns = [...this.connections.values()];
      const pooled = this.pool.close();
      const interceptorsClosed = this.interceptorServers.close();
      const results = await Promise.allSettled(conns.map((conn) => conn.close()));
      await interceptorsClosed;
      await pooled;
      await this.known.flush();
      await this.hybrid?.close();
      results.forEach((result, i) => {
        if (result.status === 'rejected')
          this.log.warn('a connection failed to close; continuing', { server: conns[i]!.name, error: result.reason });
      });
      this.connections.clear();
      this.subscriptions.clear();
      this.own.clear();
      this.listing.clear();
      this.settle();
    })();
    return this.closing;
  }

  /**
   * Sets every ready server that logs to the most verbose level any agent asked for (each agent's
   * own level is applied when its messages are delivered).
   */
  async setServersLogLevel(): Promise<void> {
    await this.settled;
    const rank = this.agents.lowestLogRank();
    const level = rank === undefined ? undefined : MCP_LOG_LEVELS[rank];
    if (level === undefined) return;
    const servers = [...this.connections.values()].filter((c) => c.state === 'ready' && c.info?.capabilities.logging !== undefined);
    await Promise.allSettled(servers.map((c) => c.request('logging/setLevel', { level })));
  }

  /** A signal during shutdown: every server's stop skips to SIGTERM now, SIGKILL after `termGraceMs`. */
  hurry(termGraceMs: number): void {
    processGroups.hurryAll(termGraceMs);
  }

  destroy(): void {
    for (const conn of this.connections.values()) conn.destroy();
    this.pool.destroy();
  }

  /** Tells each agent whose view of these lists changed (templates belong to the resources list). */
  announce(kinds: readonly ListKind[]): void {
    this.agents.announce(kinds);
  }
}
