// Composition root: builds mcpgate's parts in order (config → gateway and its connections → front)
// and closes them in reverse. Only src/cli/ reads argv, installs signal handlers or exits.

import type { Socket } from 'node:net';
import type { ServersConfig } from './config/types.js';
import { Reloader, loadBoth } from './reload.js';
import type { Rules } from './rules/load.js';
import { Gateway, type GatewayOptions, type ServerSummary } from './gateway/gateway.js';
import type { RedisApprovalBoard } from './cluster/approval-board.js';
import type { RedisQuotaCounters } from './cluster/redis-quota-counters.js';
import { serveStdio, type StdioEnd, type StdioFront } from './front/stdio.js';
import type { HttpFront, HttpFrontOptions } from './front/http/front.js';
import { isLoopback as isLoopbackHost } from './front/http/exchange.js';
import { AuditLog, type AuditOptions } from './observability/audit.js';
import type { Tracing, TracingOptions } from './observability/tracing.js';
import { GATEWAY_INFO } from './version.js';
import { GatewayError } from './errors.js';
import { TokenStore } from './oauth/store.js';
import type { Cluster } from './cluster/cluster.js';
import { workerId } from './cluster/worker-id.js';
import type { OAuthCredentials } from './oauth/credentials.js';
import { hostname } from 'node:os';
import { createHash } from 'node:crypto';
import { fileDigest } from './config/watch.js';

/** What `--http` and its companion flags configure (the ops context is added here). */
export type HttpSettings = Omit<HttpFrontOptions, 'ops' | 'onRequest' | 'onReplay' | 'mounted' | 'cluster'> & {
  /** `--redis`: join the cluster of mcpgate processes sharing this Redis. */
  cluster?: ClusterSettings;
};

export interface ClusterSettings {
  redisUrl: string;
  /** `--cluster-secret`, or (a Redis on loopback) the host's key from the state directory (cli/cluster-secret.ts). */
  secret: string | undefined;
  /** `--advertise HOST`: the name other workers reach this one by (default: the bound address, or the host name when bound to all). */
  advertise: string | undefined;
  /**
   * `--workers N`: this process is one of N node:cluster workers sharing the port (the primary hands
   * it connections, `HttpSettings.handedSlot`); it also listens on a port of its own (the bound host,
   * port 0) and other workers forward to that one.
   */
  privatePort?: boolean;
}

/** The gateway's own options (minus what is loaded from files), plus where the files and the agent are. */
export interface McpgateOptions extends Omit<
  GatewayOptions,
  'config' | 'rules' | 'audit' | 'tracing' | 'requestStateHolder' | 'shared' | 'consoleBase'
> {
  /** This process will be a worker of a cluster (`--redis`): the requestState it seals names it. */
  clustered?: boolean;
  /** The audit trail (`--audit FILE|-`); absent: off. */
  audit?: Omit<AuditOptions, 'onProblem'>;
  /** OpenTelemetry traces (`--otlp-endpoint`, OTEL_EXPORTER_OTLP_*); absent: off. */
  tracing?: Omit<TracingOptions, 'onProblem' | 'serviceVersion'>;
  configFile: string;
  /** gateway-rules.json; undefined: every agent may use every server. */
  rulesFile?: string;
  /** The agent identity on stdio (`--agent`). */
  agent: string;
  /** True when the agent's identity was configured (--agent / MCPGATE_AGENT) rather than defaulted. */
  agentExplicit?: boolean;
  /** The curated view the stdio agent is on (`--view`, a name in the rules' `views`); absent: none. */
  view?: string;
  /** Where `${VAR}` in the config is expanded from (default: the process environment). */
  env?: NodeJS.ProcessEnv;
  /** Bytes written for one agent and not yet read past which mcpgate stops (`--max-agent-buffer`, both fronts). */
  maxAgentBuffer?: number;
}

/**
 * The OpenTelemetry SDK is loaded only when tracing is configured: it costs a few hundred ms of
 * startup that a gateway without traces should not pay.
 */
