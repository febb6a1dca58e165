// A small metrics registry rendered in the Prometheus text exposition format 0.0.4 (no dependency:
// it sits on the tools/call hot path). Counters, gauges and histograms with a fixed, ordered list of
// label names. The child for one tuple of label values is made once and cached in a Map keyed by the
// joined values; callers on a hot path keep the child, so recording is a field update. Gauges and
// counters may instead be *collected*: a callback evaluated at scrape time (state owned elsewhere).
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
// Below the registry: every metric mcpgate exports (`GatewayMetrics`).

/** The Content-Type of `render()`'s output. */
export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The label value a metric's series fold into once it reaches `maxSeries`. */
export const OTHER = '_other';

/** One sample produced by a collect callback: the label values in the metric's order, and the value. */
export interface Sample {
  readonly labels: readonly string[];
  readonly value: number;
}

/** Evaluated at every scrape. An unlabelled metric may return the bare number. */
export type Collect = () => number | Iterable<Sample>;

export interface MetricOptions {
  name: string;
  help: string;
  /** Label names, in the order `labels()` takes their values. */
  labels?: readonly string[];
  /** Distinct label tuples kept; past it, new tuples share one child whose every label is `_other`. */
  maxSeries?: number;
}

export interface CollectedOptions extends MetricOptions {
  collect?: Collect;
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, strictly increasing; `+Inf` is implied. */
  buckets: readonly number[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SEP = '\u0000';

/** Label values: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

/** HELP text: backslash and line feed are escaped (quotes are not). */
export function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value: Go float syntax, with `+Inf`, `-Inf` and `NaN` spelled as Prometheus expects. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** `a="x",b="y"` (no braces), so a histogram can append `le`. */
function labelText(names: readonly string[], values: readonly string[]): string {
  let text = '';
  for (let i = 0; i < names.length; i++) text += `${i === 0 ? '' : ','}${names[i]}="${escapeLabelValue(values[i]!)}"`;
  return text;
}

const byKey = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);

function sampleLine(name: string, labels: string, value: number): string {
  return `${labels === '' ? name : `${name}{${labels}}`} ${formatValue(value)}`;
}

type MetricType = 'counter' | 'gauge' | 'histogram';

/** What every metric shares: name, help, label names and the cache of children. */
abstract class Family<C extends { readonly labelText: string }> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  abstract readonly type: MetricType;
  private readonly maxSeries: number;
  private readonly children = new Map<string, C>();
  private root: C | undefined;

  constructor(options: MetricOptions, reserved: readonly string[] = []) {
    if (!NAME.test(options.name)) throw new TypeError(`invalid metric name "${options.name}"`);
    const names = options.labels ?? [];
    for (const label of names) {
      if (!LABEL.test(label) || label.startsWith('__') || reserved.includes(label))
        throw new TypeError(`invalid label name "${label}" for metric "${options.name}"`);
    }
    if (new Set(names).size !== names.length) throw new TypeError(`duplicate label name for metric "${options.name}"`);
    this.name = options.name;
    this.help = options.help;
    this.labelNames = Object.freeze([...names]);
    this.maxSeries = options.maxSeries ?? Infinity;
  }

  /** The child for these label values (made on first use, then one map lookup). Hold it on a hot path. */
  labels(...values: string[]): C {
    const key = values.length === 1 ? values[0]! : values.join(SEP);
    return this.children.get(key) ?? this.add(key, values);
  }

  /** The child of an unlabelled metric. */
  protected unlabelled(): C {
    return (this.root ??= this.labels());
  }

  /** Drops every child (an unlabelled metric gets a fresh one on next use). */
  reset(): void {
    this.children.clear();
    this.root = undefined;
  }

  private add(key: string, values: readonly string[]): C {
    if (values.length !== this.labelNames.length)
      throw new TypeError(`metric "${this.name}" takes ${this.labelNames.length} label value(s), got ${values.length}`);
    if (this.children.size >= this.maxSeries) {
      const other = this.labelNames.map(() => OTHER);
      const otherKey = other.join(SEP);
      if (key !== otherKey) return this.children.get(otherKey) ?? this.add(otherKey, other);
    }
    const child = this.create(labelText(this.labelNames, values));
    this.children.set(key, child);
    return child;
  }

