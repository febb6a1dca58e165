// The young generation while a gateway starts. Start-up builds the catalog: thousands of tool
// definitions parsed, checked, digested and laid out, nearly all of which live as long as the process.
// V8 grows its young generation (up to two 16 MiB semi-spaces) when much of what it scavenges
// survives, which is exactly this; the growth buys nothing (what survives is promoted anyway) and the
// memory stays: with 5,000 tools the gateway held ~135 MiB, against ~110 MiB with the young
// generation left at its first size, and started no slower (bench/RESULTS.md, "Catalog start-up").
// So the growth is off (`--semi-space-growth-factor=1`, which V8 reads at each scavenge) until every
// server is ready or has failed, then back to V8's default, so that a gateway under load grows it as
// any Node process does. A growth factor the operator gave node itself is left alone (only there:
// Node refuses V8 options such as this one in NODE_OPTIONS). The primary of `--workers N` holds it
// for good: it runs no gateway, and stays small.

import { setFlagsFromString } from 'node:v8';

const FLAG = '--semi-space-growth-factor';
/** V8's default (Node 20 and 22 alike: `node --v8-options`). */
const DEFAULT_GROWTH = 2;

let held = false;

/** Holds the young generation at its size (before the gateway's modules load: they are the first to grow it). */
export function holdYoungGeneration(): void {
  if (process.execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith('--semi_space_growth_factor'))) return;
  setFlagsFromString(`${FLAG}=1`);
  held = true;
}

/** Lets it grow again once `settled` resolves (every server ready or failed); nothing if it was not held. */
export function releaseYoungGenerationWhen(settled: Promise<unknown>): void {
  if (!held) return;
  void settled.finally(() => {
    held = false;
    setFlagsFromString(`${FLAG}=${DEFAULT_GROWTH}`);
  });
}
