// What the workers of a cluster share through Redis: each worker's record (address,
// pid, sessions, last heartbeat) with a short TTL, and each agent session's record (its agent, the
// capabilities it declared, its owner) with a TTL of the idle timeout. A heartbeat renews both;
// a worker whose record has expired is dead, and its sessions may be adopted. The owner changes
// only by compare-and-set (OWNER_CAS), so two workers adopting one session at once agree on one.

// Redis down: commands fail at once (no offline queue) and callers serve locally; ioredis
// reconnects with backoff, and on reconnect this worker writes its record and its sessions again.
//
// Every record is signed with the cluster secret (signing.ts) and checked when read: one written
// by anyone else — a worker address pointing elsewhere, a session given to a worker that is not
// one — is treated as absent (`onRefused`). Nothing is agreed through Redis: the secret is the
// worker's own (--cluster-secret, or the host's key in the state directory).
// The numbers: a worker record (`mcpgate:worker:ID`) lives 3 s and the heartbeat writes it every
// second; a session record (`mcpgate:session:ID`) lives the idle timeout plus a minute. The
// compare-and-set rewrites the record whole, signed by the new owner. A refused record is counted
// (`mcpgate_cluster_records_refused_total`) and logged once per kind. The Redis settings are
// redis-connection.ts's; on `ready` this worker's records are written again.
//
// Nudges: a second connection subscribes to `mcpgate:nudge` (`{from, version}`, at most 1 KiB);
// `nudge()` publishes this worker's new configuration version, and the composition root re-reads the
// files of a worker whose version differs. Each heartbeat also reads the other workers' session counts
// (`elsewhere`), for `--max-sessions` across the cluster (`ClusterLink.sessionsElsewhere`).

import type { Redis } from 'ioredis';
import { redisConnection } from './redis-connection.js';
import type { Logger } from '../observability/logger.js';
import { MAX_SKEW_MS, signRecord, verifyRecord, type RecordKind } from './signing.js';

const PREFIX = 'mcpgate:';
const WORKERS = `${PREFIX}workers`;
/** Pub/sub channel: "re-read your configuration, I run this version" (`{from, version}`). */
const NUDGE = `${PREFIX}nudge`;
/** A nudge longer than this is not mcpgate's and is ignored. */
const MAX_NUDGE_BYTES = 1024;
const sessionKey = (id: string): string => `${PREFIX}session:${id}`;
const workerKey = (id: string): string => `${PREFIX}worker:${id}`;

/**
 * Gives the session to ARGV[2] if its owner is ARGV[1]: the record is rewritten whole (ARGV[3..],
 * field and value pairs, signed by the new owner); returns the owner after (false: no record).
 */
const OWNER_CAS = `local cur = redis.call('HGET', KEYS[1], 'owner')
if cur == false then return false end
if cur == ARGV[1] then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) return ARGV[2] end
return cur`;

export interface StoredSession {
  agent: string;
  capabilities: Record<string, unknown>;
  identified: boolean;
  owner: string;
}

export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  /** Where other workers forward to (http://HOST:PORT). */
  address: string;
  sessions: number;
  /** Milliseconds since the epoch of its last heartbeat. */
  heartbeat: number;
  /** The configuration version it runs (a digest of its .mcp.json, rules and pins), '' if unknown. */
  version: string;
}

interface DirectoryOptions {
  url: string;
  workerId: string;
  /** The cluster secret: signs this worker's records and checks the others'. */
  secret: string;
  /** A record read from Redis was not signed with the secret (or altered, or stale): treated as absent. */
  onRefused: (kind: RecordKind, key: string) => void;
  /** Where other workers forward to (http://HOST:PORT), known once the port is bound. */
  address: () => string;
  heartbeatMs: number;
  /** How long a session's record outlives its last renewal (the idle timeout and a margin). */
  sessionTtlMs: number;
  /** The sessions this worker holds, renewed at each heartbeat. */
  held: () => ReadonlyMap<string, StoredSession>;
  onState: (up: boolean) => void;
  /** The configuration version this worker runs, written in its record at each heartbeat. */
  version: () => string;
  /** Another worker asks every worker to re-read its configuration (it runs `version`). */
  onNudge: (from: string, version: string) => void;
  log: Logger;
}

export class Directory {
  private readonly redis: Redis;
  /** A second connection, in subscriber mode, for nudges (a subscribed connection runs no other command). */
  private readonly sub: Redis;
  private timer: NodeJS.Timeout | undefined;
  private up = false;
  private closed = false;
  /** Sessions the other live workers held at their last heartbeats, as read at this worker's last one. */
  elsewhere = 0;

