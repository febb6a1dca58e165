// The metrics registry (src/observability/metrics.ts) and the gateway's metrics
// (src/observability/gateway-metrics.ts, src/gateway/metrics-source.ts): exact Prometheus text 0.0.4
// for small cases, escaping, scrape-time gauges, bounded cardinality, and a parse-back of the full
// `/metrics` exposition against the text grammar.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayMetrics, type MetricsSnapshot } from '../../../src/observability/metrics.js';
import { Registry, escapeLabelValue } from '../../../src/observability/prometheus.js';
import { metricsSource } from '../../../src/gateway/metrics-source.js';
import { Gateway } from '../../../src/gateway/gateway.js';
import { Connection } from '../../../src/servers/connection.js';
import type { ServerConfig } from '../../../src/config/types.js';
import { definitionOf } from '../../../src/pins/digest.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { agentIdentity } from '../../../src/gateway/session/agent-identity.js';

/** A sample's value as the exposition writes it (through a gauge set to it). */
function formatValue(value: number): string {
  const r = new Registry();
  r.gauge({ name: 'g', help: 'G.' }).set(value);
  return r.render().split('\n')[2]!.slice('g '.length);
}

const T = { timeout: 5000 };

// Prometheus text format 0.0.4: `name{label="value",…} value`, values in Go float syntax.
const SAMPLE =
  /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")*\})? (NaN|[+-]Inf|[+-]?\d+(\.\d+)?([eE][+-]?\d+)?|[+-]?\.\d+([eE][+-]?\d+)?)$/;
const COMMENT = /^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))$/;

/** Every line is a comment or a sample, families are contiguous and each is typed once. */
function assertParses(text: string): void {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const typed = new Set<string>();
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('#')) {
      assert.match(line, COMMENT);
      const [, kind, name] = line.split(' ');
      if (kind === 'TYPE') {
        assert.ok(!typed.has(name!), `${name} typed once`);
        typed.add(name!);
      }
    } else {
      assert.match(line, SAMPLE);
    }
  }
}

function sampleValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