  protected abstract create(labels: string): C;
  protected abstract renderChild(child: C, out: string[]): void;

  /** Children in a stable order: by label values, whatever order they were first seen in. */
  protected sortedChildren(): C[] {
    return [...this.children].sort(byKey).map(([, child]) => child);
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    this.renderSamples(out);
  }

  protected renderSamples(out: string[]): void {
    for (const child of this.sortedChildren()) this.renderChild(child, out);
  }
}

export class CounterChild {
  value = 0;
  constructor(readonly labelText: string) {}

  /** Adds `n` (default 1). A negative or NaN amount is ignored: a counter never goes down. */
  inc(n = 1): void {
    if (n >= 0) this.value += n;
  }
}

export class GaugeChild {
  value = 0;
  constructor(readonly labelText: string) {}

  set(value: number): void {
    this.value = value;
  }
  /** Adds `n` (default 1; negative to go down). */
  inc(n = 1): void {
    this.value += n;
  }
}

/** A counter or gauge: recorded children, or (with `collect`) samples computed at scrape time instead. */
abstract class Scalar<C extends CounterChild | GaugeChild> extends Family<C> {
  private readonly collect: Collect | undefined;

  constructor(options: CollectedOptions) {
    super(options);
    this.collect = options.collect;
  }

  protected renderChild(child: C, out: string[]): void {
    out.push(sampleLine(this.name, child.labelText, child.value));
  }

  protected override renderSamples(out: string[]): void {
    if (this.collect === undefined) return super.renderSamples(out);
    const result = this.collect();
    const samples: Sample[] = typeof result === 'number' ? [{ labels: [], value: result }] : [...result];
    const lines: [string, string][] = [];
    for (const sample of samples) {
      if (sample.labels.length !== this.labelNames.length)
        throw new TypeError(`metric "${this.name}" collected ${sample.labels.length} label value(s), expected ${this.labelNames.length}`);
      lines.push([sample.labels.join(SEP), sampleLine(this.name, labelText(this.labelNames, sample.labels), sample.value)]);
    }
    lines.sort(byKey);
    for (const [, line] of lines) out.push(line);
  }
}

export class Counter extends Scalar<CounterChild> {
  readonly type = 'counter';
  protected create(labels: string): CounterChild {
    return new CounterChild(labels);
  }
  /** Unlabelled counters only. */
  inc(n = 1): void {
    this.unlabelled().inc(n);
  }
}

export class Gauge extends Scalar<GaugeChild> {
  readonly type = 'gauge';
  protected create(labels: string): GaugeChild {
    return new GaugeChild(labels);
  }
  /** Unlabelled gauges only. */
  set(value: number): void {
    this.unlabelled().set(value);
  }
}

export class HistogramChild {
  /** Per-bucket counts, not cumulative; the last slot is above the highest bound (+Inf). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labelText: string,
    private readonly bounds: Float64Array,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (Number.isNaN(value)) return;
    const bounds = this.bounds;
    let i = 0;
    const n = bounds.length;
    while (i < n && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

export class Histogram extends Family<HistogramChild> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];
  /** Shared by every child: a typed array keeps the bucket search monomorphic. */
  private readonly bounds: Float64Array;
  private readonly le: readonly string[];

  constructor(options: HistogramOptions) {
    super(options, ['le']);
    const buckets = options.buckets.filter((b) => b !== Infinity);
    if (buckets.length === 0 || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) {
      throw new TypeError(`histogram "${options.name}" needs finite, strictly increasing buckets`);
    }
    this.buckets = Object.freeze(buckets);
    this.bounds = Float64Array.from(buckets);
    this.le = [...buckets.map(formatValue), '+Inf'];
  }

  protected create(labels: string): HistogramChild {
    return new HistogramChild(labels, this.bounds);
  }

  /** Unlabelled histograms only. */
  observe(value: number): void {
    this.unlabelled().observe(value);
  }

