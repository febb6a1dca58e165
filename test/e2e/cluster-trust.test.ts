// What a worker takes from Redis is signed with the cluster secret, and a forward carries none of
// the agent's credentials: someone who can write to the cluster's Redis (but has no secret) points
// an agent's session, or its owner's address, at a fake worker (an HTTP listener of this test's);
// nothing of the agent's reaches it, and her calls are served (or refused as unknown) by the real
// workers. A record signed with the secret that points at the listener stands for a real worker:
// the forward it gets says who the agent is, signed, without her token, cookies or other headers.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { fixtureServer, tempDir, writeConfig, type TempDir } from '../helpers/gateway.js';
import {
  JSON_HEADERS,
  makeToken,
  raw,
  rawSession,
  startHttpGateway,
  writeRules,
  type HttpGateway,
  type RawResponse,
} from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';
import { digest, encodeIdentity, sign, signRecord } from '../../src/cluster/signing.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };
const SECRET = randomBytes(24).toString('base64url');

interface Seen {
  headers: IncomingHttpHeaders;
  raw: string[];
  body: string;
}

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

function echo(w: HttpGateway, session: string, text: string, extra: Record<string, string> = {}): Promise<RawResponse> {
  return raw(`${w.base}/mcp`, {
    headers: { ...JSON_HEADERS, ...AUTH, ...extra, 'mcp-session-id': session },
    body: JSON.stringify({ jsonrpc: '2.0', id: text, method: 'tools/call', params: { name: 'sink__echo', arguments: { text } } }),
  });
}

/** A forward to worker `to`, made as a worker holding `secret` would make it. */
function forgedForward(
  secret: string,
  to: string,
  session: string,
  body: string,
  id = `${randomBytes(8).toString('hex')}.1`,
): Record<string, string> {
  const at = Date.now();
  const identity = encodeIdentity({ agent: 'alice', identified: true, claims: undefined });
  const from = 'test:1';
  return {
    ...JSON_HEADERS,
    'mcp-session-id': session,
    'x-mcpgate-forwarded-by': from,
    'x-mcpgate-forwarded-at': String(at),
    'x-mcpgate-forwarded-identity': identity,
    'x-mcpgate-forwarded-digest': digest(body),
    'x-mcpgate-forward-id': id,
    'x-mcpgate-forwarded-sig': sign(secret, { method: 'POST', path: '/mcp', session, from, to, id, at, identity, digest: digest(body) }),
  };
}

function refusal(res: RawResponse): string {
  assert.equal(res.status, 403, res.body);
  const error = res.json?.error as { message: string; data: { code: string } };
  assert.equal(error.data.code, 'MCPG_FORWARD_REFUSED');
  return error.message;
}

