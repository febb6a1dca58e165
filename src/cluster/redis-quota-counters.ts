// The counters of the rules' limits shared by every worker of a cluster, in Redis: the policy room's
// `SharedQuotaCounters` (policy/quota-counters.ts), handed to the quotas at their construction by the
// composition root. A check counts one call against all its limits at once (counted only if all
// pass); besides it, a peek (the same check counting nothing), a release and a read for the status.
// Calls in flight of a worker that dies are released within seconds. It has its own Redis connection
// with the directory's settings (redis-connection.ts) and is owned by `Cluster` (`quotas`). How the
// counters are kept in Redis, and why by two Lua scripts of our own: the room's README.

import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisConnection } from './redis-connection.js';
import type { Logger } from '../observability/logger.js';
import type { CounterAnswer, CounterAsk, CounterReading, ReadWindow, SharedQuotaCounters } from '../policy/quota-counters.js';
import { workerId } from './worker-id.js';

const PREFIX = 'mcpgate:quota:';
const LEASE_PREFIX = `${PREFIX}lease:`;
const LEASE_MS = 3000;
const RENEW_MS = 1000;
/** A calls-in-flight hash outlives its last write by this long (its fields are kept right by leases). */
const FLIGHT_TTL_MS = 86_400_000;
/** Counters this worker remembers touching, to write them again after Redis comes back. */
const MAX_TOUCHED = 10_000;

/**
 * KEYS: the windows' hashes, then the in-flight hashes. ARGV: number of windows, this worker's
 * lease id, the lease key prefix, the lease TTL, then (limit, window ms) per window, then the limit
 * per in-flight counter, then `take` or `peek` (check only, count nothing). Returns {0} (counted), {1, i, ms} (window i is full for ms more), or
 * {2, j, 0} (in-flight counter j is full).
 */
const TAKE = `local nw = tonumber(ARGV[1])
local me = ARGV[2]
local prefix = ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local starts = {}
for i = 1, nw do
  local limit = tonumber(ARGV[3 + i * 2])
  local win = tonumber(ARGV[4 + i * 2])
  local start = now - (now % win)
  starts[i] = start
  local h = redis.call('HMGET', KEYS[i], 's', 'n')
  local used = 0
  if tonumber(h[1]) == start then used = tonumber(h[2]) or 0 end
  if used + 1 > limit then return {1, i - 1, start + win - now} end
end
local base = 4 + nw * 2
for j = 1, #KEYS - nw do
  local key = KEYS[nw + j]
  local fields = redis.call('HGETALL', key)
  local used = 0
  for k = 1, #fields, 2 do
    local w = fields[k]
    if w == me or redis.call('EXISTS', prefix .. w) == 1 then used = used + tonumber(fields[k + 1])
    else redis.call('HDEL', key, w) end
  end
  if used + 1 > tonumber(ARGV[base + j]) then return {2, j - 1, 0} end
end
if ARGV[#ARGV] == 'peek' then return {0} end
for i = 1, nw do
  local win = tonumber(ARGV[4 + i * 2])
  if tonumber(redis.call('HGET', KEYS[i], 's')) == starts[i] then redis.call('HINCRBY', KEYS[i], 'n', 1)
  else redis.call('HSET', KEYS[i], 's', starts[i], 'n', 1) end
  redis.call('PEXPIRE', KEYS[i], starts[i] + win - now + 1000)
end
if #KEYS > nw then redis.call('SET', prefix .. me, '1', 'PX', tonumber(ARGV[4])) end
for j = 1, #KEYS - nw do
  redis.call('HINCRBY', KEYS[nw + j], me, 1)
  redis.call('PEXPIRE', KEYS[nw + j], ${FLIGHT_TTL_MS})
end
return {0}`;

/** KEYS: in-flight hashes; ARGV[1]: this worker's lease id. One call of each ends. */
const RELEASE = `for _, key in ipairs(KEYS) do
  if redis.call('HINCRBY', key, ARGV[1], -1) <= 0 then redis.call('HDEL', key, ARGV[1]) end
end
return 0`;

/**
 * KEYS: windows' hashes, then in-flight hashes; ARGV: number of windows, the lease prefix, then the
 * window ms per window. Returns the calls counted in each window now, then each counter's calls in
 * flight on live workers.
 */
const READ = `local nw = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, nw do
  local win = tonumber(ARGV[2 + i])
  local h = redis.call('HMGET', KEYS[i], 's', 'n')
  if tonumber(h[1]) == now - (now % win) then out[i] = tonumber(h[2]) or 0 else out[i] = 0 end
end
for j = nw + 1, #KEYS do
  local fields = redis.call('HGETALL', KEYS[j])
  local used = 0
  for k = 1, #fields, 2 do
    if redis.call('EXISTS', ARGV[2] .. fields[k]) == 1 then used = used + tonumber(fields[k + 1]) end
  end
  out[j] = used
end
return out`;

const PASSED: CounterAnswer = Object.freeze({ ok: true });

/** A script sent by its digest (EVALSHA), its text only when Redis lacks it (a restart, SCRIPT FLUSH). */
type Script = (numKeys: number, ...args: (string | number)[]) => Promise<unknown>;

function script(redis: Redis, lua: string): Script {
  const sha = createHash('sha1').update(lua).digest('hex');
  return (numKeys, ...args) =>
    redis.evalsha(sha, numKeys, ...args).catch((err: unknown) => {
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return redis.eval(lua, numKeys, ...args);
      throw err;
    });
}

export interface RedisQuotaCountersOptions {
  url: string;
  log: Logger;
}

