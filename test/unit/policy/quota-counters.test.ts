// The window math of calls-per-window limits (policy/quota-window.ts: fixed windows aligned to the
// epoch) and this worker's own counters (policy/quota-counters.ts): all or nothing, the n+1th call
// of a window refused with the time to its end, calls in flight released.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { untilWindowEnds, windowStart } from '../../../src/policy/quota-window.js';
import { LocalQuotaCounters } from '../../../src/policy/quota-counters.js';

void describe('quota windows', () => {
  void it('aligns windows to the epoch, so every worker agrees on them', { timeout: 5000 }, () => {
    assert.equal(windowStart(60_000, 60_000), 60_000);
    assert.equal(windowStart(119_999, 60_000), 60_000);
    assert.equal(windowStart(120_000, 60_000), 120_000);
    assert.equal(windowStart(1_764_000_123_456, 1000), 1_764_000_123_000);
  });

  void it('says how long until the window ends, at least 1 ms', { timeout: 5000 }, () => {
    assert.equal(untilWindowEnds(60_000, 60_000), 60_000);
    assert.equal(untilWindowEnds(119_999, 60_000), 1);
    assert.equal(untilWindowEnds(90_000, 60_000), 30_000);
  });
});

void describe('local quota counters', () => {
  void it('lets n calls through a window, refuses the n+1th until the window ends', { timeout: 5000 }, () => {
    let now = 1_000_000;
    const counters = new LocalQuotaCounters(() => now);
    const ask = { windows: [{ key: 'k', limit: 3, windowMs: 10_000 }], inFlight: [] };
    for (let i = 0; i < 3; i++) assert.deepEqual(counters.take(ask), { ok: true });
    now += 2500;
    assert.deepEqual(counters.take(ask), { ok: false, window: true, index: 0, retryAfterMs: 7500 });
    now += 7500; // the next window
    assert.deepEqual(counters.take(ask), { ok: true });
    assert.deepEqual(counters.read([{ key: 'k', windowMs: 10_000 }], []).windows, [1]);
  });

  void it('counts nothing when one limit of the call is over (all or nothing)', { timeout: 5000 }, () => {
    const counters = new LocalQuotaCounters(() => 5_000);
    const agent = { key: 'agent', limit: 10, windowMs: 60_000 };
    assert.deepEqual(counters.take({ windows: [agent, { key: 'tool', limit: 1, windowMs: 60_000 }], inFlight: [] }), { ok: true });
    const refused = counters.take({ windows: [agent, { key: 'tool', limit: 1, windowMs: 60_000 }], inFlight: [{ key: 'f', limit: 5 }] });
    assert.deepEqual(refused, { ok: false, window: true, index: 1, retryAfterMs: 55_000 });
    assert.deepEqual(counters.read([{ key: 'agent', windowMs: 60_000 }], ['f']), { windows: [1], inFlight: [0] });
  });

  void it('holds calls in flight until released', { timeout: 5000 }, () => {
    const counters = new LocalQuotaCounters(() => 0);
    const ask = { windows: [], inFlight: [{ key: 'f', limit: 2 }] };
    assert.equal(counters.take(ask).ok, true);
    assert.equal(counters.take(ask).ok, true);
    assert.deepEqual(counters.take(ask), { ok: false, window: false, index: 0, retryAfterMs: 0 });
    counters.release(['f']);
    assert.equal(counters.take(ask).ok, true);
    counters.release(['f']);
    counters.release(['f']);
    counters.release(['f']); // more releases than calls never go below zero
    assert.deepEqual(counters.read([], ['f']).inFlight, [0]);
  });
});
