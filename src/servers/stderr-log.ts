// A stdio server's stderr: read as lines, each cut to a few KB, the last few kept for the operator
// (the exit log line and /status), and sent to the log through a token bucket so a server that floods
// stderr cannot flood the gateway's log (audit #4, #8). Nothing here reaches an agent: what a server
// prints (an API key in a stack trace) is for the operator only.

import type { Readable } from 'node:stream';
import type { Logger } from '../observability/logger.js';

export interface StderrLimits {
  /** Bytes kept of one line; the rest is dropped up to its newline. */
  maxLineBytes: number;
  /** Lines kept for the exit message and /status. */
  tailLines: number;
  /** Log lines a burst may spend at once. */
  burst: number;
  /** Log lines per second after the burst. */
  perSecond: number;
}

export const DEFAULT_STDERR_LIMITS: StderrLimits = { maxLineBytes: 2048, tailLines: 20, burst: 200, perSecond: 20 };

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

  constructor(stream: Readable, private readonly log: Logger, private readonly limits: StderrLimits = DEFAULT_STDERR_LIMITS, private readonly now: () => number = Date.now) {
    this.tokens = limits.burst;
    this.refilledAt = now();
    stream.on('data', (chunk: Buffer | string) => this.onData(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    stream.once('end', () => {
      if (this.kept > 0 || this.dropped > 0) this.finishLine();
      this.flushSuppressed();
    });
  }

  /** The last lines (each at most maxLineBytes, plus a note of what was cut), oldest first. */
  get lines(): readonly string[] {
    return this.tail;
  }

  /** Logs "N lines suppressed" if the bucket dropped any since the last report. */
  flushSuppressed(): void {
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
    if (this.tail.length > this.limits.tailLines) this.tail.shift();
    if (this.take()) {
      // At most one "suppressed" line per 5 s, so a steady flood costs the log two lines per token at worst.
      if (this.now() - this.reportedAt >= 5000) this.flushSuppressed();
      this.log.info('server stderr', { stderr: line });
    } else {
      this.suppressed += 1;
    }
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
