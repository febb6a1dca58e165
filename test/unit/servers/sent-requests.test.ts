// A server session's table of sent requests (src/servers/sent-requests.ts): the id a retried round went
// out under maps back to its call and the call's first id stops answering for it; settling forgets
// both; progress moves a deadline back but never past the ceiling; the sweep reports an overdue
// request and nothing else; takeAll empties the table and stops the sweep.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SentRequests } from '../../../src/servers/sent-requests.js';
import type { SentRequest } from '../../../src/servers/session-types.js';

function entry(timeoutMs: number, ceilingMs = 60_000): SentRequest {
  const now = performance.now();
  return {
    sink: { reply: () => undefined, fail: () => undefined },
    forwarded: true,
    method: 'tools/call',
    timeoutMs,
    deadline: now + timeoutMs,
    ceiling: now + ceilingMs,
  };
}

void describe('SentRequests', () => {
  void it('maps a retried round id to its call, and forgets both ids when the call settles', { timeout: 5000 }, () => {
    const table = new SentRequests(60_000, () => assert.fail('nothing is overdue'));
    table.track(7, entry(30_000));
    assert.equal(table.callOf(7), 7);
    table.renumber(7, 9);
    assert.equal(table.callOf(9), 7, 'the round id answers for the call');
    assert.equal(table.callOf(7), undefined, "the call's first id no longer does: a late answer to it is dropped");
    table.renumber(7, 11);
    assert.notEqual(table.callOf(9), 7, 'an earlier round id no longer answers for the call');
    assert.equal(table.callOf(11), 7);
    assert.ok(table.settle(7) !== undefined);
    assert.equal(table.get(table.callOf(11)!), undefined, 'no call has the last round id');
    assert.equal(table.get(7), undefined);
    assert.equal(table.settle(7), undefined, 'a call settles once');
    table.takeAll();
  });

  void it('moves a deadline back on progress, never past the ceiling', { timeout: 5000 }, () => {
    const table = new SentRequests(60_000, () => assert.fail('nothing is overdue'));
    const sent = entry(30_000, 40_000);
    table.track(1, sent);
    const before = sent.deadline;
    const after = table.progressed(1)!;
    assert.ok(after.deadline >= before);
    assert.ok(after.deadline <= sent.ceiling, 'capped at the ceiling');
    assert.equal(after.deadline, Math.min(after.progressAt! + 30_000, sent.ceiling));
    assert.equal(table.progressed(2), undefined, 'progress for no call is ignored');
    table.takeAll();
  });

  void it('reports the overdue request to its owner, and only that one', { timeout: 5000 }, async () => {
    // The sweep's interval is unref'd (the transport keeps a session's loop alive): this keeps the test's.
    const alive = setTimeout(() => undefined, 5000);
    const overdue = new Promise<number>((resolve) => {
      const table = new SentRequests(60_000, (id, sent) => {
        table.settle(id);
        assert.ok(sent.deadline <= performance.now());
        resolve(id);
        assert.equal(table.takeAll().length, 1, 'the other request is still held');
      });
      table.track(1, entry(20));
      table.track(2, entry(30_000));
    });
    assert.equal(await overdue, 1);
    clearTimeout(alive);
  });

  void it('takeAll returns every request and empties the table', { timeout: 5000 }, () => {
    const table = new SentRequests(60_000, () => assert.fail('nothing is overdue'));
    table.track(1, entry(30_000));
    table.track(2, entry(30_000));
    table.renumber(2, 5);
    assert.equal(table.takeAll().length, 2);
    assert.equal(table.get(1), undefined);
    assert.equal(table.get(table.callOf(5)!), undefined);
  });
});
