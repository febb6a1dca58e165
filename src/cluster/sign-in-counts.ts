// The console's failed sign-ins counted by every worker together, in the cluster's Redis (the
// console's SharedSignInCounter; console/shared-sign-in-limit.ts decides with them): one key per
// client address, named by an HMAC of the address under the cluster secret, and one for all
// addresses, each counting one window from its first failure, both updated in one Lua script.
// Nothing here can let more sign-ins through than one worker's own limit: the console takes the
// stricter of its own count and this one. Redis down, or a value that is not a count: undefined, and
// the worker limits alone (`shared` says which). The keys and what they withstand: the room's
// README, "Shared sign-in counts".

import { createHmac } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { SharedCounts, SharedSignInCounter } from '../console/shared-sign-in-limit.js';

const TOTAL_KEY = 'mcpgate:signin:total';
const ADDRESS_PREFIX = 'mcpgate:signin:address:';

/** A count larger than any limit; what Redis holds beyond it is read as this. */
const MAX_COUNT = 1_000_000_000;

/** KEYS: address, total. ARGV: window ms, total ceiling. Returns address count, its ms left, total, its ms left. */
const FAIL = `local w = tonumber(ARGV[1])
local function expiry(key)
  local t = redis.call('PTTL', key)
  if t < 0 or t > w then redis.call('PEXPIRE', key, w) return w end
  return t
end
local total = redis.call('INCR', KEYS[2])
local totalMs = expiry(KEYS[2])
local n, nMs = 0, 0
if total <= tonumber(ARGV[2]) or redis.call('EXISTS', KEYS[1]) == 1 then
  n = redis.call('INCR', KEYS[1])
  nMs = expiry(KEYS[1])
end
return {n, nMs, total, totalMs}`;

/** KEYS: address, total. ARGV: window ms, the largest count. A key without a (short enough) expiry gets one. */
const READ = `local w = tonumber(ARGV[1])
local out = {}
for i = 1, 2 do
  local v = redis.call('GET', KEYS[i])
  local n = tonumber(v or '0') or 0
  if n < 0 then n = 0 end
  if n > tonumber(ARGV[2]) then n = tonumber(ARGV[2]) end
  local t = redis.call('PTTL', KEYS[i])
  if v and (t < 0 or t > w) then redis.call('PEXPIRE', KEYS[i], w) t = w end
  if t < 0 then t = 0 end
  out[2 * i - 1] = math.floor(n)
  out[2 * i] = t
end
return out`;

export class SignInCounts implements SharedSignInCounter {
  /** False after a command failed on a live connection (a value that is no count, a timeout). */
  private ok = true;

  /** `redis`: the connection while it is up (undefined while down). */
  constructor(
    private readonly redis: () => Redis | undefined,
    private readonly secret: string,
  ) {}

  /** Whether the counts are shared now: Redis is up and the last command worked. */
  get shared(): boolean {
    return this.ok && this.redis() !== undefined;
  }

  read(address: string, windowMs: number): Promise<SharedCounts | undefined> {
    return this.run((redis) => redis.eval(READ, 2, this.keyOf(address), TOTAL_KEY, windowMs, MAX_COUNT));
  }

  fail(address: string, windowMs: number, total: number): Promise<SharedCounts | undefined> {
    return this.run((redis) => redis.eval(FAIL, 2, this.keyOf(address), TOTAL_KEY, windowMs, total));
  }

  async clear(address: string): Promise<void> {
    await this.redis()
      ?.del(this.keyOf(address))
      .catch(() => undefined);
  }

  private keyOf(address: string): string {
    return ADDRESS_PREFIX + createHmac('sha256', this.secret).update(`console sign-in\0${address}`).digest('base64url').slice(0, 32);
  }

  private async run(command: (redis: Redis) => Promise<unknown>): Promise<SharedCounts | undefined> {
    const redis = this.redis();
    if (redis === undefined) return undefined;
    let reply: unknown;
    try {
      reply = await command(redis);
    } catch {
      this.ok = false;
      return undefined;
    }
    const n = Array.isArray(reply)
      ? reply.map((v) => (typeof v === 'number' && Number.isFinite(v) ? Math.min(Math.max(v, 0), MAX_COUNT) : Number.NaN))
      : [];
    if (n.length !== 4 || n.some(Number.isNaN)) {
      this.ok = false;
      return undefined;
    }
    this.ok = true;
    return { address: n[0]!, addressMs: n[1]!, total: n[2]!, totalMs: n[3]! };
  }
}
