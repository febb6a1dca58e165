// Resumable SSE streams towards agents (MCP 2025-11-25, "Resumability and Redelivery"; SEP-1699
// SSE polling). Every event mcpgate writes on an agent's SSE stream (a POST upgraded to SSE, or the
// session's GET stream) carries an id `<stream key>.<seq>` and is kept in that stream's replay log,
// so an agent whose connection was cut resumes with GET + `Last-Event-ID` and gets exactly what it
// missed on that stream, then the stream goes on live. The key is random (96 bits) and looked up
// only among the session's own streams: an id from another session is unknown here, never a way in.

// Bounded three ways: per stream (`maxStreamBytes`, oldest events dropped first), by age
// (`maxAgeMs`), and in total over every session (`maxTotalBytes`, the least recently written streams
// lose their oldest events first). A dropped event is released at once (its slot cleared), so what
// the bounds count is what the heap holds: a GET stream's log, which lives as long as its session,
// never keeps dropped frames reachable. A session keeps at most `maxStreamsPerSession` logs. An agent
// whose `Last-Event-ID` points before what is still kept cannot resume without a gap: it is refused
// like an unknown id, never given a replay that silently skips events.
// The bounds are the command line's `--replay-buffer` (per stream), `--replay-age` and
// `--replay-total`; a session keeps at most 64 streams. An id that cannot be resumed is refused with
// 400 `MCPG_EVENT_ID_UNKNOWN`, not 404: the session itself is fine. The channel (http/channel.ts
// `HttpChannel`) primes each stream, keeps a cut one, and `resume` answers a GET with `Last-Event-ID`.

import { randomBytes } from 'node:crypto';

export interface ReplayLimits {
  /** Bytes of events kept for one stream (`--replay-buffer`). */
  maxStreamBytes: number;
  /** How long an event is kept for a resumption, in ms (`--replay-age`). */
  maxAgeMs: number;
  /** Bytes of events kept for every session together (`--replay-total`). */
  maxTotalBytes: number;
  /** Streams (logs) one session keeps; the oldest finished ones go first. */
  maxStreamsPerSession: number;
}

const REPLAY_DEFAULTS: ReplayLimits = {
  maxStreamBytes: 1024 * 1024,
  maxAgeMs: 5 * 60_000,
  maxTotalBytes: 64 * 1024 * 1024,
  maxStreamsPerSession: 64,
};

/** The reconnection delay mcpgate asks for (`retry:`) on the streams it primes or ends itself. */
export const SSE_RETRY_MS = 1000;

/** What the metrics count. */
export interface ReplayCounters {
  buffered(events: number): void;
  replayed(events: number): void;
  dropped(events: number): void;
  /** A GET with `Last-Event-ID`: resumed, or refused (unknown, another session's, expired). */
  resumption(outcome: 'resumed' | 'refused'): void;
}

const NO_COUNTERS: ReplayCounters = { buffered() {}, replayed() {}, dropped() {}, resumption() {} };

interface Entry {
  readonly seq: number;
  readonly frame: string;
  readonly at: number;
}

/** Compact the entries array once this many dropped (cleared) slots lead it. */
const COMPACT_AT = 64;

/** One stream's events, in order. */
export class StreamLog {
  /** Where the log lives: its session's map (removed from it when discarded). */
  constructor(
    readonly key: string,
    readonly kind: 'post' | 'get',
    readonly owner: Map<string, StreamLog>,
  ) {}
  /** Kept events from `head` on; the slots before it are cleared (undefined) until compacted. */
  entries: (Entry | undefined)[] = [];
  /** Index of the first live entry in `entries` (dropping from the front is O(1)). */
  head = 0;
  bytes = 0;
  next = 1;
  /** Nothing more will be written (the POST's response is in the log). */
  complete = false;
  discarded = false;
  lastWrite = performance.now();

  /** The priming id (`<key>.0`): resuming from it replays everything kept. */
  get primingId(): string {
    return `${this.key}.0`;
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  /** The seq of the oldest event still kept (or the next one when none is). */
  get firstKept(): number {
    return this.entries[this.head]?.seq ?? this.next;
  }
}

/** A parsed `Last-Event-ID`, or undefined when it is not one of mcpgate's. */
export function parseEventId(text: string): { key: string; seq: number } | undefined {
  const match = /^([A-Za-z0-9_-]{16})\.(0|[1-9][0-9]{0,14})$/.exec(text);
  if (match === null) return undefined;
  return { key: match[1]!, seq: Number(match[2]) };
}

/** The replay logs of every session of one front, under one total bound. */
export class ReplayStore {
  readonly limits: ReplayLimits;
  private totalBytes = 0;
  /** Logs holding events, least recently written first (re-inserted on every write). */
  private readonly byAge = new Set<StreamLog>();

