// Per-server limits, end to end, against test/fixtures/limits-server.ts. Catalog:
// a server listing 20k tools in pages is cut at its maxTools and paging stops there; a server sending
// 100k tools in one page keeps the default 1000; a tool with a 20 MB inputSchema is withheld; each cut
// logs one warning naming the server and the numbers and shows in the status; the gateway's RSS stays
// bounded. Per-call ceiling: a call whose server reports progress forever ends at
// limits.maxCallMs with MCPG_SERVER_TIMEOUT, and the server is sent notifications/cancelled.

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  jsonOf,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

type Json = Record<string, unknown>;
const message = (line: Json): string => (typeof line.msg === 'string' ? line.msg : '');

/** Resident memory of a process in MiB, from /proc (Linux). */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN) / 1024;
}

describe('catalog limits per server', { timeout: 120_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let status: { servers: Json[] };
  const server = (name: string): Json => status.servers.find((s) => s.name === name)!;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      many: fixtureServer('limits-server', ['--tools', '20000', '--page-size', '500'], { limits: { maxTools: 1200 } }),
      flood: fixtureServer('limits-server', ['--tools', '100000']),
      huge: fixtureServer('limits-server', ['--schema-bytes', String(20 * 1024 * 1024)]),
    });
    gw = await startGateway({ config, args: ['--pins', 'off', '--mode', 'discovery', '--debug'] });
    await gw.waitForLog((l) => message(l).startsWith('mcpgate ready on stdio'));
    status = jsonOf(await gw.client.callTool({ name: 'get_gateway_status', arguments: {} })) as typeof status;
  });
  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('cuts a paginated list at maxTools and stops paging there', { timeout: 20_000 }, async () => {
    assert.equal(server('many').tools, 1200);
    assert.deepEqual(server('many').limited, { dropped: { tools: { max: 1200, listed: 1500 } }, withheld: null });
    const stats = JSON.parse(
      textOf(await gw.client.callTool({ name: 'execute_tool', arguments: { server: 'many', tool: 'stats', arguments: {} } })),
    ) as Json;
    assert.equal(stats['tools/list'], 3, 'pages 1-3 hold 1500 tools: past 1200 the gateway must stop asking');
  });

  it('keeps the default 1000 of a 100k-tool single page', { timeout: 20_000 }, () => {
    assert.equal(server('flood').tools, 1000);
    assert.deepEqual(server('flood').limited, { dropped: { tools: { max: 1000, listed: 100_002 } }, withheld: null });
  });

  it('withholds a tool whose schema is over maxSchemaBytes, and serves the rest', { timeout: 20_000 }, () => {
    assert.equal(server('huge').tools, 3);
    assert.deepEqual(server('huge').limited, { dropped: {}, withheld: { maxBytes: 262_144, count: 1, tools: ['huge'] } });
  });

  it('logs one warning per cut, naming the server and the numbers', { timeout: 20_000 }, () => {
    const warnings = gw.logs.filter((l) => l.level === 'warn').map(message);
    const of = (prefix: string): string[] => warnings.filter((m) => m.startsWith(prefix));
    assert.deepEqual(of('server "many"'), [
      'server "many" lists more than 1200 tools (at least 1500); only the first 1200 are served (limits.maxTools)',
    ]);
    assert.deepEqual(of('server "flood"'), [
      'server "flood" lists more than 1000 tools (at least 100002); only the first 1000 are served (limits.maxTools)',
    ]);
    assert.deepEqual(of('server "huge"'), [
      'server "huge" has 1 tool withheld: a schema is larger than 262144 bytes (limits.maxSchemaBytes): "huge"',
    ]);
  });

  it("keeps the gateway's memory bounded", { timeout: 20_000 }, () => {
    // Measured on this config: ~520 MiB before the limits, ~275 MiB after (most of it the transient
    // cost of receiving a 15 MB and a 20 MB message, which V8 keeps as heap once grown).
    const rss = rssMiB(gw.pid);
    assert.ok(rss < 360, `gateway RSS ${rss.toFixed(0)} MiB`);
  });
});

describe('a total ceiling per call', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      slow: fixtureServer('limits-server', ['--marker-dir', dir.path], { timeout: 400, limits: { maxCallMs: 1500 } }),
    });
    gw = await startGateway({ config, args: ['--pins', 'off'] });
  });
  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('ends a call that reports progress forever, cancels it on the server, names the reason', { timeout: 20_000 }, async () => {
    let progress = 0;
    const started = Date.now();
    const err = await rpcError(
      gw.client.callTool({ name: 'slow__forever', arguments: {} }, { onprogress: () => void progress++, timeout: 15_000 }),
    );
    const elapsed = Date.now() - started;
    assert.equal(err.data.code, 'MCPG_SERVER_TIMEOUT');
    assert.equal(err.data.server, 'slow');
    assert.equal(err.data.ceilingMs, 1500);
    assert.match(
      err.message,
      /did not finish tools\/call within its ceiling of 1500 ms \(limits\.maxCallMs; progress does not extend it\); the request was cancelled/,
    );
    assert.ok(progress > 10, `progress kept the call past its 400 ms timeout (${progress} reports)`);
    assert.ok(elapsed >= 1400 && elapsed < 5000, `ended after ${elapsed} ms`);
    const cancelled = async (): Promise<string | undefined> => {
      const { readdir } = await import('node:fs/promises');
      const name = (await readdir(dir.path)).find((f) => f.startsWith('cancelled-'));
      return name === undefined ? undefined : readFile(`${dir.path}/${name}`, 'utf8');
    };
    assert.ok(await until(async () => (await cancelled()) !== undefined), 'the server was not sent notifications/cancelled');
    assert.match((await cancelled())!, /ceiling of 1500 ms/);
    assert.equal(textOf(await gw.client.callTool({ name: 'slow__t0', arguments: {} })), 'called t0', 'the connection stays usable');
  });
});