async function startTracing(settings: NonNullable<McpgateOptions['tracing']>, log: McpgateOptions['log']): Promise<Tracing> {
  const { Tracing } = await import('./observability/tracing.js');
  const tracing = new Tracing({
    ...settings,
    serviceVersion: GATEWAY_INFO.version,
    onProblem: (message, error) => log.warn(message, { error: error instanceof Error ? error.message : error }),
  });
  log.info(`tracing: spans are exported to ${new URL(settings.url).origin} (OTLP over HTTP, JSON)`);
  return tracing;
}

/** The OAuth client for remote servers (it loads the SDK's client): imported once a remote server is configured. */
const oauthModule: { loaded?: { OAuthCredentials: typeof OAuthCredentials } } = {};

async function loadOAuthFor(config: ServersConfig): Promise<void> {
  // An interceptor server (`interceptors`) may be remote too.
  const remote = (server: { type: string }): boolean => server.type !== 'stdio';
  if (oauthModule.loaded === undefined && (config.servers.some(remote) || (config.interceptors ?? []).some(remote)))
    oauthModule.loaded = await import('./oauth/credentials.js');
}

/**
 * The cluster's halves of the policy (the shared quota counters and approval board): made before the
 * gateway, whose quotas and approval desk are built on them, and handed to the cluster to start and close.
 */
interface SharedPolicy {
  readonly settings: ClusterSettings & { secret: string };
  readonly counters: RedisQuotaCounters;
  readonly board: RedisApprovalBoard;
}

/** The cluster's policy halves' modules, loaded only when the HTTP front will join a cluster (`--redis`). */
interface SharedModules {
  RedisQuotaCounters: typeof RedisQuotaCounters;
  RedisApprovalBoard: typeof RedisApprovalBoard;
}

async function loadShared(): Promise<SharedModules> {
  const [{ RedisQuotaCounters }, { RedisApprovalBoard }] = await Promise.all([
    import('./cluster/redis-quota-counters.js'),
    import('./cluster/approval-board.js'),
  ]);
  return { RedisQuotaCounters, RedisApprovalBoard };
}

export class Mcpgate {
  readonly gateway: Gateway;
  readonly reloader: Reloader;
  readonly audit: AuditLog | undefined;
  readonly tracing: Tracing | undefined;
  private front: StdioFront | undefined;
  private http: HttpFront | undefined;
  private cluster: Cluster | undefined;
  private closing: Promise<void> | undefined;
  /** A digest of the loaded .mcp.json, rules and pins ('' until first computed): /status, the cluster. */
  private version = '';
  private versioning: Promise<void> = Promise.resolve();

  /** The console's base URL once the HTTP front listens (a call waiting for approval names its page). */
  private consoleUrl: string | undefined;
  private readonly shared: SharedPolicy | undefined;

