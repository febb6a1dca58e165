// Sessions per agent: a stateful server (test/fixtures/counter-server.ts: one
// counter per process) behind `"sessions": "per-agent"` and `"per-session"`, driven by official SDK
// clients over Streamable HTTP (--no-auth, agents named by X-Mcpgate-Agent) and over stdio. Seed 002
// behaviours: one server session per client (two agents never share state), reuse of a live session
// (a hit), sessions closed when their owner ends, idle eviction closing the child (checked by pid),
// a creation breaker that trips and recovers, caps that hold with 200 agents, and server→agent
// requests that reach only the owner.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import {
  alive,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  waitGone,
  writeConfig,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 90_000;

/** `count=N pid=P` → { count, pid }. */
function counter(result: unknown): { count: number; pid: number } {
  const match = /^count=(\d+) pid=(\d+)$/.exec(textOf(result));
  assert.ok(match !== null, textOf(result));
  return { count: Number(match[1]), pid: Number(match[2]) };
}

const inc = async (client: Client, server = 'counter'): Promise<{ count: number; pid: number }> =>
  counter(await client.callTool({ name: `${server}__inc`, arguments: {} }));

async function agent(gate: HttpGateway, name: string, options: Parameters<typeof connectAgent>[1] = {}) {
  return connectAgent(gate.url, { ...options, headers: { 'x-mcpgate-agent': name } });
}

async function status(gate: HttpGateway): Promise<{
  pools: {
    server: string;
    keys: number;
    hits: number;
    misses: number;
    evictions: number;
    reaped: number;
    pids: number[];
    creationFailures: number;
    breakerTrips: number;
  }[];
}> {
  const res = await raw(`${gate.base}/status`, { method: 'GET' });
  return res.json as never;
}

