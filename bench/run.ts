// `npm run bench`: runs every benchmark and prints a table. Targets are checked here, not in unit
// tests (timings on shared machines are noisy; only ratios measured in one run mean anything).
// `npm run bench -- http` (or any of stdio, respawn, reload, http, peers, memory, catalog, cluster, pool, eras, search, call-path, sandbox, code-engine, guards) runs only the benchmarks named.

import { cpus, loadavg, totalmem } from 'node:os';
import { benchReload } from './reload.js';
import { benchRespawn } from './respawn.js';
import { printHttp } from './http-report.js';
import { FLOOR_NAME, MCPGATE_NAME, RELAY_NAME } from './http-targets.js';
import { benchHttp } from './http-throughput.js';
import { benchMemory } from './http-memory.js';
import { benchCatalog, printCatalog } from './catalog.js';
import { benchCatalogStartup, printCatalogStartup } from './catalog-startup.js';
import { benchCluster } from './cluster.js';
import { benchCallPath, printCallPath } from './call-path.js';
import { benchEras, printEras } from './eras.js';
import { benchPool } from './pool.js';
import { benchSearch } from './search.js';
import { benchGuards } from './guards.js';
import { benchSandboxStartup, printSandboxStartup } from './sandbox-startup.js';
import { benchCodeEngine, printCodeEngine } from './code-engine.js';
import { benchCodeMode, printCodeMode } from './code-mode.js';
import { benchStdio, TARGETS, type StdioResult } from './stdio-latency.js';

const fmt = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;
/** The hot path's target: mcpgate within these multiples of the zero-work pipe relay in front of the same server. */
const MEDIAN_TARGET = 1.1;
const P99_TARGET = 1.25;

function print(title: string, result: StdioResult): void {
  console.log(`\n${title}`);
  const direct = result.direct.median;
  const extra = (['mcpgate (baseline)', 'mcpgate (limits)'] as const).filter((t) => result[t] !== undefined);
  for (const target of [...TARGETS, ...extra]) {
    const s = result[target]!;
    const cpu =
      s.cpu === undefined
        ? ''
        : `  CPU ${s.cpu.run.toFixed(0).padStart(4)} µs/call (main thread: user ${s.cpu.user.toFixed(0)}, kernel ${s.cpu.system.toFixed(0)})`;
    console.log(
      `  ${target.padEnd(20)} median ${fmt(s.median).padStart(8)}  p99 ${fmt(s.p99).padStart(9)}  ${(s.median / direct).toFixed(2)}× direct  (${s.calls} calls)${cpu}`,
    );
  }
  const gate = result.mcpgate;
  const floor = result['pipe relay (floor)'];
  const parse = result['parse relay'];
  const median = gate.median / floor.median;
  const p99 = gate.p99 / floor.p99;
  console.log(
    `  mcpgate ÷ the pipe relay (floor): median ${median.toFixed(2)}× (target ≤ ${MEDIAN_TARGET}×: ${median <= MEDIAN_TARGET ? 'met' : 'not met'}), ` +
      `p99 ${p99.toFixed(2)}× (target ≤ ${P99_TARGET}×: ${p99 <= P99_TARGET ? 'met' : 'not met'}); mcpgate's own work is ${fmt(gate.median - floor.median)} per call ` +
      `(${(gate.median / direct).toFixed(2)}× direct, the relay ${(floor.median / direct).toFixed(2)}×)`,
  );
  const cpuAbove =
    gate.cpu === undefined || parse.cpu === undefined
      ? ''
      : `; mcpgate's process spends ${(gate.cpu.run - parse.cpu.run).toFixed(0)} µs of CPU per call more than it`;
  for (const t of extra) {
    const other = result[t]!;
    console.log(
      `  mcpgate ÷ ${t}: median ${(gate.median / other.median).toFixed(2)}×, p99 ${(gate.p99 / other.p99).toFixed(2)}×${gate.cpu !== undefined && other.cpu !== undefined ? `, CPU ${gate.cpu.run.toFixed(0)} vs ${other.cpu.run.toFixed(0)} µs/call` : ''}`,
    );
  }
  console.log(
    `  mcpgate ÷ the parse relay (parses, re-addresses and re-encodes every message): median ${(gate.median / parse.median).toFixed(2)}×, p99 ${(gate.p99 / parse.p99).toFixed(2)}×${cpuAbove}`,
  );
}

