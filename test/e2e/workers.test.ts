// Workers: `mcpgate serve --http HOST:PORT --workers 3 --redis URL`: one command, three node:cluster
// workers on one port, a real redis-server (the flags' refusals: test/cli/cluster-flags.test.ts). The official SDK client's requests open a new connection
// each (`connection: close`): the primary hands each to the worker that opened the session its id
// names, so none is forwarded; a request sent to another worker's own port is forwarded to the owner. kill -9 of the owner: the
// primary starts another worker, the owner's server process goes (its watchdog), and the session
// goes on (adopted). SIGTERM to the primary drains every worker and leaves no process behind.

import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { survivors, tempDir, textOf, until, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { makeToken } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';
import { ADMIN, freshConnection, startThreeWorkers, stopWorkers, workersOf, type WorkerRow } from '../helpers/workers.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { connection: 'close' } })).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

async function agent(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport; asked: string[] }> {
  const asked: string[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: AUTH }, fetch: freshConnection });
  const client = new Client({ name: 'workers-test', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler('sampling/createMessage', () => {
    asked.push('sampling');
    return { model: 'm', role: 'assistant', content: { type: 'text', text: 'from the agent' } };
  });
  await client.connect(transport);
  return { client, transport, asked };
}

describe('mcpgate serve --workers 3 --redis: one port, three supervised workers', { timeout: 240_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let gw: GatewayProcess;
  let url = '';
  let base = '';
  const clients: Client[] = [];

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    ({ gw, url, base } = await startThreeWorkers(dir, redis, hash));
  });

  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await stopWorkers(gw === undefined ? undefined : { gw, url, base });
    await redis?.stop();
    await dir?.remove();
  });

  it(
    'serves one session whose requests come on many connections, each handed to its owner (none forwarded)',
    { timeout: 60_000 },
    async () => {
      const { client, transport, asked } = await agent(url);
      clients.push(client);
      for (let i = 0; i < 9; i++)
        assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: `hi ${i}` } })), `hi ${i}`);
      const progress: number[] = [];
      await client.callTool({ name: 'sink__progress', arguments: { steps: 3 } }, { onprogress: (p) => progress.push(p.progress) });
      assert.deepEqual(progress, [1, 2, 3]);
      assert.equal(textOf(await client.callTool({ name: 'sink__sample', arguments: { prompt: 'x' } })), 'sampled: from the agent');
      assert.deepEqual(asked, ['sampling']);
      // Each worker's own port answers for that worker alone: who forwarded, who owns it.
      const rows = await workersOf(base);
      assert.equal(rows.length, 3);
      let relayed = 0;
      let forwarders = 0;
      let adopted = 0;
      for (const w of rows) {
        const n = await metric(w.address, 'mcpgate_cluster_forwarded_total{outcome="relayed"}');
        relayed += n;
        if (n > 0) forwarders++;
        adopted += await metric(w.address, 'mcpgate_cluster_adoptions_total');
      }
      assert.equal(relayed, 0, `forwarded ${relayed} by ${forwarders} worker(s)`);
      assert.equal(adopted, 0);
      // The owner is the worker the session id names; another worker's own port forwards to it.
      const session = transport.sessionId!;
      assert.match(session, /^w[0-2]\./);
      let sent = 0;
      for (const w of rows) {
        const answer = await fetch(`${w.address}/mcp`, {
          method: 'POST',
          headers: {
            ...AUTH,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': session,
            'mcp-protocol-version': transport.protocolVersion ?? '2025-11-25',
            connection: 'close',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 99,
            method: 'tools/call',
            params: { name: 'sink__echo', arguments: { text: `via ${++sent}` } },
          }),
        });
        assert.equal(answer.status, 200);
        assert.match(await answer.text(), new RegExp(`via ${sent}`));
      }
      let forwarded = 0;
      for (const w of rows) forwarded += await metric(w.address, 'mcpgate_cluster_forwarded_total{outcome="relayed"}');
      assert.equal(forwarded, 2, 'the two workers that do not own it forwarded it');
      // The records count sessions as of each worker's last heartbeat (every second): wait for one.
      let owners = rows;
      await until(async () => (owners = await workersOf(base)).some((w) => w.sessions > 0), 5_000);
      assert.equal(owners.filter((w) => w.sessions > 0).length, 1, `one owner: ${JSON.stringify(owners)}`);
      await transport.terminateSession();
      await client.close();
    },
  );

  it('kill -9 of the owner: the primary starts another worker; the session goes on', { timeout: 90_000 }, async () => {
    const { client } = await agent(url);
    clients.push(client);
    const serverPid = Number(textOf(await client.callTool({ name: 'sink__pid', arguments: {} })));
    let owner: WorkerRow | undefined;
    // The owner is the worker whose child answered (each worker has its own connection to the shared
    // server); session counts in the workers' records lag by a heartbeat, and the previous test's
    // ended session may still be counted on another worker.
    const ownerPid = Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(serverPid)], { encoding: 'utf8' }).trim());
    assert.ok(
      await until(async () => (owner = (await workersOf(base)).find((w) => w.pid === ownerPid)) !== undefined, 10_000),
      `the owner ${ownerPid} is listed`,
    );
    const before = new Set((await workersOf(base)).map((w) => w.pid));
    process.kill(owner!.pid, 'SIGKILL');
    // Its server does not outlive it (the worker's watchdog), and a new worker takes its place.
    assert.deepEqual(await survivors([owner!.pid, serverPid], 15_000), []);
    let now: WorkerRow[] = [];
    assert.ok(
      await until(async () => (now = await workersOf(base)).length === 3 && now.every((w) => w.pid !== owner!.pid), 60_000),
      `restarted: ${JSON.stringify(now)}`,
    );
    assert.equal(now.filter((w) => !before.has(w.pid)).length, 1);
    assert.ok(
      gw.logs.some((l) => l.pid === owner!.pid && /died/.test(String(l.msg))),
      'the primary logged the death',
    );
    // The session is adopted by whichever worker its next request reaches: no new initialize.
    for (let i = 0; i < 4; i++)
      assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: `after ${i}` } })), `after ${i}`);
    let adopted = 0;
    for (const w of now) adopted += await metric(w.address, 'mcpgate_cluster_adoptions_total');
    assert.ok(adopted >= 1, `adopted ${adopted}`);
    await client.close();
  });

  it(
    'the console: a login made on one worker is valid on every worker, and a sign-out on one ends it on all',
    { timeout: 60_000 },
    async () => {
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const signIn = await freshConnection(`${base}/ui/login`, {
        method: 'POST',
        headers: form,
        body: new URLSearchParams({ token: ADMIN.token }).toString(),
        redirect: 'manual',
      });
      assert.equal(signIn.status, 303);
      const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
      assert.match(cookie, /^mcpgate_console=/);
      // Each request on a connection of its own: the primary hands them to the three workers in turn.
      const pages = await Promise.all(
        Array.from({ length: 9 }, () => freshConnection(`${base}/ui`, { headers: { cookie }, redirect: 'manual' })),
      );
      assert.deepEqual(
        pages.map((p) => p.status),
        Array<number>(9).fill(200),
        'every worker knows the login',
      );
      const csrf = /name="csrf" value="([^"]+)"/.exec(await pages[0]!.text())?.[1];
      assert.ok(csrf !== undefined);
      for (const p of pages.slice(1)) await p.body?.cancel();
      const out = await freshConnection(`${base}/ui/logout`, {
        method: 'POST',
        headers: { ...form, cookie },
        body: new URLSearchParams({ csrf }).toString(),
        redirect: 'manual',
      });
      assert.equal(out.status, 303);
      const after = await Promise.all(
        Array.from({ length: 6 }, () => freshConnection(`${base}/ui`, { headers: { cookie }, redirect: 'manual' })),
      );
      assert.deepEqual(
        after.map((p) => [p.status, p.headers.get('location')]),
        Array(6).fill([303, '/ui/login']),
        'signed out on every worker',
      );
    },
  );

  it('SIGTERM to the primary drains every worker and leaves no process behind', { timeout: 90_000 }, async () => {
    const rows = await workersOf(base);
    assert.equal(rows.length, 3);
    // A server process on each worker: sessions opened on fresh connections are spread over them.
    const serverPids = new Set<number>();
    for (let i = 0; i < 12 && serverPids.size < 3; i++) {
      const { client } = await agent(url);
      clients.push(client);
      serverPids.add(Number(textOf(await client.callTool({ name: 'sink__pid', arguments: {} }))));
    }
    assert.equal(serverPids.size, 3, 'each worker runs its own server');
    gw.child.kill('SIGTERM');
    const exit = await gw.exited;
    assert.equal(exit.code, 0, JSON.stringify(gw.logs.slice(-5)));
    assert.deepEqual(await survivors([...rows.map((w) => w.pid), ...serverPids], 10_000), []);
    assert.equal(gw.logs.filter((l) => /^worker \d+ exited$/.test(String(l.msg)) && l.code === 0).length, 3);
  });
});
