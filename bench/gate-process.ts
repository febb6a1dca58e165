// One `mcpgate serve --http` process for the long-running benchmarks (bench/agents.ts, bench/soak.ts):
// spawned from the built CLI in a process group of its own with the flags given, ready once it logs
// its address; stopped with SIGTERM (then SIGKILL of the whole group), so nothing it started
// outlives the benchmark. Its RSS and open file descriptors are sampled by process-samples.ts.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist/src/cli/main.js');
export const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
export const MANY_TOOLS = join(ROOT, 'dist/bench/many-tools-server.js');
const START_TIMEOUT_MS = 60_000;

export interface GateProcess {
  readonly pid: number;
  readonly url: URL;
  /** The log lines at level warn or error (JSON), kept for the report (bounded). */
  readonly problems: string[];
  stop(): Promise<void>;
}

/** `nodeArgs`: flags for node itself, before the CLI (e.g. `--import` of a probe). */
export async function startGate(config: string, flags: readonly string[], nodeArgs: readonly string[] = []): Promise<GateProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeArgs,
      CLI,
      'serve',
      '--config',
      config,
      '--http',
      '127.0.0.1:0',
      '--no-auth',
      '--agent',
      'bench',
      '--log-format',
      'json',
      ...flags,
    ],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const pid = child.pid!;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const problems: string[] = [];
  let partial = '';
  let onUrl: ((url: URL) => void) | undefined;
  child.stderr!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      let record: { level?: string; msg?: string; url?: string };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        continue;
      }
      if (onUrl !== undefined && typeof record.url === 'string' && record.msg?.startsWith('mcpgate listening on') === true)
        onUrl(new URL(record.url));
      if ((record.level === 'warn' || record.level === 'error') && problems.length < 1000) problems.push(line.slice(0, 500));
    }
  });
  const stop = async (): Promise<void> => {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 10_000);
    await exited;
    clearTimeout(timer);
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const url = await Promise.race([
      new Promise<URL>((resolve) => (onUrl = resolve)),
      exited.then(() => Promise.reject(new Error(`mcpgate exited before it was ready: ${problems.join('\n')}`))),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('mcpgate was not ready in time')), START_TIMEOUT_MS))),
    ]);
    return { pid, url, problems, stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** `--name value` options of a bench script, with defaults. */
export function option(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(args[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} takes a positive number`);
  return value;
}
