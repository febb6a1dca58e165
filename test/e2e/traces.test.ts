// OpenTelemetry traces: a small OTLP/HTTP receiver (node:http on 127.0.0.1, the exporter's
// JSON encoding) gets the spans of real calls through the built CLI. The parent chain runs from the
// agent's `traceparent` (in `_meta`) → mcpgate's request span → its server-call span, and the server
// (a fixture that echoes its `_meta`) receives a `traceparent` whose parent is that server-call span.
// Shutdown flushes the spans; a collector that is down never fails a call and is reported once.

import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeRig,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
}
interface OtlpBody {
  resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

/** Receives OTLP/HTTP JSON exports and keeps their bodies. */
class Receiver {
  readonly bodies: OtlpBody[] = [];
  readonly paths: string[] = [];
  private readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        this.bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpBody);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  spans(): OtlpSpan[] {
    return this.bodies.flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
  }

  resources(): Record<string, string | undefined>[] {
    return this.bodies.flatMap((b) =>
      b.resourceSpans.map((r) => Object.fromEntries(r.resource.attributes.map((a) => [a.key, a.value.stringValue]))),
    );
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function attr(span: OtlpSpan, key: string): string | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : String(value.intValue));
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const AGENT_SPAN = '00f067aa0ba902b7';
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

describe('traces: the spans of a call and the parent chain', { timeout: 60_000 }, () => {
  let r: { dir: TempDir; gw: GatewayProcess } | undefined;
  let receiver: Receiver;

  before(async () => {
    receiver = new Receiver();
    const url = await receiver.listen();
    const dir = await tempDir();
    const config = await writeConfig(dir, { meta: fixtureServer('meta-server') });
    const gw = await startGateway({ config, args: ['--otlp-endpoint', url], env: { OTEL_SERVICE_NAME: 'gateway-under-test' } });
    r = { dir, gw };
  });
  after(async () => {
    await closeRig(r);
    await receiver?.close();
  });

  it("continues the agent's trace, passes its own span to the server, and flushes at shutdown", async () => {
    const { gw } = r!;
    const agentParent = `00-${TRACE}-${AGENT_SPAN}-01`;
    const echoed = JSON.parse(
      textOf(
        await gw.client.callTool({
          name: 'meta__meta',
          arguments: {},
          _meta: { traceparent: agentParent, tracestate: 'vendor=one', other: 'kept' },
        }),
      ),
    ) as Record<string, unknown>;
    const untraced = JSON.parse(textOf(await gw.client.callTool({ name: 'meta__meta', arguments: {} }))) as Record<string, unknown>;
    const failed = await gw.client.callTool({ name: 'meta__fail', arguments: {} });
    assert.equal(failed.isError, true);
    const unknown = await rpcError(gw.client.callTool({ name: 'meta__nope', arguments: {} }));
    assert.equal(unknown.data.code, 'MCPG_TOOL_NOT_FOUND');
    const exit = await gw.stop();
    assert.equal(exit.code, 0);

    assert.ok(
      receiver.paths.every((p) => p.startsWith('POST /v1/traces application/json')),
      receiver.paths.join('\n'),
    );
    assert.ok(
      receiver.resources().every((res) => res['service.name'] === 'gateway-under-test'),
      JSON.stringify(receiver.resources()),
    );
    const spans = receiver.spans();
    const calls = spans.filter((s) => s.name === 'tools/call meta__meta');
    assert.equal(calls.length, 2, spans.map((s) => s.name).join(', '));

    // The agent's trace continued: its span → mcpgate's request span → the server-call span.
    const request = calls.find((s) => s.traceId === TRACE)!;
    assert.ok(request !== undefined, "no request span in the agent's trace");
    assert.equal(request.parentSpanId, AGENT_SPAN);
    assert.equal(request.kind, SERVER);
    assert.equal(attr(request, 'mcp.method.name'), 'tools/call');
    assert.equal(attr(request, 'gen_ai.tool.name'), 'meta__meta');
    assert.equal(attr(request, 'mcpgate.agent'), 'tester');
    assert.ok((attr(request, 'mcp.session.id') ?? '').length > 0, 'no session id');
    assert.equal(attr(request, 'mcpgate.server'), 'meta');
    assert.equal(attr(request, 'mcpgate.outcome'), 'ok');
    const child = spans.find((s) => s.parentSpanId === request.spanId)!;
    assert.ok(child !== undefined, 'no server-call span under the request span');
    assert.equal(child.traceId, TRACE);
    assert.equal(child.name, 'tools/call meta');
    assert.equal(child.kind, CLIENT);
    assert.equal(attr(child, 'mcpgate.server'), 'meta');
    assert.equal(attr(child, 'gen_ai.tool.name'), 'meta');
    assert.equal(attr(child, 'mcpgate.outcome'), 'ok');

    // The server saw mcpgate's server-call span as its parent, the agent's tracestate and other keys kept.
    assert.equal(echoed.traceparent, `00-${TRACE}-${child.spanId}-01`);
    assert.equal(echoed.tracestate, 'vendor=one');
    assert.equal(echoed.other, 'kept');

    // No traceparent from the agent: mcpgate starts a trace, and still passes it on.
    const root = calls.find((s) => s !== request)!;
    assert.notEqual(root.traceId, TRACE);
    assert.ok(root.parentSpanId === undefined || root.parentSpanId === '', `unexpected parent ${root.parentSpanId}`);
    const rootChild = spans.find((s) => s.parentSpanId === root.spanId)!;
    assert.equal(untraced.traceparent, `00-${root.traceId}-${rootChild.spanId}-01`);

    // A tool's error result and a refusal by mcpgate are errors, with their error.type.
    const failSpan = spans.find((s) => s.name === 'tools/call meta__fail')!;
    assert.equal(attr(failSpan, 'mcpgate.outcome'), 'error');
    assert.equal(attr(failSpan, 'error.type'), 'tool_error');
    assert.equal(failSpan.status?.code, ERROR);
    const refused = spans.find((s) => s.name === 'tools/call meta__nope')!;
    assert.equal(attr(refused, 'mcpgate.outcome'), 'failed');
    assert.equal(attr(refused, 'error.type'), 'MCPG_TOOL_NOT_FOUND');
    assert.equal(spans.filter((s) => s.parentSpanId === refused.spanId).length, 0, 'a refused call has no server-call span');
    assert.ok(
      spans.some((s) => s.name === 'initialize' && attr(s, 'mcpgate.outcome') === 'ok'),
      'every agent request has a span',
    );
  });
});

describe('traces: a collector that is down', { timeout: 60_000 }, () => {
  it('never fails a call, and is reported once', async () => {
    // A port that was just free: nothing listens there.
    const probe = new Receiver();
    const url = await probe.listen();
    await probe.close();
    const dir = await tempDir();
    const config = await writeConfig(dir, { meta: fixtureServer('meta-server') });
    const gw = await startGateway({ config, env: { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' } });
    try {
      const call = async (): Promise<void> =>
        assert.equal(JSON.parse(textOf(await gw.client.callTool({ name: 'meta__meta', arguments: {} }))).traceparent.length, 55);
      await call();
      await gw.waitForLog((l) => String(l.msg).startsWith('traces: export to'));
      for (let i = 0; i < 5; i++) await call();
      const exit = await gw.stop();
      assert.equal(exit.code, 0);
      const reports = gw.logs.filter((l) => String(l.msg).startsWith('traces:'));
      assert.equal(reports.length, 1, JSON.stringify(reports));
      assert.equal(reports[0]!.level, 'warn');
      assert.match(String(reports[0]!.msg), /calls are not affected/);
    } finally {
      await closeRig({ gw, dir });
    }
  });
});