export class RedisQuotaCounters implements SharedQuotaCounters {
  private readonly redis: Redis;
  private readonly scripts: { readonly take: Script; readonly release: Script; readonly read: Script };
  /** This process's lease: the worker id and a boot nonce (a restarted worker with the same pid holds nothing). */
  private readonly me = `${workerId()}#${Math.random().toString(36).slice(2, 10)}`;
  private timer: NodeJS.Timeout | undefined;
  private isUp = false;
  private closed = false;
  /** Calls in flight this worker holds on each shared counter (what its field should read). */
  private readonly held = new Map<string, number>();
  /** Counters whose field may be wrong in Redis (a release while Redis was down): written again on reconnect. */
  private readonly stale = new Set<string>();

  constructor(private readonly o: RedisQuotaCountersOptions) {
    this.redis = redisConnection(o.url);
    this.scripts = { take: script(this.redis, TAKE), release: script(this.redis, RELEASE), read: script(this.redis, READ) };
    this.redis.on('ready', () => {
      this.isUp = true;
      void this.resync();
    });
    this.redis.on('close', () => {
      this.isUp = false;
    });
    this.redis.on('end', () => {
      this.isUp = false;
    });
    this.redis.on('error', (err: Error) => o.log.debug('redis error (quota counters)', { error: err.message }));
  }

  get up(): boolean {
    return this.isUp && !this.closed;
  }

  async start(): Promise<void> {
    await this.redis
      .connect()
      .catch((err: unknown) =>
        this.o.log.debug('redis not reachable at start (quota counters)', { error: err instanceof Error ? err.message : String(err) }),
      );
    this.timer = setInterval(() => void this.renew(), RENEW_MS);
    this.timer.unref();
  }

  take(ask: CounterAsk): Promise<CounterAnswer> {
    return this.check(ask, 'take');
  }

  peek(ask: CounterAsk): Promise<CounterAnswer> {
    return this.check(ask, 'peek');
  }

  private async check(ask: CounterAsk, how: 'take' | 'peek'): Promise<CounterAnswer> {
    const keys = [...ask.windows.map((w) => PREFIX + w.key), ...ask.inFlight.map((f) => PREFIX + f.key)];
    const args: (string | number)[] = [ask.windows.length, this.me, LEASE_PREFIX, LEASE_MS];
    for (const w of ask.windows) args.push(w.limit, w.windowMs);
    for (const f of ask.inFlight) args.push(f.limit);
    args.push(how);
    const answer = (await this.scripts.take(keys.length, ...keys, ...args)) as number[];
    if (answer[0] === 0) {
      if (how === 'take') for (const f of ask.inFlight) this.hold(f.key, 1);
      return PASSED;
    }
    return { ok: false, window: answer[0] === 1, index: Number(answer[1]), retryAfterMs: Math.max(1, Number(answer[2])) };
  }

  release(keys: readonly string[]): void {
    for (const key of keys) this.hold(key, -1);
    if (!this.up) {
      for (const key of keys) this.markStale(key);
      return;
    }
    this.scripts.release(keys.length, ...keys.map((k) => PREFIX + k), this.me).catch((err: unknown) => {
      for (const key of keys) this.markStale(key);
      this.o.log.debug('could not release calls in flight in redis; written again on reconnect', {
        error: err instanceof Error ? err.message : String(err),
      });
    });
  }

  async read(windows: readonly ReadWindow[], inFlight: readonly string[]): Promise<CounterReading> {
    const keys = [...windows.map((w) => PREFIX + w.key), ...inFlight.map((k) => PREFIX + k)];
    if (keys.length === 0) return { windows: [], inFlight: [] };
    const out = (await this.scripts.read(
      keys.length,
      ...keys,
      windows.length,
      LEASE_PREFIX,
      ...windows.map((w) => w.windowMs),
    )) as number[];
    return { windows: out.slice(0, windows.length).map(Number), inFlight: out.slice(windows.length).map(Number) };
  }

  private hold(key: string, delta: number): void {
    const n = (this.held.get(key) ?? 0) + delta;
    if (n <= 0) this.held.delete(key);
    else this.held.set(key, n);
  }

  private markStale(key: string): void {
    if (this.stale.size < MAX_TOUCHED) this.stale.add(key);
  }

  /** Keeps this worker's lease alive while it holds calls in flight (its fields count only while it is). */
  private async renew(): Promise<void> {
    if (!this.up || this.held.size === 0) return;
    await this.redis.set(LEASE_PREFIX + this.me, '1', 'PX', LEASE_MS).catch(() => undefined);
  }

  /** Back in touch with Redis: the counters it holds or released meanwhile get this worker's field right again. */
  private async resync(): Promise<void> {
    if ((this.stale.size === 0 && this.held.size === 0) || this.closed) return;
    // Every counter this worker holds calls on too: while it was away its lease may have lapsed and
    // other workers deleted its fields.
    const keys = [...new Set([...this.stale, ...this.held.keys()])];
    this.stale.clear();
    const multi = this.redis.multi();
    for (const key of keys) {
      const n = this.held.get(key);
      if (n === undefined) multi.hdel(PREFIX + key, this.me);
      else multi.hset(PREFIX + key, this.me, n);
    }
    if (this.held.size > 0) multi.set(LEASE_PREFIX + this.me, '1', 'PX', LEASE_MS);
    await multi.exec().catch(() => {
      for (const key of keys) this.markStale(key);
    });
  }

  /** Ends this worker's calls in flight in Redis (its lease goes, so its fields stop counting) and disconnects. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    if (this.isUp) await this.redis.del(LEASE_PREFIX + this.me).catch(() => undefined);
    this.closed = true;
    this.isUp = false;
    this.redis.disconnect();
  }
}
