// Abandoned calls (src/servers/abandoned-calls.ts): a cancelled call's end runs once — when the server
// answers it anyway, when its session ends, or when the grace (never past the call's deadline) passes.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AbandonedCalls } from '../../../src/servers/abandoned-calls.js';

/** Past the grace (5 s): a call held this long ends by the grace, not by its deadline. */
const LONG_MS = 60_000;

describe('abandoned calls', { timeout: 10_000 }, () => {
  it("ends a call when the server answers it, once, and says the answer was an abandoned call's", () => {
    const calls = new AbandonedCalls();
    let ended = 0;
    calls.hold(7, LONG_MS, () => (ended += 1));
    assert.equal(calls.answered(8), false);
    assert.equal(ended, 0);
    assert.equal(calls.answered(7), true);
    assert.equal(ended, 1);
    assert.equal(calls.answered(7), false);
    calls.clear();
    assert.equal(ended, 1);
  });

  it('ends every call when the session ends', () => {
    const calls = new AbandonedCalls();
    const ended: number[] = [];
    for (const id of [1, 2, 3]) calls.hold(id, LONG_MS, () => ended.push(id));
    calls.clear();
    assert.deepEqual(ended, [1, 2, 3]);
  });

  it("ends a call the server never answers at its deadline when that comes before the grace's end", async () => {
    const calls = new AbandonedCalls();
    const started = performance.now();
    const alive = setTimeout(() => undefined, 5_000); // the grace's timer does not keep a process alive
    await new Promise<void>((resolve) => calls.hold(1, 50, resolve));
    clearTimeout(alive);
    const waited = performance.now() - started;
    assert.ok(waited >= 45 && waited < 5_000, `ended after ${waited} ms`);
    assert.equal(calls.answered(1), false);
  });
});
