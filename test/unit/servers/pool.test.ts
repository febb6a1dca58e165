// The pool's mechanics (src/servers/pool.ts) over in-memory servers
// (fake-server.ts) and a fake clock: hits and misses, idle and TTL eviction (never of a busy
// connection), the cap with LRU eviction and MCPG_POOL_EXHAUSTED, the creation breaker (trip, fast
// failure, half-open probe, recovery), closing by scope, server and rule, and close().

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { Connection } from '../../../src/servers/connection.js';
import { ConnectionPool } from '../../../src/servers/pool.js';
import { scopeOf } from '../../../src/servers/pool.js';
import { scope } from '../../helpers/route-parts.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeServer, stdioConfig } from '../../helpers/fake-server.js';

const T = { timeout: 10_000 };

function rig(pool: { idleMs?: number; ttlMs?: number; max?: number; healthCheck?: { idleMs: number; timeoutMs: number } } = {}) {
  const clock = new FakeClock();
  const config: ServerConfig = { ...stdioConfig('kv'), sessions: 'per-agent', pool: { idleMs: 1000, ttlMs: 10_000, max: 3, ...pool } };
  const made: { scope: string; conn: Connection; server: FakeServer }[] = [];
  const busy = new Set<Connection>();
  let refuse = false;
  const p = new ConnectionPool({
    create: (cfg, scope) => {
      const server = new FakeServer(cfg.name, { tools: [{ name: 'get' }] });
      const conn = new Connection(
        cfg,
        {
          notification: () => undefined,
          serverRequest: () => undefined,
          ready: () => Promise.resolve(),
          interrupted: () => undefined,
          lost: () => undefined,
        },
        silentLogger,
        {
          startupTimeoutMs: 5000,
          supervision: { retries: 0 },
          transport: (_cfg, _log, events) => {
            if (refuse) throw new GatewayError('MCPG_SERVER_START_FAILED', 'refused');
            return server.open(events);
          },
        },
      );
      made.push({ scope: scope.key, conn, server });
      return conn;
    },
    busy: (conn) => busy.has(conn),
    log: silentLogger,
    clock,
    breaker: { threshold: 2, cooldownMs: 5000 },
  });
  return { clock, config, made, busy, pool: p, refuse: (on: boolean) => (refuse = on) };
}

/** The pool's answer, awaited: the connection or the error. */
async function take(r: ReturnType<typeof rig>, text: string): Promise<Connection | GatewayError> {
  try {
    return await r.pool.get(r.config, scope(text), { agent: text.replace(/^agent:/, ''), identified: true });
  } catch (err) {
    return err as GatewayError;
  }
}

const stats = (r: ReturnType<typeof rig>) => r.pool.stats(['kv'])[0]!;

