// The replay logs behind resumable SSE streams (src/front/http/sse-replay.ts): ids name the
// stream and the position, a resumption gets exactly the events after its id, and every bound holds
// — per stream, by age, per session and in total — with what leaves the buffer counted as dropped
// and a resumption across a gap refused rather than served with events missing.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ReplayStore, parseEventId, type ReplayCounters, type StreamLog } from '../../../src/front/http/sse-replay.js';

function counting(): ReplayCounters & { counts: Record<string, number> } {
  const counts: Record<string, number> = { buffered: 0, replayed: 0, dropped: 0, resumed: 0, refused: 0 };
  return {
    counts,
    buffered: (n) => (counts.buffered! += n),
    replayed: (n) => (counts.replayed! += n),
    dropped: (n) => (counts.dropped! += n),
    resumption: (outcome) => (counts[outcome]! += 1),
  };
}

const frame =
  (data: string) =>
  (id: string): string =>
    `id: ${id}\ndata: ${data}\n\n`;

function write(store: ReplayStore, log: StreamLog, n: number, size = 10): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(store.append(log, frame('x'.repeat(size))));
  return out;
}

describe('SSE replay logs', () => {
  it('ids name the stream and the position; a resumption gets what came after its id', () => {
    const counters = counting();
    const store = new ReplayStore({}, counters);
    const session = new Map<string, StreamLog>();
    const log = store.open(session, 'post');
    const frames = write(store, log, 3);
    assert.match(frames[0]!, new RegExp(`^id: ${log.key}\\.1\n`));
    assert.deepEqual(parseEventId(`${log.key}.2`), { key: log.key, seq: 2 });
    assert.deepEqual(store.after(log, 1), frames.slice(1));
    assert.deepEqual(store.after(log, 0), frames);
    assert.deepEqual(store.after(log, 3), []);
    assert.equal(store.after(log, 4), undefined, 'an id never sent is refused');
    assert.equal(counters.counts.buffered, 3);
    assert.equal(counters.counts.replayed, 5);
  });

  it('stream keys are random and unlike between streams', () => {
    const store = new ReplayStore();
    const keys = new Set<string>();
    for (let i = 0; i < 50; i++) keys.add(store.open(new Map(), 'get').key);
    assert.equal(keys.size, 50);
    for (const key of keys) assert.match(key, /^[A-Za-z0-9_-]{16}$/);
  });

  it("rejects ids that are not mcpgate's", () => {
    for (const bad of [
      '',
      'abc',
      'abc.1',
      `${'a'.repeat(16)}.`,
      `${'a'.repeat(16)}.01`,
      `${'a'.repeat(16)}.-1`,
      `${'a'.repeat(16)}.1.2`,
      `${'a'.repeat(16)}.${'9'.repeat(16)}`,
    ]) {
      assert.equal(parseEventId(bad), undefined, bad);
    }
  });

  it('a stream keeps at most its byte bound; a resumption from before what is kept is refused', () => {
    const counters = counting();
    const store = new ReplayStore({ maxStreamBytes: 100 }, counters);
    const log = store.open(new Map(), 'get');
    const frames = write(store, log, 10); // about 40 bytes each
    assert.ok(log.bytes <= 100);
    assert.equal(store.bytes, log.bytes);
    assert.equal(counters.counts.dropped, 10 - log.size);
    assert.equal(store.after(log, 0), undefined, 'events 1.. were dropped: no replay with a gap');
    assert.deepEqual(store.after(log, 8), frames.slice(8));
  });

  it('events older than the age bound are dropped; a finished stream left empty is forgotten', async () => {
    const store = new ReplayStore({ maxAgeMs: 20 });
    const session = new Map<string, StreamLog>();
    const log = store.open(session, 'post');
    write(store, log, 2);
    log.complete = true;
    await new Promise((resolve) => setTimeout(resolve, 40));
    store.sweep();
    assert.equal(log.size, 0);
    assert.equal(store.bytes, 0);
    assert.equal(session.has(log.key), false);
    assert.equal(store.after(log, 1), undefined);
  });

  it('the total bound takes from the least recently written streams first', () => {
    const store = new ReplayStore({ maxTotalBytes: 400, maxStreamBytes: 1000 });
    const a = store.open(new Map(), 'get');
    const b = store.open(new Map(), 'get');
    write(store, a, 6);
    write(store, b, 6);
    assert.ok(store.bytes <= 400, `total ${store.bytes}`);
    assert.equal(b.size, 6, 'the stream written last keeps its events');
    assert.ok(a.size < 6);
  });

  it('a session keeps a bounded number of streams, finished ones forgotten first', () => {
    const store = new ReplayStore({ maxStreamsPerSession: 3 });
    const session = new Map<string, StreamLog>();
    const running = store.open(session, 'post');
    const done = store.open(session, 'post');
    done.complete = true;
    store.open(session, 'get');
    write(store, done, 1);
    const fourth = store.open(session, 'post');
    assert.equal(session.size, 3);
    assert.ok(session.has(running.key) && session.has(fourth.key) && !session.has(done.key));
    assert.equal(store.bytes, 0, 'the forgotten stream freed its events');
  });

  it('discarding a log frees its events and counts them as dropped', () => {
    const counters = counting();
    const store = new ReplayStore({}, counters);
    const session = new Map<string, StreamLog>();
    const log = store.open(session, 'get');
    write(store, log, 4);
    store.discard(log);
    store.discard(log);
    assert.equal(store.bytes, 0);
    assert.equal(counters.counts.dropped, 4);
    assert.equal(session.size, 0);
  });

  it('dropped events are released: after a full GC the heap holds what the bounds count, not what was dropped (GET logs of live sessions)', () => {
    setFlagsFromString('--expose-gc');
    const once = runInNewContext('gc') as () => void;
    // External memory is freed by finalizers that run after a collection: collect until it settles.
    const gc = (): void => {
      for (let i = 0; i < 4; i++) once();
    };
    const MiB = 1024 * 1024;
    const counters = counting();
    const store = new ReplayStore({ maxStreamBytes: 4 * MiB, maxTotalBytes: 6 * MiB }, counters);
    const sessions = [new Map<string, StreamLog>(), new Map<string, StreamLog>()];
    const logs = sessions.map((session) => store.open(session, 'get'));
    // Large strings made from a Buffer live outside the V8 heap (external strings): count both.
    const used = (): number => {
      const { heapUsed, external } = process.memoryUsage();
      return heapUsed + external;
    };
    gc();
    const before = used();
    // 60 distinct events of 2 MiB (120 MiB) on the GET streams of two sessions that stay open.
    for (let i = 0; i < 60; i++) store.append(logs[i % 2]!, frame(Buffer.alloc(2 * MiB, 97 + (i % 26)).toString('latin1')));
    gc();
    const held = used() - before;
    assert.ok(store.bytes <= 6 * MiB, `the store counts ${store.bytes} bytes`);
    assert.ok(counters.counts.dropped! >= 57, `${counters.counts.dropped} counted dropped`);
    assert.ok(
      held < store.bytes + 4 * MiB,
      `the heap still holds ${Math.round(held / MiB)} MiB after a full GC; the store counts ${Math.round(store.bytes / MiB)} MiB`,
    );
    assert.equal(sessions[0]!.size + sessions[1]!.size, 2, 'the logs themselves live on with their sessions');
  });
});