void describe('metrics registry', { timeout: 10_000 }, () => {
  void it('renders a labelled counter, children sorted by label values', T, () => {
    const r = new Registry();
    const c = r.counter({ name: 'req_total', help: 'Requests.', labels: ['route', 'code'] });
    c.labels('/b', '200').inc();
    const held = c.labels('/a', '500');
    held.inc(2);
    held.inc();
    c.labels('/a', '200').inc(0.5);
    c.labels('/a', '200').inc(-3); // ignored: a counter never goes down
    assert.equal(c.labels('/a', '500'), held, 'the child is cached');
    assert.equal(
      r.render(),
      [
        '# HELP req_total Requests.',
        '# TYPE req_total counter',
        'req_total{route="/a",code="200"} 0.5',
        'req_total{route="/a",code="500"} 3',
        'req_total{route="/b",code="200"} 1',
        '',
      ].join('\n'),
    );
  });

  void it('renders an unlabelled counter at 0 once used, and families in registration order', T, () => {
    const r = new Registry();
    const b = r.counter({ name: 'b_total', help: 'B.' });
    r.gauge({ name: 'a', help: 'A.', labels: ['x'] });
    b.inc(0);
    assert.equal(r.render(), '# HELP b_total B.\n# TYPE b_total counter\nb_total 0\n# HELP a A.\n# TYPE a gauge\n');
  });

  void it('renders histogram buckets cumulatively, with +Inf, _sum and _count', T, () => {
    const r = new Registry();
    const h = r.histogram({ name: 'lat_seconds', help: 'Latency.', labels: ['op'], buckets: [0.1, 1, 5] });
    const op = h.labels('get');
    for (const v of [0.05, 0.1, 0.5, 2, 7, NaN]) op.observe(v);
    const plain = r.histogram({ name: 'size', help: 'Size.', buckets: [10] });
    plain.observe(3);
    assert.equal(
      r.render(),
      [
        '# HELP lat_seconds Latency.',
        '# TYPE lat_seconds histogram',
        'lat_seconds_bucket{op="get",le="0.1"} 2',
        'lat_seconds_bucket{op="get",le="1"} 3',
        'lat_seconds_bucket{op="get",le="5"} 4',
        'lat_seconds_bucket{op="get",le="+Inf"} 5',
        'lat_seconds_sum{op="get"} 9.65',
        'lat_seconds_count{op="get"} 5',
        '# HELP size Size.',
        '# TYPE size histogram',
        'size_bucket{le="10"} 1',
        'size_bucket{le="+Inf"} 1',
        'size_sum 3',
        'size_count 1',
        '',
      ].join('\n'),
    );
  });

  void it('escapes label values (backslash, quote, newline) and HELP (backslash, newline)', T, () => {
    const r = new Registry();
    r.counter({ name: 'e_total', help: 'Line one\nback\\slash "quoted"', labels: ['v'] })
      .labels('a\\b"c\nd')
      .inc();
    assert.equal(
      r.render(),
      ['# HELP e_total Line one\\nback\\\\slash "quoted"', '# TYPE e_total counter', 'e_total{v="a\\\\b\\"c\\nd"} 1', ''].join('\n'),
    );
    assert.equal(escapeLabelValue('plain'), 'plain');
    assertParses(r.render());
  });

  void it('formats special values', T, () => {
    assert.equal(formatValue(Infinity), '+Inf');
    assert.equal(formatValue(-Infinity), '-Inf');
    assert.equal(formatValue(NaN), 'NaN');
    assert.equal(formatValue(1e-7), '1e-7');
    const r = new Registry();
    r.gauge({ name: 'g', help: 'G.' }).set(-Infinity);
    assert.equal(r.render(), '# HELP g G.\n# TYPE g gauge\ng -Inf\n');
  });

  void it('evaluates collect callbacks at every scrape, sorted by label values', T, () => {
    const r = new Registry();
    let n = 1;
    r.gauge({ name: 'n', help: 'N.', collect: () => n });
    r.gauge({
      name: 'by_kind',
      help: 'K.',
      labels: ['kind'],
      collect: () => [
        { labels: ['z'], value: n },
        { labels: ['a'], value: 0 },
      ],
    });
    assert.equal(
      r.render(),
      '# HELP n N.\n# TYPE n gauge\nn 1\n# HELP by_kind K.\n# TYPE by_kind gauge\nby_kind{kind="a"} 0\nby_kind{kind="z"} 1\n',
    );
    n = 4;
    assert.equal(
      r.render(),
      '# HELP n N.\n# TYPE n gauge\nn 4\n# HELP by_kind K.\n# TYPE by_kind gauge\nby_kind{kind="a"} 0\nby_kind{kind="z"} 4\n',
    );
  });

  void it('keeps HELP and TYPE of a family whose collect throws, and says so', T, () => {
    const failures: string[] = [];
    const r = new Registry({ onCollectError: (metric) => failures.push(metric) });
    r.gauge({
      name: 'bad',
      help: 'Bad.',
      labels: ['x'],
      collect: () => {
        throw new Error('boom');
      },
    });
    r.gauge({ name: 'wrong', help: 'Wrong.', labels: ['x'], collect: () => [{ labels: [], value: 1 }] });
    r.gauge({ name: 'good', help: 'Good.', collect: () => 1 });
    assert.equal(
      r.render(),
      '# HELP bad Bad.\n# TYPE bad gauge\n# HELP wrong Wrong.\n# TYPE wrong gauge\n# HELP good Good.\n# TYPE good gauge\ngood 1\n',
    );
    assert.deepEqual(failures, ['bad', 'wrong']);
  });

  void it('folds label tuples past maxSeries into one _other child', T, () => {
    const r = new Registry();
    const c = r.counter({ name: 'c_total', help: 'C.', labels: ['a', 'b'], maxSeries: 2 });
    c.labels('1', 'x').inc();
    c.labels('2', 'x').inc();
    c.labels('3', 'x').inc();
    c.labels('4', 'y').inc();
    c.labels('1', 'x').inc();
    assert.equal(
      r.render(),
      '# HELP c_total C.\n# TYPE c_total counter\nc_total{a="1",b="x"} 2\nc_total{a="2",b="x"} 1\nc_total{a="_other",b="_other"} 2\n',
    );
  });

  void it('refuses bad names, duplicate metrics and a wrong number of label values', T, () => {
    const r = new Registry();
    assert.throws(() => r.counter({ name: '1bad', help: '' }), /invalid metric name/);
    assert.throws(() => r.counter({ name: 'x', help: '', labels: ['__x'] }), /invalid label name/);
    assert.throws(() => r.counter({ name: 'x', help: '', labels: ['a-b'] }), /invalid label name/);
    assert.throws(() => r.counter({ name: 'x', help: '', labels: ['a', 'a'] }), /duplicate label/);
    assert.throws(() => r.histogram({ name: 'h', help: '', labels: ['le'], buckets: [1] }), /invalid label name/);
    assert.throws(() => r.histogram({ name: 'h', help: '', buckets: [2, 1] }), /strictly increasing/);
    assert.throws(() => r.histogram({ name: 'h', help: '', buckets: [] }), /strictly increasing/);
    const c = r.counter({ name: 'ok_total', help: '', labels: ['a'] });
    assert.throws(() => r.gauge({ name: 'ok_total', help: '' }), /already registered/);
    assert.throws(() => c.labels('1', '2'), /takes 1 label value/);
    assert.throws(() => c.inc(), /takes 1 label value/);
  });
});

