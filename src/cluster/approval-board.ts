// With `--redis`: the calls waiting for a person's approval, and the admins' decisions on them,
// shared by every worker, so an admin on worker B decides a call waiting on worker A. It is the
// policy room's `ApprovalBoard` (policy/approval-desk.ts), handed to the approval desk at its
// construction by the composition root. Only the worker holding a call takes its decision (once,
// and only when its signature holds); with Redis down a call that needs approval cannot be posted
// and ends as expired, so nothing runs unapproved. Its keys, wake-ups and checks: the room's README.

import type { Redis } from 'ioredis';
import { redisConnection } from './redis-connection.js';
import type { Logger } from '../observability/logger.js';
import type { ApprovalBoard, CallDecision, PendingCall } from '../policy/approval-desk.js';
import { signRecord, verifyRecord, type RecordKind } from './signing.js';

const PREFIX = 'mcpgate:';
const INDEX = `${PREFIX}approvals`;
const DECIDED = `${PREFIX}approvals:decided`;
const callKey = (id: string): string => `${PREFIX}approval:${id}`;
const decisionKey = (id: string): string => `${PREFIX}approval:${id}:decision`;
/** Pending calls listed at most (the gateway holds at most 1000 per worker). */
const MAX_LISTED = 1000;
/** Ids read from the index per round while listing; each is verified before it counts. */
const LIST_CHUNK = 250;
/** Ids one listing reads at most, so that an index stuffed by a Redis writer costs bounded work. */
const MAX_SCANNED = 20_000;
/** Records outlive their call's expiry by this much, so a late decision is refused as expired, not unknown. */
const GRACE_MS = 5000;
const POLL_MS = 2000;
/** A wake-up longer than this is not mcpgate's. */
const MAX_MESSAGE_BYTES = 1024;

export interface ApprovalBoardOptions {
  url: string;
  secret: string;
  workerId: string;
  /** A record read from Redis failed its signature: treated as absent. */
  onRefused: (kind: RecordKind, key: string) => void;
  log: Logger;
}

