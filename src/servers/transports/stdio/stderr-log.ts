// A stdio server's stderr: read as lines, each cut to a few KB, the last few kept for the operator
// (the exit log line and /status), and sent to the log through a token bucket (one token a line) so a
// server that floods stderr cannot flood the gateway's log. Lines that come together (a traceback, a
// start-up banner) are one log record: a burst ends after a short quiet, or when it reaches its bound
// in lines or bytes. A burst is logged at debug (servers chat on stderr; the default level hides it,
// the tail stays in /status), at warn when one of its lines looks like an error (a traceback, `Error:`,
// `ERROR`, `fatal`, `panic:`). Nothing here reaches an agent: what a server prints (an API key in a
// stack trace) is for the operator only.
// The numbers: lines cut to 2 KiB, a tail of 20 lines.

import type { Readable } from 'node:stream';
import type { Logger } from '../../../observability/logger.js';

interface StderrLimits {
  /** Bytes kept of one line; the rest is dropped up to its newline. */
  maxLineBytes: number;
  /** Lines kept for the exit message and /status. */
  tailLines: number;
  /** Log lines a burst may spend at once. */
  burst: number;
  /** Log lines per second after the burst. */
  perSecond: number;
  /** A record ends after this long without a new line (ms)… */
  quietMs: number;
  /** …or this long after its first line (ms), or at this many lines or bytes. */
  maxRecordMs: number;
  maxRecordLines: number;
  maxRecordBytes: number;
}

const DEFAULT_STDERR_LIMITS: StderrLimits = {
  maxLineBytes: 2048,
  tailLines: 20,
  burst: 200,
  perSecond: 20,
  quietMs: 100,
  maxRecordMs: 1000,
  maxRecordLines: 50,
  maxRecordBytes: 16 * 1024,
};

/** A line that says something went wrong (its record is logged at warn): how it starts, any case… */
const ERROR_START = /^\s*(Traceback \(most recent call last\)|panic:|(fatal|error|critical|exception)\b)/i;
/** …or a level in capitals, or an exception's name (`TypeError:`, `ValueError:`) anywhere. */
const ERROR_MARK = /\b(ERROR|CRITICAL|FATAL)\b|\b[\w.]*(Error|Exception):/;

const LF = 0x0a;
const CR = 0x0d;

export class StderrLog {
  private readonly tail: string[] = [];
  /** Bytes of the current (unfinished) line kept so far; never more than maxLineBytes. */
  private parts: Buffer[] = [];
  private kept = 0;
  private dropped = 0;
  private tokens: number;
  private refilledAt: number;
  private suppressed = 0;
  private reportedAt = 0;
  /** The record being gathered: its lines, their bytes, when it started, whether one looks like an error. */
  private record: string[] = [];
  private recordBytes = 0;
  private recordStarted = 0;
  private recordWarns = false;
  private quiet: NodeJS.Timeout | undefined;

  constructor(
    stream: Readable,
    private readonly log: Logger,
    private readonly limits: StderrLimits = DEFAULT_STDERR_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = limits.burst;
    this.refilledAt = now();
    stream.on('data', (chunk: Buffer | string) => this.onData(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    stream.once('end', () => {
      if (this.kept > 0 || this.dropped > 0) this.finishLine();
      this.flush();
    });
  }

  /** Sees every whole line as it is kept (a sandboxed server's lines are read for denials). */
  onLine: ((line: string) => void) | undefined;

  /** The last lines (each at most maxLineBytes, plus a note of what was cut), oldest first. */
  get lines(): readonly string[] {
    return this.tail;
  }

  /** Logs the record being gathered, and how many lines the bucket dropped (the server exits, or its stream ends). */
  flush(): void {
    this.logRecord();
    this.flushSuppressed();
  }

  /** Logs "N lines suppressed" if the bucket dropped any since the last report. */
  private flushSuppressed(): void {
    if (this.suppressed === 0) return;
    this.log.warn('server stderr lines suppressed (rate limit)', { suppressed: this.suppressed });
    this.suppressed = 0;
    this.reportedAt = this.now();
  }

  private onData(buf: Buffer): void {
    let start = 0;
    let nl = buf.indexOf(LF);
    while (nl !== -1) {
      this.keep(buf, start, nl);
      this.finishLine();
      start = nl + 1;
      nl = buf.indexOf(LF, start);
    }
    if (start < buf.length) this.keep(buf, start, buf.length);
  }

  /** Keeps what fits of buf[start, end) in the current line; counts the rest as dropped. */
  private keep(buf: Buffer, start: number, end: number): void {
    const room = this.limits.maxLineBytes - this.kept;
    const take = Math.min(room, end - start);
    if (take > 0) {
      // A copy: a subarray would pin the whole (possibly large) chunk in memory.
      this.parts.push(Buffer.from(buf.subarray(start, start + take)));
      this.kept += take;
    }
    this.dropped += end - start - Math.max(0, take);
  }

  private finishLine(): void {
    let bytes = Buffer.concat(this.parts, this.kept);
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR && this.dropped === 0) bytes = bytes.subarray(0, -1);
    // A cut may split a UTF-8 sequence; toString replaces the partial character.
    let line = bytes.toString('utf8');
    if (this.dropped > 0) line += ` …[${this.dropped} more bytes cut]`;
    this.parts = [];
    this.kept = 0;
    this.dropped = 0;
    if (line === '') return;
    this.tail.push(line);
    this.onLine?.(line);
    if (this.tail.length > this.limits.tailLines) this.tail.shift();
    if (this.take()) {
      // At most one "suppressed" line per 5 s, so a steady flood costs the log two lines per token at worst.
      if (this.now() - this.reportedAt >= 5000) this.flushSuppressed();
      this.gather(line);
    } else {
      this.suppressed += 1;
    }
  }

  /** Adds a line to the record; logs the record when it is full, else once the stream is quiet. */
  private gather(line: string): void {
    const bytes = Buffer.byteLength(line) + 1;
    if (this.record.length > 0 && this.recordBytes + bytes > this.limits.maxRecordBytes) this.logRecord();
    if (this.record.length === 0) this.recordStarted = this.now();
    this.record.push(line);
    this.recordBytes += bytes;
    if (ERROR_START.test(line) || ERROR_MARK.test(line)) this.recordWarns = true;
    clearTimeout(this.quiet);
    this.quiet = undefined;
    const left = this.limits.maxRecordMs - (this.now() - this.recordStarted);
    if (this.record.length >= this.limits.maxRecordLines || left <= 0) return this.logRecord();
    this.quiet = setTimeout(() => this.logRecord(), Math.min(this.limits.quietMs, left));
    this.quiet.unref();
  }

  private logRecord(): void {
    clearTimeout(this.quiet);
    this.quiet = undefined;
    if (this.record.length === 0) return;
    const fields = { stderr: this.record.join('\n'), lines: this.record.length };
    if (this.recordWarns) this.log.warn('server stderr', fields);
    else this.log.debug('server stderr', fields);
    this.record = [];
    this.recordBytes = 0;
    this.recordWarns = false;
  }

  private take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.limits.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.limits.perSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