const SNAPSHOT: MetricsSnapshot = {
  servers: [
    { name: 'fs', state: 'ready', breaker: 'closed', breakerTrips: 0, inflight: 0 },
    { name: 'gh', state: 'parked', breaker: 'open', breakerTrips: 2, inflight: 0 },
    { name: 'off', state: 'disabled', breaker: 'closed', breakerTrips: 0, inflight: 0 },
  ],
  catalog: { tools: 12, resources: 3, resourceTemplates: 1, prompts: 2, heldTools: 4 },
  sessions: { stdio: 1, http: 5 },
};

const FAMILIES = [
  'mcpgate_up',
  'mcpgate_info',
  'mcpgate_tool_calls_total',
  'mcpgate_tool_call_duration_seconds',
  'mcpgate_errors_total',
  'mcpgate_http_requests_total',
  'mcpgate_connection_state',
  'mcpgate_circuit_breaker_open',
  'mcpgate_calls_in_flight',
  'mcpgate_circuit_breaker_trips_total',
  'mcpgate_catalog_items',
  'mcpgate_catalog_held_tools',
  'mcpgate_agent_sessions',
  'mcpgate_process_resident_memory_bytes',
  'mcpgate_process_uptime_seconds',
];

void describe('GatewayMetrics', { timeout: 10_000 }, () => {
  void it('counts on-demand servers by whether they run, and their starts and stops', T, () => {
    const m = new GatewayMetrics({
      version: '1',
      source: () => ({
        ...SNAPSHOT,
        servers: [
          ...SNAPSHOT.servers,
          { name: 'lazy', state: 'idle', breaker: 'closed', breakerTrips: 0, inflight: 0, onDemand: { starts: 3, stops: 2 } },
          { name: 'busy', state: 'ready', breaker: 'closed', breakerTrips: 0, inflight: 1, onDemand: { starts: 1, stops: 0 } },
        ],
      }),
    });
    const text = m.render();
    assertParses(text);
    assert.equal(sampleValue(text, 'mcpgate_connection_state{server="lazy",state="idle"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_on_demand_servers{state="idle"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_on_demand_servers{state="running"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_on_demand_starts_total{server="lazy"}'), 3);
    assert.equal(sampleValue(text, 'mcpgate_on_demand_stops_total{server="lazy"}'), 2);
    assert.equal(text.split('\n').filter((l) => l.startsWith('mcpgate_on_demand_starts_total{')).length, 2, 'only on-demand servers');
  });

  void it('renders every family, and every line parses', T, () => {
    let scrapes = 0;
    const m = new GatewayMetrics({ version: '1.2.3', source: () => (scrapes++, SNAPSHOT) });
    m.callFinished('fs', 'read_file', 'ok', 0.002);
    m.callFinished('fs', 'read_file', 'error', 0.3);
    m.callFinished('gh', 'search "x"\n', 'failed', 61);
    m.error('MCPG_SERVER_TIMEOUT');
    m.httpRequest('/mcp', 200);
    const text = m.render();
    assert.equal(scrapes, 1, 'the source is read once per scrape');
    assertParses(text);
    for (const family of FAMILIES) assert.ok(text.includes(`# TYPE ${family} `), family);
    assert.equal(sampleValue(text, 'mcpgate_up'), 1);
    assert.equal(sampleValue(text, 'mcpgate_info{version="1.2.3"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_tool_calls_total{server="fs",tool="read_file",outcome="ok"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_tool_calls_total{server="fs",tool="read_file",outcome="error"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_tool_calls_total{server="fs",tool="read_file",outcome="failed"}'), 0);
    assert.equal(sampleValue(text, 'mcpgate_tool_calls_total{server="gh",tool="search \\"x\\"\\n",outcome="failed"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_tool_call_duration_seconds_bucket{server="fs",tool="read_file",le="0.0025"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_tool_call_duration_seconds_bucket{server="fs",tool="read_file",le="0.5"}'), 2);
    assert.equal(sampleValue(text, 'mcpgate_tool_call_duration_seconds_bucket{server="gh",tool="search \\"x\\"\\n",le="60"}'), 0);
    assert.equal(sampleValue(text, 'mcpgate_tool_call_duration_seconds_count{server="fs",tool="read_file"}'), 2);
    assert.equal(sampleValue(text, 'mcpgate_errors_total{code="MCPG_SERVER_TIMEOUT"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_http_requests_total{route="/mcp",status="200"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_connection_state{server="gh",state="parked"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_connection_state{server="gh",state="ready"}'), 0);
    assert.equal(sampleValue(text, 'mcpgate_connection_state{server="off",state="disabled"}'), 1);
    assert.equal(text.split('\n').filter((l) => l.startsWith('mcpgate_connection_state{')).length, 3 * 7);
    assert.equal(sampleValue(text, 'mcpgate_circuit_breaker_open{server="gh"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_circuit_breaker_open{server="fs"}'), 0);
    assert.equal(sampleValue(text, 'mcpgate_circuit_breaker_trips_total{server="gh"}'), 2);
    assert.equal(sampleValue(text, 'mcpgate_catalog_items{kind="resource_templates"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_catalog_items{kind="tools"}'), 12);
    assert.equal(sampleValue(text, 'mcpgate_catalog_held_tools'), 4);
    assert.equal(sampleValue(text, 'mcpgate_agent_sessions{transport="http"}'), 5);
    assert.ok(sampleValue(text, 'mcpgate_process_resident_memory_bytes')! > 0);
    assert.ok(sampleValue(text, 'mcpgate_process_uptime_seconds')! > 0);
  });

  void it('folds (server, tool) pairs past the cap into tool="_other", and unseen servers into server="_other"', T, () => {
    const m = new GatewayMetrics({ version: '0', maxToolSeries: 4 });
    m.callFinished('s2', 'z', 'ok', 0.01);
    for (const tool of ['a', 'b', 'c', 'd', 'e']) m.callFinished('s1', tool, 'ok', 0.01);
    m.callFinished('s2', 'y', 'failed', 0.01);
    m.callFinished('s3', 'x', 'error', 0.01);
    m.callFinished('s4', 'w', 'error', 0.01);
    m.callFinished('s1', 'a', 'ok', 0.01);
    const text = m.render();
    assertParses(text);
    const calls = text.split('\n').filter((l) => l.startsWith('mcpgate_tool_calls_total{') && l.includes('outcome="ok"'));
    assert.deepEqual(calls, [
      'mcpgate_tool_calls_total{server="_other",tool="_other",outcome="ok"} 0',
      'mcpgate_tool_calls_total{server="s1",tool="_other",outcome="ok"} 2',
      'mcpgate_tool_calls_total{server="s1",tool="a",outcome="ok"} 2',
      'mcpgate_tool_calls_total{server="s1",tool="b",outcome="ok"} 1',
      'mcpgate_tool_calls_total{server="s1",tool="c",outcome="ok"} 1',
      'mcpgate_tool_calls_total{server="s2",tool="_other",outcome="ok"} 0',
      'mcpgate_tool_calls_total{server="s2",tool="z",outcome="ok"} 1',
    ]);
    assert.equal(sampleValue(text, 'mcpgate_tool_calls_total{server="s2",tool="_other",outcome="failed"}'), 1);
    assert.equal(sampleValue(text, 'mcpgate_tool_calls_total{server="_other",tool="_other",outcome="error"}'), 2);
    assert.equal(sampleValue(text, 'mcpgate_tool_call_duration_seconds_count{server="s1",tool="_other"}'), 2);
  });

  void it('scrapes without a source, and survives a source that throws', T, () => {
    const errors: string[] = [];
    const m = new GatewayMetrics({ version: '0', onCollectError: (metric) => errors.push(metric) });
    assertParses(m.render());
    m.source = () => {
      throw new Error('gateway gone');
    };
    const text = m.render();
    assertParses(text);
    assert.deepEqual(errors, ['source']);
    assert.equal(sampleValue(text, 'mcpgate_up'), 1);
    assert.equal(sampleValue(text, 'mcpgate_catalog_held_tools'), 0);
  });
});

