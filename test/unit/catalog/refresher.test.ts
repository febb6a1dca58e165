// The debounced catalog refresher (src/catalog/refresher.ts; a burst of list_changed
// becomes one refresh of the changed kinds). Real timers with small values; the refresh function
// records calls and settles only when the test says so, and tests wait on calls, not on sleeps.
// The few fixed sleeps below prove that something did *not* happen.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Refresher } from '../../../src/catalog/refresher.js';
import { Logger, silentLogger } from '../../../src/observability/logger.js';
import { GatewayError } from '../../../src/errors.js';
import type { ListKind } from '../../../src/servers/lists.js';

/** What the refresher calls: the catalog's refresh of one server's changed kinds. */
type RefreshFn = ConstructorParameters<typeof Refresher>[0];

interface Call {
  server: string;
  kinds: ListKind[];
  at: number;
  release(): void;
  fail(err: Error): void;
}

/** A refresh function that records each call; with `auto` it resolves at once, else on `release()`. */
function recorder(auto: boolean) {
  const calls: Call[] = [];
  let wake: (() => void) | undefined;
  const fn: RefreshFn = (server, kinds) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ server, kinds, at: Date.now(), release: resolve, fail: reject });
      if (auto) resolve();
      wake?.();
    });
  /** Resolves once at least `n` calls have been made. */
  const until = async (n: number): Promise<void> => {
    while (calls.length < n) await new Promise<void>((resolve) => (wake = resolve));
  };
  return { calls, fn, until };
}

const summary = (calls: readonly Call[]): [string, ListKind[]][] => calls.map((c) => [c.server, c.kinds]);

