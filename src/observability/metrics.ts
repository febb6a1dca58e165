// Every `mcpgate_*` metric the HTTP front serves on `/metrics` (`GatewayMetrics`), kept in a
// Prometheus registry (prometheus.ts). Call outcomes, errors and HTTP requests are recorded as they
// happen (the tools/call path costs two map lookups and a few additions); the state of servers,
// catalog and sessions is read from a `MetricsSource` once per scrape, so nothing has to keep gauges
// in step with the gateway. Label cardinality is bounded: (server, tool) pairs past `maxToolSeries`
// are folded into tool="_other" (and unseen servers into server="_other"); the other labelled
// families have a cap of their own. The console's per-server activity is computed from the same series.

import { OTHER, Registry, type Counter, type CounterChild, type Histogram, type HistogramChild, type Sample } from './prometheus.js';

/** What the gateway reports of a server: its connection's states, plus `disabled` in config. */
const SERVER_STATES = ['idle', 'connecting', 'ready', 'backoff', 'parked', 'closed', 'disabled'] as const;
export type ServerState = (typeof SERVER_STATES)[number];

/** search_tools' limit is at most 50. */
const SEARCH_RESULT_BUCKETS = [0, 1, 3, 5, 10, 20, 50];
const CODE_RUN_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];

type CallOutcome = 'ok' | 'error' | 'failed';

interface ServerSnapshot {
  name: string;
  /** Absent: configured but no connection yet (every state reads 0). */
  state: ServerState | undefined;
  breaker: 'closed' | 'open' | 'half-open';
  /** Times the breaker went from closed to open since this connection was made. */
  breakerTrips: number;
  /** Agents' calls in flight on it now. */
  inflight: number;
  /** An on-demand server's starts by calls and stops for being idle (absent: started always). */
  onDemand?: { starts: number; stops: number };
}

/** The counters and gauges of one per-agent or per-session server's pool (servers/pool.ts keeps them). */
export interface PoolCounters {
  server: string;
  keys: number;
  active: number;
  idle: number;
  hits: number;
  misses: number;
  evictions: number;
  reaped: number;
  creationFailures: number;
  breaker: 'closed' | 'open' | 'half-open';
  breakerTrips: number;
}

/** A pool as /metrics shows it. */
interface PoolSnapshot extends PoolCounters {
  /** Live stdio child processes of the pool. */
  processes: number;
}

export interface MetricsSnapshot {
  servers: readonly ServerSnapshot[];
  /** Absent or empty: no pooled server. */
  pools?: readonly PoolSnapshot[];
  /** What agents may be shown (held tools excluded), and the tools held back by pins. */
  catalog: { tools: number; resources: number; resourceTemplates: number; prompts: number; heldTools: number };
  sessions: { stdio: number; http: number };
}

/** Called once per scrape. */
export type MetricsSource = () => MetricsSnapshot;

interface GatewayMetricsOptions {
  /** Shown as `mcpgate_info{version}`. */
  version: string;
  /** Where the scrape-time gauges come from (it can be set later); default: nothing to report. */
  source?: MetricsSource;
  /** Distinct (server, tool) pairs kept before folding into tool="_other" (default 10 000). */
  maxToolSeries?: number;
  /** A collect callback threw during a scrape (`metric` is its name), or the source did (`metric` is 'source'): the scrape goes on without it. */
  onCollectError?: (metric: string, error: unknown) => void;
}

/** Tool call latency buckets in seconds: 1-2.5-5 steps from 0.5 ms to 60 s. */
const CALL_DURATION_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const DEFAULT_MAX_TOOL_SERIES = 10_000;
/** The agent × server × tool series of the result counters. */
const MAX_RESULT_SERIES = 10_000;

/** A server's tool calls over the last minute (the console's overview), from the recorded series. */
export interface ServerActivity {
  /** Calls that ended in the window. */
  calls: number;
  callsPerSecond: number;
  /** Of those, answered with a JSON-RPC error by the server, or failed (timeout, unavailable). */
  errors: number;
  /** Mean and 95th percentile (interpolated within its histogram bucket) of the call durations, ms. */
  meanMs: number;
  p95Ms: number;
  /** The window's length, seconds. */
  windowSeconds: number;
}

