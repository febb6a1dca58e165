// One stdio server's child process: spawn it in its own process group (group-launch.ts) with the
// environment child-env.ts allows, frame its stdout into lines, send its stderr to the log
// (stderr-log.ts: cut, bounded, rate-limited), and stop it the way the MCP spec asks: close stdin,
// wait up to 2 s, SIGTERM, wait, SIGKILL — always to the whole group, so wrappers such as `npx` or
// `uvx` cannot leave grandchildren behind. The group is registered with process-groups.ts (the
// watchdog kills it if mcpgate dies without a shutdown) until no member of it is left. When the
// session ends, what survives the leader, the environment and a sandboxed entry: src/servers/README.md,
// "Process groups" and "Sandboxes".

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StdioServerConfig } from '../../../config/types.js';
import { GatewayError } from '../../../errors.js';
import type { Logger } from '../../../observability/logger.js';
import { readLines } from '../../../wire/jsonrpc.js';
import { serverEnv } from '../../../config/child-env.js';
import { ownGroupLaunch } from './group-launch.js';
import { processGroups, type Stoppable } from '../../process-groups.js';
import { StderrLog } from './stderr-log.js';
import { sandboxLaunch, sandboxUnavailable, type SandboxLaunch } from './sandbox-launch.js';
import { SandboxProxy } from './network-proxy.js';
import { sandboxHint } from './sandbox-hints.js';
import type { ServerTransport, StopTimings, TransportEvents } from '../transport.js';

export const DEFAULT_STOP_TIMINGS: StopTimings = { stdinGraceMs: 2000, termGraceMs: 2000 };

/** Max bytes a server may leave unread in its stdin before we call it stuck. */
const STDIN_HIGH_WATER = 64 * 1024 * 1024;
/** After stdout EOF, how long the leader has to exit before we call it "closed stdout, still running". */
const EOF_EXIT_WAIT_MS = 200;

type StdioProcessEvents = TransportEvents;

interface StdioSpawnOptions {
  /** Names of mcpgate's own secret variables (the rules' `${VAR}`s); never inherited. */
  secretEnv?: () => ReadonlySet<string>;
}

/** The operator-only stderr tail behind an exit reason (never part of what agents are sent). */
const stderrTails = new WeakMap<GatewayError, readonly string[]>();
/** Which sandbox rule likely ended the session, for the operator (never part of what agents are sent). */
const sandboxHints = new WeakMap<GatewayError, string>();

/** Where a start refused for want of a sandbox is spawned: a path that exists on no system (ENOTDIR). */
const NOWHERE = '/dev/null/mcpgate-no-sandbox';
/** The sandbox's bridge to the network proxy (compiled beside this file). */
const BRIDGE = fileURLToPath(new URL('./proxy-bridge-main.js', import.meta.url));

/** The sandbox hint kept with `reason` (along its cause chain, as the stderr tail). */
export function sandboxHintOf(reason: GatewayError | undefined): string | undefined {
  let error: unknown = reason;
  for (let depth = 0; depth < 5 && error instanceof GatewayError; depth++) {
    const hint = sandboxHints.get(error);
    if (hint !== undefined) return hint;
    error = error.cause;
  }
  return undefined;
}

/**
 * The server's last stderr lines when `reason` ended its session, for the operator's /status. A
 * start that failed wraps the exit reason (its `cause`): the tail is found along that chain.
 */
export function stderrTailOf(reason: GatewayError | undefined): readonly string[] | undefined {
  let error: unknown = reason;
  for (let depth = 0; depth < 5 && error instanceof GatewayError; depth++) {
    const tail = stderrTails.get(error);
    if (tail !== undefined) return tail;
    error = error.cause;
  }
  return undefined;
}

export class StdioProcess implements ServerTransport, Stoppable {
  readonly pid: number | undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly stderr: StderrLog;
  /** The leader exited (or never started). */
  private leaderExited = false;
  /** The session's end was reported (events.exit). */
  private reported = false;
  private readonly leaderGone: Promise<void>;
  private stopping: Promise<void> | undefined;
  private reaping: Promise<void> | undefined;
  private timings: StopTimings = DEFAULT_STOP_TIMINGS;
  /** Set by hurry(): when, and the SIGKILL grace it allows. */
  private hurried: { at: number; graceMs: number } | undefined;
  private readonly wakers = new Set<() => void>();
  /** The sandbox's command line (what it shows), when the entry is sandboxed and one could be made. */
  private readonly sandbox: SandboxLaunch | undefined;
  /** Why a sandboxed entry was not started: no sandbox can be made here. */
  private readonly refusal: GatewayError | undefined;
  /** The network allow-list's proxy, while the group lives. */
  private readonly proxy: SandboxProxy | undefined;