  protected renderChild(child: HistogramChild, out: string[]): void {
    const prefix = child.labelText === '' ? '' : `${child.labelText},`;
    let cumulative = 0;
    for (let i = 0; i < this.le.length; i++) {
      cumulative += child.counts[i]!;
      out.push(`${this.name}_bucket{${prefix}le="${this.le[i]}"} ${formatValue(cumulative)}`);
    }
    out.push(sampleLine(`${this.name}_sum`, child.labelText, child.sum), sampleLine(`${this.name}_count`, child.labelText, child.count));
  }
}

export type Metric = Counter | Gauge | Histogram;

export interface RegistryOptions {
  /** A collect callback threw: its family is rendered without samples and this is told. */
  onCollectError?: (metric: string, error: unknown) => void;
}

/** The metrics one `/metrics` route serves, rendered in registration order. */
export class Registry {
  private readonly metrics = new Map<string, Metric>();

  constructor(private readonly options: RegistryOptions = {}) {}

  counter(options: CollectedOptions): Counter {
    return this.register(new Counter(options));
  }
  gauge(options: CollectedOptions): Gauge {
    return this.register(new Gauge(options));
  }
  histogram(options: HistogramOptions): Histogram {
    return this.register(new Histogram(options));
  }

  /** The whole exposition, one line per sample, ending with a newline. */
  render(): string {
    const out: string[] = [];
    for (const metric of this.metrics.values()) {
      const mark = out.length;
      try {
        metric.render(out);
      } catch (err) {
        out.length = mark + 2; // keep HELP and TYPE, drop a partial family
        this.options.onCollectError?.(metric.name, err);
      }
    }
    return out.length === 0 ? '' : out.join('\n') + '\n';
  }

  private register<M extends Metric>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new TypeError(`metric "${metric.name}" is already registered`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
}

// ── mcpgate's metrics ───────────────────────────────────────────────────────────────────────────────
// Every `mcpgate_*` metric the HTTP front serves on `/metrics`. Call outcomes, errors and HTTP requests
// are recorded as they happen (the tools/call path costs two map lookups and a few additions); the
// state of servers, catalog and sessions is read from a `MetricsSource` once per scrape, so nothing
// has to keep gauges in step with the gateway. Label cardinality is bounded: (server, tool) pairs past
// `maxToolSeries` are folded into tool="_other" (and unseen servers into server="_other"); the other
// labelled families have a cap of their own.

/** What the gateway reports of a server: its connection's states, plus `disabled` in config. */
export const SERVER_STATES = ['idle', 'connecting', 'ready', 'backoff', 'parked', 'closed', 'disabled'] as const;
export type ServerState = (typeof SERVER_STATES)[number];

/** search_tools' limit is at most 50. */
const SEARCH_RESULT_BUCKETS = [0, 1, 3, 5, 10, 20, 50];

export type CallOutcome = 'ok' | 'error' | 'failed';

export interface ServerSnapshot {
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
export interface PoolSnapshot extends PoolCounters {
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

export interface GatewayMetricsOptions {
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
export const CALL_DURATION_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

export const DEFAULT_MAX_TOOL_SERIES = 10_000;

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
export const ACTIVITY_WINDOW_MS = 60_000;

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
  private readonly sseEvents: Counter;
  private readonly sseResumptions: Counter;
  private readonly quotaRefusals: Counter;
  private readonly quotaFallbacks: Counter;
  private readonly searches: Counter;
  private readonly searchResults: Histogram;
  private readonly zeroResultSearches: Counter;

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
      help: "Tool calls refused for being over a limit of the rules' `limits` (-32023, rate limited), by the limit's level (all: every call of its place, server, tool) and kind (calls: per window, in_flight).",
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
    series[outcome].inc();
    series.duration.observe(seconds);
  }

  /** A search_tools call returned `results` tools. */
  toolSearch(results: number): void {
    this.searches.inc();
    this.searchResults.observe(results);
    if (results === 0) this.zeroResultSearches.inc();
  }

  /** An MCPG_* error was sent to an agent. */
  error(code: string): void {
    this.errors.labels(code).inc();
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
    this.http.labels(route, String(status)).inc();
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

  /** The exposition text (Content-Type: `CONTENT_TYPE` from metrics.ts). Reads the source once. */
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
export function quantile(q: number, counts: ArrayLike<number>, bounds: readonly number[]): number {
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