export class RedisApprovalBoard implements ApprovalBoard {
  private readonly redis: Redis;
  private readonly sub: Redis;
  /** The calls this worker posted and still holds: only it takes their decisions. */
  private readonly mine = new Set<string>();
  private deliver: ((decision: CallDecision) => void) | undefined;
  private readonly poll: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly o: ApprovalBoardOptions) {
    this.redis = redisConnection(o.url);
    this.redis.on('error', (err: Error) => o.log.debug('redis error (approvals)', { error: err.message }));
    this.sub = redisConnection(o.url);
    this.sub.on('error', (err: Error) => o.log.debug('redis error (approval wake-ups)', { error: err.message }));
    // (Re)subscribed: a decision written meanwhile is taken now rather than at the next poll.
    this.sub.on(
      'ready',
      () =>
        void this.sub.subscribe(DECIDED).then(
          () => this.sweep(),
          (err: unknown) =>
            o.log.debug('could not subscribe to approval wake-ups', { error: err instanceof Error ? err.message : String(err) }),
        ),
    );
    this.sub.on('message', (channel: string, message: string) => {
      if (channel !== DECIDED || message.length > MAX_MESSAGE_BYTES || this.closed) return;
      let id: unknown;
      try {
        id = (JSON.parse(message) as { id?: unknown }).id;
      } catch {
        return;
      }
      if (typeof id === 'string' && this.mine.has(id)) void this.take(id);
    });
    this.poll = setInterval(() => void this.sweep(), POLL_MS);
    this.poll.unref();
  }

  async start(): Promise<void> {
    await this.redis.connect().catch(() => undefined);
    await this.sub.connect().catch(() => undefined);
  }

  async post(call: PendingCall): Promise<void> {
    const key = callKey(call.id);
    const fields = { call: JSON.stringify(call) };
    const ttl = Math.max(1, call.expiresAt - Date.now() + GRACE_MS);
    this.mine.add(call.id);
    try {
      await this.redis
        .multi()
        .hset(key, { ...fields, sig: signRecord(this.o.secret, 'approval', key, fields) })
        .pexpire(key, ttl)
        .zadd(INDEX, call.expiresAt, call.id)
        .exec();
    } catch (err) {
      this.mine.delete(call.id);
      throw err;
    }
  }

  async withdraw(id: string): Promise<void> {
    this.mine.delete(id);
    await this.redis.multi().del(callKey(id), decisionKey(id)).zrem(INDEX, id).exec();
  }

  /**
   * The verified pending calls, soonest to expire first. Verified while paging through the index:
   * ids a Redis writer added without the secret (records absent or unsigned) take no place among
   * the MAX_LISTED and are dropped from the index, so forged entries cannot hide real calls.
   */
  async list(): Promise<PendingCall[]> {
    const now = Date.now();
    await this.redis.zremrangebyscore(INDEX, '-inf', String(now));
    const calls: PendingCall[] = [];
    let start = 0;
    let scanned = 0;
    while (calls.length < MAX_LISTED && scanned < MAX_SCANNED) {
      const ids = await this.redis.zrange(INDEX, String(start), String(start + LIST_CHUNK - 1));
      if (ids.length === 0) break;
      const pipeline = this.redis.pipeline();
      for (const id of ids) pipeline.hgetall(callKey(id));
      const results = (await pipeline.exec()) ?? [];
      scanned += ids.length;
      const forged: string[] = [];
      ids.forEach((id, i) => {
        const call = this.verifiedCall(id, results[i]?.[1]);
        if (call === undefined) forged.push(id);
        else if (calls.length < MAX_LISTED) calls.push(call);
      });
      // What is dropped no longer shifts the positions after it: read on from where the kept ones end.
      if (forged.length > 0) await this.redis.zrem(INDEX, ...forged);
      start += ids.length - forged.length;
      if (ids.length < LIST_CHUNK) break;
    }
    return calls;
  }

  async find(id: string): Promise<PendingCall | undefined> {
    return this.verifiedCall(id, await this.redis.hgetall(callKey(id)));
  }

  async decide(decision: CallDecision, call: PendingCall): Promise<void> {
    const key = decisionKey(decision.id);
    const fields = { decision: JSON.stringify(decision) };
    const ttl = Math.max(1, call.expiresAt - Date.now() + GRACE_MS);
    await this.redis
      .multi()
      .hset(key, { ...fields, sig: signRecord(this.o.secret, 'decision', key, fields) })
      .pexpire(key, ttl)
      .exec();
    await this.redis.publish(DECIDED, JSON.stringify({ id: decision.id, worker: call.worker }));
  }

  subscribe(deliver: (decision: CallDecision) => void): void {
    this.deliver = deliver;
  }

  /** Takes (reads and deletes at once: one use) the decision on one of this worker's calls, if there is one. */
  private async take(id: string): Promise<void> {
    const key = decisionKey(id);
    let fields: unknown;
    try {
      const results = await this.redis.multi().hgetall(key).del(key).exec();
      fields = results?.[0]?.[1];
    } catch (err) {
      this.o.log.debug('could not read a decision from redis', { approval: id, error: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (!isFields(fields) || Object.keys(fields).length === 0) return;
    if (!verifyRecord(this.o.secret, 'decision', key, fields)) return this.o.onRefused('decision', key);
    let decision: CallDecision;
    try {
      decision = JSON.parse(fields.decision ?? '') as CallDecision;
    } catch {
      return this.o.onRefused('decision', key);
    }
    if (
      decision.id !== id ||
      typeof decision.approved !== 'boolean' ||
      typeof decision.digest !== 'string' ||
      typeof decision.by !== 'string' ||
      typeof decision.reason !== 'string'
    )
      return this.o.onRefused('decision', key);
    if (this.mine.has(id)) this.deliver?.(decision);
  }

  /** Every call this worker holds: a decision whose wake-up was missed is taken now. */
  private async sweep(): Promise<void> {
    if (this.closed || this.mine.size === 0 || this.redis.status !== 'ready') return;
    for (const id of [...this.mine]) await this.take(id);
  }

  private verifiedCall(id: string, fields: unknown): PendingCall | undefined {
    const key = callKey(id);
    if (!isFields(fields) || Object.keys(fields).length === 0) return undefined;
    if (!verifyRecord(this.o.secret, 'approval', key, fields)) {
      this.o.onRefused('approval', key);
      return undefined;
    }
    try {
      const call = JSON.parse(fields.call ?? '') as PendingCall;
      return call.id === id ? call : undefined;
    } catch {
      return undefined;
    }
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    clearInterval(this.poll);
    this.redis.disconnect();
    this.sub.disconnect();
    return Promise.resolve();
  }
}

function isFields(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}