void describe('Refresher', { timeout: 5000 }, () => {
  void it('turns a burst for one server into one refresh of the requested kinds', { timeout: 5000 }, async () => {
    const rec = recorder(true);
    const refresher = new Refresher(rec.fn, silentLogger, 20, 500);
    try {
      refresher.request('fs', 'tools');
      refresher.request('fs', 'tools');
      refresher.request('fs', 'prompts');
      await rec.until(1);
      await sleep(60); // three debounce periods: no second refresh follows
      assert.deepEqual(summary(rec.calls), [['fs', ['tools', 'prompts']]]);
    } finally {
      refresher.close();
    }
  });

  void it('refreshes only the kinds requested, separately per server', { timeout: 5000 }, async () => {
    const rec = recorder(true);
    const refresher = new Refresher(rec.fn, silentLogger, 20, 500);
    try {
      refresher.request('a', 'resources');
      refresher.request('b', 'resourceTemplates');
      await rec.until(2);
      assert.deepEqual(summary(rec.calls).sort(), [
        ['a', ['resources']],
        ['b', ['resourceTemplates']],
      ]);
    } finally {
      refresher.close();
    }
  });

  void it('fires on the trailing edge: a request within the debounce restarts the wait', { timeout: 5000 }, async () => {
    const rec = recorder(true);
    // 100 ms debounce, second request after ~30 ms: an event-loop stall under 70 ms cannot split the burst.
    const refresher = new Refresher(rec.fn, silentLogger, 100, 2000);
    try {
      const start = Date.now();
      refresher.request('fs', 'tools');
      await sleep(30);
      const last = Date.now();
      refresher.request('fs', 'prompts');
      await rec.until(1);
      assert.deepEqual(summary(rec.calls), [['fs', ['tools', 'prompts']]]);
      assert.ok(rec.calls[0]!.at - last >= 95, `fired ${rec.calls[0]!.at - last} ms after the last request`);
      assert.ok(rec.calls[0]!.at - start >= 125, `fired ${rec.calls[0]!.at - start} ms after the first request`);
    } finally {
      refresher.close();
    }
  });

  void it('still refreshes within maxWait when requests never stop', { timeout: 5000 }, async () => {
    const rec = recorder(true);
    const refresher = new Refresher(rec.fn, silentLogger, 50, 120);
    let requests = 0;
    const start = Date.now();
    const interval = setInterval(() => {
      requests++;
      refresher.request('fs', 'tools');
    }, 10);
    try {
      refresher.request('fs', 'tools');
      await rec.until(1);
      assert.equal(rec.calls[0]!.kinds.length, 1);
      // Requests kept coming every 10 ms (< debounce), so only maxWait can have fired it.
      assert.ok(requests >= 5, `only ${requests} requests before the refresh`);
      assert.ok(rec.calls[0]!.at - start < 1000, `fired after ${rec.calls[0]!.at - start} ms`);
      await rec.until(2); // and again while the stream continues
    } finally {
      clearInterval(interval);
      refresher.close();
    }
  });

  void it('a request during a running refresh schedules another once it finishes', { timeout: 5000 }, async () => {
    const rec = recorder(false);
    const refresher = new Refresher(rec.fn, silentLogger, 20, 500);
    try {
      refresher.request('fs', 'tools');
      await rec.until(1);
      refresher.request('fs', 'prompts');
      refresher.request('fs', 'prompts');
      await sleep(60);
      assert.equal(rec.calls.length, 1, 'no overlapping refresh while one runs');
      rec.calls[0]!.release();
      await rec.until(2);
      assert.deepEqual(summary(rec.calls), [
        ['fs', ['tools']],
        ['fs', ['prompts']],
      ]);
      rec.calls[1]!.release();
    } finally {
      refresher.close();
    }
  });

  void it('logs a failed refresh and keeps serving later requests', { timeout: 5000 }, async () => {
    const rec = recorder(false);
    const lines: string[] = [];
    const refresher = new Refresher(rec.fn, new Logger('warn', (line) => lines.push(line)), 20, 500);
    try {
      refresher.request('fs', 'tools');
      await rec.until(1);
      rec.calls[0]!.fail(new GatewayError('MCPG_SERVER_UNAVAILABLE', 'server gone'));
      refresher.request('fs', 'resources');
      await rec.until(2);
      rec.calls[1]!.release();
      assert.equal(lines.length, 1);
      const record = JSON.parse(lines[0]!);
      delete record.time;
      assert.deepEqual(record, {
        level: 'warn',
        msg: 'catalog refresh failed',
        server: 'fs',
        kinds: ['tools'],
        error: { message: 'server gone', code: 'MCPG_SERVER_UNAVAILABLE' },
      });
    } finally {
      refresher.close();
    }
  });

  void it('close() cancels pending refreshes and ignores later requests', { timeout: 5000 }, async () => {
    const rec = recorder(true);
    const refresher = new Refresher(rec.fn, silentLogger, 20, 500);
    refresher.request('fs', 'tools');
    refresher.request('git', 'prompts');
    refresher.close();
    refresher.request('fs', 'resources');
    await sleep(80);
    assert.deepEqual(rec.calls, []);
  });

  void it('close() during a running refresh prevents the follow-up refresh', { timeout: 5000 }, async () => {
    const rec = recorder(false);
    const refresher = new Refresher(rec.fn, silentLogger, 20, 500);
    refresher.request('fs', 'tools');
    await rec.until(1);
    refresher.request('fs', 'prompts');
    refresher.close();
    rec.calls[0]!.release();
    await sleep(80);
    assert.equal(rec.calls.length, 1);
  });

  void it("forget() drops one server's pending refresh only", { timeout: 5000 }, async () => {
    const rec = recorder(true);
    const refresher = new Refresher(rec.fn, silentLogger, 20, 500);
    try {
      refresher.request('fs', 'tools');
      refresher.request('git', 'tools');
      refresher.forget('fs');
      await rec.until(1);
      await sleep(60);
      assert.deepEqual(summary(rec.calls), [['git', ['tools']]]);
    } finally {
      refresher.close();
    }
  });
});
