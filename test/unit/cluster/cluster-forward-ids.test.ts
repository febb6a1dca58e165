// Single-use forwards (src/cluster/forward-ids.ts): each id a worker accepts once per sender
// process, out of order within the window, never again, nor once older than the window.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ForwardIdSource, SeenForwards } from '../../../src/cluster/forward-ids.js';

/** How far behind the highest forward id one may arrive: the sliding window's documented size. */
const WINDOW = 65_536;

describe('forward ids', () => {
  it('accepts each id once, in any order within the window', { timeout: 5000 }, () => {
    const seen = new SeenForwards();
    const source = new ForwardIdSource();
    const ids = Array.from({ length: 50 }, () => source.next());
    for (const id of [...ids].reverse()) assert.equal(seen.accept('host:1', id), undefined, id);
    for (const id of ids) assert.match(seen.accept('host:1', id) ?? '', /already served/, id);
  });

  it('keeps senders and their restarts apart', { timeout: 5000 }, () => {
    const seen = new SeenForwards();
    const first = new ForwardIdSource().next();
    const restarted = new ForwardIdSource().next();
    assert.equal(seen.accept('host:1', first), undefined);
    assert.equal(seen.accept('host:2', first), undefined);
    assert.equal(seen.accept('host:1', restarted), undefined);
    assert.match(seen.accept('host:1', first) ?? '', /already served/);
  });

  it('refuses an id older than the window, and a malformed one', { timeout: 5000 }, () => {
    const seen = new SeenForwards();
    const boot = '0123456789abcdef';
    assert.equal(seen.accept('h:1', `${boot}.5`), undefined);
    assert.equal(seen.accept('h:1', `${boot}.${5 + WINDOW}`), undefined);
    assert.match(seen.accept('h:1', `${boot}.5`) ?? '', /older than the replay window/);
    assert.equal(seen.accept('h:1', `${boot}.6`), undefined, 'one step inside the window, never seen');
    assert.match(seen.accept('h:1', `${boot}.6`) ?? '', /already served/);
    for (const bad of ['', 'x', `${boot}.0`, `${boot}.-1`, `${boot}.01`, `${boot}`, `${boot.slice(1)}.1`, `${boot}.99999999999999999`])
      assert.match(seen.accept('h:1', bad) ?? '', /malformed/, bad);
  });
});
