// Benchmark: what a sandbox adds to a stdio server's start. An SDK client starts the echo server and
// completes initialize, timed from the spawn: the server alone, under its sandbox with network
// "none" (bubblewrap, exactly the command line mcpgate builds), and with a network allow-list (the
// bridge, one more Node process, and mcpgate's proxy). Rounds alternate, so the three share the
// machine's noise. `npm run bench -- sandbox`.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { SandboxSettings } from '../src/config/types.js';
import { sandboxLaunch, sandboxUnavailable } from '../src/servers/transports/stdio/sandbox-launch.js';
import { SandboxProxy } from '../src/servers/transports/stdio/network-proxy.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const BRIDGE = join(ROOT, 'dist/src/servers/transports/stdio/proxy-bridge-main.js');

export const SANDBOX_TARGETS = ['unsandboxed', 'sandbox, network none', 'sandbox, allow-list'] as const;
export type SandboxTarget = (typeof SANDBOX_TARGETS)[number];

async function startOnce(command: string, args: string[], cwd: string): Promise<number> {
  const started = performance.now();
  const client = new Client({ name: 'mcpgate-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, cwd, stderr: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin' } }));
  const ms = performance.now() - started;
  await client.close();
  return ms;
}

/** Milliseconds from spawn to an initialized session, per target, `rounds` each. */
export async function benchSandboxStartup(rounds = 15): Promise<Record<SandboxTarget, number[]> | string> {
  const missing = sandboxUnavailable();
  if (missing !== undefined) return missing;
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-sandbox-'));
  const read = [resolve(ROOT), realpathSync(join(ROOT, 'node_modules'))];
  const env = { PATH: process.env.PATH, HOME: dir };
  const none: SandboxSettings = { preset: 'node', read, write: [], network: 'none' };
  const listed: SandboxSettings = { ...none, network: [{ host: '127.0.0.1', port: 9 }] };
  const out: Record<SandboxTarget, number[]> = { unsandboxed: [], 'sandbox, network none': [], 'sandbox, allow-list': [] };
  try {
    for (let r = 0; r < rounds + 1; r++) {
      const plain = await startOnce(process.execPath, [ECHO], dir);
      const boxed = sandboxLaunch(none, process.execPath, [ECHO], env, dir);
      const inBox = await startOnce(boxed.command, boxed.args, dir);
      const proxy = SandboxProxy.open(listed.network as never);
      let viaProxy: number;
      try {
        const withProxy = sandboxLaunch(listed, process.execPath, [ECHO], env, dir, { folder: proxy.folder, bridge: BRIDGE });
        viaProxy = await startOnce(withProxy.command, withProxy.args, dir);
      } finally {
        proxy.close();
      }
      if (r === 0) continue; // warm-up: the file cache
      out.unsandboxed.push(plain);
      out['sandbox, network none'].push(inBox);
      out['sandbox, allow-list'].push(viaProxy);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}

export function printSandboxStartup(result: Record<SandboxTarget, number[]> | string, log: (line: string) => void): void {
  log('\nsandbox: spawn → initialized, the echo server alone and in its sandbox');
  if (typeof result === 'string') return log(`  skipped: ${result}`);
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(result.unsandboxed);
  for (const target of SANDBOX_TARGETS) {
    const m = median(result[target]);
    const sorted = [...result[target]].sort((a, b) => a - b);
    log(
      `  ${target.padEnd(22)} median ${m.toFixed(0).padStart(4)} ms  min ${sorted[0]!.toFixed(0)} ms  max ${sorted.at(-1)!.toFixed(0)} ms  (+${(m - base).toFixed(0)} ms, ${(m / base).toFixed(2)}×)`,
    );
  }
}