  constructor(
    private readonly config: StdioServerConfig,
    private readonly log: Logger,
    private readonly events: StdioProcessEvents,
    options: StdioSpawnOptions = {},
  ) {
    const env = serverEnv(config, process.env, options.secretEnv?.());
    let command = config.command;
    let args: readonly string[] = config.args;
    const settings = config.sandbox;
    if (settings !== undefined) {
      const missing = sandboxUnavailable();
      if (missing !== undefined) {
        this.refusal = new GatewayError('MCPG_SANDBOX_UNAVAILABLE', `server "${config.name}" is sandboxed, and ${missing}`, {
          server: config.name,
        });
        command = NOWHERE;
        args = [];
      } else {
        if (Array.isArray(settings.network)) {
          this.proxy = SandboxProxy.open(settings.network, (target) =>
            log.warn("the sandbox's network allow-list refused a connection", { target }),
          );
        }
        const proxyWay = this.proxy && { folder: this.proxy.folder, bridge: BRIDGE };
        this.sandbox = sandboxLaunch(settings, config.command, config.args, env, config.cwd, proxyWay);
        command = this.sandbox.command;
        args = this.sandbox.args;
      }
    }
    // Its own process group (we signal -pid to reach grandchildren), in our session where it can be (transports/stdio/group-launch.ts).
    const launch = ownGroupLaunch(command, args, env, config.cwd);
    this.child = spawn(launch.command, launch.args, {
      cwd: config.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: launch.detached,
      windowsHide: true,
    });
    this.pid = this.child.pid;
    if (this.pid !== undefined) processGroups.register(this.pid, this);
    this.stderr = new StderrLog(this.child.stderr, log);
    const box = this.sandbox;
    if (settings !== undefined && box !== undefined) {
      // A running server that reports a denial is told about once per rule (bounded), not only at its exit.
      const seen = new Set<string>();
      this.stderr.onLine = (line) => {
        if (seen.size >= 8) return;
        const hint = sandboxHint(settings, [line], [], box.visible);
        if (hint === undefined || seen.has(hint)) return;
        seen.add(hint);
        log.warn(`server stderr points at its sandbox: ${hint}`);
      };
    }
    this.leaderGone = new Promise((resolve) => {
      this.child.once('error', (err: NodeJS.ErrnoException) => {
        this.leaderExited = true;
        resolve();
        this.wake();
        if (this.refusal !== undefined) return this.report(this.refusal);
        const what =
          err.code === 'ENOENT'
            ? `server "${config.name}": command not found: ${config.command}`
            : `server "${config.name}": could not start ${config.command}: ${err.message}`;
        this.report(new GatewayError('MCPG_SERVER_START_FAILED', what, { server: config.name, cause: err }));
        if (this.pid !== undefined) void this.reap();
        else this.proxy?.close();
      });
      this.child.once('exit', (code, signal) => {
        this.leaderExited = true;
        resolve();
        this.wake();
        // Whatever the leader left in its group (a wrapper's children holding our pipes) goes too,
        // now, not only at shutdown: otherwise every respawn leaks one.
        void this.reap();
        // Let the last stderr lines arrive (they usually say why), but do not wait on a pipe that a
        // surviving grandchild may hold open.
        const report = (): void => {
          const how = signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`;
          this.report(
            new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${config.name}" ${how}`, {
              server: config.name,
              detail: { exitCode: code, signal },
            }),
          );
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
    readLines(this.child.stdout, {
      line: (line) => events.line(line),
      overflow: (length) => events.overflow(length),
      end: () => this.onStdoutEnd(),
    });
  }

  get alive(): boolean {
    return !this.reported;
  }

  /** The last lines the server wrote to stderr (each cut to a few KB), for the operator. */
  get lastStderr(): readonly string[] {
    return this.stderr.lines;
  }

  /**
   * Writes one framed message; false when the server is gone or not reading its input. Messages
   * written in one turn of the event loop go out in one write at its end: under load that is one
   * system call and one wake-up of the server for many calls instead of one each.
   */
  write(line: string): boolean {
    if (this.reported || this.leaderExited || this.stopping !== undefined) return false;
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

  /** Graceful stop: stdin EOF → wait → SIGTERM → wait → SIGKILL, to the whole group. Idempotent. */
  stop(timings: StopTimings = DEFAULT_STOP_TIMINGS): Promise<void> {
    if (this.stopping === undefined) {
      this.timings = timings;
      this.stopping = this.runStop(timings);
    }
    return this.stopping;
  }

  /**
   * A signal arrived during shutdown: skip what is left of the stdin grace, SIGTERM the group now
   * and SIGKILL it within `termGraceMs`: the agent's own SIGKILL is coming.
   */
  hurry(termGraceMs: number): void {
    if (this.hurried !== undefined) return;
    this.hurried = { at: Date.now(), graceMs: termGraceMs };
    void this.stop();
    this.wake();
  }

  private async runStop(timings: StopTimings): Promise<void> {
    this.flush();
    this.child.stdin.end();
    if (!(await this.waitExit(timings.stdinGraceMs, 'stdin'))) {
      this.log.debug('server did not exit after stdin closed; sending SIGTERM');
      this.signalGroup('SIGTERM');
      if (!(await this.waitExit(timings.termGraceMs, 'term'))) {
        this.log.warn('server ignored SIGTERM; sending SIGKILL');
        this.signalGroup('SIGKILL');
        await this.waitExit(timings.termGraceMs, 'term');
      }
    }
    await this.reap();
  }

  /** The leader is gone; members of its group (a wrapper's children) may not be. Once per process. */
  private reap(): Promise<void> {
    this.reaping ??= (async () => {
      if (this.groupAlive()) {
        this.signalGroup('SIGTERM');
        const start = Date.now();
        while (this.groupAlive() && Date.now() - start < this.graceLeft(this.timings.termGraceMs, start)) await delay(25);
        if (this.groupAlive()) {
          this.log.warn("processes of the server's group survived SIGTERM; sending SIGKILL");
          this.signalGroup('SIGKILL');
          const killedAt = Date.now();
          while (this.groupAlive() && Date.now() - killedAt < 500) await delay(25);
        }
      }
      if (this.pid !== undefined) processGroups.release(this.pid);
      this.proxy?.close();
    })();
    return this.reaping;
  }

  /** Immediate: SIGKILL the whole group (second signal, or a stop that must not wait). */
  kill(): void {
    this.signalGroup('SIGKILL');
  }

  private report(reason: GatewayError): void {
    if (this.reported) return;
    this.reported = true;
    const tail = this.stderr.lines;
    if (tail.length > 0) stderrTails.set(reason, [...tail]);
    const hint =
      this.config.sandbox !== undefined && this.sandbox !== undefined && this.stopping === undefined
        ? sandboxHint(this.config.sandbox, tail, this.proxy?.denials ?? [], this.sandbox.visible)
        : undefined;
    if (hint !== undefined) {
      sandboxHints.set(reason, hint);
      this.log.warn(`server ended under its sandbox: ${hint}`);
    }
    this.stderr.flush();
    // The operator gets the server's own words (stderr was logged as it came, a burst to a record,
    // within the rate limit; the tail is repeated here and kept for /status); agents only get `reason`.
    if (this.stopping === undefined)
      this.log.debug(`server session ended: ${reason.message}`, tail.length > 0 ? { stderrTail: tail.slice(-5) } : {});
    this.events.exit(reason);
  }

  private onStdoutEnd(): void {
    if (this.leaderExited || this.stopping !== undefined) return;
    // An exiting server closes stdout just before its exit event: give that a moment to arrive.
    const timer = setTimeout(() => {
      if (this.leaderExited || this.stopping !== undefined) return;
      this.report(
        new GatewayError(
          'MCPG_SERVER_UNAVAILABLE',
          `server "${this.config.name}" closed its stdout but kept running; it can no longer answer, so it is being stopped`,
          { server: this.config.name, detail: { reason: 'stdout closed' } },
        ),
      );
      void this.stop(this.timings);
    }, EOF_EXIT_WAIT_MS);
    timer.unref();
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
      // No such group: gone, or a launcher (transports/stdio/group-launch.ts) that has not made it yet and still runs.
      return !this.leaderExited;
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
        if (!this.leaderExited) this.child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  /** How long a stage that began at `start` with `ms` to wait may still take, given a hurry. */
  private graceLeft(ms: number, start: number, stage: 'stdin' | 'term' = 'term'): number {
    const hurried = this.hurried;
    if (hurried === undefined) return ms;
    if (stage === 'stdin') return 0;
    return Math.min(ms, Math.max(0, hurried.at - start) + hurried.graceMs);
  }

  private wake(): void {
    for (const waker of [...this.wakers]) waker();
  }

  /** Waits for the leader's exit, at most `ms` (less once hurried); true if it exited. */
  private async waitExit(ms: number, stage: 'stdin' | 'term'): Promise<boolean> {
    const start = Date.now();
    while (!this.leaderExited) {
      const left = start + this.graceLeft(ms, start, stage) - Date.now();
      if (left <= 0) break;
      await new Promise<void>((resolve) => {
        // Not unref'd: during shutdown these timers are what keeps the process alive until the group is gone.
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          wakers.delete(done);
          resolve();
        }
        const wakers = this.wakers;
        wakers.add(done);
        void this.leaderGone.then(done);
      });
    }
    return this.leaderExited;
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
