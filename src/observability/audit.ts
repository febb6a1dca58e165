// The audit trail: one JSON line per decision — who called what, when, and whether it was
// allowed — and one per approval (of a held tool, or of one call the rules hold for a person). Off unless configured (`--audit FILE`, or `--audit -` for stderr).
// Argument values are never written unless asked (`--audit-arguments`); by default only their names.
//
// Bounded: a file is rotated to FILE.1 when it passes its size limit (one old file kept), or reopened
// on SIGHUP so an external rotator (logrotate's `create` mode) can move it away; lines that would
// queue past MAX_PENDING_BYTES while the disk is slow are dropped and counted, never buffered.

import { createWriteStream, fstatSync, openSync, renameSync, type WriteStream } from 'node:fs';

/** `limited`: refused for being over a limit of the rules' `limits` (the record's `limit` names it). */
type AuditDecision = 'allowed' | 'denied' | 'held' | 'limited';

/** One decision on an agent's request (tools/call, resources/read, prompts/get). */
export interface AuditCall {
  event: 'call';
  agent: string;
  session: string;
  method: string;
  server?: string;
  /** The public name the agent used (a tool, a prompt) or the resource URI. */
  tool?: string;
  resource?: string;
  prompt?: string;
  decision: AuditDecision;
  /** ok: the server answered; error: it answered an error (or isError); failed: mcpgate refused or the call failed. */
  outcome: 'ok' | 'error' | 'failed';
  durationMs?: number;
  /** The MCPG_ code (or the server's JSON-RPC code) of an error. */
  code?: string | number;
  /** The arguments' names (values only with --audit-arguments). */
  argumentNames?: string[];
  arguments?: unknown;
  /** A `limited` call: the limit it was over (its JSON path in the rules), its kind and the wait it was told. */
  limit?: { rule: string; kind: 'calls' | 'in_flight'; retryAfterMs: number };
  /** The code-mode run the call was made from (its `run` line's id); absent: a direct call. */
  run?: string;
}

/**
 * `run`: one code-mode program (run_code) ended. `sha256` is the digest of the program's whole
 * text, `program` that text cut at a bound (`programTruncated`); `calls` the inner calls it made
 * (each has its own `call` line naming this run), `code` the `MCPG_*` code it failed with.
 */
interface AuditRun {
  event: 'run';
  run: string;
  agent: string;
  session: string;
  sha256: string;
  program: string;
  programTruncated?: boolean;
  outcome: 'ok' | 'failed';
  durationMs: number;
  calls: number;
  code?: string;
}

/**
 * `approval`: an admin approved a held tool in the console (`by` names the admin). `released`: the
 * gateway saw a held tool approved in the pin store — by `mcpgate approve`, the console, or another
 * gateway sharing the state directory — and serves it again (`by` is the pin's: operator or first-use).
 */
interface AuditApproval {
  event: 'approval' | 'released';
  server: string;
  tool: string;
  digest: string;
  by: string;
}

/**
 * `call-approval`: a call the rules' `approve` holds for a person's decision — `requested` (it
 * waits), then `approved` or `denied` (`by` the admin, with the reason given), `expired` (no
 * decision in time) or `cancelled` (the agent cancelled or went away). `approval` is the pending
 * call's id; `digest` the sha256 of its agent, server, tool and arguments, which the approval binds to.
 */
interface AuditCallApproval {
  event: 'call-approval';
  approval: string;
  outcome: 'requested' | 'approved' | 'denied' | 'expired' | 'cancelled';
  agent: string;
  session: string;
  server: string;
  tool: string;
  digest: string;
  by?: string;
  reason?: string;
}

/**
 * `guard`: the built-in guards found something in a call's arguments, a server's result or its
 * error (policy/guard-checks.ts): which detectors, where (JSON paths) and what was done — never the
 * value found.
 */
interface AuditGuard {
  event: 'guard';
  agent: string;
  session: string;
  method: string;
  server: string;
  /** The tool's or prompt's public name, or the resource's URI. */
  name: string;
  direction: 'arguments' | 'result' | 'error';
  outcome: 'blocked' | 'redacted' | 'audited' | 'marked' | 'flagged';
  found: { detector: string; at: string; action: string }[];
  /** Findings in all (`found` lists at most 32). */
  count: number;
  /** The prompt-injection signs seen in a result (guards/injection.ts ids). */
  injection?: string[];
}

/**
 * `interceptor`: interceptor servers judged one message of a call (policy/interceptors.ts): each
 * interceptor's verdict and the chain's decision — never the payload.
 */