function stdioConfig(name: string, disabled = false): ServerConfig {
  return { type: 'stdio', name, command: 'true', args: [], env: {}, cwd: '/', disabled, timeout: 1000, sessions: 'shared' };
}

void describe('metricsSource', { timeout: 10_000 }, () => {
  void it('reads servers, breakers, catalog and sessions from a Gateway', T, async () => {
    const servers = [stdioConfig('fs'), stdioConfig('gh'), stdioConfig('off', true), stdioConfig('later')];
    const gateway = new Gateway({ config: { file: '/x/.mcp.json', servers, warnings: [] }, log: silentLogger });
    try {
      const fs = new Connection(servers[0]!, gateway.hooks, silentLogger, { startupTimeoutMs: 1000 });
      fs.state = 'ready';
      const gh = new Connection(servers[1]!, gateway.hooks, silentLogger, { startupTimeoutMs: 1000 });
      gh.state = 'parked';
      for (let i = 0; i < 3; i++) gh.breaker.failure();
      gateway.connections.set('fs', fs).set('gh', gh);
      const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });
      gateway.catalog.set(
        'fs',
        { tools: [tool('read'), tool('write'), tool('new')], resources: [], resourceTemplates: [], prompts: [] },
        new Map([['new', { digest: 'd', definition: definitionOf(tool('new')), changes: ['new tool'] }]]),
      );
      gateway.openSession({ send: () => {} }, agentIdentity('a'));
      gateway.openSession({ send: () => {} }, agentIdentity('b', { transport: 'http' }));
      const snap = metricsSource(gateway)();
      assert.deepEqual(snap.servers, [
        { name: 'fs', state: 'ready', breaker: 'closed', breakerTrips: 0, inflight: 0 },
        { name: 'gh', state: 'parked', breaker: 'open', breakerTrips: 1, inflight: 0 },
        { name: 'off', state: 'disabled', breaker: 'closed', breakerTrips: 0, inflight: 0 },
        { name: 'later', state: undefined, breaker: 'closed', breakerTrips: 0, inflight: 0 },
      ]);
      assert.deepEqual(snap.catalog, { tools: 2, resources: 0, resourceTemplates: 0, prompts: 0, heldTools: 1 });
      assert.deepEqual(snap.sessions, { stdio: 1, http: 1 });
      const text = new GatewayMetrics({ version: '0', source: metricsSource(gateway) }).render();
      assertParses(text);
      assert.equal(sampleValue(text, 'mcpgate_agent_sessions{transport="stdio"}'), 1);
      assert.equal(sampleValue(text, 'mcpgate_calls_in_flight{server="fs"}'), 0);
      assert.equal(text.split('\n').filter((l) => l.startsWith('mcpgate_connection_state{server="later"') && l.endsWith(' 1')).length, 0);
    } finally {
      await gateway.close();
    }
  });
});
