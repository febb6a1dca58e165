// The gateway: owns the connections to servers, the catalog and the agent sessions, and carries
// everything that flows right to left (server notifications and server→agent requests) to the agent
// it belongs to. What flows left to right is in session.ts.

import type { ServerConfig, ServersConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { Catalog } from '../catalog/catalog.js';
import { Refresher } from '../catalog/refresher.js';
import { CatalogLimits } from '../catalog/limits.js';
import { Connection, type ConnectionHooks, type SupervisionSettings } from '../servers/connection.js';
import { LIST_KINDS, fetchLists, type ListKind } from '../servers/lists.js';
import type { StopTimings } from '../servers/stdio-process.js';
import { secretEnvNames } from '../servers/child-env.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../wire/jsonrpc.js';
import { PinKeeper } from '../pins/keeper.js';
import { OPEN_RULES, type Rules } from '../rules/load.js';
import { AgentViews } from './agent-views.js';
import { Subscriptions } from './subscriptions.js';
import { GatewayMetrics } from '../observability/gateway-metrics.js';
import { metricsSource } from './metrics-source.js';
import { GATEWAY_INFO } from '../version.js';
import { gatewayStatus } from './status.js';
import type { PinMode } from '../pins/review.js';
import { AgentSession, type AgentChannel } from './session.js';
import { LIST_CHANGED, LOG_LEVEL_RANK, SERVER_REQUEST_CAPABILITY } from './methods.js';

/** Log levels by rank (methods.ts ranks them). */
const LOG_LEVELS = Object.keys(LOG_LEVEL_RANK).sort((a, b) => LOG_LEVEL_RANK[a]! - LOG_LEVEL_RANK[b]!);

export interface GatewayOptions {
  config: ServersConfig;
  log: Logger;
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
  /** `aggregate` (default): the full catalog; `discovery`: the meta-tools only. */
  mode?: 'aggregate' | 'discovery';
  /** Offer get_gateway_status in discovery mode. */
  debug?: boolean;
}

export const DEFAULT_MAX_INFLIGHT = 1000;

export interface ServerSummary {
  server: string;
  state: 'ready' | 'failed' | 'disabled';
  tools: number;
  resources: number;
  prompts: number;
  error?: string;
  note?: string;
}

export class Gateway implements ConnectionHooks {
  readonly catalog: Catalog;
  readonly log: Logger;
  readonly connections = new Map<string, Connection>();
  /** The servers configuration in force (replaced by a reload). */
  config: ServersConfig;
  readonly sessions = new Set<AgentSession>();
  /** Resource subscriptions: each URI subscribed on its server once, while an agent holds it. */
  readonly subscriptions: Subscriptions<AgentSession>;
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
  /** Call outcomes, errors and HTTP requests as they happen; states read at scrape time. */
  readonly metrics: GatewayMetrics;
  /** Servers whose instructions changed since they were approved: not passed to agents. */
  private readonly heldInstructions = new Set<string>();
  private closing: Promise<void> | undefined;

  constructor(private readonly options: GatewayOptions) {
    this.log = options.log;
    this.config = options.config;
    this.catalog = new Catalog(options.config.servers.map((s) => s.name), { separator: options.separator, sanitize: options.sanitize });
    this.limits = new CatalogLimits(this.log);
    this.pins = new PinKeeper({
      mode: options.pins?.mode ?? 'off',
      dir: options.pins?.dir ?? '.mcpgate',
      log: this.log,
      onStoreChanged: () => void this.reviewAll(),
    });
    this.rules = options.rules ?? OPEN_RULES;
    this.views = new AgentViews(this.catalog, () => this.rules);
    this.metrics = new GatewayMetrics({
      version: GATEWAY_INFO.version,
      source: metricsSource(this),
      onCollectError: (metric, error) => this.log.warn('a metric could not be collected', { metric, error }),
    });
    this.subscriptions = new Subscriptions(this.catalog, this.connections, this.log);
    this.refresher = new Refresher((server, kinds) => this.refresh(server, kinds), this.log);
    this.settled = new Promise((resolve) => (this.resolveSettled = resolve));
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
    const conn = new Connection(config, this, log, {
      startupTimeoutMs: this.options.startupTimeoutMs ?? 30_000,
      stopTimings: this.options.stopTimings,
      supervision: this.options.supervision,
      secretEnv: () => secretEnvNames(this.rules.raw),
    });
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

  /** A session is ready (first start or reconnect): list everything, review pins, publish. */
  async ready(conn: Connection): Promise<void> {
    const { lists, trims } = await fetchLists(conn);
    this.limits.record(conn.name, LIST_KINDS, trims);
    const review = await this.pins.check(conn.name, lists.tools ?? [], conn.info?.instructions);
    if (conn.state !== 'ready') throw conn.lastError ?? new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${conn.name}" went away while being listed`, { server: conn.name });
    const changed = this.catalog.set(conn.name, lists, review.held);
    this.holdInstructions(conn.name, review.instructionsHeld !== undefined);
    if (this.isSettled) this.announce(changed);
    this.subscriptions.renew(conn);
  }

  /** The server is not served any more (session lost, parked, closed): withdraw it and tell the agents. */
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

  openSession(channel: AgentChannel, agent: string, agentExplicit = true, transport: 'stdio' | 'http' = 'stdio'): AgentSession {
    const session = new AgentSession(this, channel, agent, this.log.child({ agent }), agentExplicit, transport);
    this.sessions.add(session);
    return session;
  }

  /** Called by a session when it ends: drop its subscriptions, answer its servers' pending questions. */
  sessionClosed(session: AgentSession): void {
    this.sessions.delete(session);
    this.subscriptions.drop(session);
  }

  /** Graceful shutdown: refuse new work, end sessions, close every connection in parallel. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.refresher.close();
      this.pins.close();
      for (const session of [...this.sessions]) session.close();
      const conns = [...this.connections.values()];
      const results = await Promise.allSettled(conns.map((conn) => conn.close()));
      results.forEach((result, i) => {
        if (result.status === 'rejected') this.log.warn('a connection failed to close; continuing', { server: conns[i]!.name, error: result.reason });
      });
      this.connections.clear();
      this.subscriptions.clear();
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
    let rank: number | undefined;
    for (const session of this.sessions) if (session.logRank !== undefined) rank = Math.min(rank ?? Infinity, session.logRank);
    const level = rank === undefined ? undefined : LOG_LEVELS[rank];
    if (level === undefined) return;
    const servers = [...this.connections.values()].filter((c) => c.state === 'ready' && c.info?.capabilities.logging !== undefined);
    await Promise.allSettled(servers.map((c) => c.request('logging/setLevel', { level })));
  }

  /** The ready servers' own instructions, each under its server's name, for `initialize`. */
  instructions(): string | undefined {
    const parts: string[] = [];
    for (const conn of this.connections.values()) {
      const text = conn.info?.instructions;
      if (conn.state === 'ready' && text !== undefined && text.trim() !== '' && !this.heldInstructions.has(conn.name)) parts.push(`## ${conn.name}\n${text.trim()}`);
    }
    if (parts.length === 0) return undefined;
    return `mcpgate fronts several MCP servers; their tools are named SERVER__TOOL. Instructions from each server:\n\n${parts.join('\n\n')}`;
  }

  /** Immediate: kill every server's process group now (a second signal). */
  destroy(): void {
    for (const conn of this.connections.values()) conn.destroy();
  }

  // ── right to left: what servers send ────────────────────────────────────────────────────────

  notification(conn: Connection, msg: JsonRpcNotification): void {
    const kind = LIST_CHANGED[msg.method];
    if (kind !== undefined) {
      for (const k of kind) this.refresher.request(conn.name, k);
      return;
    }
    switch (msg.method) {
      case 'notifications/message':
        for (const session of this.sessions) session.deliverLog(conn.name, msg.params ?? {});
        return;
      case 'notifications/resources/updated': {
        const uri = msg.params?.uri;
        if (typeof uri !== 'string') return;
        const publicUri = this.catalog.publicUri(conn.name, uri);
        for (const session of this.subscriptions.subscribers(publicUri)) session.notify(msg.method, { ...msg.params, uri: publicUri });
        return;
      }
      case 'notifications/cancelled':
        for (const session of this.sessions) session.serverCancelled(conn, msg.params?.requestId);
        return;
      case 'notifications/elicitation/complete':
        for (const session of this.sessions) session.notify(msg.method, msg.params);
        return;
      default:
        this.log.debug('dropped a server notification mcpgate does not relay', { server: conn.name, method: msg.method });
    }
  }

  request(conn: Connection, msg: JsonRpcRequest, related?: number): void {
    const capability = SERVER_REQUEST_CAPABILITY[msg.method];
    if (capability === undefined) {
      conn.respondError(msg.id, new GatewayError('MCPG_METHOD_NOT_FOUND', `mcpgate does not relay ${msg.method} to agents`, { server: conn.name }).toJsonRpc());
      return;
    }
    const session = this.sessionFor(conn, related);
    if (session === undefined) {
      const why = this.sessions.size === 0 ? 'no agent is connected' : 'more than one agent has a call in flight on this server, and the request does not say which one it belongs to';
      conn.respondError(msg.id, new GatewayError('MCPG_AGENT_UNAVAILABLE', `cannot relay ${msg.method}: ${why}`, { server: conn.name }).toJsonRpc());
      return;
    }
    session.relayServerRequest(conn, msg, capability, related);
  }

  /**
   * The agent a server→agent request belongs to: the one whose call it says it belongs to (HTTP
   * servers say), else the only session, else the only one with a call in flight on that server.
   */
  private sessionFor(conn: Connection, related: number | undefined): AgentSession | undefined {
    if (related !== undefined) {
      for (const session of this.sessions) if (session.ownsCall(conn, related)) return session;
    }
    if (this.sessions.size === 1) return this.sessions.values().next().value;
    const busy = [...this.sessions].filter((s) => s.callsOn(conn) > 0);
    return busy.length === 1 ? busy[0] : undefined;
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
      if (this.catalog.setHeld(conn.name, review.held)) {
        this.log.info('pins changed: catalog updated', { server: conn.name, held: review.held.size });
        this.announce(['tools']);
      }
    }
  }

  private holdInstructions(server: string, held: boolean): void {
    if (held) this.heldInstructions.add(server);
    else this.heldInstructions.delete(server);
  }

  /** The error for a call to a held tool: what changed and the exact command that approves it. */
  heldError(publicName: string, server: string, tool: string, changes: readonly string[]): GatewayError {
    const why = changes.includes('new tool') ? 'it is a new tool that has not been approved' : `its definition changed since it was approved (${changes.join(', ')})`;
    const approve = `mcpgate approve ${server} ${tool} --state ${this.pins.dir}`;
    return new GatewayError('MCPG_TOOL_HELD', `tool "${publicName}" of server "${server}" is held: ${why}. Review it with 'mcpgate pins ${server} --state ${this.pins.dir}' and approve it with '${approve}'`, { server, detail: { tool: publicName, changes, approve } });
  }

  /** Tells every agent which lists changed (templates are part of the resources list). */
  /** Tells each agent whose view of these lists changed (templates belong to the resources list). */
  announce(kinds: readonly ListKind[]): void {
    if (kinds.length === 0) return;
    for (const session of this.sessions) {
      const methods = new Set<string>();
      for (const kind of kinds) if (session.shown.changed(kind)) methods.add(kind === 'resourceTemplates' ? 'resources' : kind);
      for (const method of methods) session.listChanged(`notifications/${method}/list_changed`);
    }
  }
}
