// A Prometheus metrics registry, rendered in the text exposition format 0.0.4 (no dependency: it
// sits on the tools/call hot path). Counters, gauges and histograms with a fixed, ordered list of
// label names. The child for one tuple of label values is made once and cached in a Map keyed by the
// joined values; callers on a hot path keep the child, so recording is a field update. Gauges and
// counters may instead be *collected*: a callback evaluated at scrape time (state owned elsewhere).
// It knows no metric of mcpgate's: those are metrics.ts's (`GatewayMetrics`), and a primary's host
// metrics are cli/host-metrics.ts's.
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format

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
type Collect = () => number | Iterable<Sample>;

interface MetricOptions {
  name: string;
  help: string;
  /** Label names, in the order `labels()` takes their values. */
  labels?: readonly string[];
  /** Distinct label tuples kept; past it, new tuples share one child whose every label is `_other`. */
  maxSeries?: number;
}

interface CollectedOptions extends MetricOptions {
  collect?: Collect;
}

interface HistogramOptions extends MetricOptions {
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
function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value: Go float syntax, with `+Inf`, `-Inf` and `NaN` spelled as Prometheus expects. */
function formatValue(value: number): string {
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

class GaugeChild {
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

class Gauge extends Scalar<GaugeChild> {
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
    /** The upper bounds (`+Inf` implied), shared by every child of the histogram. */
    readonly bounds: Float64Array,
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

type Metric = Counter | Gauge | Histogram;

interface RegistryOptions {
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