/** Activity is sampled at most this often (so a live page changes, and its ETag, only this often)… */
export const ACTIVITY_SAMPLE_MS = 5000;
/** …over about this long a window. */
const ACTIVITY_WINDOW_MS = 60_000;

/** One server's counters summed over its tools at one moment. */
interface Totals {
  calls: number;
  errors: number;
  sum: number;
  counts: Float64Array;
}

const EMPTY_SNAPSHOT: MetricsSnapshot = {
  servers: [],
  catalog: { tools: 0, resources: 0, resourceTemplates: 0, prompts: 0, heldTools: 0 },
  sessions: { stdio: 0, http: 0 },
};

/** The children one (server, tool) pair records into, made together on its first call. */
interface CallSeries {
  readonly ok: CounterChild;
  readonly error: CounterChild;
  readonly failed: CounterChild;
  readonly duration: HistogramChild;
}

/** The result counters' children of one agent × server × tool. */
interface ResultSeries {
  readonly bytes: CounterChild;
  readonly tokens: CounterChild;
}

export class GatewayMetrics {
  readonly registry: Registry;
  source: MetricsSource;
  private readonly maxToolSeries: number;
  private readonly onCollectError: ((metric: string, error: unknown) => void) | undefined;
  /** server → tool → series: nested so the hot path builds no key string. */
  private readonly calls = new Map<string, Map<string, CallSeries>>();
  private toolSeries = 0;
  private snapshot: MetricsSnapshot = EMPTY_SNAPSHOT;
  /** Samples of every server's totals, oldest first: the first is the window's start (bounded: ~window/sample). */
  private readonly activitySamples: { at: number; totals: Map<string, Totals> }[];
  private readonly callsTotal: Counter;
  private readonly callDuration: Histogram;
  private readonly errors: Counter;
  private readonly http: Counter;
  /** route → status → the child of `http`, so a request builds no key string. */
  private readonly httpSeries = new Map<string, Map<number, CounterChild>>();
  private readonly sseEvents: Counter;
  private readonly sseResumptions: Counter;
  private readonly quotaRefusals: Counter;
  private readonly quotaFallbacks: Counter;
  private readonly searches: Counter;
  private readonly searchResults: Histogram;
  private readonly zeroResultSearches: Counter;
  private readonly codeRuns: Counter;
  private readonly codeRunSeconds: Histogram;
  private readonly codeInnerCalls: Counter;
  /** agent → server → tool → the result counters' children (bounded by the counters' maxSeries: past it they fold into one). */
  private readonly results = new Map<string, Map<string, Map<string, ResultSeries>>>();
  private resultSeries = 0;
  private readonly resultBytes: Counter;
  private readonly resultTokens: Counter;
  private readonly resultsCut: Counter;
  private readonly guardFindings: Counter;