  constructor(
    limits: Partial<ReplayLimits> = {},
    private readonly counters: ReplayCounters = NO_COUNTERS,
  ) {
    this.limits = { ...REPLAY_DEFAULTS, ...limits };
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** A new log in `owner` (a session's map); the session's oldest logs go past its cap. */
  open(owner: Map<string, StreamLog>, kind: 'post' | 'get'): StreamLog {
    while (owner.size >= this.limits.maxStreamsPerSession) {
      let oldest: StreamLog | undefined;
      for (const log of owner.values()) {
        if (log.complete) {
          oldest = log;
          break;
        }
        oldest ??= log;
      }
      this.discard(oldest!);
    }
    const log = new StreamLog(randomBytes(12).toString('base64url'), kind, owner);
    owner.set(log.key, log);
    return log;
  }

  /** Frames `data` with the log's next id (via `frame`), keeps it, and returns the frame to write. */
  append(log: StreamLog, frame: (id: string) => string): string {
    const seq = log.next++;
    const text = frame(`${log.key}.${seq}`);
    if (log.discarded) return text;
    const now = performance.now();
    log.entries.push({ seq, frame: text, at: now });
    log.bytes += text.length;
    log.lastWrite = now;
    this.totalBytes += text.length;
    this.byAge.delete(log);
    this.byAge.add(log);
    this.counters.buffered(1);
    this.expire(log, now);
    while (log.bytes > this.limits.maxStreamBytes && log.size > 0) this.dropOldest(log);
    if (this.totalBytes > this.limits.maxTotalBytes) {
      for (const other of this.byAge) {
        while (other.size > 0 && this.totalBytes > this.limits.maxTotalBytes) this.dropOldest(other);
        if (this.totalBytes <= this.limits.maxTotalBytes) break;
      }
    }
    return text;
  }

  /**
   * The frames after `seq` on `log`, or undefined when they cannot all be given (some were dropped,
   * or `seq` was never sent).
   */
  after(log: StreamLog, seq: number): string[] | undefined {
    this.expire(log, performance.now());
    if (seq >= log.next || seq + 1 < log.firstKept) return undefined;
    const out: string[] = [];
    for (let i = log.head; i < log.entries.length; i++) {
      const entry = log.entries[i]!;
      if (entry.seq > seq) out.push(entry.frame);
    }
    this.counters.replayed(out.length);
    return out;
  }

  /** Counts a resumption (the front decides its outcome). */
  resumption(outcome: 'resumed' | 'refused'): void {
    this.counters.resumption(outcome);
  }

  /** Forgets a log and frees its events (counted as dropped: no resumption can get them now). */
  discard(log: StreamLog): void {
    if (log.discarded) return;
    log.discarded = true;
    if (log.size > 0) this.counters.dropped(log.size);
    this.totalBytes -= log.bytes;
    log.entries = [];
    log.head = 0;
    log.bytes = 0;
    this.byAge.delete(log);
    if (log.owner.get(log.key) === log) log.owner.delete(log.key);
  }

  /** Drops expired events everywhere, and finished logs left empty (the front's sweep). */
  sweep(): void {
    const now = performance.now();
    for (const log of [...this.byAge]) this.expire(log, now);
  }

  private expire(log: StreamLog, now: number): void {
    const cutoff = now - this.limits.maxAgeMs;
    while (log.size > 0 && log.entries[log.head]!.at < cutoff) this.dropOldest(log);
    if (log.size === 0 && log.complete) this.discard(log);
  }

  private dropOldest(log: StreamLog): void {
    const entry = log.entries[log.head]!;
    // Cleared, not only skipped: the frame (up to a whole large message) is garbage from now on.
    log.entries[log.head] = undefined;
    log.head += 1;
    log.bytes -= entry.frame.length;
    this.totalBytes -= entry.frame.length;
    this.counters.dropped(1);
    if (log.size === 0) {
      log.entries = [];
      log.head = 0;
      this.byAge.delete(log);
      if (log.complete) this.discard(log);
    } else if (log.head >= COMPACT_AT && log.head * 2 > log.entries.length) {
      log.entries = log.entries.slice(log.head);
      log.head = 0;
    }
  }
}
