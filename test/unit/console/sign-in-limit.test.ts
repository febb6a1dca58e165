// The console's sign-in rate limit (console/sign-in-limit.ts): failures per address and in total
// within a window; Retry-After until the window ends; success clears the address; memory bounded.
// Across workers (console/shared-sign-in-limit.ts): the stricter of the worker's own count and the
// shared one; the shared one unavailable → the worker's own alone, logged once each way.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignInLimiter } from '../../../src/console/sign-in-limit.js';
import { SharedSignInLimit, type SharedCounts, type SharedSignInCounter } from '../../../src/console/shared-sign-in-limit.js';
import { Logger } from '../../../src/observability/logger.js';

describe('sign-in limiter', () => {
  it('blocks an address after its failures until its window ends, and says how long', () => {
    let now = 1_000_000;
    const limiter = new SignInLimiter({ perAddress: 3, total: 100, windowMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) {
      assert.equal(limiter.retryAfter('10.0.0.1'), undefined);
      limiter.failed('10.0.0.1');
    }
    assert.deepEqual(limiter.retryAfter('10.0.0.1'), { scope: 'address', seconds: 60 });
    assert.equal(limiter.retryAfter('10.0.0.2'), undefined, 'another address is not blocked');
    now += 59_500;
    assert.deepEqual(limiter.retryAfter('10.0.0.1'), { scope: 'address', seconds: 1 });
    now += 500;
    assert.equal(limiter.retryAfter('10.0.0.1'), undefined, 'the window ended');
  });

  it('clears an address on success', () => {
    const limiter = new SignInLimiter({ perAddress: 2, now: () => 0 });
    limiter.failed('a');
    limiter.succeeded('a');
    limiter.failed('a');
    assert.equal(limiter.retryAfter('a'), undefined);
  });

  it('past the total of many addresses, says so as its own scope (the console then still checks a token); the default total is 500', () => {
    const limiter = new SignInLimiter({ perAddress: 5, total: 10, windowMs: 60_000, now: () => 0 });
    for (let i = 0; i < 10; i++) limiter.failed(`10.0.0.${i}`);
    assert.deepEqual(limiter.retryAfter('10.9.9.9'), { scope: 'total', seconds: 60 });
    const defaults = new SignInLimiter({ now: () => 0 });
    for (let i = 0; i < 499; i++) defaults.failed(`10.1.${i >> 8}.${i & 255}`);
    assert.equal(defaults.retryAfter('10.9.9.9'), undefined);
    defaults.failed('10.2.0.0');
    assert.equal(defaults.retryAfter('10.9.9.9')?.scope, 'total');
  });

  it('remembers a bounded number of addresses', () => {
    let now = 0;
    const limiter = new SignInLimiter({ perAddress: 1, total: 1e9, maxAddresses: 100, now: () => now });
    for (let i = 0; i < 1000; i++) {
      now += 1;
      limiter.failed(`addr-${i}`);
    }
    assert.equal(limiter.size, 100);
    assert.notEqual(limiter.retryAfter('addr-999'), undefined, 'the newest are kept');
    assert.equal(limiter.retryAfter('addr-0'), undefined, 'the oldest were forgotten');
  });
});

/** Shared counts as a test sets them (what Redis would answer), or unavailable. */
class Counts implements SharedSignInCounter {
  now: SharedCounts | undefined = { address: 0, addressMs: 0, total: 0, totalMs: 0 };
  read(): Promise<SharedCounts | undefined> {
    return Promise.resolve(this.now);
  }
  fail(): Promise<SharedCounts | undefined> {
    return Promise.resolve(this.now);
  }
  clear(): Promise<void> {
    return Promise.resolve();
  }
}

describe('sign-in limit shared by workers', () => {
  it("takes the stricter count, never waits past a window, and a shared count cannot loosen the worker's own", async () => {
    const counts = new Counts();
    const lines: string[] = [];
    const limit = new SharedSignInLimit(
      new SignInLimiter({ perAddress: 3, total: 10, windowMs: 60_000 }),
      counts,
      new Logger('info', (l) => void lines.push(l)),
    );
    assert.equal(await limit.retryAfter('a'), undefined);
    counts.now = { address: 3, addressMs: 10 * 60_000, total: 3, totalMs: 1000 };
    assert.deepEqual(
      await limit.retryAfter('a'),
      { scope: 'address', seconds: 60 },
      "the other workers' failures count; the wait is clamped to a window",
    );
    counts.now = { address: 0, addressMs: 0, total: 10, totalMs: 5_500 };
    assert.deepEqual(await limit.retryAfter('a'), { scope: 'total', seconds: 6 });
    counts.now = { address: 0, addressMs: 0, total: 0, totalMs: 0 };
    for (let i = 0; i < 3; i++) await limit.failed('a');
    assert.equal((await limit.retryAfter('a'))?.scope, 'address', "zero shared counts do not lift the worker's own limit");
    counts.now = undefined;
    assert.equal(await limit.retryAfter('b'), undefined);
    await limit.failed('b');
    assert.equal(lines.filter((l) => l.includes('limits sign-ins alone')).length, 1, 'said once');
    counts.now = { address: 0, addressMs: 0, total: 0, totalMs: 0 };
    assert.equal(await limit.retryAfter('b'), undefined);
    assert.equal(lines.filter((l) => l.includes("shared by the cluster's workers again")).length, 1);
  });
});