  private constructor(
    readonly config: ServersConfig,
    rules: Rules,
    private readonly options: McpgateOptions,
    started: { tracing: Tracing | undefined; cluster: { settings: ClusterSettings; modules: SharedModules } | undefined },
  ) {
    const { tracing, cluster } = started;
    const secret = cluster?.settings.secret;
    if (cluster !== undefined && secret === undefined)
      throw new Error("a cluster needs its secret (the CLI gives --cluster-secret or the state directory's key)");
    const clusterLog = options.log.child({ room: 'cluster' });
    const shared = (this.shared =
      cluster === undefined || secret === undefined
        ? undefined
        : {
            settings: { ...cluster.settings, secret },
            counters: new cluster.modules.RedisQuotaCounters({ url: cluster.settings.redisUrl, log: clusterLog }),
            board: new cluster.modules.RedisApprovalBoard({
              url: cluster.settings.redisUrl,
              secret,
              workerId: workerId(),
              // A record read unsigned is counted by the cluster (made once the front serves HTTP).
              onRefused: (kind, key) => this.cluster?.refusedRecord(kind, key),
              log: clusterLog,
            }),
          });
    const log = options.log;
    this.audit =
      options.audit === undefined
        ? undefined
        : new AuditLog({ ...options.audit, onProblem: (message, error) => log.error(message, { error }) });
    this.tracing = tracing;
    // Remote servers' OAuth tokens live beside the pins, in the state directory (`mcpgate login` writes them).
    const tokens = new TokenStore(options.pins?.dir ?? '.mcpgate');
    this.gateway = new Gateway({
      // A server given its own Authorization header keeps it: a 401 there is a wrong token, not a login to run.
      // A per-agent server's connection for agent A uses A's own login (`mcpgate login SERVER --agent A`), never
      // the shared one; a client-credentials entry has no person behind it, so it is one account for all.
      credentials: (server, account) =>
        Object.keys(server.headers).some((h) => h.toLowerCase() === 'authorization')
          ? undefined
          : new oauthModule.loaded!.OAuthCredentials(
              server,
              account === undefined || (server.auth !== undefined && server.auth.grant !== 'authorization_code')
                ? tokens
                : tokens.forAgent(account),
              log.child({ server: server.name }),
            ),
      ...options,
      ...(options.clustered === true && { requestStateHolder: workerId() }),
      config,
      rules,
      audit: this.audit,
      tracing: this.tracing,
      ...(shared !== undefined && { shared: { counters: shared.counters, board: shared.board, worker: workerId() } }),
      consoleBase: () => this.consoleUrl,
    });
    this.reloader = new Reloader(this.gateway, options.configFile, options.rulesFile, options.log, options.env ?? process.env);
    this.reloader.recordInitial(config, rules);
    this.reloader.beforeApply = loadOAuthFor;
    this.gateway.statusSource = () => ({
      config_version: this.version,
      reload: { config: this.reloader.config, rules: this.reloader.rules },
    });
    this.reloader.afterReload = () => this.refreshVersion();
    this.gateway.pins.observe(() => this.refreshVersion());
    this.refreshVersion();
  }

  /**
   * Recomputes the config version after a reload or a pin change; in a cluster, a new version nudges
   * every other worker to re-read its own files (a worker whose file watch missed the change —
   * another host, a network file system — then catches up within a second).
   */
  private refreshVersion(): void {
    this.versioning = this.versioning
      .then(async () => {
        const hash = createHash('sha256');
        const files = [
          this.options.configFile,
          this.options.rulesFile,
          this.gateway.pins.mode === 'off' ? undefined : this.gateway.pins.store.pinsPath,
        ];
        for (const file of files) hash.update(`${file === undefined ? '-' : await fileDigest(file)}\n`);
        const version = hash.digest('hex').slice(0, 12);
        if (version === this.version) return;
        const first = this.version === '';
        this.version = version;
        if (!first) this.cluster?.nudge(version);
      })
      .catch((err: unknown) => this.options.log.warn('could not compute the configuration version', { error: err }));
  }

  /** Another worker runs configuration `version`: if this one runs another, re-read the files and the pins. */
  private onNudge(from: string, version: string): void {
    if (version === this.version) return;
    void this.reloader.reload(`worker ${from} runs configuration ${version}`).then(() => this.gateway.pins.recheck());
  }

  /**
   * Loads and validates both files; throws MCPG_CONFIG_INVALID before anything is started. `cluster`:
   * the HTTP front will join this cluster (`serveHttp` gets the same settings).
   */
  static async create(options: McpgateOptions, cluster?: ClusterSettings): Promise<Mcpgate> {
    const { config, rules } = await loadBoth(options.configFile, options.rulesFile, options.env ?? process.env);
    for (const warning of [...config.warnings, ...rules.warnings])
      options.log.warn(`config: ${warning.path}: ${warning.message}`, { file: warning.file });
    if (options.rulesFile === undefined) options.log.info('no rules file: every agent may use every server');
    await loadOAuthFor(config);
    const tracing = options.tracing === undefined ? undefined : await startTracing(options.tracing, options.log);
    return new Mcpgate(config, rules, options, {
      tracing,
      cluster: cluster === undefined ? undefined : { settings: cluster, modules: await loadShared() },
    });
  }

  /** SIGHUP: reopen the audit file (an external rotator moved it), reload both files, revive every parked server. */
  async hangup(): Promise<void> {
    this.audit?.reopen();
    await this.reloader.reload('SIGHUP');
    this.gateway.reviveAll('SIGHUP');
  }