interface AuditInterceptor {
  event: 'interceptor';
  agent: string;
  session: string;
  /** The lifecycle event: `tools/call`, `resources/read`, `prompts/get`. */
  method: string;
  server: string;
  name: string;
  phase: 'request' | 'response';
  decision: 'allow' | 'deny';
  /** The payload the agent or the server gets was changed by an active mutator. */
  mutated: boolean;
  verdicts: {
    interceptor: string;
    /** The interceptor server's name in `.mcp.json`. */
    host: string;
    type: string;
    mode: 'active' | 'audit';
    outcome: string;
    severity?: string;
    reason?: string;
    ms: number;
  }[];
}

type AuditRecord = AuditCall | AuditApproval | AuditCallApproval | AuditRun | AuditGuard | AuditInterceptor;

export interface AuditOptions {
  /** A file path, or '-' for stderr. */
  target: string;
  /** Rotate to FILE.1 past this size (default 10 MiB). */
  maxBytes?: number;
  /** Write argument values (default: names only). */
  includeArguments?: boolean;
  /** Told once when lines start being dropped or the file cannot be written. */
  onProblem?: (message: string, error?: unknown) => void;
}

const DEFAULT_AUDIT_MAX_BYTES = 10 * 1024 * 1024;
/** What may wait for a slow disk before lines are dropped. */
const MAX_PENDING_BYTES = 1024 * 1024;
/** Argument values past this many characters of JSON are cut (with --audit-arguments). */
const MAX_ARGUMENTS_CHARS = 4096;

export class AuditLog {
  readonly includeArguments: boolean;
  private readonly maxBytes: number;
  private stream: WriteStream | undefined;
  private bytes = 0;
  private dropped = 0;
  private closed = false;

  constructor(private readonly options: AuditOptions) {
    this.includeArguments = options.includeArguments ?? false;
    this.maxBytes = options.maxBytes ?? DEFAULT_AUDIT_MAX_BYTES;
    if (options.target !== '-') this.open();
  }

  /** The arguments part of a call record: names always, values only when configured (and bounded). */
  argumentsOf(args: unknown): Pick<AuditCall, 'argumentNames' | 'arguments'> {
    if (typeof args !== 'object' || args === null) return {};
    const names = Object.keys(args);
    if (!this.includeArguments) return { argumentNames: names };
    const text = JSON.stringify(args);
    return { argumentNames: names, arguments: text.length <= MAX_ARGUMENTS_CHARS ? args : `${text.slice(0, MAX_ARGUMENTS_CHARS)}… (cut)` };
  }

  record(record: AuditRecord): void {
    if (this.closed) return;
    const line = JSON.stringify({ time: new Date().toISOString(), ...record }) + '\n';
    if (this.options.target === '-') {
      try {
        process.stderr.write(line);
      } catch {
        // stderr closed by the parent: nothing more can be said.
      }
      return;
    }
    const stream = this.stream;
    if (stream === undefined) return;
    if (stream.writableLength > MAX_PENDING_BYTES) {
      if (this.dropped++ === 0)
        this.options.onProblem?.(`audit: the disk is not keeping up; dropping lines until it does (${this.options.target})`);
      return;
    }
    if (this.dropped > 0) {
      const note = JSON.stringify({ time: new Date().toISOString(), event: 'dropped', lines: this.dropped }) + '\n';
      this.dropped = 0;
      this.write(stream, note);
    }
    this.write(stream, line);
    if (this.bytes >= this.maxBytes) this.rotate();
  }

  /** SIGHUP: an external rotator moved the file; start a new one at the configured path. */
  reopen(): void {
    if (this.closed || this.options.target === '-') return;
    this.stream?.end();
    this.open();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    const stream = this.stream;
    this.stream = undefined;
    if (stream === undefined || stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => stream.end(() => resolve()));
  }

  private write(stream: WriteStream, line: string): void {
    this.bytes += Buffer.byteLength(line);
    stream.write(line);
  }

  private rotate(): void {
    const path = this.options.target;
    this.stream?.end();
    try {
      renameSync(path, `${path}.1`);
    } catch (err) {
      this.options.onProblem?.(`audit: could not rotate ${path}`, err);
    }
    this.open();
  }

  private open(): void {
    const path = this.options.target;
    // Opened now, so the file exists (and can be rotated) before the first write lands.
    let fd: number;
    try {
      fd = openSync(path, 'a', 0o600);
      this.bytes = fstatSync(fd).size;
    } catch (err) {
      this.stream = undefined;
      this.options.onProblem?.(`audit: cannot open ${path}`, err);
      return;
    }
    const stream = createWriteStream(path, { fd });
    stream.on('error', (err) => {
      this.options.onProblem?.(`audit: cannot write ${path}`, err);
      if (this.stream === stream) this.stream = undefined;
    });
    this.stream = stream;
  }
}
