// Where traces go (cli/tracing-settings.ts): the flag, then the standard OpenTelemetry variables; off
// when none is set or the SDK is disabled; a base endpoint gets /v1/traces, a traces endpoint is used
// as is; a protocol other than http/json and a URL that is not http(s) are refused with a usage error.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tracingSettings } from '../../../src/cli/tracing-settings.js';
import { GatewayError } from '../../../src/errors.js';

const usage = (fn: () => unknown, pattern: RegExp): void => {
  assert.throws(fn, (err: unknown) => err instanceof GatewayError && err.code === 'MCPG_USAGE' && pattern.test(err.message));
};

describe('tracing settings', () => {
  it('is off with nothing configured', () => {
    assert.equal(tracingSettings(undefined, {}), undefined);
    assert.equal(tracingSettings(undefined, { OTEL_SERVICE_NAME: 'x' }), undefined);
  });

  it('takes a base URL from the flag or OTEL_EXPORTER_OTLP_ENDPOINT and appends v1/traces', () => {
    assert.deepEqual(tracingSettings('http://localhost:4318', {}), { url: 'http://localhost:4318/v1/traces' });
    assert.deepEqual(tracingSettings('http://collector:4318/base/', {}), { url: 'http://collector:4318/base/v1/traces' });
    assert.deepEqual(tracingSettings('http://localhost:4318/v1/traces', {}), { url: 'http://localhost:4318/v1/traces' });
    assert.deepEqual(tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318' }), {
      url: 'https://otel.example:4318/v1/traces',
    });
  });

  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, before the base variable; the flag before both', () => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://a:4318/custom', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:4318' };
    assert.deepEqual(tracingSettings(undefined, env), { url: 'http://a:4318/custom' });
    assert.deepEqual(tracingSettings('http://c:4318', env), { url: 'http://c:4318/v1/traces' });
  });

  it('names the service from OTEL_SERVICE_NAME', () => {
    assert.deepEqual(tracingSettings('http://a:4318', { OTEL_SERVICE_NAME: ' gw ' }), {
      url: 'http://a:4318/v1/traces',
      serviceName: 'gw',
    });
  });

  it('is off when the SDK is disabled or the traces exporter is none, unless the flag is given', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' };
    assert.equal(tracingSettings(undefined, { ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }), undefined);
    assert.equal(tracingSettings(undefined, { ...endpoint, OTEL_TRACES_EXPORTER: 'none' }), undefined);
    assert.deepEqual(tracingSettings('http://a:4318', { OTEL_SDK_DISABLED: 'true' }), { url: 'http://a:4318/v1/traces' });
  });

  it('refuses a protocol it does not speak and URLs that are not http(s)', () => {
    usage(
      () => tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc.*http\/json/,
    );
    usage(
      () =>
        tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }),
      /TRACES_PROTOCOL=http\/protobuf/,
    );
    assert.deepEqual(
      tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
      { url: 'http://a:4318/v1/traces' },
    );
    usage(() => tracingSettings('localhost:4318', {}), /--otlp-endpoint must be an http/);
    usage(() => tracingSettings('not a url', {}), /--otlp-endpoint must be an http/);
    usage(
      () => tracingSettings(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://a/v1/traces' }),
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http/,
    );
  });
});
