// The process groups of mcpgate's stdio servers, for the whole process (the OS process tree is one
// fact per process, so this is a module, not an injected part). Each StdioProcess registers its group
// at spawn and releases it once no member remains. Two things use the list:
// - the watchdog (watchdog-main.ts), started on the first registration: a detached helper that
//   kills every registered group when mcpgate dies without running its shutdown (kill -9, OOM);
// - `hurryAll()`: a signal during shutdown cuts every stop short (the agent's own SIGKILL is coming).
// The watchdog is unref'd, so it never keeps mcpgate alive.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'node:net';

export interface Stoppable {
  /** Skip what is left of the graceful stop: SIGTERM the group now, SIGKILL after `termGraceMs`. */
  hurry(termGraceMs: number): void;
}

const members = new Map<number, Stoppable>();
let watchdog: ChildProcess | undefined;
let watchdogFailed = false;

/** Off with MCPGATE_WATCHDOG=off (tests of the in-process stop; debugging). */
function wanted(): boolean {
  return process.env.MCPGATE_WATCHDOG !== 'off' && process.platform !== 'win32';
}

function startWatchdog(): void {
  if (watchdog !== undefined || watchdogFailed || !wanted()) return;
  const script = fileURLToPath(new URL('./watchdog-main.js', import.meta.url));
  try {
    // Detached: its own session and group, so a kill of mcpgate's group (a terminal's ^C, a
    // supervisor's group kill) leaves it standing. stdout/stderr ignored: it must not hold the
    // agent's pipes open after mcpgate is gone.
    watchdog = spawn(process.execPath, [script], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, windowsHide: true });
  } catch {
    watchdogFailed = true;
    return;
  }
  watchdog.on('error', () => {
    watchdogFailed = true;
    watchdog = undefined;
  });
  watchdog.stdin?.on('error', () => {});
  // Neither the helper nor its pipe may keep mcpgate's event loop alive.
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();
}

function tell(line: string): void {
  const stdin = watchdog?.stdin;
  if (stdin?.writable === true) stdin.write(line + '\n');
}

export const processGroups = {
  register(pgid: number, member: Stoppable): void {
    members.set(pgid, member);
    startWatchdog();
    tell(`+${pgid}`);
  },
  /** The group has no live member left. */
  release(pgid: number): void {
    if (!members.delete(pgid)) return;
    tell(`-${pgid}`);
  },
  /** A signal arrived during shutdown: every stop in progress (or not yet begun) is cut short. */
  hurryAll(termGraceMs: number): void {
    for (const member of members.values()) member.hurry(termGraceMs);
  },
  /** The watchdog's pid, for tests and /status; undefined when it is off or could not start. */
  get watchdogPid(): number | undefined {
    return watchdog?.pid;
  },
  get size(): number {
    return members.size;
  },
};