  constructor(options: GatewayMetricsOptions, now: number = performance.now()) {
    this.activitySamples = [{ at: now, totals: new Map() }];
    this.source = options.source ?? (() => EMPTY_SNAPSHOT);
    this.maxToolSeries = options.maxToolSeries ?? DEFAULT_MAX_TOOL_SERIES;
    const onCollectError = (this.onCollectError = options.onCollectError);
    const r = (this.registry = new Registry(onCollectError === undefined ? {} : { onCollectError }));
    const snap = (): MetricsSnapshot => this.snapshot;

    r.gauge({ name: 'mcpgate_up', help: 'Always 1 while the gateway answers scrapes.', collect: () => 1 });
    r.gauge({
      name: 'mcpgate_info',
      help: 'Build information; the value is always 1.',
      labels: ['version'],
      collect: () => [{ labels: [options.version], value: 1 }],
    });

    this.callsTotal = r.counter({
      name: 'mcpgate_tool_calls_total',
      help: "Tool calls by outcome: ok = a result, error = a JSON-RPC error from the server, failed = mcpgate's own failure once the call was routed (timeout, server unavailable, breaker open). Calls refused before that (policy denied, tool held, unknown tool) are counted in mcpgate_errors_total by code.",
      labels: ['server', 'tool', 'outcome'],
    });
    this.callDuration = r.histogram({
      name: 'mcpgate_tool_call_duration_seconds',
      help: 'Time from forwarding a tool call to its answer or failure, in seconds.',
      labels: ['server', 'tool'],
      buckets: CALL_DURATION_BUCKETS,
    });
    this.errors = r.counter({
      name: 'mcpgate_errors_total',
      help: 'MCPG_* errors sent to agents, by code.',
      labels: ['code'],
      maxSeries: 200,
    });
    this.http = r.counter({
      name: 'mcpgate_http_requests_total',
      help: 'HTTP requests answered, by route and status code.',
      labels: ['route', 'status'],
      maxSeries: 500,
    });
    this.sseEvents = r.counter({
      name: 'mcpgate_sse_replay_events_total',
      help: "Events of agents' SSE streams by what happened to them in the replay buffer: buffered (kept for a resumption), replayed (sent again on a resumption), dropped (left the buffer unreplayed: its bound, its age, or the stream or session ended).",
      labels: ['event'],
    });
    this.quotaRefusals = r.counter({
      name: 'mcpgate_quota_refused_total',
      help: "Tool calls refused for being over a limit of the rules' `limits` (MCPG_RATE_LIMITED), by the limit's level (all: every call of its place, server, tool) and kind (calls: per window, in_flight).",
      labels: ['level', 'kind'],
    });
    this.quotaFallbacks = r.counter({
      name: 'mcpgate_quota_local_checks_total',
      help: "Limit checks made on this worker's own counters because the cluster's Redis could not be asked (with --redis; without it every check is local and not counted here).",
    });
    this.sseResumptions = r.counter({
      name: 'mcpgate_sse_resumptions_total',
      help: 'GET requests with Last-Event-ID, by outcome: resumed, or refused (unknown id, or events after it no longer kept).',
      labels: ['outcome'],
    });

    this.searches = r.counter({ name: 'mcpgate_tool_searches_total', help: 'search_tools calls answered (search mode).' });
    this.searchResults = r.histogram({
      name: 'mcpgate_tool_search_results',
      help: 'Tools returned by one search_tools call.',
      buckets: SEARCH_RESULT_BUCKETS,
    });
    this.zeroResultSearches = r.counter({
      name: 'mcpgate_tool_search_zero_results_total',
      help: 'search_tools calls that found no tool the agent may call.',
    });
    this.codeRuns = r.counter({
      name: 'mcpgate_code_runs_total',
      help: 'Code-mode runs (run_code) ended, by outcome: ok, or the MCPG_* code the run failed with.',
      labels: ['outcome'],
    });
    this.codeRunSeconds = r.histogram({
      name: 'mcpgate_code_run_duration_seconds',
      help: 'Wall time of one code-mode run, from its start to its answer (waits on a person included).',
      buckets: CODE_RUN_BUCKETS,
    });
    this.codeInnerCalls = r.counter({
      name: 'mcpgate_code_inner_calls_total',
      help: 'Tool calls made from code-mode programs, by outcome: ok, error (isError), or refused (an MCPG_* refusal). Each is also counted in the call metrics as a direct call is.',
      labels: ['outcome'],
    });

    this.resultBytes = r.counter({
      name: 'mcpgate_result_bytes_total',
      help: 'Bytes of tool results passed to agents (after the guards and the result cap), by agent, server and tool; binary contents count by their encoded size.',
      labels: ['agent', 'server', 'tool'],
      maxSeries: MAX_RESULT_SERIES,
    });
    this.resultTokens = r.counter({
      name: 'mcpgate_result_tokens_estimated_total',
      help: 'Tokens of tool results passed to agents, estimated as bytes / 4, by agent, server and tool.',
      labels: ['agent', 'server', 'tool'],
      maxSeries: MAX_RESULT_SERIES,
    });
    this.resultsCut = r.counter({
      name: 'mcpgate_results_cut_total',
      help: 'Tool results over their cap: the agent got the head and a note, the whole result kept as mcpgate://results/ID.',
      labels: ['server'],
      maxSeries: 1000,
    });
    this.guardFindings = r.counter({
      name: 'mcpgate_guard_findings_total',
      help: 'What the built-in guards found, by direction (arguments, result, error), detector (a secret format, a PII preset, injection:SIGN) and action (redact, block, audit; for injection what followed).',
      labels: ['direction', 'detector', 'action'],
      maxSeries: 1000,
    });

    r.gauge({
      name: 'mcpgate_connection_state',
      help: `Connection state of each configured server: 1 for the current state, 0 for the others (${SERVER_STATES.join(', ')}).`,
      labels: ['server', 'state'],
      collect: () =>
        snap().servers.flatMap((s) =>
          SERVER_STATES.map((state): Sample => ({ labels: [s.name, state], value: s.state === state ? 1 : 0 })),
        ),
    });
    r.gauge({
      name: 'mcpgate_circuit_breaker_open',
      help: "1 while a server's circuit breaker fails calls fast (open, or half-open with its probe in flight), else 0.",
      labels: ['server'],
      collect: () => snap().servers.map((s): Sample => ({ labels: [s.name], value: s.breaker === 'closed' ? 0 : 1 })),
    });
    r.gauge({
      name: 'mcpgate_calls_in_flight',
      help: "Agents' requests in flight on each server.",
      labels: ['server'],
      collect: () => snap().servers.map((s): Sample => ({ labels: [s.name], value: s.inflight })),
    });
    r.counter({
      name: 'mcpgate_circuit_breaker_trips_total',
      help: "Times a server's circuit breaker opened (restarts from 0 when the server's connection is remade on reload).",
      labels: ['server'],
      collect: () => snap().servers.map((s): Sample => ({ labels: [s.name], value: s.breakerTrips })),
    });
    const onDemand = (): ServerSnapshot[] => snap().servers.filter((s) => s.onDemand !== undefined);
    r.counter({
      name: 'mcpgate_on_demand_starts_total',
      help: 'Times a call started an on-demand server (restarts from 0 when its connection is remade on reload).',
      labels: ['server'],
      collect: () => onDemand().map((s): Sample => ({ labels: [s.name], value: s.onDemand!.starts })),
    });
    r.counter({
      name: 'mcpgate_on_demand_stops_total',
      help: 'Times an on-demand server was stopped after its idleStop without calls.',
      labels: ['server'],
      collect: () => onDemand().map((s): Sample => ({ labels: [s.name], value: s.onDemand!.stops })),
    });
    r.gauge({
      name: 'mcpgate_on_demand_servers',
      help: 'On-demand servers by whether they run now (running) or rest, listed from their last known catalog (idle).',
      labels: ['state'],
      collect: () => {
        const servers = onDemand();
        const running = servers.filter((s) => s.state !== 'idle').length;
        return [
          { labels: ['running'], value: running },
          { labels: ['idle'], value: servers.length - running },
        ];
      },
    });
    r.gauge({
      name: 'mcpgate_catalog_items',
      help: 'Items in the merged catalog agents may be shown, by kind (held tools excluded; before per-agent rules).',
      labels: ['kind'],
      collect: () => {
        const c = snap().catalog;
        return [
          { labels: ['tools'], value: c.tools },
          { labels: ['resources'], value: c.resources },
          { labels: ['resource_templates'], value: c.resourceTemplates },
          { labels: ['prompts'], value: c.prompts },
        ];
      },
    });
    r.gauge({
      name: 'mcpgate_catalog_held_tools',
      help: 'Tools held back until their new or changed definition is approved (pins).',
      collect: () => snap().catalog.heldTools,
    });
    r.gauge({
      name: 'mcpgate_agent_sessions',
      help: 'Open agent sessions, by transport.',
      labels: ['transport'],
      collect: () => [
        { labels: ['stdio'], value: snap().sessions.stdio },
        { labels: ['http'], value: snap().sessions.http },
      ],
    });
    const pools = (): readonly PoolSnapshot[] => snap().pools ?? [];
    const poolSeries = (name: string, help: string, kind: 'gauge' | 'counter', value: (p: PoolSnapshot) => number): void => {
      r[kind]({ name, help, labels: ['server'], collect: () => pools().map((p): Sample => ({ labels: [p.server], value: value(p) })) });
    };
    poolSeries(
      'mcpgate_pool_keys',
      'Pooled connections of each per-agent or per-session server (one per agent or agent session).',
      'gauge',
      (p) => p.keys,
    );
    poolSeries('mcpgate_pool_active', 'Pooled connections with an agent call in flight.', 'gauge', (p) => p.active);
    poolSeries('mcpgate_pool_idle', 'Pooled connections with no call in flight.', 'gauge', (p) => p.idle);
    poolSeries('mcpgate_pool_processes', 'Live stdio child processes of the pool.', 'gauge', (p) => p.processes);
    poolSeries('mcpgate_pool_hits_total', 'Requests that found their pooled connection alive (or being made).', 'counter', (p) => p.hits);
    poolSeries('mcpgate_pool_misses_total', 'Requests that had to make a pooled connection.', 'counter', (p) => p.misses);
    poolSeries(
      'mcpgate_pool_evictions_total',
      'Pooled connections closed for being idle, past their TTL, or to make room under pool.max.',
      'counter',
      (p) => p.evictions,
    );
    poolSeries('mcpgate_pool_reaped_total', 'Pooled connections dropped because their session died.', 'counter', (p) => p.reaped);
    poolSeries('mcpgate_pool_creation_failures_total', 'Pooled connections that failed to start.', 'counter', (p) => p.creationFailures);
    poolSeries('mcpgate_pool_breaker_trips_total', "Times a pooled server's creation breaker opened.", 'counter', (p) => p.breakerTrips);
    poolSeries(
      'mcpgate_pool_breaker_open',
      "1 while a pooled server's creation breaker fails new connections fast, else 0.",
      'gauge',
      (p) => (p.breaker === 'closed' ? 0 : 1),
    );
    r.gauge({
      name: 'mcpgate_process_resident_memory_bytes',
      help: 'Resident set size of the gateway process, in bytes.',
      collect: () => process.memoryUsage.rss(),
    });
    r.gauge({
      name: 'mcpgate_process_uptime_seconds',
      help: 'Seconds since the gateway process started.',
      collect: () => process.uptime(),
    });
  }

