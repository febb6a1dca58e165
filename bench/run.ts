// `npm run bench`: runs every benchmark and prints a table. Targets are checked here, not in unit
// tests (timings on shared machines are noisy; only ratios measured in one run mean anything).

import { cpus, totalmem } from 'node:os';
import { benchStdio, type LatencyStats } from './stdio-latency.js';

const fmt = (ms: number): string => `${(ms * 1000).toFixed(0)} µs`;

function row(label: string, s: LatencyStats): string {
  return `  ${label.padEnd(28)} median ${fmt(s.median).padStart(9)}   p99 ${fmt(s.p99).padStart(9)}   (${s.calls} calls)`;
}

async function main(): Promise<void> {
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  console.log(`mcpgate bench — node ${process.version}, ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`);
  console.log('\nstdio: tools/call to an echo server (SDK v2 client, sequential calls)');
  const stdio = await benchStdio();
  console.log(row('direct to the server', stdio.direct));
  console.log(row('through mcpgate', stdio.gateway));
  const target = 1.3;
  console.log(`  ratio of medians: ${stdio.ratio.toFixed(2)}× (target < ${target}×: ${stdio.ratio < target ? 'met' : 'NOT met'})`);
  console.log(`  added per call: ${fmt(stdio.gateway.median - stdio.direct.median)} at the median`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
