// OpenTelemetry traces, off unless an OTLP endpoint is configured (`--otlp-endpoint`,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT). A span per agent request and a
// child span per call mcpgate makes to a server for it; W3C Trace Context travels in `params._meta`
// (`traceparent`, `tracestate`), as MCP's 2026-07-28 revision reserves those keys (SEP-414): the
// agent's continues its trace, and mcpgate's server-call span is what the server sees as its parent.
// Attribute names follow OpenTelemetry's MCP semantic conventions (mcp.*, gen_ai.tool.name,
// error.type) plus mcpgate.* for what those lack.

// When tracing is off the gateway holds no `Tracing` at all, so the hot path builds no span object
// and does no context work. Export is batched (BatchSpanProcessor, bounded queue: spans past it are
// dropped) and never on a call's path; a failing collector is reported once, then at most once a
// minute, and never affects calls. `close()` flushes what is queued, bounded in time.
// This is the only file that imports `@opentelemetry/*`.

import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';

export interface TracingOptions {
  /** The OTLP/HTTP traces URL (…/v1/traces); the payload is OTLP JSON. */
  url: string;
  /** service.name (OTEL_SERVICE_NAME wins, through the environment detector). */
  serviceName?: string;
  serviceVersion?: string;
  /** Told when export fails: the first time, then at most once per REPORT_EVERY_MS. */
  onProblem?: (message: string, error?: unknown) => void;
  /** Milliseconds between batch exports (default 1000). */
  scheduledDelayMs?: number;
}

/** How a traced request or server call ended (the audit trail's words, plus cancelled). */
export type TraceOutcome = 'ok' | 'error' | 'failed' | 'cancelled';

/** Spans waiting for export past this many are dropped (the processor's bounded queue). */
const MAX_QUEUED_SPANS = 2048;
/** Export failures after the first are summarized at most this often. */
const REPORT_EVERY_MS = 60_000;
/** What shutdown waits for the last spans to leave. */
const CLOSE_FLUSH_MS = 2000;

const propagator = new W3CTraceContextPropagator();

/** Reads `traceparent`/`tracestate` from a `_meta` object; anything but a string is ignored. */
const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

const metaSetter: TextMapSetter<Record<string, unknown>> = {
  set: (carrier, key, value) => void (carrier[key] = value),
};

export class Tracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private closing: Promise<void> | undefined;

  constructor(options: TracingOptions) {
    const exporter = new ReportingExporter(new OTLPTraceExporter({ url: options.url }), endpointOf(options.url), options.onProblem);
    const resource = resourceFromAttributes({
      'service.name': options.serviceName ?? 'mcpgate',
      ...(options.serviceVersion !== undefined && { 'service.version': options.serviceVersion }),
    }).merge(detectResources({ detectors: [envDetector] }));
    this.provider = new TracerProvider({
      resource,
      spanProcessors: [
        new BatchSpanProcessor({ exporter, maxQueueSize: MAX_QUEUED_SPANS, scheduledDelayMillis: options.scheduledDelayMs ?? 1000 }),
      ],
    });
    this.tracer = this.provider.getTracer('mcpgate');
  }

  /**
   * A span for one agent request (kind server), named `METHOD [TARGET]`. A valid `traceparent` in
   * the request's `_meta` makes it the child of the agent's span; otherwise it starts a trace.
   */
  request(method: string, meta: unknown, target: string | undefined, attributes: Record<string, string | number>): RequestSpan {
    const parent =
      typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? propagator.extract(ROOT_CONTEXT, meta, metaGetter) : ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      target === undefined ? method : `${method} ${target}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'mcp.method.name': method, ...attributes },
      },
      parent,
    );
    return new RequestSpan(this.tracer, span);
  }

  /** Flushes the spans still queued (bounded by CLOSE_FLUSH_MS) and stops exporting. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_FLUSH_MS).unref()));
      await Promise.race([this.provider.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
    })();
    return this.closing;
  }
}

/** One agent request's span; its server calls are children of it. */
export class RequestSpan {
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {}

  /**
   * A child span (kind client) for the call to `server`, and the `_meta` trace context for the
   * request mcpgate sends it: `traceparent` names this child as the server's parent; `tracestate`
   * is carried on from the agent.
   */
  serverCall(server: string, method: string, tool: string | undefined, meta: Record<string, unknown>): ServerCallSpan {
    const span = this.tracer.startSpan(
      tool === undefined ? method : `${method} ${tool}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'mcp.method.name': method, 'mcpgate.server': server, ...(tool !== undefined && { 'gen_ai.tool.name': tool }) },
      },
      trace.setSpan(ROOT_CONTEXT, this.span),
    );
    delete meta.traceparent;
    delete meta.tracestate;
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), meta, metaSetter);
    return new ServerCallSpan(span);
  }

  /** Puts this span's trace context in `meta`: a request made with it (a code-mode run's inner call) is its child. */
  propagate(meta: Record<string, unknown>): void {
    propagator.inject(trace.setSpan(ROOT_CONTEXT, this.span), meta, metaSetter);
  }

  set(key: string, value: string | number): void {
    this.span.setAttribute(key, value);
  }

  end(outcome: TraceOutcome, code?: string | number): void {
    if (this.ended) return;
    this.ended = true;
    finish(this.span, outcome, code);
  }
}

/** mcpgate's call to a server on behalf of one agent request. */
export class ServerCallSpan {
  private ended = false;

  constructor(private readonly span: Span) {}

  end(outcome: TraceOutcome, code?: string | number): void {
    if (this.ended) return;
    this.ended = true;
    finish(this.span, outcome, code);
  }
}

function finish(span: Span, outcome: TraceOutcome, code: string | number | undefined): void {
  span.setAttribute('mcpgate.outcome', outcome);
  if (code !== undefined) span.setAttribute('error.type', String(code));
  if (outcome === 'error' || outcome === 'failed')
    span.setStatus({ code: SpanStatusCode.ERROR, ...(code !== undefined && { message: String(code) }) });
  span.end();
}

/** The URL without credentials, query or path: what a log line may show of the endpoint. */
function endpointOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the OTLP endpoint';
  }
}

/**
 * The OTLP exporter, reporting failures without flooding the log: the first failure at once, later
 * ones summed up at most once per REPORT_EVERY_MS (counted when the next export ends).
 */
class ReportingExporter implements SpanExporter {
  private failures = 0;
  private lostSpans = 0;
  private lastReport: number | undefined;

  constructor(
    private readonly inner: SpanExporter,
    private readonly endpoint: string,
    private readonly onProblem?: (message: string, error?: unknown) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.failed(spans.length, result.error);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  private failed(spans: number, error: Error | undefined): void {
    this.failures += 1;
    this.lostSpans += spans;
    const now = Date.now();
    if (this.lastReport !== undefined && now - this.lastReport < REPORT_EVERY_MS) return;
    const first = this.lastReport === undefined;
    this.lastReport = now;
    const message = first
      ? `traces: export to ${this.endpoint} failed (${spans} spans lost); calls are not affected, and further failures are reported at most once a minute`
      : `traces: ${this.failures} exports to ${this.endpoint} failed in the last minute (${this.lostSpans} spans lost)`;
    this.failures = 0;
    this.lostSpans = 0;
    this.onProblem?.(message, error);
  }
}
