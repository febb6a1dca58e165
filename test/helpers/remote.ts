// A remote MCP server for tests: a fixture (or any command) started as a child process that prints
// its URL as the first stdout line ({"url": …}) and serves on 127.0.0.1; stopped by SIGTERM, also when
// the test process dies before stopping it.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fixture } from './gateway.js';
import { killWhenTestsDie } from './orphan-guard.js';

export interface Remote {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** Starts `command args` and waits for the URL it prints first. */
export async function startRemote(command: string, args: string[]): Promise<Remote> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', process.env.MCPGATE_TEST_VERBOSE !== undefined ? 'inherit' : 'ignore'] });
  // Stopped by the test's `after`, or by the guard if the test process dies first.
  const release = killWhenTestsDie(child.pid!);
  void once(child, 'exit').then(release);
  const lines = createInterface({ input: child.stdout });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error(`${args[0] ?? command} exited before listening`);
    }),
  ])) as [string];
  lines.close();
  const { url } = JSON.parse(first) as { url: string };
  return {
    child,
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The v2 SDK modern fixture (test/fixtures/modern-server.ts) over Streamable HTTP. */
export function startModernHttp(args: string[] = []): Promise<Remote> {
  return startRemote(process.execPath, [fixture('modern-server'), '--http', ...args]);
}
