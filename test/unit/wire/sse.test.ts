// Server-Sent Events framing (src/wire/sse.ts), the way remote MCP servers stream messages: fields
// per the WHATWG event-stream rules (data lines joined by "\n", event, id, retry, comments, a single
// leading space stripped), LF / CRLF / CR line ends, chunks split anywhere — inside a CRLF, inside a
// UTF-8 character — an over-long event dropped and reported while the next still arrives, and the
// encoder's output parsed back as written.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, sseEvent, type SseEvent } from '../../../src/wire/sse.js';

interface Parsed {
  events: SseEvent[];
  retries: number[];
  overflows: number[];
  parser: SseParser;
}

function parse(chunks: (string | Uint8Array)[], max?: number): Parsed {
  const got: Parsed = { events: [], retries: [], overflows: [], parser: undefined! };
  got.parser = new SseParser(
    { event: (e) => got.events.push(e), retry: (ms) => got.retries.push(ms), overflow: (n) => got.overflows.push(n) },
    max,
  );
  for (const chunk of chunks) got.parser.push(chunk);
  got.parser.end();
  return got;
}

const data = (p: Parsed): string[] => p.events.map((e) => e.data);

/** Every way of cutting `text` into two chunks (as bytes, so UTF-8 characters are split too). */
function splits(text: string): Uint8Array[][] {
  const bytes = new TextEncoder().encode(text);
  return Array.from({ length: bytes.length + 1 }, (_, i) => [bytes.subarray(0, i), bytes.subarray(i)]);
}

void describe('SseParser', { timeout: 5000 }, () => {
  void it('dispatches on a blank line, with type "message" by default', { timeout: 5000 }, () => {
    const { events } = parse(['data: {"a":1}\n\nevent: endpoint\ndata: /messages?s=1\n\n']);
    assert.deepEqual(events, [
      { event: 'message', data: '{"a":1}', lastEventId: '' },
      { event: 'endpoint', data: '/messages?s=1', lastEventId: '' },
    ]);
  });

  void it('joins multi-line data with \\n and strips exactly one leading space', { timeout: 5000 }, () => {
    assert.deepEqual(data(parse(['data: one\ndata:two\ndata:  three\ndata\n\n'])), ['one\ntwo\n three\n']);
    assert.deepEqual(data(parse(['data:\n\n'])), [''], 'an empty data line still dispatches (a priming event)');
  });

  void it('ignores comments, unknown fields and events without data', { timeout: 5000 }, () => {
    const p = parse([': keepalive\n\nfoo: bar\n\nevent: x\n\n:comment\ndata: kept\n\n']);
    assert.deepEqual(data(p), ['kept']);
    assert.equal(p.events[0]!.event, 'message', 'the type of an undispatched event does not leak into the next');
  });

  void it('keeps the last event id across events, also from events without data; "id:" alone resets it', { timeout: 5000 }, () => {
    const p = parse(['id: 7\ndata: a\n\ndata: b\n\nid: 9\n\ndata: c\n\nid\ndata: d\n\nid: bad\0id\ndata: e\n\n']);
    assert.deepEqual(
      p.events.map((e) => [e.data, e.lastEventId]),
      [
        ['a', '7'],
        ['b', '7'],
        ['c', '9'],
        ['d', ''],
        ['e', ''],
      ],
    );
    assert.equal(p.parser.lastEventId, '');
    assert.equal(parse(['id: 42\ndata: \n\n']).parser.lastEventId, '42');
  });

  void it('reports retry only when it is all digits', { timeout: 5000 }, () => {
    assert.deepEqual(parse(['retry: 1500\nretry: 2s\nretry:-1\nretry: 30\ndata: x\n\n']).retries, [1500, 30]);
  });

  void it('accepts LF, CRLF and lone CR line ends, mixed', { timeout: 5000 }, () => {
    assert.deepEqual(data(parse(['data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\ndata: e\r\n\n'])), ['a', 'b', 'c', 'd\ne']);
  });

  void it('gives the same events however the stream is cut, inside a CRLF or a UTF-8 character', { timeout: 10_000 }, () => {
    const text = 'id: 1\r\ndata: {"t":"héllo ✓ 😀"}\r\n\r\nevent: endpoint\rdata: /m\r\r: c\ndata: x\ndata: y\n\n';
    const whole = parse([text]).events;
    assert.equal(whole.length, 3);
    for (const chunks of splits(text)) assert.deepEqual(parse(chunks).events, whole);
    const bytes = new TextEncoder().encode(text);
    assert.deepEqual(parse(Array.from(bytes, (b) => Uint8Array.of(b))).events, whole, 'one byte at a time');
  });

  void it('strips a leading byte order mark', { timeout: 5000 }, () => {
    assert.deepEqual(data(parse([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf, 0x64), 'ata: x\n\n'])), ['x']);
  });

  void it('discards an event left without its blank line at the end of the stream', { timeout: 5000 }, () => {
    assert.deepEqual(data(parse(['data: done\n\ndata: partial\n'])), ['done']);
    assert.deepEqual(data(parse(['data: done\n\ndata: partial'])), ['done']);
  });

  void it('drops an event over the limit up to its blank line, reports it once, and goes on', { timeout: 5000 }, () => {
    const big = 'x'.repeat(100);
    const across = parse(['data: small\n\ndata: ', big.slice(0, 50), big.slice(50), '\ndata: more\n\ndata: after\n\n'], 64);
    assert.deepEqual(data(across), ['small', 'after']);
    assert.equal(across.overflows.length, 1);
    const lines = parse([`data: ${'y'.repeat(40)}\ndata: ${'y'.repeat(40)}\n\ndata: next\n\n`], 64);
    assert.deepEqual(data(lines), ['next'], 'many lines that add up past the limit');
    assert.equal(lines.overflows.length, 1);
    const unended = parse(['data: ', big, big, big], 64);
    assert.deepEqual(unended.events, []);
    assert.equal(unended.overflows.length, 1, 'a line that never ends is reported once, not kept');
  });
});

void describe('sseEvent', { timeout: 5000 }, () => {
  void it('frames data, id and event so the parser reads them back', { timeout: 5000 }, () => {
    assert.equal(sseEvent('{"a":1}'), 'data: {"a":1}\n\n');
    assert.equal(sseEvent('{"a":1}', '5', 'message'), 'event: message\nid: 5\ndata: {"a":1}\n\n');
    const cases = ['plain', 'two\nlines', 'cr\rand\r\ncrlf', ' leading space', '', ':colon first'];
    const text = cases.map((d, i) => sseEvent(d, String(i))).join('');
    const p = parse([text]);
    assert.deepEqual(data(p), ['plain', 'two\nlines', 'cr\nand\ncrlf', ' leading space', '', ':colon first']);
    assert.equal(p.parser.lastEventId, '5');
  });

  void it('refuses an id or event name that would break the framing', { timeout: 5000 }, () => {
    assert.throws(() => sseEvent('x', 'a\nb'), RangeError);
    assert.throws(() => sseEvent('x', 'a\0b'), RangeError);
    assert.throws(() => sseEvent('x', undefined, 'e\r'), RangeError);
  });
});
