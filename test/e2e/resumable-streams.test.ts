// Resumable SSE streams towards agents (issue 19; MCP 2025-11-25 "Resumability and Redelivery",
// SEP-1699): an official SDK agent behind a TCP proxy that cuts its connection mid-stream resumes
// with GET + Last-Event-ID and loses nothing — a long call's progress and its response, a GET
// stream's list_changed sent while it was away. Raw HTTP for what an SDK never sends: ids that are
// malformed, of another session, past the replay buffer's bound or its age, each refused with 400
// MCPG_EVENT_ID_UNKNOWN and never another session's events.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import { JSON_HEADERS, connectAgent, raw, rawSession, startHttpGateway, type HttpGateway } from '../helpers/http.js';
import { CutProxy } from '../helpers/cut-proxy.js';
import { SseParser } from '../../src/wire/sse.js';

const TIMEOUT = 120_000;

interface Event {
  id: string;
  data: string;
}

/** One SSE response read as it comes: its events, a promise per count, the end. */
class SseReader {
  readonly events: Event[] = [];
  status = 0;
  body = '';
  private waiters: { n: number; resolve: () => void }[] = [];
  readonly ended: Promise<void>;
  res: IncomingMessage | undefined;

  constructor(url: string, method: string, headers: Record<string, string>, body?: string) {
    this.ended = new Promise((resolve, reject) => {
      const req = request(url, { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
        this.res = res;
        this.status = res.statusCode ?? 0;
        const sse = String(res.headers['content-type']).startsWith('text/event-stream');
        const parser = new SseParser({ event: (e) => this.add({ id: e.lastEventId, data: e.data }) });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (sse ? parser.push(chunk) : (this.body += chunk)));
        res.on('end', () => resolve());
        res.on('close', () => resolve());
        res.on('error', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  private add(event: Event): void {
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => (this.events.length >= w.n ? (w.resolve(), false) : true));
  }

  /** Resolves once `n` events (the priming one included) have arrived. */
  until(n: number): Promise<void> {
    if (this.events.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  close(): void {
    this.res?.destroy();
  }
}

const call = (id: number, name: string, args: Record<string, unknown>, progressToken?: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(progressToken !== undefined && { _meta: { progressToken } }) } });

const getHeaders = (session: string, lastEventId?: string): Record<string, string> => ({
  accept: 'text/event-stream',
  'mcp-session-id': session,
  ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
});

async function metric(gate: HttpGateway, line: RegExp): Promise<number> {
  const body = (await raw(`${gate.base}/metrics`, { method: 'GET' })).body;
  const match = new RegExp(`^${line.source} (\\d+)$`, 'm').exec(body);
  return match === null ? 0 : Number(match[1]);
}

describe('resumable SSE streams towards agents', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  /** A second gateway with a small replay buffer and a short age. */
  let tight: HttpGateway;
  let proxy: CutProxy;

  before(async () => {
    dir = await tempDir('mcpgate-resume-');
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    [gate, tight] = await Promise.all([
      startHttpGateway({ config, args: ['--no-auth'] }),
      startHttpGateway({ config, args: ['--no-auth', '--replay-buffer', '600', '--replay-age', '1500'] }),
    ]);
    proxy = new CutProxy(Number(new URL(gate.url).port));
    await proxy.listen();
  });

  after(async () => {
    await proxy?.close();
    await Promise.all([gate?.stop(), tight?.stop()]);
    await dir?.remove();
  });

  it('an SDK agent whose POST stream is cut mid-call resumes and gets every progress notification and the result', { timeout: 60_000 }, async () => {
    const url = `http://127.0.0.1:${proxy.port}/mcp`;
    const { client } = await connectAgent(url);
    try {
      const resumedBefore = await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/);
      const seen: number[] = [];
      const cut = proxy.cutAfter('notifications/progress', 700);
      // 150 steps 10 ms apart outlast the 1 s reconnection delay: part is replayed, the rest live.
      const result = await client.callTool({ name: 'sink__progress', arguments: { steps: 150 } }, { onprogress: (p) => void seen.push(p.progress), timeout: 50_000 });
      await cut;
      assert.equal(proxy.cuts, 1, 'the POST stream was cut');
      assert.equal(textOf(result), 'done');
      assert.deepEqual(seen, Array.from({ length: 150 }, (_, i) => i + 1), 'every step, once, in order');
      assert.equal(await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/), resumedBefore + 1);
      assert.ok(await metric(gate, /mcpgate_sse_replay_events_total\{event="replayed"\}/) > 0);
    } finally {
      await client.close();
    }
  });

  it('an SDK agent whose GET stream is cut resumes and gets the list_changed sent while it was away', { timeout: 60_000 }, async () => {
    const url = `http://127.0.0.1:${proxy.port}/mcp`;
    // The agent's GET stream is the first event stream it gets: its priming event carries `retry:`.
    const streamOpen = proxy.waitFor('retry: ');
    let changed = 0;
    let onChanged: () => void = () => {};
    const { client } = await connectAgent(url, {
      setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => {
        changed += 1;
        onChanged();
      }),
    });
    // Another agent, straight to the gateway: it makes the change and sees it arrive.
    let otherChanged: () => void = () => {};
    const other = await connectAgent(gate.url, { setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => otherChanged()) });
    try {
      await streamOpen;
      const resumedBefore = await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/);
      proxy.hold(); // its reconnection waits until the change has been sent
      proxy.cutAll();
      const seenByOther = new Promise<void>((resolve) => (otherChanged = resolve));
      assert.equal(textOf(await other.client.callTool({ name: 'sink__change', arguments: {} })), 'changed');
      await seenByOther;
      const arrived = new Promise<void>((resolve) => (onChanged = resolve));
      proxy.release();
      await arrived;
      assert.equal(changed, 1, 'the list_changed arrived once');
      assert.equal(await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/), resumedBefore + 1, 'it came by a resumption');
    } finally {
      await client.close();
      await other.client.close();
    }
  });

  it('raw: a POST stream cut before its response is resumed with GET + Last-Event-ID, then ends', { timeout: 30_000 }, async () => {
    const session = await rawSession(gate.url);
    const post = new SseReader(gate.url, 'POST', { ...JSON_HEADERS, 'mcp-session-id': session }, call(7, 'sink__progress', { steps: 5 }, 'p7'));
    await post.until(2); // priming + the first progress
    assert.equal(post.events[0]!.data, '', 'the first event primes: an id, no data');
    assert.match(post.events[0]!.id, /^[A-Za-z0-9_-]{16}\.0$/);
    const last = post.events[1]!.id;
    post.close();
    const resumed = new SseReader(gate.url, 'GET', getHeaders(session, last));
    await resumed.ended;
    assert.equal(resumed.status, 200);
    const messages = resumed.events.map((e) => JSON.parse(e.data) as { id?: number; params?: { progress: number }; result?: unknown });
    assert.deepEqual(messages.filter((m) => m.params !== undefined).map((m) => m.params!.progress), [2, 3, 4, 5]);
    assert.equal(messages.at(-1)!.id, 7, 'the response comes last, then the stream ends');
    const [key] = last.split('.');
    assert.ok(resumed.events.every((e) => e.id.startsWith(`${key}.`)), 'ids keep naming the same stream');
  });

  it('raw: malformed, unknown and another session\'s ids are refused with 400, never with its events', { timeout: 30_000 }, async () => {
    const a = await rawSession(gate.url);
    const b = await rawSession(gate.url);
    const streamA = new SseReader(gate.url, 'GET', getHeaders(a));
    await streamA.until(1);
    const idOfA = streamA.events[0]!.id;
    for (const bad of ['garbage', `${'A'.repeat(16)}.0`, idOfA]) {
      const res = await raw(gate.url, { method: 'GET', headers: getHeaders(b, bad) });
      assert.equal(res.status, 400, bad);
      const error = (res.json as { error: { data: { code: string } } }).error;
      assert.equal(error.data.code, 'MCPG_EVENT_ID_UNKNOWN');
      assert.ok(!res.body.includes('list_changed'));
    }
    // An id from the future of a real stream is refused too.
    const [key] = idOfA.split('.');
    assert.equal((await raw(gate.url, { method: 'GET', headers: getHeaders(a, `${key}.99`) })).status, 400);
    // Session A's stream is unaffected: B's attempts did not take it over.
    assert.equal(streamA.res?.destroyed, false);
    streamA.close();
    // And A itself may resume its own stream.
    const resumed = new SseReader(gate.url, 'GET', getHeaders(a, idOfA));
    await new Promise<void>((resolve) => {
      const check = (): void => void (resumed.status !== 0 ? resolve() : setImmediate(check));
      check();
    });
    assert.equal(resumed.status, 200);
    resumed.close();
  });

  it('raw: the replay buffer is bounded per stream; a resumption from before what is kept is refused', { timeout: 30_000 }, async () => {
    const droppedBefore = await metric(tight, /mcpgate_sse_replay_events_total\{event="dropped"\}/);
    const session = await rawSession(tight.url);
    const post = new SseReader(tight.url, 'POST', { ...JSON_HEADERS, 'mcp-session-id': session }, call(3, 'sink__progress', { steps: 30 }, 'p3'));
    await post.ended;
    assert.equal(post.events.length, 32, 'priming, 30 progress, the response');
    const early = await raw(tight.url, { method: 'GET', headers: getHeaders(session, post.events[0]!.id) });
    assert.equal(early.status, 400, '600 bytes cannot hold 31 events: replaying from the start would skip some');
    assert.match(early.body, /no longer kept/);
    const late = new SseReader(tight.url, 'GET', getHeaders(session, post.events[30]!.id));
    await late.ended;
    assert.equal(late.status, 200);
    assert.deepEqual(late.events.map((e) => (JSON.parse(e.data) as { id: number }).id), [3], 'only the response, which is kept');
    assert.ok(await metric(tight, /mcpgate_sse_replay_events_total\{event="dropped"\}/) >= droppedBefore + 20);
  });

  it('raw: events past the replay age are gone; resuming from them is refused', { timeout: 30_000 }, async () => {
    const session = await rawSession(tight.url);
    const post = new SseReader(tight.url, 'POST', { ...JSON_HEADERS, 'mcp-session-id': session }, call(4, 'sink__progress', { steps: 2 }, 'p4'));
    await post.ended;
    const fresh = new SseReader(tight.url, 'GET', getHeaders(session, post.events[1]!.id));
    await fresh.ended;
    assert.equal(fresh.status, 200, 'within the age, the rest is replayed');
    await new Promise((resolve) => setTimeout(resolve, 1700)); // past --replay-age 1500
    const stale = await raw(tight.url, { method: 'GET', headers: getHeaders(session, post.events[1]!.id) });
    assert.equal(stale.status, 400);
  });
});
