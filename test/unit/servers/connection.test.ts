// The supervised Connection (src/servers/connection.ts): backoff with full
// jitter, parking when the retry budget is spent (with a slow self-probe), revive, the budget that
// resets only when a session proves itself, and the circuit breaker in front of forward(). A fake
// clock drives every timer and a fake session factory plays the server: each fake session's start()
// settles when the test says so, and the test makes it crash or report call outcomes.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StdioServerConfig } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/observability/logger.js';
import type { ServerSession, SessionHooks } from '../../../src/servers/server-session.js';
import type { CallSink, ServerInfo } from '../../../src/servers/session-types.js';
import { Connection, type ConnectionHooks } from '../../../src/servers/connection.js';
import type { SupervisionSettings } from '../../../src/servers/supervision.js';
import type { JsonRpcRequest } from '../../../src/wire/jsonrpc.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';

/** The session a connection drives, as its `sessionFactory` option has it. */
type SessionLike = ReturnType<NonNullable<NonNullable<ConstructorParameters<typeof Connection>[3]>['sessionFactory']>>;

const config: StdioServerConfig = {
  type: 'stdio',
  name: 'srv',
  command: 'x',
  args: [],
  env: {},
  cwd: '/',
  disabled: false,
  timeout: 1000,
  sessions: 'shared',
};

const INFO: ServerInfo = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: {} },
  serverInfo: { name: 'fake', version: '1.0.0' },
  instructions: undefined,
};

class FakeSession implements SessionLike {
  state: 'connecting' | 'ready' | 'failed' | 'closed' = 'connecting';
  info: ServerInfo | undefined;
  readonly pid = 4242;
  readonly forwarded: { msg: JsonRpcRequest; sink: CallSink; id: number }[] = [];
  readonly cancelled: number[] = [];
  closeCalls = 0;
  destroyCalls = 0;
  startCalls = 0;
  private settleStart: { resolve: () => void; reject: (err: Error) => void } | undefined;

  constructor(
    readonly hooks: SessionHooks,
    readonly ids: { next: number },
  ) {}

  private get self(): ServerSession {
    return this as unknown as ServerSession;
  }

  start(): Promise<void> {
    this.startCalls += 1;
    return new Promise((resolve, reject) => (this.settleStart = { resolve, reject }));
  }

  /** The handshake succeeded (as ServerSession: info set, state ready, then start() resolves). */
  ready(): void {
    this.info = INFO;
    this.state = 'ready';
    this.hooks.state(this.self, 'ready');
    this.settleStart!.resolve();
  }

  /** The handshake failed (as ServerSession: state failed while info is unset, then start() rejects). */
  failStart(message = 'spawn x ENOENT', code: 'MCPG_SERVER_START_FAILED' | 'MCPG_SERVER_NEEDS_LOGIN' = 'MCPG_SERVER_START_FAILED'): void {
    const reason = new GatewayError(code, `server "srv": ${message}`, { server: 'srv' });
    this.state = 'failed';
    this.hooks.state(this.self, 'failed', reason);
    this.settleStart!.reject(reason);
  }

