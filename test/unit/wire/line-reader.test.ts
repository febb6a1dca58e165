// Newline-delimited framing (src/wire/jsonrpc.ts `readLines`): MCP stdio carries one JSON-RPC message per
// line. Chunks arrive split anywhere (even inside a UTF-8 character); an over-long line is dropped
// and reported once while the lines after it still arrive.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { readLines } from '../../../src/wire/jsonrpc.js';

interface Collected {
  lines: string[];
  overflows: number[];
  ended: Promise<void>;
  detach: () => void;
}

function collect(stream: PassThrough, maxLineLength?: number): Collected {
  const lines: string[] = [];
  const overflows: number[] = [];
  let resolveEnd: () => void = () => {};
  const ended = new Promise<void>((resolve) => (resolveEnd = resolve));
  const detach = readLines(stream, { line: (l) => lines.push(l), overflow: (n) => overflows.push(n), end: resolveEnd }, maxLineLength);
  return { lines, overflows, ended, detach };
}

/** Writes each chunk in order, ends the stream and waits for the reader's `end`. */
async function feed(chunks: (string | Buffer)[], maxLineLength?: number): Promise<Collected> {
  const stream = new PassThrough();
  const got = collect(stream, maxLineLength);
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await got.ended;
  return got;
}

void describe('readLines', { timeout: 5000 }, () => {
  void it('joins a line split across chunks', { timeout: 5000 }, async () => {
    const { lines } = await feed(['{"a":', '1', '}\n{"b"', ':2}\n']);
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}']);
  });

  void it('splits several lines in one chunk', { timeout: 5000 }, async () => {
    const { lines } = await feed(['one\ntwo\nthree\n']);
    assert.deepEqual(lines, ['one', 'two', 'three']);
  });

  void it('strips CR of CRLF, even when CR and LF arrive in different chunks', { timeout: 5000 }, async () => {
    const { lines } = await feed(['a\r\nb\r', '\nc\r\n']);
    assert.deepEqual(lines, ['a', 'b', 'c']);
  });

  void it('skips empty lines', { timeout: 5000 }, async () => {
    const { lines } = await feed(['\n\na\n\r\n\n', '\nb\n\n']);
    assert.deepEqual(lines, ['a', 'b']);
  });

  void it('decodes multi-byte UTF-8 split across chunk boundaries', { timeout: 5000 }, async () => {
    const text = 'é€😀 ok\n';
    const bytes = Buffer.from(text, 'utf8');
    // Every byte its own chunk: every character is split at every possible point.
    const { lines } = await feed([...bytes].map((b) => Buffer.from([b])));
    assert.deepEqual(lines, ['é€😀 ok']);
    const euro = Buffer.from('€\n', 'utf8');
    const again = await feed([euro.subarray(0, 1), euro.subarray(1, 2), euro.subarray(2)]);
    assert.deepEqual(again.lines, ['€']);
  });

  void it('emits a trailing line without a newline at end', { timeout: 5000 }, async () => {
    const { lines } = await feed(['a\nlast', ' part']);
    assert.deepEqual(lines, ['a', 'last part']);
    const crlf = await feed(['tail\r']);
    assert.deepEqual(crlf.lines, ['tail']);
  });

  void it('drops an over-long line within one chunk, reports it once, and keeps reading', { timeout: 5000 }, async () => {
    const { lines, overflows } = await feed(['ok1\n' + 'x'.repeat(15) + '\nok2\n'], 10);
    assert.deepEqual(lines, ['ok1', 'ok2']);
    assert.deepEqual(overflows, [15]);
  });

  void it('drops an over-long line spread over many chunks up to its newline, once', { timeout: 5000 }, async () => {
    const { lines, overflows } = await feed(['ok1\nxxxxxxxx', 'xxxxxxxx', 'xxxxxxxx', 'xxx\nok2\n', 'ok3'], 10);
    assert.deepEqual(lines, ['ok1', 'ok2', 'ok3']);
    assert.deepEqual(overflows, [16]);
  });

  void it('drops a line that only exceeds the limit once its newline arrives', { timeout: 5000 }, async () => {
    const { lines, overflows } = await feed(['xxxxxx', 'xxxxxx\nok\n'], 10);
    assert.deepEqual(lines, ['ok']);
    assert.deepEqual(overflows, [12]);
  });

  void it('accepts a line of exactly the limit', { timeout: 5000 }, async () => {
    const { lines, overflows } = await feed(['0123456789\n', '01234', '56789\n', '0123456789'], 10);
    assert.deepEqual(lines, ['0123456789', '0123456789', '0123456789']);
    assert.deepEqual(overflows, []);
  });

  void it('drops an unterminated over-long tail at end', { timeout: 5000 }, async () => {
    const { lines, overflows } = await feed(['ok\n', 'y'.repeat(30)], 10);
    assert.deepEqual(lines, ['ok']);
    assert.deepEqual(overflows, [30]);
  });

  void it('delivers nothing after detach', { timeout: 5000 }, async () => {
    const stream = new PassThrough();
    const got = collect(stream);
    stream.write('a\n');
    await new Promise((resolve) => setImmediate(resolve));
    got.detach();
    stream.write('b\n');
    stream.resume();
    stream.end();
    await new Promise((resolve) => stream.once('end', resolve));
    assert.deepEqual(got.lines, ['a']);
  });
});