function echoed(res: RawResponse): string | undefined {
  return (res.json?.result as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text;
}

describe('a cluster trusts nothing unsigned from Redis and forwards no credential', { timeout: 120_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let client: Redis;
  let a: HttpGateway;
  let b: HttpGateway;
  let fake: Server;
  let fakeAddress: string;
  const seen: Seen[] = [];

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
    fake = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ headers: req.headers, raw: req.rawHeaders, body });
        const id = (JSON.parse(body || '{}') as { id?: unknown }).id ?? null;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'from the fake worker' }] } }));
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    fakeAddress = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, { agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } } });
    const args = ['--rules', rules, '--pins', 'off', '--redis', redis.url];
    const env = { MCPGATE_CLUSTER_SECRET: SECRET };
    [a, b] = (await Promise.all([0, 1].map(() => startHttpGateway({ config, agent: null, args, env })))) as [HttpGateway, HttpGateway];
  });

  after(async () => {
    await Promise.all([a, b].map((w) => w?.stop()));
    client?.disconnect();
    await new Promise((resolve) => (fake ? fake.close(resolve) : resolve(undefined)));
    await redis?.stop();
    await dir?.remove();
  });

  /** A worker's id, as it logged when it joined. */
  function idOf(w: HttpGateway): string {
    const line = w.gw.logs.find((l) => /joined the cluster/.test(String(l.msg)));
    assert.ok(line !== undefined && typeof line.worker === 'string');
    return line.worker;
  }

  it("an owner's address rewritten in Redis: no call reaches the fake worker, every call is served", { timeout: 30_000 }, async () => {
    seen.length = 0;
    const session = await rawSession(a.url, AUTH);
    const owner = idOf(a);
    for (let i = 0; i < 12; i++) {
      // Rewritten before every call (the owner's heartbeat puts its own address back every second).
      await client.hset(`mcpgate:worker:${owner}`, 'address', fakeAddress, 'heartbeat', String(Date.now()));
      const res = await echo(i % 2 === 0 ? b : a, session, `call ${i}`);
      assert.equal(echoed(res), `call ${i}`, res.body);
    }
    assert.equal(seen.length, 0, `the fake worker got ${seen.length} requests: ${JSON.stringify(seen.map((s) => s.headers))}`);
    assert.ok((await metric(b.base, 'mcpgate_cluster_records_refused_total{kind="worker"}')) >= 1);
  });

  it(
    'a session given to a fake worker in Redis: nothing reaches it; the owner serves, another worker knows no such session',
    { timeout: 30_000 },
    async () => {
      seen.length = 0;
      const session = await rawSession(a.url, AUTH);
      await client.hset('mcpgate:worker:evil:1', {
        id: 'evil:1',
        host: 'evil',
        pid: '1',
        address: fakeAddress,
        sessions: '0',
        heartbeat: String(Date.now()),
        version: '',
      });
      await client.sadd('mcpgate:workers', 'evil:1');
      for (let i = 0; i < 12; i++) {
        await client.hset(`mcpgate:session:${session}`, 'owner', 'evil:1');
        const through = i % 2 === 0 ? b : a;
        const res = await echo(through, session, `call ${i}`);
        if (through === a) assert.equal(echoed(res), `call ${i}`, res.body);
        else assert.equal(res.status, 404, res.body);
      }
      assert.equal(seen.length, 0, `the fake worker got ${seen.length} requests`);
      assert.ok((await metric(b.base, 'mcpgate_cluster_records_refused_total{kind="session"}')) >= 1);
    },
  );

  it('a forward carries who the agent is, signed, and none of her credentials', { timeout: 30_000 }, async () => {
    seen.length = 0;
    // A real worker at the listener's address: its record and the session's signed with the secret.
    const id = 'listener:1';
    const worker = { id, host: 'listener', pid: '1', address: fakeAddress, sessions: '1', heartbeat: String(Date.now()), version: '' };
    await client.hset(`mcpgate:worker:${id}`, { ...worker, sig: signRecord(SECRET, 'worker', id, worker) });
    const session = `s-${randomBytes(8).toString('hex')}`;
    const record = { agent: 'alice', owner: id, identified: '1', capabilities: '{}' };
    await client.hset(`mcpgate:session:${session}`, { ...record, sig: signRecord(SECRET, 'session', session, record) });
    const res = await echo(b, session, 'forwarded', {
      cookie: `sid=${token}`,
      'x-api-key': token,
      'proxy-authorization': `Basic ${token}`,
    });
    assert.equal(echoed(res), 'from the fake worker', res.body);
    assert.equal(seen.length, 1);
    const got = seen[0]!;
    for (const name of ['authorization', 'cookie', 'x-api-key', 'proxy-authorization']) assert.equal(got.headers[name], undefined, name);
    assert.ok(!got.raw.join('\n').includes(token), 'the token is in no header');
    assert.ok(!got.body.includes(token));
    const identity = JSON.parse(Buffer.from(String(got.headers['x-mcpgate-forwarded-identity']), 'base64url').toString('utf8')) as {
      agent: string;
      identified: boolean;
    };
    assert.equal(identity.agent, 'alice');
    assert.equal(identity.identified, true);
    assert.equal(got.headers['mcp-session-id'], session);
    await client.del(`mcpgate:worker:${id}`);
    // Replayed as captured, to either real worker: it was signed for the listener's worker alone.
    const replay: Record<string, string> = {};
    for (const [name, value] of Object.entries(got.headers))
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) replay[name] = value;
    for (const w of [a, b]) assert.match(refusal(await raw(`${w.base}/mcp`, { headers: replay, body: got.body })), /signature/);
  });

  it('a forward is single-use: sent again to its worker, or to another, it is refused', { timeout: 30_000 }, async () => {
    const session = await rawSession(a.url, AUTH);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'sink__echo', arguments: { text: 'once' } },
    });
    const headers = forgedForward(SECRET, idOf(a), session, body);
    const first = await raw(`${a.base}/mcp`, { headers, body });
    assert.equal(echoed(first), 'once', first.body);
    assert.match(refusal(await raw(`${a.base}/mcp`, { headers, body })), /already served/);
    // To another worker (which would have taken the session over): not signed for it.
    assert.match(refusal(await raw(`${b.base}/mcp`, { headers, body })), /signature/);
    // The same forward with another body: the digest it was signed with does not match.
    const other = forgedForward(SECRET, idOf(a), session, body);
    assert.match(refusal(await raw(`${a.base}/mcp`, { headers: other, body: body.replace('once', 'twice') })), /digest/);
  });
});

