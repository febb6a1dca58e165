// The approval desk (policy/approval-desk.ts) in process, over its own board and a board that
// delivers whatever it is given (as a Redis board would, after its signature check): a decision
// applies only to the call whose id and digest it names, and only once; no decision in time is
// MCPG_APPROVAL_EXPIRED; a cancelled call is withdrawn; past the limit a call is refused at once.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApprovalDesk, type ApprovalBoard, type CallDecision, type PendingCall } from '../../../src/policy/approval-desk.js';
import { GatewayError } from '../../../src/errors.js';
import { Logger } from '../../../src/observability/logger.js';

const log = new Logger('silent');
const need = (timeoutMs = 60_000) => ({ timeoutMs, rule: 'agent "bot" approve["g"][0]' });
const input = (args: Record<string, unknown>, timeoutMs?: number) => ({
  agent: 'bot',
  session: 's1',
  server: 'g',
  tool: 'delete',
  publicName: 'g__delete',
  args,
  need: need(timeoutMs),
});

/** A board that hands any decision straight to the desk (what a cluster board does once a signature holds). */
class OpenBoard implements ApprovalBoard {
  private readonly calls = new Map<string, PendingCall>();
  private deliver: ((decision: CallDecision) => void) | undefined;

  push(decision: CallDecision): void {
    void this.decide(decision);
  }

  post(call: PendingCall): Promise<void> {
    this.calls.set(call.id, call);
    return Promise.resolve();
  }

  withdraw(id: string): Promise<void> {
    this.calls.delete(id);
    return Promise.resolve();
  }

  list(): Promise<PendingCall[]> {
    return Promise.resolve([...this.calls.values()]);
  }

  find(id: string): Promise<PendingCall | undefined> {
    return Promise.resolve(this.calls.get(id));
  }

  decide(decision: CallDecision): Promise<void> {
    const deliver = this.deliver;
    if (deliver !== undefined) queueMicrotask(() => deliver(decision));
    return Promise.resolve();
  }

  subscribe(deliver: (decision: CallDecision) => void): void {
    this.deliver = deliver;
  }

  close(): Promise<void> {
    this.calls.clear();
    return Promise.resolve();
  }
}

describe('approval desk', () => {
  it('approves only the call with the digest it names, once', async () => {
    const board = new OpenBoard();
    const desk = new ApprovalDesk({ audit: undefined, log, board, worker: '' });
    const waiting = desk.wait(input({ branch: 'main' }));
    assert.ok(!(waiting instanceof GatewayError));
    assert.deepEqual(
      (await desk.list()).map((c) => c.id),
      [waiting.call.id],
    );
    // Same id, other arguments' digest: ignored, still waiting.
    board.push({ id: waiting.call.id, digest: '0'.repeat(64), approved: true, by: 'admin:mallory', reason: '', at: Date.now() });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(desk.waiting, 1);
    board.push({ id: waiting.call.id, digest: waiting.call.digest, approved: true, by: 'admin:alice', reason: '', at: Date.now() });
    assert.deepEqual(await waiting.outcome, { approved: true, by: 'admin:alice' });
    assert.equal(desk.waiting, 0);
    assert.deepEqual(await desk.list(), []);
    // Used: deciding it again finds nothing.
    await assert.rejects(desk.decide(waiting.call.id, { approved: true, by: 'admin:alice', reason: '' }), /is waiting for approval/);
    await desk.close();
  });

  it('denies with the admin and reason; refuses a digest that is not the one shown', async () => {
    const desk = new ApprovalDesk({ audit: undefined, log });
    const waiting = desk.wait(input({ a: 1 }));
    assert.ok(!(waiting instanceof GatewayError));
    await assert.rejects(
      desk.decide(waiting.call.id, { approved: true, by: 'admin:alice', reason: '', digest: 'f'.repeat(64) }),
      /not the one that was shown/,
    );
    await desk.decide(waiting.call.id, { approved: false, by: 'admin:alice', reason: 'no', digest: waiting.call.digest });
    const outcome = await waiting.outcome;
    assert.ok(outcome instanceof GatewayError);
    assert.equal(outcome.code, 'MCPG_CALL_DENIED');
    assert.match(outcome.message, /denied by admin:alice: no/);
    await desk.close();
  });

  it('expires, withdraws a cancelled call, and refuses past its limit', async () => {
    const desk = new ApprovalDesk({ audit: undefined, log, maxWaiting: 1 });
    const soon = desk.wait(input({}, 20));
    assert.ok(!(soon instanceof GatewayError));
    // The desk's timer is unref'd (it never holds the process open); this one keeps the test's loop alive.
    const alive = setTimeout(() => undefined, 5000);
    const expired = await soon.outcome;
    clearTimeout(alive);
    assert.ok(expired instanceof GatewayError && expired.code === 'MCPG_APPROVAL_EXPIRED');
    const cancelled = desk.wait(input({ x: 1 }));
    assert.ok(!(cancelled instanceof GatewayError));
    const refused = desk.wait(input({ x: 2 }));
    assert.ok(refused instanceof GatewayError && refused.code === 'MCPG_APPROVAL_EXPIRED' && /already wait/.test(refused.message));
    cancelled.cancel('the agent cancelled');
    assert.deepEqual(await desk.list(), []);
    assert.equal(desk.waiting, 0);
    await desk.close();
  });
});