  /** The process died after the session was ready. */
  crash(message: string | GatewayError = 'exited with code 1'): GatewayError {
    const reason =
      message instanceof GatewayError ? message : new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "srv" ${message}`, { server: 'srv' });
    this.state = 'failed';
    this.hooks.state(this.self, 'failed', reason);
    return reason;
  }

  /** A forwarded call ended: answered (true), or timed out (false). */
  outcome(ok: boolean): void {
    this.hooks.outcome?.(this.self, ok);
  }

  forward(msg: JsonRpcRequest, sink: CallSink): number {
    const id = this.ids.next++;
    this.forwarded.push({ msg, sink, id });
    return id;
  }

  request(): Promise<Record<string, unknown>> {
    return Promise.resolve({});
  }

  cancel(id: number): void {
    this.cancelled.push(id);
  }

  notify(): void {}
  respond(): void {}
  respondError(): void {}

  close(): Promise<void> {
    this.closeCalls += 1;
    this.state = 'closed';
    return Promise.resolve();
  }

  destroy(): void {
    this.destroyCalls += 1;
    this.state = 'closed';
  }
}

/** A sink that records what happened to one call. */
function sink() {
  const got: { failed: GatewayError[]; replied: number } = { failed: [], replied: 0 };
  const s: CallSink = {
    reply: () => void (got.replied += 1),
    fail: (err) => void got.failed.push(err),
  };
  return { s, got };
}

const call = (n = 1): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: `agent-${n}`,
  method: 'tools/call',
  params: { name: 'echo', arguments: {} },
});

const SUPERVISION = {
  retries: 3,
  backoffBaseMs: 100,
  backoffCapMs: 1000,
  parkProbeMs: 60_000,
  stableMs: 30_000,
  breaker: { threshold: 3, cooldownMs: 10_000 },
};

function rig(supervision: SupervisionSettings = SUPERVISION, entry: StdioServerConfig = config) {
  const clock = new FakeClock();
  const sessions: FakeSession[] = [];
  const idObjects: { next: number }[] = [];
  const events: string[] = [];
  const lostReasons: (GatewayError | undefined)[] = [];
  const hooks: ConnectionHooks = {
    notification: () => {},
    serverRequest: () => {},
    ready: () => {
      events.push('ready');
      return Promise.resolve();
    },
    interrupted: (_conn, reason) => {
      events.push('interrupted');
      lostReasons.push(reason);
    },
    lost: (_conn, reason) => {
      events.push('lost');
      lostReasons.push(reason);
    },
  };
  const conn = new Connection(entry, hooks, silentLogger, {
    startupTimeoutMs: 1000,
    supervision,
    clock,
    sessionFactory: (h, ids) => {
      const session = new FakeSession(h, ids);
      sessions.push(session);
      idObjects.push(ids);
      return session;
    },
  });
  /** The newest session. */
  const last = (): FakeSession => sessions[sessions.length - 1]!;
  /** Makes the newest session ready and lets the connection finish its ready path. */
  const ready = async (): Promise<void> => {
    last().ready();
    await flush();
  };
  /** Makes the newest session's start fail and lets the connection react. */
  const failStart = async (): Promise<void> => {
    last().failStart();
    await flush();
  };
  return { clock, conn, sessions, idObjects, events, lostReasons, last, ready, failStart, t0: clock.now() };
}

/** Starts the connection and makes the first session ready. */
async function started(supervision: SupervisionSettings = SUPERVISION) {
  const r = rig(supervision);
  const first = r.conn.start();
  await r.ready();
  assert.equal(await first, true);
  return r;
}

void describe('Connection (supervised)', () => {
  void it('with no settings, a connection supervises by the documented defaults', { timeout: 5000 }, async () => {
    // retries 5, backoff from 250 ms doubling (cap 30 s), a parked probe every 60 s, proven after 30 s up.
    const r = rig({});
    r.clock.randomValue = 0.999;
    void r.conn.start();
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      await r.failStart();
      assert.equal(r.conn.nextStep, `retrying in ${r.conn.nextAttemptAt! - r.clock.now()} ms (attempt ${attempt + 1} of 5)`);
      delays.push(r.conn.nextAttemptAt! - r.clock.now());
      r.clock.advance(r.conn.nextAttemptAt! - r.clock.now());
    }
    assert.deepEqual(delays, [499, 999, 1998, 3996], 'floor(0.999 × 250·2^n)');
    await r.failStart();
    assert.equal(r.conn.state, 'parked', 'five attempts spend the default budget');
    assert.equal(r.conn.nextAttemptAt! - r.clock.now(), 60_000);
    r.clock.advance(60_000);
    await r.ready();
    assert.equal(r.conn.state, 'ready');
    r.clock.advance(29_999);
    assert.notEqual(r.conn.attempts, 0, 'not proven before 30 s up');
    r.clock.advance(1);
    assert.equal(r.conn.attempts, 0, 'proven after 30 s up: the budget is whole again');

    // The cap: only a budget past five attempts reaches it.
    const capped = rig({ retries: 10 });
    capped.clock.randomValue = 0.999;
    void capped.conn.start();
    for (let attempt = 1; attempt <= 7; attempt++) {
      await capped.failStart();
      if (attempt < 7) capped.clock.advance(capped.conn.nextAttemptAt! - capped.clock.now());
    }
    assert.equal(capped.conn.nextAttemptAt! - capped.clock.now(), 29_970, 'floor(0.999 × min(30 000, 250·2^7))');
  });

  void it('with no settings, the breaker opens after 3 failed calls and admits a probe after 30 s', { timeout: 5000 }, async () => {
    const r = rig({});
    void r.conn.start();
    await r.ready();
    for (let i = 1; i <= 3; i++) {
      assert.equal(r.conn.breaker.state, 'closed', `open after ${i - 1} failure(s)`);
      r.last().outcome(false);
    }
    assert.equal(r.conn.breaker.state, 'open');
    r.clock.advance(29_999);
    const early = sink();
    r.conn.forward(call(1), early.s);
    assert.equal(early.got.failed[0]?.code, 'MCPG_SERVER_UNAVAILABLE', 'refused while open');
    r.clock.advance(1);
    const probe = sink();
    r.conn.forward(call(2), probe.s);
    assert.equal(probe.got.failed.length, 0);
    assert.equal(r.conn.breaker.state, 'half-open', 'the call after the cooldown is its probe');
  });

  void describe('first start', () => {
    void it('a first start that becomes ready resolves start() with true', { timeout: 5000 }, async () => {
      const r = rig();
      const first = r.conn.start();
      assert.equal(r.sessions.length, 1);
      assert.equal(r.last().startCalls, 1);
      assert.equal(r.conn.state, 'connecting');
      assert.equal(r.conn.info, undefined);
      await r.ready();
      assert.equal(await first, true);
      assert.equal(r.conn.state, 'ready');
      assert.deepEqual(r.events, ['ready']);
      assert.deepEqual(r.conn.info, INFO);
      assert.equal(r.conn.pid, 4242);
      assert.equal(r.conn.attempts, 1);
      assert.equal(r.conn.nextAttemptAt, undefined);
      assert.equal(r.conn.nextStep, undefined);
      assert.equal(r.conn.lastError, undefined);
    });

    void it('a first start that fails resolves false and backs off with full jitter', { timeout: 5000 }, async () => {
      const r = rig();
      const first = r.conn.start();
      await r.failStart();
      assert.equal(await first, false);
      assert.equal(r.conn.state, 'backoff');
      assert.equal(r.conn.attempts, 1);
      // random 0.5, attempt 1: floor(0.5 × min(1000, 100·2¹)) = 100
      assert.equal(r.conn.nextAttemptAt, r.t0 + 100);
      assert.equal(r.conn.nextStep, 'retrying in 100 ms (attempt 2 of 3)');
      assert.equal(r.conn.lastError?.code, 'MCPG_SERVER_START_FAILED');
      assert.equal(r.conn.lastError?.message, 'server "srv": spawn x ENOENT');
      assert.equal(r.sessions[0]!.closeCalls, 1, 'the failed session is closed');
      assert.deepEqual(r.events, [], 'a server that never served is neither published nor withdrawn');
      // a call meanwhile fails at once, saying when the next attempt is
      const { s, got } = sink();
      assert.equal(r.conn.forward(call(), s), 0);
      assert.equal(got.failed.length, 1);
      assert.equal(got.failed[0]!.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.equal(got.failed[0]!.message, 'server "srv" is not connected: server "srv": spawn x ENOENT; next attempt in 1 s');
      // the timer makes the next attempt, with a new session
      r.clock.advance(99);
      assert.equal(r.sessions.length, 1);
      r.clock.advance(1);
      assert.equal(r.sessions.length, 2);
      assert.equal(r.conn.state, 'connecting');
      assert.equal(r.conn.attempts, 2);
      assert.equal(r.conn.nextAttemptAt, undefined);
      await r.ready();
      assert.equal(r.conn.state, 'ready');
      assert.deepEqual(r.events, ['ready']);
      assert.equal(r.conn.lastError, undefined);
    });

    void it('the delay doubles with each attempt, is capped, and is scaled by random()', { timeout: 5000 }, async () => {
      const r = rig({ ...SUPERVISION, retries: 6, backoffCapMs: 500 });
      void r.conn.start();
      const delays: number[] = [];
      for (let i = 0; i < 4; i++) {
        await r.failStart();
        assert.equal(r.conn.state, 'backoff');
        delays.push(r.conn.nextAttemptAt! - r.clock.now());
        r.clock.advance(r.conn.nextAttemptAt! - r.clock.now());
      }
      // attempts 1..4 → min(500, 100·2^n) = 200, 400, 500, 500; × 0.5
      assert.deepEqual(delays, [100, 200, 250, 250]);
      r.clock.randomValue = 0.99;
      await r.failStart();
      // attempt 5: floor(0.99 × 500)
      assert.equal(r.conn.nextAttemptAt! - r.clock.now(), 495);
      r.clock.advance(495);
      r.clock.randomValue = 0;
      await r.failStart();
      assert.equal(r.conn.state, 'parked', 'six attempts spent the budget of 6');
      assert.equal(r.sessions.length, 6);
    });
  });

  void describe('parking', () => {
    void it(
      'a server that never comes up parks after `retries` attempts, then probes itself on a slow timer',
      { timeout: 5000 },
      async () => {
        const r = rig();
        const first = r.conn.start();
        await r.failStart(); // attempt 1
        assert.equal(await first, false);
        r.clock.advance(100);
        await r.failStart(); // attempt 2
        assert.equal(r.conn.state, 'backoff');
        assert.equal(r.conn.nextAttemptAt, r.clock.now() + 200);
        r.clock.advance(200);
        await r.failStart(); // attempt 3: the budget is spent
        assert.equal(r.conn.state, 'parked');
        assert.equal(r.conn.attempts, 3);
        assert.equal(r.sessions.length, 3);
        const parkedAt = r.clock.now();
        assert.equal(r.conn.nextAttemptAt, parkedAt + 60_000);
        assert.equal(r.conn.nextStep, 'parked after 3 attempt(s): it tries again every 60 s, or at once on SIGHUP');
        assert.deepEqual(r.events, []);
        const { s, got } = sink();
        r.conn.forward(call(), s);
        assert.equal(got.failed[0]!.message, 'server "srv" is parked: server "srv": spawn x ENOENT; next attempt in 60 s');
        // the slow self-probe: one attempt after parkProbeMs
        r.clock.advance(59_999);
        assert.equal(r.sessions.length, 3);
        r.clock.advance(1);
        assert.equal(r.sessions.length, 4);
        assert.equal(r.conn.state, 'connecting');
        await r.failStart();
        assert.equal(r.conn.state, 'parked', 'a failed self-probe parks again at once');
        assert.equal(r.conn.nextAttemptAt, parkedAt + 120_000);
        r.clock.advance(60_000);
        assert.equal(r.sessions.length, 5, 'and probes again a parkProbeMs later');
        await r.ready();
        assert.equal(r.conn.state, 'ready');
        assert.deepEqual(r.events, ['ready']);
      },
    );

    void it(
      'a server lost after serving stays listed while it backs off, and is withdrawn once when it parks',
      { timeout: 5000 },
      async () => {
        const r = await started();
        const reason = r.last().crash();
        assert.deepEqual(r.events, ['ready', 'interrupted'], 'a restart is no withdrawal');
        assert.equal(r.lostReasons[0], reason);
        assert.equal(r.conn.state, 'backoff');
        assert.equal(r.conn.info, undefined);
        assert.equal(r.conn.nextAttemptAt, r.clock.now() + 100);
        r.clock.advance(100);
        await r.failStart(); // attempt 2
        assert.equal(r.conn.state, 'backoff');
        assert.deepEqual(r.events, ['ready', 'interrupted'], 'a failed restart attempt withdraws nothing either');
        r.clock.advance(200);
        await r.failStart(); // attempt 3
        assert.equal(r.conn.state, 'parked');
        assert.deepEqual(r.events, ['ready', 'interrupted', 'lost'], 'parking withdraws the server it kept listed');
        assert.equal(r.lostReasons[1]?.message, 'server "srv": spawn x ENOENT');
        r.clock.advance(60_000);
        await r.failStart();
        assert.equal(r.conn.state, 'parked');
        assert.deepEqual(r.events, ['ready', 'interrupted', 'lost'], 'lost is called once');
      },
    );

    void it('a call while it restarts gets a retryable MCPG_SERVER_UNAVAILABLE saying when', { timeout: 5000 }, async () => {
      const r = await started();
      r.last().crash();
      const { s, got } = sink();
      assert.equal(r.conn.forward(call(), s), 0);
      const backoff = got.failed[0]!;
      assert.equal(backoff.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.equal(backoff.message, 'server "srv" is restarting: server "srv" exited with code 1; it restarts in 1 s, retry the call then');
      assert.deepEqual(backoff.toJsonRpc().data, {
        state: 'backoff',
        retryable: true,
        retryAt: new Date(r.clock.now() + 100).toISOString(),
        code: 'MCPG_SERVER_UNAVAILABLE',
        server: 'srv',
      });
      r.clock.advance(100);
      assert.equal(r.conn.state, 'connecting');
      const { s: s2, got: got2 } = sink();
      r.conn.forward(call(2), s2);
      assert.equal(
        got2.failed[0]!.message,
        'server "srv" is restarting: server "srv" exited with code 1; it is starting again now, retry the call then',
      );
      assert.deepEqual(got2.failed[0]!.toJsonRpc().data, {
        state: 'connecting',
        retryable: true,
        code: 'MCPG_SERVER_UNAVAILABLE',
        server: 'srv',
      });
      await r.ready();
      assert.deepEqual(r.events, ['ready', 'interrupted', 'ready']);
    });

    void it('a connection that never served is not "restarting": its first attempts are not retryable restarts', { timeout: 5000 }, () => {
      const r = rig();
      void r.conn.start();
      assert.equal(r.conn.state, 'connecting');
      const { s, got } = sink();
      r.conn.forward(call(), s);
      assert.equal(got.failed[0]!.message, 'server "srv" is connecting');
      assert.equal((got.failed[0]!.toJsonRpc().data as Record<string, unknown>).retryable, undefined);
    });

    void it('needing a login parks at once and withdraws the server it served', { timeout: 5000 }, async () => {
      const r = await started();
      r.last().crash(new GatewayError('MCPG_SERVER_NEEDS_LOGIN', 'server "srv" needs a login'));
      assert.equal(r.conn.state, 'parked');
      assert.deepEqual(r.events, ['ready', 'lost']);
    });

    void it(
      'a park probe that succeeds serves again, but with the budget still spent until it proves itself',
      { timeout: 5000 },
      async () => {
        const r = rig();
        void r.conn.start();
        await r.failStart();
        r.clock.advance(100);
        await r.failStart();
        r.clock.advance(200);
        await r.failStart();
        assert.equal(r.conn.state, 'parked');
        r.clock.advance(60_000);
        await r.ready();
        assert.equal(r.conn.state, 'ready');
        assert.deepEqual(r.events, ['ready']);
        assert.equal(r.conn.attempts, 3);
        r.last().crash();
        assert.equal(r.conn.state, 'parked', 'a crash before proving itself parks again without a burst of retries');
        assert.deepEqual(r.events, ['ready', 'lost'], 'parking straight from ready withdraws at once');
      },
    );

    void it('revive() from parked attempts at once with a fresh budget and cancels the park timer', { timeout: 5000 }, async () => {
      const r = rig();
      void r.conn.start();
      await r.failStart();
      r.clock.advance(100);
      await r.failStart();
      r.clock.advance(200);
      await r.failStart();
      assert.equal(r.conn.state, 'parked');
      r.conn.revive('SIGHUP');
      assert.equal(r.sessions.length, 4, 'the attempt is immediate');
      assert.equal(r.conn.state, 'connecting');
      assert.equal(r.conn.attempts, 1);
      assert.equal(r.conn.nextAttemptAt, undefined);
      await r.failStart();
      assert.equal(r.conn.state, 'backoff', 'a fresh budget: it backs off instead of parking again');
      assert.equal(r.conn.nextAttemptAt, r.clock.now() + 100);
      r.clock.advance(100);
      assert.equal(r.sessions.length, 5);
      await r.ready();
      assert.equal(r.conn.state, 'ready');
      r.clock.advance(120_000);
      assert.equal(r.sessions.length, 5, 'the old park timer was cancelled');
    });

    void it('revive() from backoff attempts at once and cancels the backoff timer', { timeout: 5000 }, async () => {
      const r = rig();
      void r.conn.start();
      await r.failStart();
      r.clock.advance(100);
      await r.failStart();
      assert.equal(r.conn.attempts, 2);
      assert.equal(r.conn.state, 'backoff');
      r.conn.revive('test');
      assert.equal(r.sessions.length, 3);
      assert.equal(r.conn.attempts, 1);
      await r.ready();
      r.clock.advance(10_000);
      assert.equal(r.sessions.length, 3);
      assert.equal(r.conn.state, 'ready');
    });

    void it('revive() while ready or connecting does nothing', { timeout: 5000 }, async () => {
      const r = rig();
      void r.conn.start();
      r.conn.revive('test');
      assert.equal(r.sessions.length, 1);
      await r.ready();
      r.conn.revive('test');
      assert.equal(r.sessions.length, 1);
      assert.equal(r.conn.state, 'ready');
      assert.equal(r.conn.attempts, 1);
    });
  });

  void describe('reconnecting', () => {
    void it(
      'a crash after ready: interrupted (still listed), backoff, reconnect, ready again, breaker reset',
      { timeout: 5000 },
      async () => {
        const r = await started();
        const { s } = sink();
        r.conn.forward(call(), s);
        r.last().outcome(false);
        r.last().outcome(false);
        assert.equal(r.conn.breaker.failures, 2);
        r.last().crash();
        assert.deepEqual(r.events, ['ready', 'interrupted']);
        assert.equal(r.conn.state, 'backoff');
        assert.equal(r.conn.lastError?.message, 'server "srv" exited with code 1');
        // calls fail at once without touching the dead session (and without feeding the breaker)
        const { s: s2, got } = sink();
        assert.equal(r.conn.forward(call(2), s2), 0);
        assert.equal(
          got.failed[0]!.message,
          'server "srv" is restarting: server "srv" exited with code 1; it restarts in 1 s, retry the call then',
        );
        assert.equal(r.sessions[0]!.forwarded.length, 1);
        r.clock.advance(100);
        assert.equal(r.sessions.length, 2);
        await r.ready();
        assert.equal(r.conn.state, 'ready');
        assert.deepEqual(r.events, ['ready', 'interrupted', 'ready']);
        assert.equal(r.conn.breaker.state, 'closed');
        assert.equal(r.conn.breaker.failures, 0, 'a successful reconnect resets the breaker');
        assert.equal(r.conn.lastError, undefined);
      },
    );

    void it('a reconnect closes an open breaker', { timeout: 5000 }, async () => {
      const r = await started();
      for (let i = 0; i < 3; i++) r.last().outcome(false);
      assert.equal(r.conn.breaker.state, 'open');
      r.last().crash();
      r.clock.advance(100);
      await r.ready();
      assert.equal(r.conn.breaker.state, 'closed');
      const { s, got } = sink();
      const id = r.conn.forward(call(), s);
      assert.equal(got.failed.length, 0);
      assert.equal(r.last().forwarded.length, 1);
      assert.equal(id, r.last().forwarded[0]!.id);
    });

    void it(
      'a flapping server (ready, then crash, with no successful call) parks after `retries` attempts',
      { timeout: 5000 },
      async () => {
        const r = await started();
        for (let i = 0; i < 2; i++) {
          r.clock.advance(1000); // up for a second, well under stableMs
          r.last().crash();
          assert.equal(r.conn.state, 'backoff', `crash ${i + 1}`);
          r.clock.advance(r.conn.nextAttemptAt! - r.clock.now());
          await r.ready();
          assert.equal(r.conn.attempts, i + 2, 'a reconnect alone does not reset the budget');
        }
        r.clock.advance(1000);
        r.last().crash();
        assert.equal(r.conn.state, 'parked');
        assert.equal(r.sessions.length, 3);
        assert.deepEqual(
          r.events,
          ['ready', 'interrupted', 'ready', 'interrupted', 'ready', 'lost'],
          'listed through its restarts, withdrawn when it parks',
        );
      },
    );

    void it('a successful call proves the session: the budget resets', { timeout: 5000 }, async () => {
      const r = await started();
      r.last().crash();
      r.clock.advance(100);
      await r.ready();
      assert.equal(r.conn.attempts, 2);
      const { s } = sink();
      r.conn.forward(call(), s);
      r.last().outcome(true);
      assert.equal(r.conn.attempts, 0);
      r.last().crash();
      assert.equal(r.conn.state, 'backoff');
      // attempt 0 again: floor(0.5 × 100·2⁰)
      assert.equal(r.conn.nextAttemptAt, r.clock.now() + 50);
      // and a whole new budget of 3 before parking
      for (let i = 0; i < 2; i++) {
        r.clock.advance(r.conn.nextAttemptAt - r.clock.now());
        await r.failStart();
        assert.equal(r.conn.state, 'backoff');
      }
      r.clock.advance(r.conn.nextAttemptAt - r.clock.now());
      await r.failStart();
      assert.equal(r.conn.state, 'parked');
    });

    void it('a failed call does not prove the session', { timeout: 5000 }, async () => {
      const r = await started();
      r.last().crash();
      r.clock.advance(100);
      await r.ready();
      r.last().outcome(false);
      assert.equal(r.conn.attempts, 2);
    });

    void it('staying up stableMs proves the session: the budget resets', { timeout: 5000 }, async () => {
      const r = await started();
      r.last().crash();
      r.clock.advance(100);
      await r.ready();
      assert.equal(r.conn.attempts, 2);
      r.clock.advance(29_999);
      assert.equal(r.conn.attempts, 2);
      r.clock.advance(1);
      assert.equal(r.conn.attempts, 0);
      r.last().crash();
      assert.equal(r.conn.nextAttemptAt, r.clock.now() + 50);
    });

    void it('the stable timer of a crashed session does not prove its successor', { timeout: 5000 }, async () => {
      const r = await started();
      r.clock.advance(29_000);
      r.last().crash();
      r.clock.advance(100);
      await r.ready();
      assert.equal(r.conn.attempts, 2);
      r.clock.advance(1000); // past the first session's 30 s
      assert.equal(r.conn.attempts, 2);
      r.clock.advance(29_000); // the second session's 30 s
      assert.equal(r.conn.attempts, 0);
    });

    void it('ids given to successive sessions are one shared counter', { timeout: 5000 }, async () => {
      const r = await started();
      const { s } = sink();
      assert.equal(r.conn.forward(call(1), s), 1);
      assert.equal(r.conn.forward(call(2), s), 2);
      r.last().crash();
      r.clock.advance(100);
      await r.failStart();
      r.clock.advance(200);
      await r.ready();
      assert.equal(r.idObjects.length, 3);
      assert.equal(r.idObjects[1], r.idObjects[0]);
      assert.equal(r.idObjects[2], r.idObjects[0]);
      assert.equal(r.conn.forward(call(3), s), 3, 'an id is never reused after a reconnect');
      assert.equal(r.sessions[2]!.forwarded[0]!.id, 3);
    });
  });

  void describe('breaker', () => {
    void it('consecutive failures open it: calls fail fast without touching the session', { timeout: 5000 }, async () => {
      const r = await started();
      const { s } = sink();
      for (let i = 1; i <= 3; i++) r.conn.forward(call(i), s);
      const session = r.last();
      assert.equal(session.forwarded.length, 3);
      session.outcome(false);
      session.outcome(false);
      assert.equal(r.conn.breaker.state, 'closed');
      session.outcome(false);
      assert.equal(r.conn.breaker.state, 'open');
      assert.equal(r.conn.breaker.trips, 1);
      const { s: fast, got } = sink();
      assert.equal(r.conn.forward(call(4), fast), 0);
      assert.equal(session.forwarded.length, 3, 'an open breaker does not touch the session');
      assert.equal(got.failed.length, 1);
      const err = got.failed[0]!;
      assert.equal(err.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.equal(err.message, 'server "srv" is unreachable (3 consecutive failures); it will be tried again in 10 s');
      assert.equal(err.server, 'srv');
      assert.deepEqual(err.detail, { breaker: 'open', retryable: true, retryAt: new Date(r.clock.now() + 10_000).toISOString() });
      r.clock.advance(4500);
      const { s: later, got: got2 } = sink();
      r.conn.forward(call(5), later);
      assert.equal(got2.failed[0]!.message, 'server "srv" is unreachable (3 consecutive failures); it will be tried again in 6 s');
      assert.equal(r.conn.state, 'ready', 'the breaker does not touch the supervision state');
    });

    void it('a success between failures keeps it closed', { timeout: 5000 }, async () => {
      const r = await started();
      const session = r.last();
      session.outcome(false);
      session.outcome(false);
      session.outcome(true);
      session.outcome(false);
      session.outcome(false);
      assert.equal(r.conn.breaker.state, 'closed');
      const { s, got } = sink();
      r.conn.forward(call(), s);
      assert.equal(got.failed.length, 0);
      assert.equal(session.forwarded.length, 1);
    });

    void it('after the cooldown one call goes through as a probe; its success closes the breaker', { timeout: 5000 }, async () => {
      const r = await started();
      const session = r.last();
      for (let i = 0; i < 3; i++) session.outcome(false);
      r.clock.advance(10_000);
      const { s: probe, got: probeGot } = sink();
      const id = r.conn.forward(call(1), probe);
      assert.equal(session.forwarded.length, 1, 'the probe reaches the session');
      assert.equal(id, session.forwarded[0]!.id);
      assert.equal(probeGot.failed.length, 0);
      assert.equal(r.conn.breaker.state, 'half-open');
      // calls made while the probe runs fail fast
      const { s: during, got } = sink();
      assert.equal(r.conn.forward(call(2), during), 0);
      assert.equal(session.forwarded.length, 1);
      assert.equal(got.failed[0]!.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.match(got.failed[0]!.message, /^server "srv" is unreachable \(3 consecutive failures\); it will be tried again in \d+ s$/);
      session.outcome(true);
      assert.equal(r.conn.breaker.state, 'closed');
      const { s: after, got: afterGot } = sink();
      r.conn.forward(call(3), after);
      assert.equal(afterGot.failed.length, 0);
      assert.equal(session.forwarded.length, 2);
    });

    void it('a failed probe re-opens it for another cooldown', { timeout: 5000 }, async () => {
      const r = await started();
      const session = r.last();
      for (let i = 0; i < 3; i++) session.outcome(false);
      r.clock.advance(10_500);
      const { s } = sink();
      r.conn.forward(call(1), s);
      assert.equal(session.forwarded.length, 1);
      r.clock.advance(1000);
      session.outcome(false);
      assert.equal(r.conn.breaker.state, 'open');
      const { s: s2, got } = sink();
      r.conn.forward(call(2), s2);
      assert.equal(session.forwarded.length, 1, 'the re-opened breaker blocks further calls');
      assert.equal(got.failed[0]!.message, 'server "srv" is unreachable (4 consecutive failures); it will be tried again in 10 s');
      r.clock.advance(10_000);
      r.conn.forward(call(3), s2);
      assert.equal(session.forwarded.length, 2, 'the next probe a cooldown later');
    });

    void it(
      'a probe that finds the session dead does not write to it, fails "reconnecting" and attempts at once',
      { timeout: 5000 },
      async () => {
        // A long backoff, so the cooldown ends while the connection is still waiting to retry.
        const r = await started({
          ...SUPERVISION,
          backoffBaseMs: 10_000,
          backoffCapMs: 60_000,
          breaker: { threshold: 3, cooldownMs: 1000 },
        });
        const dead = r.last();
        for (let i = 0; i < 3; i++) dead.outcome(false);
        dead.crash();
        assert.equal(r.conn.state, 'backoff');
        assert.equal(r.conn.nextAttemptAt, r.clock.now() + 10_000);
        r.clock.advance(1000);
        assert.equal(r.sessions.length, 1);
        const { s, got } = sink();
        assert.equal(r.conn.forward(call(), s), 0);
        assert.equal(dead.forwarded.length, 0, 'nothing is written into a dead pipe');
        assert.equal(got.failed.length, 1);
        assert.equal(got.failed[0]!.code, 'MCPG_SERVER_UNAVAILABLE');
        assert.equal(got.failed[0]!.message, 'server "srv" is reconnecting; try again shortly');
        assert.equal(r.sessions.length, 2, 'the probe asked for an immediate attempt');
        assert.equal(r.conn.state, 'connecting');
        assert.equal(r.conn.attempts, 1, 'with a fresh budget');
        assert.equal(r.conn.breaker.state, 'open', 'the aborted probe re-arms the breaker');
        assert.equal(r.conn.breaker.openedAt, r.clock.now());
        await r.ready();
        assert.equal(r.conn.breaker.state, 'closed', 'the reconnect resets it');
        const { s: s2, got: got2 } = sink();
        r.conn.forward(call(2), s2);
        assert.equal(got2.failed.length, 0);
        assert.equal(r.last().forwarded.length, 1, 'the next call goes straight through');
        r.clock.advance(20_000);
        assert.equal(r.sessions.length, 2, 'the old backoff timer was cancelled');
      },
    );

    void it('a probe while parked revives the connection (the #16788 wedge)', { timeout: 5000 }, async () => {
      const r = await started({ ...SUPERVISION, breaker: { threshold: 3, cooldownMs: 1000 } });
      for (let i = 0; i < 3; i++) r.last().outcome(false);
      r.last().crash();
      r.clock.advance(100);
      await r.failStart();
      r.clock.advance(200);
      await r.failStart();
      assert.equal(r.conn.state, 'parked');
      assert.equal(r.sessions.length, 3);
      r.clock.advance(1000); // the cooldown, well before the park timer
      assert.equal(r.sessions.length, 3);
      const { s, got } = sink();
      r.conn.forward(call(), s);
      assert.equal(got.failed[0]!.message, 'server "srv" is reconnecting; try again shortly');
      assert.equal(r.sessions.length, 4);
      assert.equal(r.conn.attempts, 1);
      await r.ready();
      assert.equal(r.conn.state, 'ready');
      assert.deepEqual(r.events, ['ready', 'interrupted', 'lost', 'ready']);
      r.clock.advance(60_000);
      assert.equal(r.sessions.length, 4, 'the park timer was cancelled');
    });

    void it(
      'a probe made while the next session is still connecting fails "reconnecting" without a second attempt',
      { timeout: 5000 },
      async () => {
        const r = await started({ ...SUPERVISION, breaker: { threshold: 3, cooldownMs: 1000 } });
        for (let i = 0; i < 3; i++) r.last().outcome(false);
        r.last().crash();
        r.clock.advance(1000); // the backoff (100 ms) has already started attempt 2
        assert.equal(r.conn.state, 'connecting');
        assert.equal(r.sessions.length, 2);
        const { s, got } = sink();
        r.conn.forward(call(), s);
        assert.equal(got.failed[0]!.message, 'server "srv" is reconnecting; try again shortly');
        assert.equal(r.sessions.length, 2);
        assert.equal(r.last().forwarded.length, 0);
      },
    );

    void it('a probe the agent cancels does not wedge the breaker', { timeout: 5000 }, async () => {
      // A cancelled call is settled without an outcome; the breaker must not stay half-open (failing
      // every call) for as long as the session lives.
      const r = await started({ ...SUPERVISION, breaker: { threshold: 3, cooldownMs: 1000 } });
      const session = r.last();
      for (let i = 0; i < 3; i++) session.outcome(false);
      r.clock.advance(1000);
      const { s } = sink();
      const id = r.conn.forward(call(1), s);
      assert.equal(session.forwarded.length, 1);
      r.conn.cancel(id, 'the agent cancelled');
      assert.deepEqual(session.cancelled, [id]);
      r.clock.advance(1000);
      const { s: s2, got } = sink();
      r.conn.forward(call(2), s2);
      assert.equal(got.failed.length, 0, got.failed[0]?.message);
      assert.equal(session.forwarded.length, 2, 'a new probe goes through');
      session.outcome(true);
      assert.equal(r.conn.breaker.state, 'closed');
    });

    void it(
      'a probe whose session dies under it does not wedge the breaker: a later call still revives a parked server',
      { timeout: 5000 },
      async () => {
        // The dead session fails its calls without an outcome; the breaker must not stay half-open
        // (failing every call fast) while the connection parks.
        const r = await started({ ...SUPERVISION, breaker: { threshold: 3, cooldownMs: 1000 } });
        const first = r.last();
        for (let i = 0; i < 3; i++) first.outcome(false);
        r.clock.advance(1000);
        const { s } = sink();
        r.conn.forward(call(1), s);
        assert.equal(first.forwarded.length, 1, 'the probe is in flight');
        first.crash();
        r.clock.advance(100);
        await r.failStart();
        r.clock.advance(200);
        await r.failStart();
        assert.equal(r.conn.state, 'parked');
        assert.equal(r.sessions.length, 3);
        r.clock.advance(1000);
        const { s: s2, got } = sink();
        r.conn.forward(call(2), s2);
        assert.equal(got.failed[0]!.message, 'server "srv" is reconnecting; try again shortly');
        assert.equal(r.sessions.length, 4, 'the call revived the parked server');
        await r.ready();
        assert.equal(r.conn.state, 'ready');
        assert.equal(r.conn.breaker.state, 'closed');
      },
    );
  });

  void describe('close', () => {
    void it('close() while ready closes the session, withdraws the server and is idempotent', { timeout: 5000 }, async () => {
      const r = await started();
      const p1 = r.conn.close();
      const p2 = r.conn.close();
      assert.equal(p1, p2);
      await p1;
      assert.equal(r.conn.state, 'closed');
      assert.equal(r.sessions[0]!.closeCalls, 1);
      assert.deepEqual(r.events, ['ready', 'lost']);
      assert.equal(r.lostReasons[0], undefined);
      r.clock.advance(1_000_000);
      assert.equal(r.sessions.length, 1, 'the stable timer and all others are cancelled');
      assert.equal(r.clock.pending, 0);
      const { s, got } = sink();
      r.conn.forward(call(), s);
      assert.equal(got.failed[0]!.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.equal(r.sessions[0]!.forwarded.length, 0);
      r.conn.revive('SIGHUP');
      assert.equal(r.sessions.length, 1, 'a closed connection cannot be revived');
    });

    void it('close() during backoff cancels the retry timer', { timeout: 5000 }, async () => {
      const r = rig();
      void r.conn.start();
      await r.failStart();
      assert.equal(r.conn.state, 'backoff');
      await r.conn.close();
      assert.equal(r.conn.state, 'closed');
      r.clock.advance(1_000_000);
      assert.equal(r.sessions.length, 1);
      assert.equal(r.clock.pending, 0);
    });

    void it('close() while parked cancels the self-probe', { timeout: 5000 }, async () => {
      const r = rig({ ...SUPERVISION, retries: 1 });
      void r.conn.start();
      await r.failStart();
      assert.equal(r.conn.state, 'parked');
      await r.conn.close();
      r.clock.advance(1_000_000);
      assert.equal(r.sessions.length, 1);
      assert.equal(r.conn.state, 'closed');
    });

    void it('close() during the first start settles start() with false and ignores a late ready', { timeout: 5000 }, async () => {
      const r = rig();
      const first = r.conn.start();
      await r.conn.close();
      assert.equal(await first, false);
      assert.equal(r.sessions[0]!.closeCalls, 1);
      r.sessions[0]!.ready();
      await flush();
      assert.equal(r.conn.state, 'closed');
      assert.deepEqual(r.events, ['lost']);
      r.clock.advance(1_000_000);
      assert.equal(r.sessions.length, 1);
    });

    void it('a crash after close() starts nothing', { timeout: 5000 }, async () => {
      const r = await started();
      await r.conn.close();
      r.sessions[0]!.crash();
      assert.equal(r.conn.state, 'closed');
      r.clock.advance(1_000_000);
      assert.equal(r.sessions.length, 1);
    });

    void it('destroy() destroys the session and stops supervising', { timeout: 5000 }, async () => {
      const r = await started();
      r.conn.destroy();
      assert.equal(r.conn.state, 'closed');
      assert.equal(r.sessions[0]!.destroyCalls, 1);
      r.clock.advance(1_000_000);
      assert.equal(r.sessions.length, 1);
    });
  });
});

void describe('Connection: a server that needs a login', () => {
  void it(
    'parks at once (no retries), errors carry MCPG_SERVER_NEEDS_LOGIN, and stored credentials revive it',
    { timeout: 5000 },
    async () => {
      const clock = new FakeClock();
      const sessions: FakeSession[] = [];
      let changed: (() => void) | undefined;
      let unwatched = 0;
      const credentials = {
        loginCommand: 'mcpgate login srv --agent a',
        header: () => undefined,
        bound: () => undefined,
        nonce: () => {},
        stale: false,
        ready: () => Promise.resolve(),
        concerns: () => true,
        unauthorized: () => Promise.resolve(),
        insufficientScope: () => Promise.resolve(),
        watch: (fn: () => void) => {
          changed = fn;
          return () => void (unwatched += 1);
        },
      };
      const hooks: ConnectionHooks = {
        notification: () => {},
        serverRequest: () => {},
        ready: () => Promise.resolve(),
        interrupted: () => {},
        lost: () => {},
      };
      const conn = new Connection(config, hooks, silentLogger, {
        startupTimeoutMs: 1000,
        supervision: SUPERVISION,
        clock,
        credentials,
        sessionFactory: (h, ids) => {
          const session = new FakeSession(h, ids);
          sessions.push(session);
          return session;
        },
      });
      const first = conn.start();
      sessions[0]!.failStart('needs login: run `mcpgate login srv`', 'MCPG_SERVER_NEEDS_LOGIN');
      await flush();
      assert.equal(await first, false);
      assert.equal(conn.state, 'parked');
      assert.equal(conn.attempts, 1, 'no retry was spent on it');
      assert.match(
        conn.nextStep ?? '',
        /run `mcpgate login srv --agent a`/,
        "the login hint is the credentials' own (an agent's account names --agent)",
      );
      const { s, got } = sink();
      conn.forward(call(), s);
      assert.equal(got.failed[0]?.code, 'MCPG_SERVER_NEEDS_LOGIN');
      clock.advance(1_000_000);
      assert.equal(sessions.length, 1, 'a parked needs-login connection does not probe on its own');
      changed!();
      await flush();
      assert.equal(sessions.length, 2, 'a stored login revives it');
      sessions[1]!.ready();
      await flush();
      assert.equal(conn.state, 'ready');
      await conn.close();
      assert.equal(unwatched, 1);
    },
  );
});

void describe('Connection: on demand ("start": "on-demand", "idleStop")', () => {
  const onDemand: StdioServerConfig = { ...config, start: 'on-demand', idleStop: 5000 };

  void it(
    'rests idle without a session; a call wakes it, and it stops idleStop ms after its last call ended',
    { timeout: 5000 },
    async () => {
      const r = rig(SUPERVISION, onDemand);
      r.conn.rest();
      assert.equal(r.conn.state, 'idle');
      assert.equal(r.conn.shownState, 'idle (on demand)');
      assert.equal(r.sessions.length, 0);
      const woken = r.conn.wake();
      assert.equal(r.conn.state, 'connecting');
      assert.equal(r.conn.demandStarts, 1);
      await r.ready();
      await woken;
      assert.equal(r.conn.state, 'ready');
      const a = sink();
      r.conn.forward(call(), a.s);
      r.clock.advance(10_000);
      assert.equal(r.conn.state, 'ready', 'a call in flight keeps it up');
      r.last().forwarded[0]!.sink.reply({ jsonrpc: '2.0', id: 1, result: {} }, '{}');
      r.clock.advance(4999);
      assert.equal(r.conn.state, 'ready');
      r.clock.advance(1);
      assert.equal(r.conn.state, 'idle');
      assert.equal(r.conn.demandStops, 1);
      assert.equal(r.last().closeCalls, 1, 'stopped gracefully');
      assert.deepEqual(r.events, ['ready', 'interrupted'], 'stays listed: interrupted, never lost');
      assert.equal(r.conn.pid, undefined);
      assert.equal(r.clock.pending, 0, 'no timer left');
      // The next call starts it again.
      const again = r.conn.wake();
      await r.ready();
      await again;
      assert.equal(r.sessions.length, 2);
      assert.equal(r.conn.demandStarts, 2);
      await r.conn.close();
      assert.equal(r.clock.pending, 0);
    },
  );

  void it('a cancelled call ends too: the idle time runs from then', { timeout: 5000 }, async () => {
    const r = rig(SUPERVISION, onDemand);
    r.conn.rest();
    const woken = r.conn.wake();
    await r.ready();
    await woken;
    const id = r.conn.forward(call(), sink().s);
    r.clock.advance(6000);
    assert.equal(r.conn.state, 'ready');
    r.conn.cancel(id, 'agent cancelled');
    r.clock.advance(5000);
    assert.equal(r.conn.state, 'idle');
  });

  void it(
    'a start that fails rejects every waiting call with why, once; while it backs off a call fails at once without a start',
    { timeout: 5000 },
    async () => {
      const r = rig(SUPERVISION, onDemand);
      r.conn.rest();
      const first = r.conn.wake();
      const second = r.conn.wake();
      assert.equal(r.sessions.length, 1, 'one start for both calls');
      await r.failStart();
      for (const waiting of [first, second]) {
        await assert.rejects(waiting, (err: GatewayError) => {
          assert.equal(err.code, 'MCPG_SERVER_UNAVAILABLE');
          assert.match(err.message, /^server "srv" could not be started on demand: server "srv": spawn x ENOENT; retrying in \d+ ms/);
          assert.equal(err.detail?.reason, 'MCPG_SERVER_START_FAILED');
          assert.equal(err.detail?.retryable, true);
          return true;
        });
      }
      assert.equal(r.conn.state, 'backoff');
      await assert.rejects(r.conn.wake(), (err: GatewayError) => err.code === 'MCPG_SERVER_UNAVAILABLE' && err.detail?.retryable === true);
      assert.equal(r.sessions.length, 1, 'no start for a call during backoff');
      await r.conn.close();
      assert.equal(r.clock.pending, 0);
    },
  );

  void it('the learning start stops at once once listed without idleStop, unless a call waited for it', { timeout: 5000 }, async () => {
    const plain: StdioServerConfig = { ...config, start: 'on-demand' };
    const r = rig(SUPERVISION, plain);
    const settled = r.conn.start();
    await r.ready();
    assert.equal(await settled, true);
    r.clock.advance(0);
    assert.equal(r.conn.state, 'idle');
    assert.equal(r.conn.demandStops, 0, 'learning is not counted as a stop');
    const b = rig(SUPERVISION, plain);
    void b.conn.start();
    const waiting = b.conn.wake();
    await b.ready();
    await waiting;
    b.clock.advance(60_000);
    assert.equal(b.conn.state, 'ready', 'started for a call, it runs on (no idleStop)');
    await Promise.all([r.conn.close(), b.conn.close()]);
  });

  void it('closing rejects a call waiting for the start and clears every timer', { timeout: 5000 }, async () => {
    const r = rig(SUPERVISION, onDemand);
    r.conn.rest();
    const waiting = r.conn.wake();
    await r.conn.close();
    await assert.rejects(waiting, (err: GatewayError) => err.code === 'MCPG_SERVER_UNAVAILABLE' && /was closed/.test(err.message));
    assert.equal(r.clock.pending, 0);
  });
});