  /** One tool call ended (hot path). `tool` is the tool's name on its server. */
  callFinished(server: string, tool: string, outcome: CallOutcome, seconds: number): void {
    const series = this.calls.get(server)?.get(tool) ?? this.addSeries(server, tool);
    // Field updates on the children it keeps, as the registry lets a hot path do: a call runs no
    // code of prometheus.ts (`CounterChild.inc` and `HistogramChild.observe` do the same).
    series[outcome].value += 1;
    if (Number.isNaN(seconds)) return;
    const duration = series.duration;
    const bounds = duration.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    duration.counts[i]! += 1;
    duration.sum += seconds;
    duration.count += 1;
  }

  /** A search_tools call returned `results` tools. */
  toolSearch(results: number): void {
    this.searches.inc();
    this.searchResults.observe(results);
    if (results === 0) this.zeroResultSearches.inc();
  }

  /** A code-mode run ended (`outcome`: ok, or its MCPG_* code) after `seconds`, having made `calls` inner calls. */
  codeRun(outcome: string, seconds: number, calls: { readonly ok: number; readonly error: number; readonly refused: number }): void {
    this.codeRuns.labels(outcome).inc();
    this.codeRunSeconds.observe(seconds);
    if (calls.ok > 0) this.codeInnerCalls.labels('ok').inc(calls.ok);
    if (calls.error > 0) this.codeInnerCalls.labels('error').inc(calls.error);
    if (calls.refused > 0) this.codeInnerCalls.labels('refused').inc(calls.refused);
  }

