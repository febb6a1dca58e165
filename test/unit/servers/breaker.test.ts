// The per-server circuit breaker (src/servers/connection.ts `CircuitBreaker`; after N consecutive failures
// calls fail fast, after a cooldown one half-open probe goes through, success closes, failure
// re-arms the cooldown). Every transition is driven by a fake clock.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CircuitBreaker, DEFAULT_BREAKER } from '../../../src/servers/breaker.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const COOLDOWN = 10_000;

function setup(threshold = 3) {
  const clock = new FakeClock();
  const breaker = new CircuitBreaker({ threshold, cooldownMs: COOLDOWN }, clock);
  const t0 = clock.now();
  return { clock, breaker, t0 };
}

/** Trips a closed breaker with `threshold` failures. */
function trip(breaker: CircuitBreaker, threshold = 3): void {
  for (let i = 0; i < threshold; i++) breaker.failure();
}

void describe('CircuitBreaker', () => {
  void it('has the documented defaults', { timeout: 5000 }, () => {
    assert.deepEqual(DEFAULT_BREAKER, { threshold: 3, cooldownMs: 30_000 });
  });

  void it('starts closed and admits calls that are not probes', { timeout: 5000 }, () => {
    const { breaker } = setup();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.failures, 0);
    assert.equal(breaker.trips, 0);
    assert.deepEqual(breaker.admit(), { ok: true, probe: false });
    assert.deepEqual(breaker.admit(), { ok: true, probe: false });
    assert.equal(breaker.state, 'closed');
  });

  void it('stays closed below the threshold', { timeout: 5000 }, () => {
    const { breaker } = setup();
    breaker.failure();
    breaker.failure();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.failures, 2);
    assert.equal(breaker.trips, 0);
    assert.deepEqual(breaker.admit(), { ok: true, probe: false });
  });

  void it('opens at the threshold of consecutive failures and counts the trip', { timeout: 5000 }, () => {
    const { clock, breaker, t0 } = setup();
    breaker.failure();
    clock.advance(100);
    breaker.failure();
    clock.advance(100);
    breaker.failure();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.failures, 3);
    assert.equal(breaker.trips, 1);
    assert.equal(breaker.openedAt, t0 + 200);
    assert.equal(breaker.retryAt, t0 + 200 + COOLDOWN);
  });

  void it('a threshold of 1 opens on the first failure', { timeout: 5000 }, () => {
    const { breaker, t0 } = setup(1);
    breaker.failure();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.trips, 1);
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: t0 + COOLDOWN });
  });

  void it('a success in between resets the count of consecutive failures', { timeout: 5000 }, () => {
    const { breaker } = setup();
    breaker.failure();
    breaker.failure();
    breaker.success();
    assert.equal(breaker.failures, 0);
    assert.equal(breaker.state, 'closed');
    breaker.failure();
    breaker.failure();
    assert.equal(breaker.state, 'closed', 'two failures after a success do not reach a threshold of 3');
    assert.equal(breaker.failures, 2);
    breaker.failure();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.trips, 1);
  });

  void it('open: every call fails fast with retryAt = openedAt + cooldown, until the cooldown has passed', { timeout: 5000 }, () => {
    const { clock, breaker, t0 } = setup();
    trip(breaker);
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: t0 + COOLDOWN });
    clock.advance(COOLDOWN - 1);
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: t0 + COOLDOWN });
    assert.equal(breaker.state, 'open');
    // More failures reported while open (late outcomes) neither move the cooldown nor count a new trip.
    breaker.failure();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.openedAt, t0);
    assert.equal(breaker.trips, 1);
    assert.equal(breaker.failures, 4);
  });

  void it('after the cooldown exactly one admission is a probe; concurrent admissions fail fast', { timeout: 5000 }, () => {
    const { clock, breaker, t0 } = setup();
    trip(breaker);
    clock.advance(COOLDOWN);
    assert.deepEqual(breaker.admit(), { ok: true, probe: true });
    assert.equal(breaker.state, 'half-open');
    assert.equal(breaker.probeAt, t0 + COOLDOWN);
    // While the probe runs, callers are told to come back a cooldown after it began (when it is given up).
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: t0 + 2 * COOLDOWN });
    clock.advance(1000);
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: t0 + 2 * COOLDOWN });
    assert.equal(breaker.state, 'half-open');
  });

  void it('probe success closes the breaker and clears the count', { timeout: 5000 }, () => {
    const { clock, breaker } = setup();
    trip(breaker);
    clock.advance(COOLDOWN + 5);
    assert.deepEqual(breaker.admit(), { ok: true, probe: true });
    breaker.success();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.failures, 0);
    assert.deepEqual(breaker.admit(), { ok: true, probe: false });
    assert.deepEqual(breaker.admit(), { ok: true, probe: false });
    // It takes a full threshold of new failures to open again (a new trip).
    breaker.failure();
    breaker.failure();
    assert.equal(breaker.state, 'closed');
    breaker.failure();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.trips, 2);
  });

  void it('probe failure re-opens the breaker with the cooldown re-armed from now', { timeout: 5000 }, () => {
    const { clock, breaker, t0 } = setup();
    trip(breaker);
    clock.advance(COOLDOWN + 500);
    assert.deepEqual(breaker.admit(), { ok: true, probe: true });
    clock.advance(250); // the probe takes a while to fail
    breaker.failure();
    const reopenedAt = t0 + COOLDOWN + 750;
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.openedAt, reopenedAt);
    assert.equal(breaker.trips, 1, 'a failed probe is the same trip, not a new one');
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: reopenedAt + COOLDOWN });
    clock.advance(COOLDOWN - 1);
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: reopenedAt + COOLDOWN });
    clock.advance(1);
    assert.deepEqual(breaker.admit(), { ok: true, probe: true });
  });

  void it('probeAborted re-opens a half-open breaker with the cooldown re-armed, without counting a failure', { timeout: 5000 }, () => {
    const { clock, breaker, t0 } = setup();
    trip(breaker);
    clock.advance(COOLDOWN + 42);
    assert.deepEqual(breaker.admit(), { ok: true, probe: true });
    breaker.probeAborted();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.openedAt, t0 + COOLDOWN + 42);
    assert.equal(breaker.failures, 3);
    assert.equal(breaker.trips, 1);
    assert.deepEqual(breaker.admit(), { ok: false, retryAt: t0 + 2 * COOLDOWN + 42 });
    clock.advance(COOLDOWN);
    assert.deepEqual(breaker.admit(), { ok: true, probe: true });
  });

  void it('probeAborted outside half-open changes nothing', { timeout: 5000 }, () => {
    const { clock, breaker, t0 } = setup();
    breaker.probeAborted();
    assert.equal(breaker.state, 'closed');
    trip(breaker);
    clock.advance(500);
    breaker.probeAborted();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.openedAt, t0, 'an open breaker keeps its cooldown');
  });

  void it(
    'a probe whose outcome never comes does not wedge the breaker: a cooldown later another probe is admitted',
    { timeout: 5000 },
    () => {
      // The probe call can end without an outcome (the agent cancels it, the session dies under it);
      // the breaker must not stay half-open, failing every call, until the next reconnect.
      const { clock, breaker } = setup();
      trip(breaker);
      clock.advance(COOLDOWN);
      assert.deepEqual(breaker.admit(), { ok: true, probe: true });
      clock.advance(COOLDOWN - 1);
      assert.equal(breaker.admit().ok, false);
      clock.advance(1);
      assert.deepEqual(breaker.admit(), { ok: true, probe: true });
      assert.equal(breaker.admit().ok, false, 'still one probe at a time');
      breaker.success();
      assert.equal(breaker.state, 'closed');
    },
  );

  void it('reset() closes the breaker from any state', { timeout: 5000 }, () => {
    const { clock, breaker } = setup();
    // closed with failures
    breaker.failure();
    breaker.failure();
    breaker.reset();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.failures, 0);
    // open
    trip(breaker);
    assert.equal(breaker.state, 'open');
    breaker.reset();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.failures, 0);
    assert.deepEqual(breaker.admit(), { ok: true, probe: false });
    // half-open
    trip(breaker);
    clock.advance(COOLDOWN);
    assert.deepEqual(breaker.admit(), { ok: true, probe: true });
    breaker.reset();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.failures, 0);
    assert.deepEqual(breaker.admit(), { ok: true, probe: false });
    assert.equal(breaker.trips, 2, 'reset keeps the count of trips (it is history, not state)');
    // after a reset it takes a full threshold to open again
    breaker.failure();
    breaker.failure();
    assert.equal(breaker.state, 'closed');
  });
});
