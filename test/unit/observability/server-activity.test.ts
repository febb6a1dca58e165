// The console's calls/s and latency per server (GatewayMetrics.serverActivity): computed
// from the tool-call counters and histogram over about a minute, sampled at most every 5 s (the
// figures, and so the live region's ETag, change only then); the p95 interpolates in its bucket.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ACTIVITY_SAMPLE_MS, GatewayMetrics } from '../../../src/observability/metrics.js';

/** The tool call latency buckets /metrics documents, in seconds: 1-2.5-5 steps from 0.5 ms to 60 s. */
const CALL_DURATION_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The window the console's calls/s and latency cover (about a minute). */
const ACTIVITY_WINDOW_MS = 60_000;

describe('server activity', () => {
  it('is empty until a first interval has been sampled', () => {
    const m = new GatewayMetrics({ version: 't' }, 0);
    m.callFinished('a', 'x', 'ok', 0.002);
    assert.equal(m.serverActivity(ACTIVITY_SAMPLE_MS - 1).size, 0);
  });

  it('gives calls/s, errors, mean and p95 per server over the sampled interval', () => {
    const m = new GatewayMetrics({ version: 't' }, 0);
    for (let i = 0; i < 90; i++) m.callFinished('a', 'x', 'ok', 0.002);
    for (let i = 0; i < 5; i++) m.callFinished('a', 'y', 'error', 0.002);
    for (let i = 0; i < 5; i++) m.callFinished('a', 'y', 'failed', 0.02);
    m.callFinished('b', 'z', 'ok', 1);
    const at5 = m.serverActivity(5000);
    const a = at5.get('a')!;
    assert.equal(a.calls, 100);
    assert.equal(a.callsPerSecond, 20);
    assert.equal(a.errors, 10);
    assert.ok(Math.abs(a.meanMs - (95 * 2 + 5 * 20) / 100) < 1e-9, String(a.meanMs));
    // 95 of 100 calls are in the (1 ms, 2.5 ms] bucket: the 95th is its upper edge.
    assert.ok(Math.abs(a.p95Ms - 2.5) < 1e-9, String(a.p95Ms));
    assert.equal(at5.get('b')!.callsPerSecond, 0.2);
    assert.equal(a.windowSeconds, 5);

    // Between samples the figures stand still (a polling page's ETag does not move).
    m.callFinished('a', 'x', 'ok', 0.002);
    assert.deepEqual(m.serverActivity(9999).get('a'), a);
    assert.equal(m.serverActivity(10_000).get('a')!.calls, 101);
  });

  it('forgets calls older than the window', () => {
    const m = new GatewayMetrics({ version: 't' }, 0);
    m.callFinished('a', 'x', 'ok', 0.01);
    assert.equal(m.serverActivity(5000).get('a')!.calls, 1);
    for (let t = 10_000; t <= 5000 + ACTIVITY_WINDOW_MS + ACTIVITY_SAMPLE_MS; t += ACTIVITY_SAMPLE_MS) m.serverActivity(t);
    const later = 5000 + ACTIVITY_WINDOW_MS + 2 * ACTIVITY_SAMPLE_MS;
    assert.equal(m.serverActivity(later).get('a'), undefined);
    m.callFinished('a', 'x', 'ok', 0.01);
    const next = m.serverActivity(later + ACTIVITY_SAMPLE_MS).get('a')!;
    assert.equal(next.calls, 1);
    assert.ok(
      next.windowSeconds >= ACTIVITY_WINDOW_MS / 1000 && next.windowSeconds <= (ACTIVITY_WINDOW_MS + 2 * ACTIVITY_SAMPLE_MS) / 1000,
      String(next.windowSeconds),
    );
  });
});

/** The p95 latency (ms) the console shows for one server whose calls took `seconds`. */
function p95Of(seconds: readonly number[]): number {
  const m = new GatewayMetrics({ version: 't' }, 0);
  for (const s of seconds) m.callFinished('a', 'x', 'ok', s);
  return m.serverActivity(ACTIVITY_SAMPLE_MS).get('a')!.p95Ms;
}

const near = (actual: number, expected: number): void => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} ≠ ${expected}`);

describe('the p95 latency', () => {
  it('interpolates within the bucket holding the rank', () => {
    // 10 calls in (1 ms, 2.5 ms] and 10 in (2.5 ms, 5 ms]: rank 19 is the 9th of the upper bucket's 10.
    near(p95Of([...Array<number>(10).fill(0.002), ...Array<number>(10).fill(0.004)]), 2.5 + 2.5 * (9 / 10));
    // The first bucket starts at 0: rank 9.5 of 10 calls in (0, 0.5 ms].
    near(p95Of(Array<number>(10).fill(0.0001)), 0.5 * (9.5 / 10));
    // One bucket holding every call: the rank sits in it, at 95 % of its width.
    near(p95Of(Array<number>(20).fill(0.02)), 10 + 15 * 0.95);
  });
  it('answers the highest bound in the overflow bucket, and has no figure without calls', () => {
    near(p95Of([100, 100, 100]), CALL_DURATION_BUCKETS[CALL_DURATION_BUCKETS.length - 1]! * 1000);
    const m = new GatewayMetrics({ version: 't' }, 0);
    assert.equal(m.serverActivity(ACTIVITY_SAMPLE_MS).get('a'), undefined);
  });
});
