// Where traces go: `--otlp-endpoint URL` or the standard OpenTelemetry variables
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// (the full traces URL, used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, `v1/traces` appended).
// Tracing is off when none is set, or when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none
// (a flag on the command line still wins). mcpgate exports OTLP over HTTP with the JSON encoding;
// a protocol variable asking for another is refused rather than ignored.

import { GatewayError } from '../errors.js';

interface TracingSettings {
  url: string;
  serviceName?: string;
}

export function tracingSettings(flag: string | undefined, env: NodeJS.ProcessEnv): TracingSettings | undefined {
  const service = env.OTEL_SERVICE_NAME?.trim();
  const named = service === undefined || service === '' ? {} : { serviceName: service };
  if (flag !== undefined) return { url: endpoint(flag, '--otlp-endpoint', true), ...named };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if ((env.OTEL_TRACES_EXPORTER ?? '').split(',').some((name) => name.trim().toLowerCase() === 'none')) return undefined;
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (traces === undefined && base === undefined) return undefined;
  const protocolVariable =
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = nonEmpty(env[protocolVariable]);
  if (protocol !== undefined && protocol !== 'http/json') {
    throw usage(
      `${protocolVariable}=${protocol}: mcpgate exports traces as OTLP over HTTP with JSON (http/json); unset it or set it to http/json, and point the endpoint at the collector's OTLP/HTTP port (4318)`,
    );
  }
  const url =
    traces !== undefined
      ? endpoint(traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', false)
      : endpoint(base!, 'OTEL_EXPORTER_OTLP_ENDPOINT', true);
  return { url, ...named };
}

/** Checks an http(s) URL; a base URL gets `v1/traces` appended unless it already ends so. */
function endpoint(text: string, source: string, base: boolean): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw usage(`${source} must be an http:// or https:// URL, e.g. http://localhost:4318 (got "${text}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usage(`${source} must be an http:// or https:// URL (OTLP over HTTP), e.g. http://localhost:4318 (got a ${url.protocol} URL)`);
  if (base && !/\/v1\/traces\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/v1/traces`;
  return url.href;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function usage(message: string): GatewayError {
  return new GatewayError('MCPG_USAGE', message);
}
