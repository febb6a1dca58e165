// Resumable SSE streams towards agents (MCP 2025-11-25 "Resumability and Redelivery", SEP-1699),
// the raw requests an SDK never sends, in-process (test/helpers/in-process.ts): a POST stream cut
// before its response is resumed with GET + Last-Event-ID; ids that are malformed, of another
// session, past the replay buffer's bound or its age are refused with 400 MCPG_EVENT_ID_UNKNOWN and
// never another session's events. The in-memory server reports progress when the test says
// (`FakeServer.step`), so what is sent before and after a cut is decided, not raced. SDK agents
// resuming through a proxy that cuts real connections stay in test/e2e/resumable-streams.test.ts.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer } from '../../helpers/fake-server.js';
import { httpFront, parseEvents, until, type InProcessHttp } from '../../helpers/in-process.js';
import { JSON_HEADERS } from '../../helpers/requests.js';

const TIMEOUT = 10_000;
/** The tight front's --replay-age: short, so the test that outlives it waits little. */
const AGE_MS = 400;

const call = (id: number, name: string, args: Record<string, unknown>, progressToken?: string): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(progressToken !== undefined && { _meta: { progressToken } }) },
  });

const getHeaders = (session: string, lastEventId?: string): Record<string, string> => ({
  accept: 'text/event-stream',
  'mcp-session-id': session,
  ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
});

async function metric(gate: InProcessHttp, line: RegExp): Promise<number> {
  const body = (await gate.inject({ method: 'GET', url: '/metrics' })).body;
  const match = new RegExp(`^${line.source} (\\d+)$`, 'm').exec(body);
  return match === null ? 0 : Number(match[1]);
}

const sinkServer = (): FakeServer => new FakeServer('sink', { tools: [{ name: 'progress', progress: true }] });

