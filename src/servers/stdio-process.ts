// One stdio server's child process: spawn it in its own process group, frame its stdout into lines,
// send its stderr to the log, and stop it the way the MCP spec and seed 000 ask: close stdin, wait up to
// 2 s, SIGTERM, wait, SIGKILL — always to the whole group, so wrappers such as `npx` or `uvx` cannot
// leave grandchildren behind.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import type { StdioServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { readLines } from '../wire/line-reader.js';
import type { ServerTransport, StopTimings, TransportEvents } from './transport.js';

export type { StopTimings }; // defined with the transport contract (transport.ts)

export const DEFAULT_STOP_TIMINGS: StopTimings = { stdinGraceMs: 2000, termGraceMs: 2000 };

/** Max bytes a server may leave unread in its stdin before we call it stuck. */
const STDIN_HIGH_WATER = 64 * 1024 * 1024;
const STDERR_TAIL_LINES = 20;

export type StdioProcessEvents = TransportEvents;

export class StdioProcess implements ServerTransport {
  readonly pid: number | undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly stderrTail: string[] = [];
  private exited = false;
  private readonly exitPromise: Promise<void>;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly config: StdioServerConfig,
    private readonly log: Logger,
    events: StdioProcessEvents,
  ) {
    // The server's environment is the gateway's own plus its `env` entries (what Claude Desktop and
    // Cursor users expect: PATH, HOME… are inherited, the entry's values win).
    this.child = spawn(config.command, config.args, {
      cwd: config.cwd,
      env: { ...process.env, ...config.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // own process group: we signal -pid to reach grandchildren
      windowsHide: true,
    });
    this.pid = this.child.pid;
    this.exitPromise = new Promise((resolve) => {
      const finish = (reason: GatewayError): void => {
        if (this.exited) return;
        this.exited = true;
        events.exit(reason);
        resolve();
      };
      this.child.once('error', (err: NodeJS.ErrnoException) => {
        const what = err.code === 'ENOENT' ? `server "${config.name}": command not found: ${config.command}` : `server "${config.name}": could not start ${config.command}: ${err.message}`;
        finish(new GatewayError('MCPG_SERVER_START_FAILED', what, { server: config.name, cause: err }));
      });
      this.child.once('exit', (code, signal) => {
        // Let the last stderr lines arrive (they usually say why), but do not wait on a pipe that a
        // surviving grandchild may hold open.
        const report = (): void => {
          const how = signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`;
          const tail = this.stderrTail.length > 0 ? `; last stderr: ${this.stderrTail.slice(-3).join(' | ')}` : '';
          finish(new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${config.name}" ${how}${tail}`, { server: config.name, detail: { exitCode: code, signal } }));
        };
        if (this.child.stderr.readableEnded) return report();
        const timer = setTimeout(report, 100);
        this.child.stderr.once('end', () => {
          clearTimeout(timer);
          report();
        });
      });
    });
    // A server that closes its stdin early gives EPIPE on our next write; the exit event reports it.
    this.child.stdin.on('error', () => {});
    this.child.stdout.on('error', () => {});
    this.child.stderr.on('error', () => {});
    readLines(this.child.stdout, { line: (line) => events.line(line), overflow: (length) => events.overflow(length) });
    readLines(this.child.stderr, {
      line: (line) => {
        this.stderrTail.push(line);
        if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
        this.log.info('server stderr', { stderr: line });
      },
    });
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** The last lines the server wrote to stderr (for error messages). */
  get lastStderr(): readonly string[] {
    return this.stderrTail;
  }

  /**
   * Writes one framed message; false when the server is gone or not reading its input. Messages
   * written in one turn of the event loop go out in one write at its end: under load that is one
   * system call and one wake-up of the server for many calls instead of one each.
   */
  write(line: string): boolean {
    if (this.exited || this.stopping !== undefined) return false;
    const stdin = this.child.stdin;
    if (!stdin.writable || stdin.writableLength > STDIN_HIGH_WATER) return false;
    if (this.batch === undefined) {
      this.batch = line + '\n';
      setImmediate(this.flush);
    } else {
      this.batch += line + '\n';
    }
    return true;
  }

  private batch: string | undefined;

  private readonly flush = (): void => {
    const batch = this.batch;
    this.batch = undefined;
    if (batch !== undefined && this.child.stdin.writable) this.child.stdin.write(batch);
  };

  /** Graceful stop (seed 000): stdin EOF → wait → SIGTERM → wait → SIGKILL, to the whole group. Idempotent. */
  stop(timings: StopTimings = DEFAULT_STOP_TIMINGS): Promise<void> {
    this.stopping ??= this.runStop(timings);
    return this.stopping;
  }

  private async runStop(timings: StopTimings): Promise<void> {
    this.flush();
    this.child.stdin.end();
    if (!(await this.waitExit(timings.stdinGraceMs))) {
      this.log.debug('server did not exit after stdin closed; sending SIGTERM');
      this.signalGroup('SIGTERM');
      if (!(await this.waitExit(timings.termGraceMs))) {
        this.log.warn('server ignored SIGTERM; sending SIGKILL');
        this.signalGroup('SIGKILL');
        await this.waitExit(timings.termGraceMs);
      }
    }
    await this.reapGroup(timings);
  }

  /** The leader is gone; members of its group (a wrapper's children) may not be. */
  private async reapGroup(timings: StopTimings): Promise<void> {
    if (!this.groupAlive()) return;
    this.signalGroup('SIGTERM');
    const deadline = Date.now() + timings.termGraceMs;
    while (this.groupAlive() && Date.now() < deadline) await delay(25);
    if (this.groupAlive()) {
      this.log.warn('processes of the server\'s group survived SIGTERM; sending SIGKILL');
      this.signalGroup('SIGKILL');
    }
  }

  /** Immediate: SIGKILL the whole group (second signal, or a stop that must not wait). */
  kill(): void {
    this.signalGroup('SIGKILL');
  }

  /**
   * Whether any live member of the group remains. `kill(-pgid, 0)` also succeeds for zombies (an
   * orphaned grandchild waits for init to reap it, which can be slow), so on Linux /proc decides.
   */
  private groupAlive(): boolean {
    if (this.pid === undefined) return false;
    try {
      process.kill(-this.pid, 0);
    } catch {
      return false;
    }
    return liveGroupMember(this.pid);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
      try {
        if (!this.exited) this.child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  private async waitExit(ms: number): Promise<boolean> {
    if (this.exited) return true;
    const ac = new AbortController();
    // Not unref'd: during shutdown these timers are what keeps the process alive until the group is gone.
    const timer = setTimeout(() => ac.abort(), ms);
    try {
      await Promise.race([this.exitPromise, once(ac.signal, 'abort')]);
    } finally {
      clearTimeout(timer);
      ac.abort();
    }
    return this.exited;
  }
}

/** True if a non-zombie process is in group `pgid`; true as well when /proc cannot be read (be safe). */
function liveGroupMember(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // "pid (comm) state ppid pgrp …": comm may contain spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
