// One `/metrics` under `mcpgate serve --http HOST:PORT --workers 3 --redis URL`: one scrape of
// the shared port shows every worker of the host (each sample labelled worker="host:pid", with the
// primary's own mcpgate_workers* families), whichever worker node:cluster hands the scrape to; each
// worker's own port still answers for it alone. Sessions are opened on fresh connections until
// each worker owns one, and their calls go out on fresh connections too (most are forwarded), so
// the host's totals must match the calls made. kill -9 of a worker: scrapes keep answering at
// once (without it), then show its replacement; none hangs. A stopped worker: scrapes that reach
// the others answer within the collection timeout, without it. A real redis-server, the official
// SDK client, the real CLI.

import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { survivors, tempDir, textOf, until, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { makeToken } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';
import { freshConnection, startThreeWorkers, stopWorkers, workersOf, type WorkerRow } from '../helpers/workers.js';

const { token, hash } = makeToken();
const AUTH = { authorization: `Bearer ${token}` };
/** A scrape waits at most the primary's 2 s per worker; this is the test's "it hung". */
const SCRAPE_DEADLINE_MS = 15_000;

/** One parsed exposition: `name{labels}` → value, and the HELP lines seen per family. */
interface Scrape {
  samples: Map<string, number>;
  helps: string[];
}

async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url, { headers: { connection: 'close' }, signal: AbortSignal.timeout(SCRAPE_DEADLINE_MS) });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  const helps: string[] = [];
  for (const line of (await res.text()).split('\n')) {
    if (line.startsWith('# HELP ')) helps.push(line.split(' ')[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return { samples, helps };
}

/** Samples whose key starts with `prefix`, by their worker label. */
function byWorker(s: Scrape, name: string, rest = ''): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, value] of s.samples) {
    const m = /^([^{]+)\{worker="([^"]+)"(.*)\}$/.exec(key);
    if (m === null || m[1] !== name || (rest !== '' && !m[3]!.includes(rest))) continue;
    out.set(m[2]!, (out.get(m[2]!) ?? 0) + value);
  }
  return out;
}

const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

/** A scrape, or undefined when it found no answer within `ms` (its connection went to a stopped worker). */
async function scrapeWithin(url: string, ms: number): Promise<Scrape | undefined> {
  try {
    const res = await fetch(url, { headers: { connection: 'close' }, signal: AbortSignal.timeout(ms) });
    const text = await res.text();
    const samples = new Map<string, number>();
    for (const line of text.split('\n'))
      if (line !== '' && !line.startsWith('#'))
        samples.set(line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1)));
    return { samples, helps: [] };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return undefined;
    throw err;
  }
}