  /** An MCPG_* error was sent to an agent. */
  error(code: string): void {
    this.errors.labels(code).inc();
  }

  /** A tool result passed to an agent: its bytes, and the tokens they are estimated to cost (bytes / 4). */
  resultPassed(agent: string, server: string, tool: string, bytes: number): void {
    // Nested maps: a call builds no key string (the counters' own children are looked up once per series).
    let byServer = this.results.get(agent);
    if (byServer === undefined) this.results.set(agent, (byServer = new Map<string, Map<string, ResultSeries>>()));
    let byTool = byServer.get(server);
    if (byTool === undefined) byServer.set(server, (byTool = new Map<string, ResultSeries>()));
    let series = byTool.get(tool);
    if (series === undefined) {
      series = { bytes: this.resultBytes.labels(agent, server, tool), tokens: this.resultTokens.labels(agent, server, tool) };
      // Past the bound, the series are looked up per call (and fold into the counters' "other").
      if (this.resultSeries < MAX_RESULT_SERIES) {
        byTool.set(tool, series);
        this.resultSeries++;
      }
    }
    // Field updates, as the call counters make: no function of the registry runs per call.
    series.bytes.value += bytes;
    series.tokens.value += Math.ceil(bytes / 4);
  }

  /** What one agent was passed of each server's tools, by bytes and estimated tokens, most first (the console's agent page). */
  resultsOf(agent: string): { server: string; tool: string; bytes: number; tokens: number }[] {
    const rows: { server: string; tool: string; bytes: number; tokens: number }[] = [];
    for (const [server, byTool] of this.results.get(agent) ?? [])
      for (const [tool, series] of byTool) rows.push({ server, tool, bytes: series.bytes.value, tokens: series.tokens.value });
    return rows.sort((a, b) => b.bytes - a.bytes);
  }