  constructor(private readonly o: DirectoryOptions) {
    // Reconnecting forever (redis-connection.ts): the worker serves locally meanwhile.
    this.redis = redisConnection(o.url);
    // (Re)connected: write this worker's record and every session it holds (Redis may have restarted empty).
    this.redis.on('ready', () => {
      this.setUp(true);
      void this.beat(true);
    });
    this.redis.on('end', () => this.setUp(false));
    this.redis.on('close', () => this.setUp(false));
    // ioredis reports each failed attempt here; the state change is logged once in setUp.
    this.redis.on('error', (err: Error) => this.o.log.debug('redis error', { error: err.message }));
    this.sub = this.redis.duplicate();
    // (Re)connected: subscribe (again; subscribing twice is harmless). A nudge missed while down is
    // made up for by the file watch and the pins poll, which every worker runs anyway.
    this.sub.on(
      'ready',
      () =>
        void this.sub
          .subscribe(NUDGE)
          .catch((err: unknown) =>
            this.o.log.debug('could not subscribe to nudges', { error: err instanceof Error ? err.message : String(err) }),
          ),
    );
    this.sub.on('error', (err: Error) => this.o.log.debug('redis error (nudges)', { error: err.message }));
    this.sub.on('message', (channel: string, message: string) => {
      if (channel !== NUDGE || message.length > MAX_NUDGE_BYTES || this.closed) return;
      let nudge: unknown;
      try {
        nudge = JSON.parse(message);
      } catch {
        return;
      }
      const { from, version } = (nudge ?? {}) as { from?: unknown; version?: unknown };
      if (typeof from !== 'string' || typeof version !== 'string' || from === this.o.workerId) return;
      this.o.onNudge(from, version);
    });
  }

  /** Tells every other worker to re-read its configuration; this one runs `version` (fire and forget). */
  nudge(version: string): void {
    if (!this.up) return;
    this.redis
      .publish(NUDGE, JSON.stringify({ from: this.o.workerId, version }))
      .catch((err: unknown) =>
        this.o.log.debug('could not nudge the other workers', { error: err instanceof Error ? err.message : String(err) }),
      );
    // The new version shows in this worker's record now, not at the next heartbeat.
    void this.beat();
  }

  get isUp(): boolean {
    return this.up;
  }

  /** The command connection while Redis is up (for what else the workers share: sign-in-counts.ts). */
  get connection(): Redis | undefined {
    return this.up && !this.closed ? this.redis : undefined;
  }

  private setUp(up: boolean): void {
    if (up === this.up || this.closed) return;
    this.up = up;
    if (up) this.o.log.info('redis connected: this worker is part of the cluster', { worker: this.o.workerId });
    else this.o.log.warn('redis unreachable: serving sessions locally, reconnecting with backoff', { worker: this.o.workerId });
    this.o.onState(up);
  }