describe('per-agent and per-session servers over Streamable HTTP', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const closers: (() => Promise<unknown>)[] = [];
  const track = <T extends { client: Client }>(a: T): T => (closers.push(() => a.client.close()), a);

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      counter: fixtureServer('counter-server', [], { sessions: 'per-agent' }),
      scratch: fixtureServer('counter-server', [], { sessions: 'per-session' }),
      shared: fixtureServer('counter-server'),
    });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await gate?.stop();
    await dir?.remove();
  });

  it("two agents on a per-agent server never see each other's state; one agent's sessions share its own", async () => {
    const alice = track(await agent(gate, 'alice'));
    const bob = track(await agent(gate, 'bob'));
    assert.equal((await inc(alice.client)).count, 1);
    const a2 = await inc(alice.client);
    assert.equal(a2.count, 2);
    const b1 = await inc(bob.client);
    assert.equal(b1.count, 1, "bob's counter is his own");
    assert.notEqual(b1.pid, a2.pid, 'each agent has its own child process');
    // A second session of alice reaches the same server session (per-agent, not per-session).
    const alice2 = track(await agent(gate, 'alice'));
    assert.deepEqual(await inc(alice2.client), { count: 3, pid: a2.pid });
    // The shared server is one process for everyone, as before.
    const s1 = await inc(alice.client, 'shared');
    const s2 = await inc(bob.client, 'shared');
    assert.equal(s2.pid, s1.pid);
    assert.equal(s2.count, s1.count + 1);
    const pool = (await status(gate)).pools.find((p) => p.server === 'counter')!;
    assert.equal(pool.keys, 2);
    assert.ok(pool.hits >= 2 && pool.misses === 2, JSON.stringify(pool));
    assert.deepEqual(new Set(pool.pids), new Set([a2.pid, b1.pid]));
  });

  it('per-session isolates two sessions of one agent, and ending a session stops its child', async () => {
    const one = await agent(gate, 'carol');
    const two = track(await agent(gate, 'carol'));
    const p1 = await inc(one.client, 'scratch');
    await inc(one.client, 'scratch');
    const p2 = await inc(two.client, 'scratch');
    assert.equal(p2.count, 1, 'the second session has its own counter');
    assert.notEqual(p2.pid, p1.pid);
    await one.transport.terminateSession(); // DELETE
    await one.client.close();
    assert.ok(await waitGone(p1.pid), "the ended session's server process exited");
    assert.ok(alive(p2.pid), "the other session's process is untouched");
    assert.equal((await inc(two.client, 'scratch')).count, 2);
  });

  it('sampling and elicitation from a per-agent server reach only its agent, even with both agents busy', async () => {
    const asked: string[] = [];
    const setup = (who: string) => (c: Client) => {
      c.setRequestHandler('sampling/createMessage', () => {
        asked.push(`${who}:sample`);
        return { model: 'm', role: 'assistant', content: { type: 'text', text: who } };
      });
      c.setRequestHandler('elicitation/create', () => {
        asked.push(`${who}:elicit`);
        return { action: 'accept', content: { name: who } };
      });
    };
    const capabilities = { sampling: {}, elicitation: {} };
    const dave = track(await agent(gate, 'dave', { capabilities, setup: setup('dave') }));
    const erin = track(await agent(gate, 'erin', { capabilities, setup: setup('erin') }));
    // Both at once: on a shared server this is the ambiguous case that is refused.
    const [d, e] = await Promise.all([
      dave.client.callTool({ name: 'counter__sample', arguments: {} }),
      erin.client.callTool({ name: 'counter__sample', arguments: {} }),
    ]);
    assert.equal(textOf(d), 'sampled: dave');
    assert.equal(textOf(e), 'sampled: erin');
    const [de, ee] = await Promise.all([
      dave.client.callTool({ name: 'counter__elicit', arguments: {} }),
      erin.client.callTool({ name: 'counter__elicit', arguments: {} }),
    ]);
    assert.equal(textOf(de), 'elicited: {"name":"dave"}');
    assert.equal(textOf(ee), 'elicited: {"name":"erin"}');
    assert.deepEqual(asked.sort(), ['dave:elicit', 'dave:sample', 'erin:elicit', 'erin:sample']);
  });

  it('removing the server from .mcp.json closes all its pooled sessions', async () => {
    const frank = track(await agent(gate, 'frank'));
    await inc(frank.client);
    const pids = (await status(gate)).pools.find((p) => p.server === 'counter')!.pids;
    assert.ok(pids.length >= 3, JSON.stringify(pids));
    await writeConfig(dir, {
      scratch: fixtureServer('counter-server', [], { sessions: 'per-session' }),
      shared: fixtureServer('counter-server'),
    });
    await gate.gw.waitForLog((l) => String(l.msg).startsWith('configuration reloaded ('));
    for (const pid of pids) assert.ok(await waitGone(pid), `pooled process ${pid} exited`);
    assert.equal(
      (await status(gate)).pools.find((p) => p.server === 'counter'),
      undefined,
    );
    const gone = await rpcError(frank.client.callTool({ name: 'counter__inc', arguments: {} }));
    assert.match(gone.message, /unknown tool|not connected/);
  });
});