  resultCut(server: string): void {
    this.resultsCut.labels(server).inc();
  }

  guardFound(direction: string, detector: string, action: string): void {
    this.guardFindings.labels(direction, detector, action).inc();
  }

  /** A tool call was refused for being over a limit (policy/quotas.ts). */
  quotaRefused(level: 'all' | 'server' | 'tool', kind: 'calls' | 'in_flight'): void {
    this.quotaRefusals.labels(level, kind).inc();
  }

  /** A limit check used this worker's own counters: the shared ones (Redis) could not be asked. */
  quotaLocalCheck(): void {
    this.quotaFallbacks.inc();
  }

  /** The HTTP front answered a request (`route` is the route pattern, never the raw path). */
  httpRequest(route: string, status: number): void {
    // The child kept per (route, status): a field update on the hot path (routes and statuses are few).
    let statuses = this.httpSeries.get(route);
    if (statuses === undefined) this.httpSeries.set(route, (statuses = new Map<number, CounterChild>()));
    let child = statuses.get(status);
    if (child === undefined) statuses.set(status, (child = this.http.labels(route, String(status))));
    child.value += 1;
  }

  /** Replay-buffer events of agents' SSE streams (the HTTP front's resumable streams). */
  sseReplay(event: 'buffered' | 'replayed' | 'dropped', count: number): void {
    if (count > 0) this.sseEvents.labels(event).inc(count);
  }

  /** A GET with Last-Event-ID was answered. */
  sseResumption(outcome: 'resumed' | 'refused'): void {
    this.sseResumptions.labels(outcome).inc();
  }