describe('a cluster without --cluster-secret agrees no secret through Redis', { timeout: 60_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let client: Redis;
  let worker: HttpGateway;
  let fake: Server;
  let hits = 0;
  const PRESEEDED = randomBytes(24).toString('base64url');

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
    // Someone with access to the Redis put a secret there before the cluster started.
    await client.set('mcpgate:secret', PRESEEDED);
    fake = createServer((req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    const rules = await writeRules(dir, { agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } } });
    worker = await startHttpGateway({ config, agent: null, args: ['--rules', rules, '--pins', 'off', '--redis', redis.url] });
  });

  after(async () => {
    await worker?.stop();
    client?.disconnect();
    await new Promise((resolve) => (fake ? fake.close(resolve) : resolve(undefined)));
    await redis?.stop();
    await dir?.remove();
  });

  it(
    "uses the host's key from the state directory: forwards and records signed with the pre-seeded secret are refused",
    { timeout: 30_000 },
    async () => {
      const file = dir.file('.mcpgate/cluster-secret');
      const mode = (await stat(file)).mode & 0o777;
      assert.equal(mode, 0o600);
      const key = (await readFile(file, 'utf8')).trim();
      assert.ok(key.length >= 32 && key !== PRESEEDED);
      const id = (worker.gw.logs.find((l) => /joined the cluster/.test(String(l.msg)))?.worker ?? '') as string;
      // A forward signed with the pre-seeded secret.
      const session = await rawSession(worker.url, AUTH);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'sink__echo', arguments: { text: 'x' } },
      });
      assert.match(refusal(await raw(`${worker.base}/mcp`, { headers: forgedForward(PRESEEDED, id, session, body), body })), /signature/);
      // Records signed with it, giving a session to a worker at the fake's address.
      const port = (fake.address() as AddressInfo).port;
      const evil = {
        id: 'evil:1',
        host: 'evil',
        pid: '1',
        address: `http://127.0.0.1:${port}`,
        sessions: '0',
        heartbeat: String(Date.now()),
        version: '',
      };
      await client.hset('mcpgate:worker:evil:1', { ...evil, sig: signRecord(PRESEEDED, 'worker', 'evil:1', evil) });
      const stolen = `s-${randomBytes(8).toString('hex')}`;
      const record = { agent: 'alice', owner: 'evil:1', identified: '1', capabilities: '{}' };
      await client.hset(`mcpgate:session:${stolen}`, { ...record, sig: signRecord(PRESEEDED, 'session', stolen, record) });
      const res = await echo(worker, stolen, 'to the fake?');
      assert.equal(res.status, 404, res.body);
      assert.equal(hits, 0);
    },
  );
});
