// `mcpgate serve --workers 2 --redis`: the primary owns the shared port and hands each connection to
// the worker whose session its first request names (cli/handoff.ts). An SDK agent whose requests
// travel on several kept-alive connections is served with no forward at all; two agents sharing
// connections (a connection then carries another worker's session) are still served, forwarded.
// Hostile clients of the primary — a head sent a byte at a time, a head over 16 KiB, garbage, a
// reset — cost each only its own connection: the others are served meanwhile, the primary lives.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { alive, tempDir, textOf, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { makeToken } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';
import { agentFetch, startWorkers, stopWorkers } from '../helpers/workers.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };

/** The host's sum of a family's samples (every worker's; those with each of `labels`), from one scrape of the shared port. */
async function hostMetric(base: string, name: string, ...labels: string[]): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { connection: 'close' } })).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels.every((l) => line.includes(l))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** A raw connection to the shared port; resolves with everything it received once the primary or a worker closed it, and when. */
function rawClient(port: number): { socket: Socket; closed: Promise<{ text: string; at: number }> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  const closed = once(socket, 'close').then(() => ({ text, at: performance.now() }));
  return { socket, closed };
}

describe("serve --workers 2: the primary hands each connection to its session's worker", { timeout: 240_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let gw: GatewayProcess;
  let url = '';
  let base = '';
  let port = 0;
  const clients: Client[] = [];

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    ({ gw, url, base } = await startWorkers(dir, redis, hash, 2));
    port = Number(new URL(url).port);
  });

  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await stopWorkers(gw === undefined ? undefined : { gw, url, base });
    await redis?.stop();
    await dir?.remove();
  });

  it('a new connection whose body comes in a second segment just after its head is answered, every time', { timeout: 90_000 }, async () => {
    // As Python's http.client sends a POST: the head in one write, the body in the next.
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'split', version: '1' } },
    });
    const head =
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
      `authorization: Bearer ${token}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
    let unanswered = 0;
    for (let i = 0; i < 40; i++) {
      const c = rawClient(port);
      await once(c.socket, 'connect');
      c.socket.write(head);
      setImmediate(() => c.socket.write(body));
      const timer = setTimeout(() => c.socket.destroy(), 5000);
      const end = await c.closed;
      clearTimeout(timer);
      if (!/^HTTP\/1\.1 200 /.test(end.text)) unanswered++;
    }
    assert.equal(unanswered, 0, `${unanswered} of 40 connections got no answer`);
  });

  it('an SDK agent on several kept-alive connections: every request served by its owner, none forwarded', { timeout: 60_000 }, async () => {
    const before = await hostMetric(base, 'mcpgate_cluster_forwarded_total');
    const toOwner = await hostMetric(base, 'mcpgate_connections_handed_total', 'to="owner"');
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    let connections = 0;
    const create = agent.createConnection.bind(agent);
    agent.createConnection = (...args: Parameters<typeof create>) => {
      connections++;
      return create(...args);
    };
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: AUTH }, fetch: agentFetch(agent) });
    const client = new Client({ name: 'handoff-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    assert.match(transport.sessionId ?? '', /^w[01]\./, "the session id names its worker's slot");
    let made = 0;
    // Six calls at once over at most four sockets (one may hold the GET stream), four rounds: the
    // session's requests spread over new and reused connections.
    for (let round = 0; round < 4; round++) {
      const texts = await Promise.all(
        Array.from({ length: 6 }, (_, i) => client.callTool({ name: 'sink__echo', arguments: { text: `r${round} c${i}` } })),
      );
      texts.forEach((t, i) => assert.equal(textOf(t), `r${round} c${i}`));
      made += 6;
    }
    assert.ok(connections >= 3, `the agent's requests used ${connections} connections`);
    assert.equal(await hostMetric(base, 'mcpgate_cluster_forwarded_total'), before, 'no request was forwarded');
    assert.ok((await hostMetric(base, 'mcpgate_tool_calls_total', 'server="sink"', 'tool="echo"', 'outcome="ok"')) >= made);
    assert.equal(await hostMetric(base, 'mcpgate_cluster_adoptions_total'), 0);
    // Every connection but the one `initialize` came on named the session: the primary's count.
    assert.ok((await hostMetric(base, 'mcpgate_connections_handed_total', 'to="owner"')) - toOwner >= connections - 1);
    await transport.terminateSession();
    agent.destroy();
  });

  it(
    "two agents sharing kept-alive connections: a request naming the other worker's session is forwarded, and served",
    { timeout: 60_000 },
    async () => {
      // Each session holds a socket for its GET stream; the other two carry both sessions' POSTs.
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      const sessions: { client: Client; transport: StreamableHTTPClientTransport }[] = [];
      // Sessions until both workers own one (initialize goes to the workers in turn).
      for (let i = 0; i < 6 && new Set(sessions.map((s) => s.transport.sessionId!.slice(0, 2))).size < 2; i++) {
        const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: AUTH }, fetch: agentFetch(agent) });
        const client = new Client({ name: `shared-${i}`, version: '1.0.0' });
        await client.connect(transport);
        clients.push(client);
        sessions.push({ client, transport });
      }
      assert.equal(new Set(sessions.map((s) => s.transport.sessionId!.slice(0, 2))).size, 2, 'a session on each worker');
      const before = await hostMetric(base, 'mcpgate_cluster_forwarded_total', 'outcome="relayed"');
      for (let round = 0; round < 5; round++) {
        const texts = await Promise.all(
          sessions.map((s, i) => s.client.callTool({ name: 'sink__echo', arguments: { text: `s${i} ${round}` } })),
        );
        texts.forEach((t, i) => assert.equal(textOf(t), `s${i} ${round}`));
      }
      // Which socket a pooled request takes is the agent's choice; to be sure one connection carries
      // both workers' sessions, one kept-alive socket takes a call of each session in turn.
      const single = new Agent({ keepAlive: true, maxSockets: 1 });
      const post = agentFetch(single);
      for (const [i, s] of sessions.entries()) {
        const res = await post(url, {
          method: 'POST',
          headers: {
            ...AUTH,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': s.transport.sessionId!,
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 900 + i,
            method: 'tools/call',
            params: { name: 'sink__echo', arguments: { text: `one socket ${i}` } },
          }),
        });
        assert.equal(res.status, 200);
        assert.match(await res.text(), new RegExp(`one socket ${i}`));
      }
      single.destroy();
      assert.ok(
        (await hostMetric(base, 'mcpgate_cluster_forwarded_total', 'outcome="relayed"')) > before,
        "a connection carried the other worker's session: forwarded",
      );
      for (const s of sessions) await s.transport.terminateSession();
      agent.destroy();
    },
  );

  it(
    'a hostile client costs only its own connection: slow head (408), oversized head (431), garbage, reset; the primary lives',
    { timeout: 60_000 },
    async () => {
      const primary = gw.child.pid!;
      // Slowloris: a head that never ends, a byte every 200 ms.
      const slow = rawClient(port);
      await once(slow.socket, 'connect');
      const started = performance.now();
      slow.socket.write('POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n');
      const drip = setInterval(() => slow.socket.writable && slow.socket.write('x'), 200);
      // A head over 16 KiB, in one go.
      const big = rawClient(port);
      big.socket.write(`GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-filler: ${'a'.repeat(20_000)}\r\n\r\n`);
      // Not HTTP at all, ending as a head would: the worker it reaches answers 400.
      const junk = rawClient(port);
      junk.socket.write('\x00\x01\x02 hello\r\n\r\n');
      // Reset right after a partial head.
      const reset = rawClient(port);
      reset.socket.write('GET /heal');
      reset.socket.resetAndDestroy();
      try {
        const bigEnd = await big.closed;
        assert.match(bigEnd.text, /^HTTP\/1\.1 431 /);
        assert.match((await junk.closed).text, /^HTTP\/1\.1 400 /);
        // Meanwhile everyone else is served at once, on new connections.
        for (let i = 0; i < 6; i++) {
          const t = performance.now();
          const res = await fetch(`${base}/healthz`, { headers: { connection: 'close' } });
          assert.equal(res.status, 200);
          await res.text();
          assert.ok(performance.now() - t < 2000, 'served while the slow client drips');
        }
        const slowEnd = await slow.closed;
        assert.match(slowEnd.text, /^HTTP\/1\.1 408 /);
        const waited = slowEnd.at - started;
        assert.ok(waited >= 9_000 && waited < 14_000, `closed after ${waited.toFixed(0)} ms`);
      } finally {
        clearInterval(drip);
        slow.socket.destroy();
      }
      assert.ok(alive(primary), 'the primary lives');
      const res = await fetch(`${base}/healthz`, { headers: { connection: 'close' } });
      assert.equal(res.status, 200);
      assert.equal(gw.logs.filter((l) => /died/.test(String(l.msg))).length, 0, 'no worker died');
    },
  );
});