void describe('ConnectionPool', () => {
  void it('a miss makes and starts a connection; a hit returns the same one at once; scopes are apart', T, async () => {
    const r = rig();
    const a = await take(r, 'agent:a');
    assert.ok(a instanceof Connection && a.state === 'ready');
    const again = r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true });
    assert.equal(again, a, 'a hit is synchronous: no promise');
    const b = await take(r, 'agent:b');
    assert.notEqual(b, a);
    assert.deepEqual(
      { ...stats(r), pids: [] },
      {
        server: 'kv',
        keys: 2,
        active: 0,
        idle: 2,
        hits: 1,
        misses: 2,
        evictions: 0,
        reaped: 0,
        creationFailures: 0,
        breaker: 'closed',
        breakerTrips: 0,
        pids: [],
      },
    );
    await r.pool.close();
    assert.equal(a.state, 'closed');
  });

  void it('callers that come while a connection starts share it', T, async () => {
    const r = rig();
    const [x, y] = await Promise.all([take(r, 'agent:a'), take(r, 'agent:a')]);
    assert.equal(x, y);
    assert.equal(r.made.length, 1);
    await r.pool.close();
  });

  void it('idle eviction closes an unused connection, never a busy one; a use moves the deadline', T, async () => {
    const r = rig();
    const a = (await take(r, 'agent:a')) as Connection;
    r.clock.advance(800);
    assert.equal(r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true }), a);
    r.clock.advance(800);
    assert.equal(a.state, 'ready', 'used 800 ms ago: not idle yet');
    r.busy.add(a);
    r.clock.advance(5000);
    assert.equal(a.state, 'ready', 'a call in flight keeps it');
    r.busy.delete(a);
    r.clock.advance(5000);
    assert.equal(a.state, 'closed');
    assert.equal(stats(r).evictions, 1);
    const fresh = await take(r, 'agent:a');
    assert.notEqual(fresh, a, 'the next use makes a new one');
    await r.pool.close();
  });

  void it('TTL closes a connection however often it is used', T, async () => {
    const r = rig({ ttlMs: 3000 });
    const a = (await take(r, 'agent:a')) as Connection;
    for (let i = 0; i < 5; i++) {
      r.clock.advance(700);
      void r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true });
    }
    assert.equal(a.state, 'closed');
    await r.pool.close();
  });

  void it('past pool.max the least recently used idle connection goes; all busy: MCPG_POOL_EXHAUSTED', T, async () => {
    const r = rig({ max: 2 });
    const a = (await take(r, 'agent:a')) as Connection;
    r.clock.advance(10);
    const b = (await take(r, 'agent:b')) as Connection;
    r.clock.advance(10);
    void r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true }); // a is now the more recently used
    const c = (await take(r, 'agent:c')) as Connection;
    assert.equal(b.state, 'closed', 'b was the least recently used');
    assert.equal(a.state, 'ready');
    r.busy.add(a);
    r.busy.add(c);
    const refused = await take(r, 'agent:d');
    assert.ok(
      refused instanceof GatewayError && refused.code === 'MCPG_POOL_EXHAUSTED',
      refused instanceof Error ? refused.message : 'not an error',
    );
    assert.match(refused.message, /server "kv" has 2 pooled connections \(its pool.max\) and all are busy/);
    assert.equal(stats(r).keys, 2);
    await r.pool.close();
  });

  void it('the creation breaker trips after failed creations, fails fast, then one half-open creation recovers it', T, async () => {
    const r = rig();
    r.refuse(true);
    for (const scope of ['agent:a', 'agent:b']) {
      const err = await take(r, scope);
      assert.ok(err instanceof GatewayError && err.code !== 'MCPG_POOL_EXHAUSTED', err instanceof Error ? err.message : 'not an error');
    }
    assert.equal(stats(r).keys, 0, 'failed creations leave nothing behind');
    const fast = await take(r, 'agent:c');
    assert.ok(fast instanceof GatewayError && fast.code === 'MCPG_SERVER_UNAVAILABLE');
    assert.match(fast.message, /2 connections in a row failed to start; the next attempt is in 5 s/);
    assert.equal(r.made.length, 2, 'nothing was made while open');
    r.refuse(false);
    r.clock.advance(5000);
    const probe = r.pool.get(r.config, scope('agent:c'), { agent: 'c', identified: true });
    const during = await take(r, 'agent:d');
    assert.ok(during instanceof GatewayError && during.code === 'MCPG_SERVER_UNAVAILABLE', 'one probe at a time');
    assert.ok((await probe) instanceof Connection);
    assert.ok((await take(r, 'agent:d')) instanceof Connection, 'closed again');
    assert.deepEqual([stats(r).creationFailures, stats(r).breakerTrips, stats(r).breaker], [2, 1, 'closed']);
    await r.pool.close();
  });

  void it('closes exactly what belongs to a scope, a server, or an agent that lost access', T, async () => {
    const r = rig({ max: 10 });
    const a = (await take(r, 'agent:a')) as Connection;
    const s1 = (await take(r, 'session:1')) as Connection;
    const b = (await take(r, 'agent:b')) as Connection;
    await r.pool.closeScope(scope('session:1'));
    assert.deepEqual([a.state, s1.state, b.state], ['ready', 'closed', 'ready']);
    await r.pool.retain((entry) => entry.agent !== 'b');
    assert.deepEqual([a.state, b.state], ['ready', 'closed']);
    await r.pool.closeServer('kv');
    assert.equal(a.state, 'closed');
    assert.equal(r.pool.list().length, 0);
    await r.pool.close();
    const late = await take(r, 'agent:z');
    assert.ok(late instanceof GatewayError && late.code === 'MCPG_SHUTTING_DOWN');
  });

  void it('a pooled connection whose session died is reaped, not revived in place', T, async () => {
    const r = rig();
    const a = (await take(r, 'agent:a')) as Connection;
    r.pool.reap(a);
    assert.equal(stats(r).reaped, 1);
    assert.notEqual(await take(r, 'agent:a'), a);
    await r.pool.close();
  });
});