describe('/metrics under serve --workers 3: one scrape shows the whole host', { timeout: 240_000, skip: REDIS_MISSING }, () => {
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

  it('shows all three workers in every scrape, with totals that match the calls made', { timeout: 90_000 }, async () => {
    // Sessions on fresh connections until each worker owns one (the owner is the parent of the server process that answered).
    const owners = new Map<number, Client>();
    const sessionOf = new Map<Client, string>();
    for (let i = 0; i < 15 && owners.size < 3; i++) {
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: AUTH }, fetch: freshConnection });
      const client = new Client({ name: 'metrics-test', version: '1.0.0' });
      await client.connect(transport);
      clients.push(client);
      const serverPid = Number(textOf(await client.callTool({ name: 'sink__pid', arguments: {} })));
      const owner = Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(serverPid)], { encoding: 'utf8' }).trim());
      if (!owners.has(owner)) owners.set(owner, client);
      sessionOf.set(client, transport.sessionId!);
    }
    assert.equal(owners.size, 3, 'a session owned by each worker');
    // Echo calls: 3, 5 and 7 of them, each on a fresh connection (each handed to the owner by the primary).
    let made = 0;
    let k = 0;
    for (const client of owners.values()) {
      const n = 3 + 2 * k++;
      for (let i = 0; i < n; i++)
        assert.equal(textOf(await client.callTool({ name: 'sink__echo', arguments: { text: `m${i}` } })), `m${i}`);
      made += n;
    }
    const workers = await workersOf(base);
    const ids = workers.map((w) => w.id).sort();
    assert.equal(ids.length, 3);
    // And one each sent to another worker's own port: forwarded to the owner.
    for (const [owner, client] of owners) {
      const other = workers.find((w) => w.pid !== owner)!;
      const answer = await fetch(`${other.address}/mcp`, {
        method: 'POST',
        headers: {
          ...AUTH,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionOf.get(client)!,
          'mcp-protocol-version': '2025-11-25',
          connection: 'close',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'sink__echo', arguments: { text: 'forwarded' } },
        }),
      });
      assert.equal(answer.status, 200);
      assert.match(await answer.text(), /forwarded/);
      made++;
    }
    for (let round = 0; round < 4; round++) {
      const s = await scrape(`${base}/metrics`);
      assert.equal(new Set(s.helps).size, s.helps.length, 'each family once (HELP and TYPE not repeated per worker)');
      assert.equal(s.samples.get('mcpgate_workers'), 3);
      assert.equal(s.samples.get('mcpgate_workers_live'), 3);
      assert.equal(s.samples.get('mcpgate_workers_scraped'), 3);
      for (const id of ids) assert.equal(s.samples.get(`mcpgate_worker_scrape_up{worker="${id}"}`), 1, id);
      assert.deepEqual([...byWorker(s, 'mcpgate_up').keys()].sort(), ids, 'every worker answered');
      assert.deepEqual([...byWorker(s, 'mcpgate_cluster_redis_up').values()], [1, 1, 1]);
      // Each call runs on its session's owner only: the host's sum is the calls made, spread over all three.
      const echoes = byWorker(s, 'mcpgate_tool_calls_total', 'server="sink",tool="echo",outcome="ok"');
      assert.equal(total(echoes), made, JSON.stringify([...echoes]));
      assert.equal([...echoes.values()].filter((n) => n > 0).length, 3);
      const forwarded = total(byWorker(s, 'mcpgate_cluster_forwarded_total', 'outcome="relayed"'));
      assert.equal(forwarded, 3, "only the calls sent to another worker's own port were forwarded");
      assert.equal(total(byWorker(s, 'mcpgate_cluster_forward_seconds_count')), forwarded, 'one latency sample per relayed forward');
      assert.equal(total(byWorker(s, 'mcpgate_cluster_adoptions_total')), 0, 'no owner died: nothing adopted');
      assert.ok(s.helps.includes('mcpgate_cluster_adoptions_total') && s.helps.includes('mcpgate_cluster_sessions_held'));
      assert.equal(total(byWorker(s, 'mcpgate_cluster_sessions_held')), total(byWorker(s, 'mcpgate_agent_sessions', 'transport="http"')));
    }
    // Each worker's own port answers for it alone: no worker label, no host families, its own count.
    const host = await scrape(`${base}/metrics`);
    const echoes = byWorker(host, 'mcpgate_tool_calls_total', 'server="sink",tool="echo",outcome="ok"');
    for (const w of workers) {
      const own = await scrape(`${w.address}/metrics`);
      assert.equal(own.samples.has('mcpgate_workers_scraped'), false);
      assert.equal(
        [...own.samples.keys()].some((key) => key.includes('worker=')),
        false,
      );
      assert.equal(own.samples.get('mcpgate_tool_calls_total{server="sink",tool="echo",outcome="ok"}'), echoes.get(w.id));
    }
  });

  it('kill -9 of a worker: scrapes answer without it at once, then show its replacement; none hangs', { timeout: 120_000 }, async () => {
    const workers = await workersOf(base);
    assert.equal(workers.length, 3);
    const victim = workers[0]!;
    process.kill(victim.pid, 'SIGKILL');
    assert.deepEqual(await survivors([victim.pid], 15_000), []);
    // Scrapes right after the death: each answers (the fetch has a deadline), and none waits on the dead worker.
    let without: Scrape | undefined;
    assert.ok(
      await until(async () => {
        const s = await scrape(`${base}/metrics`);
        if (byWorker(s, 'mcpgate_up').has(victim.id)) return false;
        without = s;
        return true;
      }, 30_000),
      'a scrape without the dead worker',
    );
    assert.ok(without!.samples.get('mcpgate_workers_scraped')! >= 2);
    assert.equal(without!.samples.get('mcpgate_workers_scraped'), without!.samples.get('mcpgate_workers_live'));
    assert.equal(without!.samples.has(`mcpgate_worker_scrape_up{worker="${victim.id}"}`), false);
    // Then its replacement, once it listens.
    let full: Scrape | undefined;
    assert.ok(
      await until(async () => {
        const s = await scrape(`${base}/metrics`);
        full = s;
        return s.samples.get('mcpgate_workers_scraped') === 3;
      }, 60_000),
      'a scrape with the replacement',
    );
    const now = [...byWorker(full!, 'mcpgate_up').keys()];
    assert.equal(now.length, 3);
    assert.equal(now.includes(victim.id), false);
    assert.equal(full!.samples.get('mcpgate_worker_restarts_total'), 1);
    for (let i = 0; i < 3; i++) assert.equal((await scrape(`${base}/metrics`)).samples.get('mcpgate_workers_scraped'), 3);
  });

  it('a stopped worker (SIGSTOP) costs a scrape the 2 s collection timeout, not a hang', { timeout: 120_000 }, async () => {
    let workers: WorkerRow[] = [];
    assert.ok(await until(async () => (workers = await workersOf(base)).length === 3, 30_000));
    const victim = workers[0]!;
    process.kill(victim.pid, 'SIGSTOP');
    let seen: Scrape | undefined;
    try {
      // node:cluster hands one connection in three to the stopped worker itself: that scrape waits
      // like any request to it (the scraper's own timeout ends it); the others answer without it.
      for (let i = 0; i < 6 && seen === undefined; i++) seen = await scrapeWithin(`${base}/metrics`, 8000);
    } finally {
      process.kill(victim.pid, 'SIGCONT');
    }
    assert.ok(seen !== undefined, 'a scrape answered while a worker was stopped');
    assert.equal(seen.samples.get(`mcpgate_worker_scrape_up{worker="${victim.id}"}`), 0);
    assert.equal(seen.samples.get('mcpgate_workers_live'), 3);
    assert.equal(seen.samples.get('mcpgate_workers_scraped'), 2);
    assert.equal(
      [...seen.samples.keys()].some((key) => key.startsWith(`mcpgate_up{worker="${victim.id}"`)),
      false,
    );
    // Resumed, it answers again.
    assert.ok(await until(async () => (await scrape(`${base}/metrics`)).samples.get('mcpgate_workers_scraped') === 3, 30_000));
  });
});