describe('resumable SSE streams towards agents: raw resumptions', { timeout: TIMEOUT }, () => {
  let gate: InProcessHttp;
  /** A second front with a small replay buffer and a short age. */
  let tight: InProcessHttp;
  const sink = sinkServer();
  const tightSink = sinkServer();

  before(async () => {
    [gate, tight] = await Promise.all([
      httpFront({ servers: [sink] }),
      httpFront({ servers: [tightSink], front: { replay: { maxStreamBytes: 600, maxAgeMs: AGE_MS } } }),
    ]);
  });

  after(async () => {
    await Promise.all([gate?.close(), tight?.close()]);
  });

  it('raw: a POST stream cut before its response is resumed with GET + Last-Event-ID, replayed then live, then ends', async () => {
    const session = await gate.session();
    const post = gate.open({
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: call(7, 'sink__progress', { steps: 5 }, 'p7'),
    });
    assert.ok(await until(() => sink.calls.length === 1));
    sink.step();
    const priming = await post.next();
    const first = await post.next();
    assert.equal(priming?.data, '', 'the first event primes: an id, no data');
    assert.match(priming?.id ?? '', /^[A-Za-z0-9_-]{16}\.0$/);
    assert.equal((first?.json?.params as { progress: number }).progress, 1);
    const last = first!.id!;
    post.abort();
    sink.step(); // progress 2 and 3 while the agent is away: logged for it
    sink.step();
    const resumedBefore = await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/);
    const resumed = gate.open({ method: 'GET', headers: getHeaders(session, last) });
    assert.equal((await resumed.head).status, 200);
    const replayed = [await resumed.nextMessage(), await resumed.nextMessage()];
    while (sink.step() > 0); // progress 4 and 5, then the response: live on the resumed stream
    const done = await resumed.done;
    assert.equal(done.status, 200);
    const live: Record<string, unknown>[] = [];
    for (let m = await resumed.nextMessage(); m !== undefined; m = await resumed.nextMessage()) live.push(m);
    const messages = [...replayed, ...live] as { id?: number; params?: { progress: number } }[];
    assert.deepEqual(
      messages.filter((m) => m.params !== undefined).map((m) => m.params!.progress),
      [2, 3, 4, 5],
    );
    assert.equal(messages.at(-1)!.id, 7, 'the response comes last, then the stream ends');
    assert.deepEqual((messages.at(-1) as { result?: unknown }).result, { content: [{ type: 'text', text: 'done' }] });
    const [key] = last.split('.');
    assert.ok(
      parseIds(done.body).every((id) => id.startsWith(`${key}.`)),
      'ids keep naming the same stream',
    );
    assert.equal(await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/), resumedBefore + 1);
    assert.ok((await metric(gate, /mcpgate_sse_replay_events_total\{event="replayed"\}/)) >= 2);
  });

  it("raw: malformed, unknown and another session's ids are refused with 400, never with its events", async () => {
    const a = await gate.session();
    const b = await gate.session();
    const streamA = gate.open({ method: 'GET', headers: getHeaders(a) });
    const idOfA = (await streamA.next())!.id!;
    for (const bad of ['garbage', `${'A'.repeat(16)}.0`, idOfA]) {
      const res = await gate.inject({ method: 'GET', headers: getHeaders(b, bad) });
      assert.equal(res.status, 400, bad);
      const error = (res.json as { error: { data: { code: string } } }).error;
      assert.equal(error.data.code, 'MCPG_EVENT_ID_UNKNOWN');
      assert.ok(!res.body.includes('list_changed'));
    }
    // An id from the future of a real stream is refused too.
    const [key] = idOfA.split('.');
    assert.equal((await gate.inject({ method: 'GET', headers: getHeaders(a, `${key}.99`) })).status, 400);
    // Session A's stream is unaffected: B's attempts did not take it over.
    assert.equal(streamA.res.destroyed, false);
    streamA.abort();
    // And A itself may resume its own stream.
    const resumed = gate.open({ method: 'GET', headers: getHeaders(a, idOfA) });
    assert.equal((await resumed.head).status, 200);
    resumed.abort();
  });

  it('raw: the replay buffer is bounded per stream; a resumption from before what is kept is refused', async () => {
    const droppedBefore = await metric(tight, /mcpgate_sse_replay_events_total\{event="dropped"\}/);
    const session = await tight.session();
    const post = tight.open({
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: call(3, 'sink__progress', { steps: 30 }, 'p3'),
    });
    assert.ok(await until(() => tightSink.calls.length === 1));
    while (tightSink.step() > 0);
    const ended = await post.done;
    const ids = parseIds(ended.body);
    assert.equal(ids.length, 32, 'priming, 30 progress, the response');
    const early = await tight.inject({ method: 'GET', headers: getHeaders(session, ids[0]) });
    assert.equal(early.status, 400, '600 bytes cannot hold 31 events: replaying from the start would skip some');
    assert.match(early.body, /no longer kept/);
    const late = await tight.inject({ method: 'GET', headers: getHeaders(session, ids[30]) });
    assert.equal(late.status, 200);
    assert.deepEqual(
      messagesOf(late.body).map((m) => m.id),
      [3],
      'only the response, which is kept',
    );
    assert.ok((await metric(tight, /mcpgate_sse_replay_events_total\{event="dropped"\}/)) >= droppedBefore + 20);
  });

  it('raw: events past the replay age are gone; resuming from them is refused', async () => {
    const session = await tight.session();
    const post = tight.open({
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: call(4, 'sink__progress', { steps: 2 }, 'p4'),
    });
    assert.ok(await until(() => tightSink.calls.length === 2));
    while (tightSink.step() > 0);
    const ids = parseIds((await post.done).body);
    const fresh = await tight.inject({ method: 'GET', headers: getHeaders(session, ids[1]) });
    assert.equal(fresh.status, 200, 'within the age, the rest is replayed');
    assert.deepEqual(
      messagesOf(fresh.body).map((m) => m.id ?? m.method),
      ['notifications/progress', 4],
      'progress 2 and the response',
    );
    await new Promise((resolve) => setTimeout(resolve, AGE_MS + 100)); // past --replay-age
    const stale = await tight.inject({ method: 'GET', headers: getHeaders(session, ids[1]) });
    assert.equal(stale.status, 400);
  });
});

/** The ids of an event stream's events, in order. */
function parseIds(body: string): string[] {
  return parseEvents(body).events.map((e) => e.id ?? '');
}

/** The messages of an event stream's events that carry one. */
function messagesOf(body: string): Record<string, unknown>[] {
  return parseEvents(body).events.flatMap((e) => (e.json === undefined ? [] : [e.json]));
}