describe('pool lifetimes and limits', { timeout: TIMEOUT }, () => {
  let dir: TempDir;

  before(async () => {
    dir = await tempDir();
  });
  after(() => dir?.remove());

  it('idle eviction closes the connection and its child; the next call starts afresh (stdio agent)', async () => {
    const config = await writeConfig(
      dir,
      { counter: fixtureServer('counter-server', [], { sessions: 'per-agent', pool: { idleMs: 1000 } }) },
      'idle.json',
    );
    const gw = await startGateway({ config, agent: 'solo', args: ['--pins', 'off'] });
    try {
      const first = await inc(gw.client);
      assert.equal((await inc(gw.client)).count, 2);
      assert.ok(await waitGone(first.pid), 'the idle child was stopped');
      await gw.waitForLog((l) => String(l.msg).startsWith('pooled connection idle'));
      const again = await inc(gw.client);
      assert.equal(again.count, 1, 'a new session: state starts over');
      assert.notEqual(again.pid, first.pid);
    } finally {
      await gw.stop();
    }
  });

  it('the creation breaker trips on a server that refuses sessions, fails fast, and recovers', async () => {
    const gateFile = dir.file('gate');
    await writeFile(gateFile, 'ok');
    const config = await writeConfig(
      dir,
      { counter: fixtureServer('counter-server', ['--gate', gateFile], { sessions: 'per-agent' }) },
      'breaker.json',
    );
    const gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--breaker', '2', '--breaker-cooldown', '1500'] });
    const clients: Client[] = [];
    try {
      // The catalog connection (which lists the server) starts first, with the gate open.
      await gate.gw.waitForLog((l) => String(l.msg).startsWith('server "counter" ready'));
      await writeFile(gateFile, 'refuse');
      for (const name of ['g1', 'g2']) {
        const a = await agent(gate, name);
        clients.push(a.client);
        const err = await rpcError(a.client.callTool({ name: 'counter__inc', arguments: {} }));
        assert.equal(err.data.code, 'MCPG_SERVER_START_FAILED', JSON.stringify(err));
      }
      const g3 = await agent(gate, 'g3');
      clients.push(g3.client);
      const fast = await rpcError(g3.client.callTool({ name: 'counter__inc', arguments: {} }));
      assert.equal(fast.data.code, 'MCPG_SERVER_UNAVAILABLE');
      assert.match(fast.message, /2 connections in a row failed to start; the next attempt is in \d+ s/);
      const pool = (await status(gate)).pools[0]!;
      assert.equal(pool.creationFailures, 2);
      assert.equal(pool.breakerTrips, 1);
      await writeFile(gateFile, 'ok');
      // After the cooldown one half-open creation probes; it succeeds and the breaker closes.
      let served: { count: number } | undefined;
      assert.ok(
        await until(async () => {
          try {
            served ??= counter(await g3.client.callTool({ name: 'counter__inc', arguments: {} }));
            return true;
          } catch {
            return false;
          }
        }, 10_000),
        'the server is used again after the cooldown',
      );
      assert.equal(served?.count, 1);
      assert.equal((await inc(clients[0]!)).count, 1);
    } finally {
      for (const c of clients) await c.close().catch(() => undefined);
      await gate.stop();
    }
  });

  it('the identity is the verified agent id: a second token of one agent keeps its state; losing access closes it', async () => {
    // Its own directory: a gateway-rules.json beside the other tests' configs would apply to them too.
    const dir = await tempDir();
    const first = makeToken();
    const second = makeToken();
    const other = makeToken();
    const config = await writeConfig(dir, { counter: fixtureServer('counter-server', [], { sessions: 'per-agent' }) });
    const allow = { allow: { servers: ['counter'] } };
    const rules = await writeRules(dir, {
      agents: { ci: { tokens: [first.hash, second.hash], ...allow }, dev: { tokens: [other.hash], ...allow } },
    });
    const gate = await startHttpGateway({ config, args: ['--rules', rules, '--pins', 'off'] });
    const clients: Client[] = [];
    try {
      const a = await connectAgent(gate.url, { token: first.token });
      clients.push(a.client);
      const before = await inc(a.client);
      const b = await connectAgent(gate.url, { token: second.token }); // a rotated credential
      clients.push(b.client);
      assert.deepEqual(await inc(b.client), { count: before.count + 1, pid: before.pid });
      const d = await connectAgent(gate.url, { token: other.token });
      clients.push(d.client);
      const dev = await inc(d.client);
      // ci loses access to the server: exactly its pooled connection closes.
      await writeRules(dir, {
        agents: { ci: { tokens: [first.hash, second.hash], allow: { servers: [] } }, dev: { tokens: [other.hash], ...allow } },
      });
      await gate.gw.waitForLog((l) => String(l.msg).startsWith('configuration reloaded ('));
      assert.ok(await waitGone(before.pid), "ci's server process exited");
      assert.ok(alive(dev.pid), "dev's is untouched");
      assert.equal((await inc(d.client)).count, 2);
    } finally {
      for (const c of clients) await c.close().catch(() => undefined);
      await gate.stop();
      await dir.remove();
    }
  });

  it('health check before reuse: a hung session (alive, answering nothing) is reaped and the call goes to a fresh one', async () => {
    // idleMs 0: every reuse is checked, so no test has to wait for time to pass.
    const config = await writeConfig(
      dir,
      { counter: fixtureServer('counter-server', [], { sessions: 'per-agent', pool: { healthCheck: { idleMs: 0, timeoutMs: 500 } } }) },
      'health.json',
    );
    const gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
    const clients: Client[] = [];
    try {
      const a = await agent(gate, 'hal');
      clients.push(a.client);
      const first = await inc(a.client);
      assert.deepEqual(await inc(a.client), { count: 2, pid: first.pid }, 'a session that answers its ping is reused');
      assert.equal(textOf(await a.client.callTool({ name: 'counter__hang', arguments: {} })), 'hanging');
      assert.ok(alive(first.pid));
      // The next call finds it idle: its ping goes unanswered, so it is reaped and a fresh session serves the call.
      const fresh = await inc(a.client);
      assert.equal(fresh.count, 1, 'a fresh session');
      assert.notEqual(fresh.pid, first.pid);
      assert.ok(await waitGone(first.pid), 'the hung child was stopped');
      await gate.gw.waitForLog((l) =>
        String(l.msg).startsWith('a pooled connection idle past its health check did not answer within 500 ms'),
      );
      const pool = (await status(gate)).pools[0]!;
      assert.equal(pool.reaped, 1, JSON.stringify(pool));
      assert.deepEqual(pool.pids, [fresh.pid]);
    } finally {
      for (const c of clients) await c.close().catch(() => undefined);
      await gate.stop();
    }
  });

  it('the cap holds with 200 agents: never more children than pool.max, the rest refused clearly', async () => {
    const config = await writeConfig(
      dir,
      { counter: fixtureServer('counter-server', [], { sessions: 'per-agent', pool: { max: 4 } }) },
      'cap.json',
    );
    const gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
    const clients: Client[] = [];
    try {
      const agents = await Promise.all(Array.from({ length: 200 }, (_, i) => agent(gate, `bot-${i}`)));
      clients.push(...agents.map((a) => a.client));
      const outcomes = await Promise.all(
        agents.map(async (a) => {
          try {
            return counter(await a.client.callTool({ name: 'counter__inc', arguments: {} })).count === 1 ? 'ok' : 'wrong count';
          } catch (err) {
            return (err as { data?: { code?: string } }).data?.code ?? String(err);
          }
        }),
      );
      const tally: Record<string, number> = {};
      for (const o of outcomes) tally[o] = (tally[o] ?? 0) + 1;
      assert.deepEqual(
        Object.keys(tally).filter((k) => k !== 'ok' && k !== 'MCPG_POOL_EXHAUSTED'),
        [],
        JSON.stringify(tally),
      );
      assert.ok((tally.ok ?? 0) >= 1, JSON.stringify(tally));
      const pool = (await status(gate)).pools[0]!;
      assert.ok(pool.keys <= 4 && pool.pids.length <= 4, JSON.stringify(pool));
      // Once idle, the least recently used connection makes room for a newcomer.
      const late = await agent(gate, 'late');
      clients.push(late.client);
      assert.equal((await inc(late.client)).count, 1);
      const after = (await status(gate)).pools[0]!;
      assert.ok(after.keys <= 4 && after.evictions >= 1, JSON.stringify(after));
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await gate.stop();
    }
  });
});