const BENCHES = [
  'stdio',
  'respawn',
  'reload',
  'http',
  'peers',
  'memory',
  'catalog',
  'cluster',
  'pool',
  'eras',
  'search',
  'call-path',
  'sandbox',
  'code-engine',
  'code-mode',
  'guards',
] as const;

function selected(): Set<string> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !(BENCHES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`unknown benchmark ${unknown.join(', ')}; choose from ${BENCHES.join(', ')}`);
  return new Set(names.length > 0 ? names : BENCHES);
}

async function main(): Promise<void> {
  const run = selected();
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  console.log(
    `mcpgate bench — node ${process.version}, ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg()[0]!.toFixed(2)}`,
  );
  if (run.has('stdio')) await stdio();
  if (run.has('respawn')) await respawn();
  if (run.has('reload')) await reload();
  if (run.has('http')) printHttp(await benchHttp({}, (line) => console.log(line)));
  // The throughput target alone: 64 in flight on one shared session, mcpgate beside its floors and its Streamable HTTP peers.
  if (run.has('peers'))
    printHttp(
      await benchHttp(
        { concurrency: [64], perWorkerSessions: false, targets: [FLOOR_NAME, RELAY_NAME, MCPGATE_NAME, 'mcp-proxy', 'supergateway'] },
        (line) => console.log(line),
      ),
    );
  if (run.has('memory')) await benchMemory((line) => console.log(`\n${line}`));
  if (run.has('call-path')) printCallPath(await benchCallPath());
  if (run.has('catalog')) await catalog();
  if (run.has('cluster')) await benchCluster((line) => console.log(line));
  if (run.has('pool')) await benchPool((line) => console.log(line));
  if (run.has('eras')) printEras(await benchEras(), (line) => console.log(line));
  if (run.has('search')) await benchSearch((line) => console.log(line));
  if (run.has('sandbox')) printSandboxStartup(await benchSandboxStartup(), (line) => console.log(line));
  if (run.has('code-engine')) printCodeEngine(await benchCodeEngine(), (line) => console.log(line));
  if (run.has('code-mode')) printCodeMode(await benchCodeMode((line) => console.log(line)), (line) => console.log(line));
  if (run.has('guards')) benchGuards((line) => console.log(line));
}

/** Start-up direct vs through mcpgate (10 × 500 within 1.2×, 100 × 50 within 1.5×), then the in-process list figures. */
async function catalog(): Promise<void> {
  const rounds = Number(process.env.MCPGATE_BENCH_ROUNDS ?? 3);
  printCatalogStartup(await benchCatalogStartup(10, 500, rounds), 1.2, (line) => console.log(line));
  printCatalogStartup(await benchCatalogStartup(100, 50, rounds), 1.5, (line) => console.log(line));
  printCatalog(await benchCatalog(), (line) => console.log(line));
}

async function stdio(): Promise<void> {
  print('stdio: tools/call to an echo server built on the SDK v2 (sequential calls, SDK v2 client)', await benchStdio('v2'));
  print('stdio: tools/call to an echo server built on the SDK v1 (sequential calls, SDK v2 client)', await benchStdio('v1'));
}

async function respawn(): Promise<void> {
  const respawn = (await benchRespawn()).sort((a, b) => a - b);
  const median = respawn[Math.floor(respawn.length / 2)]!;
  console.log('\nrespawn: SIGKILL of a server → its first successful call through mcpgate');
  console.log(
    `  median ${median.toFixed(0)} ms, min ${respawn[0]!.toFixed(0)} ms, max ${respawn[respawn.length - 1]!.toFixed(0)} ms over ${respawn.length} kills (target < 1000 ms: ${median < 1000 ? 'met' : 'not met'})`,
  );
}

async function reload(): Promise<void> {
  const reload = (await benchReload()).sort((a, b) => a - b);
  const reloadMedian = reload[Math.floor(reload.length / 2)]!;
  console.log('\nhot reload: rules file renamed → the agent sees the new catalog (list_changed + tools/list)');
  console.log(
    `  median ${reloadMedian.toFixed(0)} ms, min ${reload[0]!.toFixed(0)} ms, max ${reload[reload.length - 1]!.toFixed(0)} ms over ${reload.length} renames (200 ms of it is the debounce; target < 300 ms: ${reloadMedian < 300 ? 'met' : 'not met'})`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