  /**
   * Each server's calls/s, errors and latency over the last minute or so, computed from the
   * tool-call counters and histogram (the same series /metrics serves): the difference between the
   * newest sample and one about a minute older. A new sample is taken when the last is
   * ACTIVITY_SAMPLE_MS old, so the figures move in steps of that. A server with no call in the
   * window is absent. Cheap enough for a page that polls every second: one pass over the series per sample.
   */
  serverActivity(now: number = performance.now()): Map<string, ServerActivity> {
    const samples = this.activitySamples;
    if (now - samples[samples.length - 1]!.at >= ACTIVITY_SAMPLE_MS) {
      samples.push({ at: now, totals: this.totals() });
      while (samples.length > 2 && samples[1]!.at <= now - ACTIVITY_WINDOW_MS) samples.shift();
    }
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    const activity = new Map<string, ServerActivity>();
    if (first === last) return activity;
    const seconds = (last.at - first.at) / 1000;
    for (const [server, end] of last.totals) {
      const then = first.totals.get(server);
      const calls = end.calls - (then?.calls ?? 0);
      if (calls <= 0) continue;
      const counts = end.counts.map((n, i) => n - (then?.counts[i] ?? 0));
      activity.set(server, {
        calls,
        callsPerSecond: calls / seconds,
        errors: end.errors - (then?.errors ?? 0),
        meanMs: ((end.sum - (then?.sum ?? 0)) / calls) * 1000,
        p95Ms: quantile(0.95, counts, CALL_DURATION_BUCKETS) * 1000,
        windowSeconds: seconds,
      });
    }
    return activity;
  }

  private totals(): Map<string, Totals> {
    const totals = new Map<string, Totals>();
    for (const [server, tools] of this.calls) {
      const t: Totals = { calls: 0, errors: 0, sum: 0, counts: new Float64Array(CALL_DURATION_BUCKETS.length + 1) };
      for (const series of tools.values()) {
        t.calls += series.ok.value + series.error.value + series.failed.value;
        t.errors += series.error.value + series.failed.value;
        t.sum += series.duration.sum;
        for (let i = 0; i < t.counts.length; i++) t.counts[i]! += series.duration.counts[i]!;
      }
      totals.set(server, t);
    }
    return totals;
  }

  /** The exposition text (Content-Type: `CONTENT_TYPE` from prometheus.ts). Reads the source once. */
  render(): string {
    try {
      this.snapshot = this.source();
    } catch (err) {
      this.snapshot = EMPTY_SNAPSHOT;
      this.onCollectError?.('source', err);
    }
    try {
      return this.registry.render();
    } finally {
      this.snapshot = EMPTY_SNAPSHOT;
    }
  }

  private addSeries(server: string, tool: string): CallSeries {
    // Past the cap a new pair shares its server's `_other` series, and a server first seen past the cap
    // shares server="_other": at most one extra series per server known before the cap, plus one.
    const full = this.toolSeries >= this.maxToolSeries;
    const serverName = full && !this.calls.has(server) ? OTHER : server;
    const toolName = full ? OTHER : tool;
    let tools = this.calls.get(serverName);
    if (tools === undefined) this.calls.set(serverName, (tools = new Map<string, CallSeries>()));
    const existing = tools.get(toolName);
    if (existing !== undefined) return existing;
    const series: CallSeries = {
      ok: this.callsTotal.labels(serverName, toolName, 'ok'),
      error: this.callsTotal.labels(serverName, toolName, 'error'),
      failed: this.callsTotal.labels(serverName, toolName, 'failed'),
      duration: this.callDuration.labels(serverName, toolName),
    };
    tools.set(toolName, series);
    this.toolSeries += 1;
    return series;
  }
}

/**
 * The q-quantile of observations counted per bucket (not cumulative; the last slot is above the
 * highest bound), interpolated linearly within its bucket as Prometheus' histogram_quantile does;
 * in the overflow bucket, the highest bound.
 */
function quantile(q: number, counts: ArrayLike<number>, bounds: readonly number[]): number {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return 0;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i]!;
    if (n > 0 && below + n >= rank) {
      if (i >= bounds.length) return bounds[bounds.length - 1]!;
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      return lower + (bounds[i]! - lower) * ((rank - below) / n);
    }
    below += n;
  }
  return bounds[bounds.length - 1]!;
}