  /** Connects (waits up to the connect timeout; down is not an error) and starts the heartbeat. */
  async start(): Promise<void> {
    await this.redis.connect().catch((err: unknown) =>
      this.o.log.warn('redis not reachable at start; serving locally until it is', {
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    await this.sub.connect().catch(() => undefined);
    this.timer = setInterval(() => void this.beat(), this.o.heartbeatMs);
    this.timer.unref();
  }

  /**
   * Writes this worker's record and renews the TTL of every session it holds; `full` (after a
   * (re)connect) writes the sessions' records too. A plain beat never rewrites a record's owner, so
   * a session another worker took over stays with it.
   */
  private async beat(full = false): Promise<void> {
    if (!this.up || this.closed) return;
    const held = this.o.held();
    const ttl = Math.max(3 * this.o.heartbeatMs, 1000);
    const fields = {
      id: this.o.workerId,
      host: this.o.workerId.replace(/:\d+$/, ''),
      pid: String(process.pid),
      address: this.o.address(),
      sessions: String(held.size),
      heartbeat: String(Date.now()),
      version: this.o.version(),
    };
    const info = { ...fields, sig: signRecord(this.o.secret, 'worker', this.o.workerId, fields) };
    const multi = this.redis
      .multi()
      .hset(workerKey(this.o.workerId), info)
      .pexpire(workerKey(this.o.workerId), ttl)
      .sadd(WORKERS, this.o.workerId);
    for (const [id, s] of held) {
      if (full) multi.hset(sessionKey(id), this.encode(id, s));
      multi.pexpire(sessionKey(id), this.o.sessionTtlMs);
    }
    await multi
      .exec()
      .catch((err: unknown) => this.o.log.debug('heartbeat failed', { error: err instanceof Error ? err.message : String(err) }));
    // What the others hold, for the cluster-wide session limit (an expired record counts nothing).
    try {
      const others = (await this.redis.smembers(WORKERS)).filter((id) => id !== this.o.workerId).slice(0, 1000);
      const read = this.redis.pipeline();
      for (const id of others) read.hgetall(workerKey(id));
      let sum = 0;
      const answers = (await read.exec()) ?? [];
      others.forEach((id, i) => {
        const [err, value] = answers[i] ?? [null, undefined];
        if (err === null && value !== null && typeof value === 'object')
          sum += this.toWorker(id, value as Record<string, string>)?.sessions ?? 0;
      });
      this.elsewhere = sum;
    } catch (err) {
      this.o.log.debug("could not count the other workers' sessions", { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** A session's record, or undefined when Redis has none (unknown or expired). Throws when Redis is down. */
  async session(id: string): Promise<StoredSession | undefined> {
    const h = await this.redis.hgetall(sessionKey(id));
    if (h.agent === undefined || h.owner === undefined) return undefined;
    if (!verifyRecord(this.o.secret, 'session', id, h)) {
      this.o.onRefused('session', id);
      return undefined;
    }
    let capabilities: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(h.capabilities ?? '{}');
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) capabilities = parsed as Record<string, unknown>;
    } catch {
      // signed, so written by a worker: unreachable unless that worker wrote bad JSON
    }
    return { agent: h.agent, owner: h.owner, identified: h.identified === '1', capabilities };
  }

  /** Records a session this worker now holds (fire and forget: Redis down is not an error). */
  put(id: string, s: StoredSession): void {
    if (!this.up) return;
    this.redis
      .multi()
      .hset(sessionKey(id), this.encode(id, s))
      .pexpire(sessionKey(id), this.o.sessionTtlMs)
      .exec()
      .catch((err: unknown) => this.o.log.debug('could not record a session', { error: err instanceof Error ? err.message : String(err) }));
  }

  /** Takes the session `s` over from its owner; resolves with its owner after (this worker if it won). */
  async takeOver(id: string, s: StoredSession): Promise<string | undefined> {
    const fields = Object.entries(this.encode(id, { ...s, owner: this.o.workerId })).flat();
    const owner = await this.redis.eval(OWNER_CAS, 1, sessionKey(id), s.owner, this.o.workerId, ...fields);
    return typeof owner === 'string' ? owner : undefined;
  }

  /** Forgets a session that ended here, unless another worker has taken it over since. */
  drop(id: string): void {
    if (!this.up) return;
    this.redis
      .eval(
        `if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1`,
        1,
        sessionKey(id),
        this.o.workerId,
      )
      .catch((err: unknown) => this.o.log.debug('could not forget a session', { error: err instanceof Error ? err.message : String(err) }));
  }

  /** A live worker's record, or undefined when its heartbeat has expired. */
  async worker(id: string): Promise<WorkerInfo | undefined> {
    const h = await this.redis.hgetall(workerKey(id));
    return this.toWorker(id, h);
  }

  /** Every live worker (one whose heartbeat has not expired); dead ones are forgotten on the way. */
  async workers(): Promise<WorkerInfo[]> {
    const ids = await this.redis.smembers(WORKERS);
    const out: WorkerInfo[] = [];
    for (const id of ids.slice(0, 1000)) {
      const w = this.toWorker(id, await this.redis.hgetall(workerKey(id)));
      if (w !== undefined) out.push(w);
      else await this.redis.srem(WORKERS, id);
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Stops the heartbeat, removes this worker's record and disconnects. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    if (this.up) {
      await this.redis
        .multi()
        .del(workerKey(this.o.workerId))
        .srem(WORKERS, this.o.workerId)
        .exec()
        .catch(() => undefined);
    }
    this.closed = true;
    this.up = false;
    this.redis.disconnect();
    this.sub.disconnect();
  }

  /** A session's record as stored, signed under its id. */
  private encode(id: string, s: StoredSession): Record<string, string> {
    const fields = { agent: s.agent, owner: s.owner, identified: s.identified ? '1' : '0', capabilities: JSON.stringify(s.capabilities) };
    return { ...fields, sig: signRecord(this.o.secret, 'session', id, fields) };
  }

  /**
   * Worker `id`'s record if it is one (signed under that id) and fresh: a signed record kept or put
   * back past its TTL (its heartbeat older than the TTL and the clock skew allowed) is stale.
   */
  private toWorker(id: string, h: Record<string, string>): WorkerInfo | undefined {
    if (h.id === undefined || h.address === undefined) return undefined;
    const heartbeat = Number(h.heartbeat);
    if (h.id !== id || !verifyRecord(this.o.secret, 'worker', id, h) || !(Date.now() - heartbeat <= 3 * this.o.heartbeatMs + MAX_SKEW_MS)) {
      this.o.onRefused('worker', id);
      return undefined;
    }
    return {
      id: h.id,
      host: h.host ?? '',
      pid: Number(h.pid),
      address: h.address,
      sessions: Number(h.sessions) || 0,
      heartbeat,
      version: h.version ?? '',
    };
  }
}