  /**
   * Serves one agent on stdio and starts the servers in parallel. The agent is answered at once;
   * its first lists wait until every server is ready or has failed, or `--list-wait` after the first
   * was ready (later servers arrive with list_changed).
   */
  serveStdio(): { ended: Promise<StdioEnd>; started: Promise<ServerSummary[]> } {
    const { maxAgentBuffer, view } = this.options;
    if (view !== undefined && !this.gateway.rules.views.has(view)) {
      const known = [...this.gateway.rules.views.keys()];
      throw new GatewayError(
        'MCPG_CONFIG_INVALID',
        `--view ${JSON.stringify(view)}: the rules file defines no view of that name (${known.length === 0 ? 'it has no "views"' : `its views: ${known.join(', ')}`})`,
      );
    }
    this.front = serveStdio(this.gateway, this.options.agent, this.options.agentExplicit ?? true, {
      ...(maxAgentBuffer !== undefined && { maxAgentBuffer }),
      ...(view !== undefined && { view }),
    });
    const started = this.gateway.start();
    this.reloader.start();
    started.then(
      (summaries) => {
        const ready = summaries.filter((s) => s.state === 'ready').length;
        this.options.log.info(
          `mcpgate ready on stdio: ${ready} of ${summaries.length} servers, ${this.gateway.catalog.listTools().length} tools`,
          { agent: this.options.agent },
        );
      },
      (err: unknown) => this.options.log.error('starting servers failed', { error: err }),
    );
    return { ended: this.front.ended, started };
  }

  /**
   * `--stdio --http`: also serves one agent on stdio, beside the HTTP front that `serveHttp` started
   * (with the servers); resolves when the stdio agent is gone.
   */
  attachStdio(): Promise<StdioEnd> {
    const { maxAgentBuffer } = this.options;
    this.front = serveStdio(
      this.gateway,
      this.options.agent,
      this.options.agentExplicit ?? true,
      maxAgentBuffer === undefined ? {} : { maxAgentBuffer },
    );
    return this.front.ended;
  }