void describe('scopeOf (the pool key of an agent session)', () => {
  void it('per-agent: the agent id when the agent is identified, else the session itself; per-session: the session', T, () => {
    const named = { agent: 'ci', identified: true, serial: 7 };
    const unnamed = { agent: 'default', identified: false, serial: 8 };
    assert.equal(scopeOf(named, 'per-agent').key, 'agent:ci');
    assert.equal(scopeOf({ ...named, serial: 9 }, 'per-agent').key, 'agent:ci', 'all sessions of one agent share its scope');
    assert.equal(scopeOf(unnamed, 'per-agent').key, 'session:8', 'never one scope shared by every unnamed agent');
    assert.equal(scopeOf(named, 'per-session').key, 'session:7');
  });
});

void describe('ConnectionPool health check before reuse (pool.healthCheck; opt-in)', () => {
  void it('health check off (the default): an idle connection is handed out as it is, even hung', T, async () => {
    const r = rig();
    const a = await take(r, 'agent:a');
    r.made[0]!.server.hung = true;
    r.clock.advance(900);
    assert.equal(r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true }), a, 'no check: a synchronous hit');
    await r.pool.close();
  });

  void it('health check: a connection idle past its threshold is checked (ping unsupported: a cheap list) and reused', T, async () => {
    const r = rig({ healthCheck: { idleMs: 100, timeoutMs: 2000 } });
    const a = await take(r, 'agent:a');
    assert.equal(r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true }), a, 'used just now: no check');
    r.clock.advance(150);
    const checked = r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true });
    assert.ok(checked instanceof Promise, 'idle past the threshold: checked first');
    assert.equal(
      r.pool.get(r.config, scope('agent:a'), { agent: 'a', identified: true }),
      checked,
      'a caller meanwhile waits on the same check',
    );
    assert.equal(await checked, a, 'the fake server has no ping (-32601); its tools/list answered');
    assert.equal(stats(r).reaped, 0);
    await r.pool.close();
  });

  void it('health check: a connection that does not answer in time is reaped and the caller gets a fresh one', T, async () => {
    const r = rig({ healthCheck: { idleMs: 100, timeoutMs: 50 } });
    const a = await take(r, 'agent:a');
    assert.ok(a instanceof Connection);
    r.made[0]!.server.hung = true;
    r.clock.advance(150);
    // The session's request timeouts run on an unref'd sweep (a real child process keeps the loop
    // alive); the fake transport has no process, so the test holds the loop open while it waits.
    const alive = setInterval(() => undefined, 1000);
    const fresh = await take(r, 'agent:a').finally(() => clearInterval(alive));
    assert.ok(fresh instanceof Connection && fresh !== a && fresh.state === 'ready');
    assert.equal(a.state, 'closed', 'the hung one was closed');
    assert.equal(r.made.length, 2);
    assert.equal(stats(r).reaped, 1);
    assert.equal(stats(r).keys, 1);
    await r.pool.close();
  });
});