  /**
   * Serves agents over Streamable HTTP and starts the servers. Resolves once the port is bound
   * (agents may connect at once; their first lists wait for the servers, at most `--list-wait` after the first is ready).
   */
  async serveHttp(settings: HttpSettings): Promise<{ url: string; started: Promise<ServerSummary[]> }> {
    const log = this.options.log;
    const metrics = this.gateway.metrics;
    const { maxAgentBuffer } = this.options;
    // The HTTP front, the console and the cluster (a Redis client) are loaded only to serve HTTP: a
    // stdio gateway starts sooner and holds tens of MiB less without them.
    const [{ HTTP_DEFAULTS, HttpFront }, { CONSOLE_OFF, CONSOLE_PATH, Console }, { Cluster }] = await Promise.all([
      import('./front/http/front.js'),
      import('./console/console.js'),
      settings.cluster === undefined ? { Cluster: undefined } : import('./cluster/cluster.js'),
    ]);
    const { cluster: clusterSettings, ...front } = settings;
    let port = 0;
    const shared = this.shared;
    if (clusterSettings !== undefined && shared === undefined)
      throw new Error('a cluster is joined from the start: its settings are given to Mcpgate.create as well');
    const cluster =
      shared === undefined || Cluster === undefined
        ? undefined
        : (this.cluster = new Cluster({
            redisUrl: shared.settings.redisUrl,
            secret: shared.settings.secret,
            quotas: shared.counters,
            approvals: shared.board,
            address: () => `http://${advertised(shared.settings.advertise, settings.host)}:${port}`,
            sessionTtlMs: (settings.sessionIdleMs ?? HTTP_DEFAULTS.sessionIdleMs) + 60_000,
            version: () => this.version,
            onNudge: (from, version) => this.onNudge(from, version),
            metrics: metrics.registry,
            log: log.child({ room: 'cluster' }),
          }));
    const console = new Console({
      gateway: this.gateway,
      audit: this.audit,
      log: log.child({ front: 'console' }),
      ...(cluster !== undefined && { signIns: cluster.signIns }),
    });
    this.http = new HttpFront(
      this.gateway,
      {
        ...(maxAgentBuffer !== undefined && { maxAgentBuffer }),
        ...front,
        ...(cluster !== undefined && { cluster }),
        onRequest: metrics.httpRequest.bind(metrics),
        onReplay: {
          buffered: (n) => metrics.sseReplay('buffered', n),
          replayed: (n) => metrics.sseReplay('replayed', n),
          dropped: (n) => metrics.sseReplay('dropped', n),
          resumption: (outcome) => metrics.sseResumption(outcome),
        },
        ops: { gateway: this.gateway, metrics: () => metrics.render() },
        mounted: { prefix: CONSOLE_PATH, handle: (path, req, res) => console.handle(path, req, res) },
      },
      log.child({ front: 'http' }),
    );
    const url = await this.http.listen();
    port = clusterSettings?.privatePort === true ? await this.http.listenPrivate(settings.host) : Number(new URL(url).port);
    if (cluster !== undefined) {
      // Calls waiting for approval are seen, and decided, on every worker (the gateway still checks each
      // decision); the rules' limits are counted by every worker together (locally while Redis is down).
      await cluster.start();
      const forwardingHost = advertised(clusterSettings?.advertise, settings.host);
      log.info(`worker ${cluster.id} joined the cluster (forwarding address ${forwardingHost}:${port})`, { worker: cluster.id });
      // Forwards are signed, not encrypted: what an agent sends crosses the cluster's network in clear.
      if (!isLoopbackHost(forwardingHost))
        log.warn(
          `workers forward agents' requests to each other over plain HTTP (${forwardingHost}:${port}): the network between the workers must be private to them`,
          { worker: cluster.id },
        );
    }
    const auth =
      settings.auth === 'off'
        ? `auth off: every request is agent "${settings.defaultAgent}" unless it sends X-Mcpgate-Agent`
        : 'bearer tokens required';
    log.info(`mcpgate listening on ${url} (${auth})`, { url });
    const consoleUrl = url.replace(/\/mcp$/, CONSOLE_PATH);
    // A call waiting for approval names its page in the console (and the agent is told it).
    this.consoleUrl = consoleUrl;
    if (console.enabled) log.info(`the operator's console is at ${consoleUrl} (sign in with an admin's token)`, { url: consoleUrl });
    else log.info(CONSOLE_OFF);
    const started = this.gateway.start();
    this.reloader.start();
    started.then(
      (summaries) => {
        const ready = summaries.filter((s) => s.state === 'ready').length;
        log.info(`mcpgate ready on ${url}: ${ready} of ${summaries.length} servers, ${this.gateway.catalog.listTools().length} tools`, {
          url,
        });
      },
      (err: unknown) => log.error('starting servers failed', { error: err }),
    );
    return { url, started };
  }

  /** Graceful shutdown in reverse order of start: the fronts drain first, then the servers close. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.http?.close();
      await this.cluster?.close();
      this.reloader.close();
      this.front?.close();
      await this.gateway.close();
      await this.audit?.close();
      await this.tracing?.close();
    })();
    return this.closing;
  }

  /** A signal during shutdown: every server's stop skips to SIGTERM now, SIGKILL after `termGraceMs`. */
  hurry(termGraceMs: number): void {
    this.gateway.hurry(termGraceMs);
  }

  /** `--workers N`: a connection of the shared port the primary hands over (closed if HTTP is not served). */
  accept(socket: Socket, head: Buffer): void {
    if (this.http === undefined) socket.destroy();
    else this.http.accept(socket, head);
  }

  /** Last resort: kill every server's process group now. */
  destroy(): void {
    this.gateway.destroy();
  }
}

/** The host other workers forward to: --advertise, else the bound address, else (bound to all) the host name. */
function advertised(advertise: string | undefined, host: string): string {
  const name = advertise ?? (host === '0.0.0.0' || host === '::' ? hostname() : host);
  return name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
}
