// A server's stderr in the gateway's log (src/servers/transports/stdio/stderr-log.ts): a burst of lines (a traceback)
// is one record, bounded in lines and bytes; chatter is logged at debug, a burst that looks like an
// error at warn; the tail for /status keeps every line; the rate limit still counts lines.

import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Logger } from '../../../src/observability/logger.js';
import { StderrLog } from '../../../src/servers/transports/stdio/stderr-log.js';

type StderrLimits = NonNullable<ConstructorParameters<typeof StderrLog>[2]>;
/** The limits a stdio server's stderr gets when none are given (the gateway gives none). */
const DEFAULT_STDERR_LIMITS: StderrLimits = {
  maxLineBytes: 2048,
  tailLines: 20,
  burst: 200,
  perSecond: 20,
  quietMs: 100,
  maxRecordMs: 1000,
  maxRecordLines: 50,
  maxRecordBytes: 16 * 1024,
};

interface Record {
  level: string;
  msg: string;
  stderr?: string;
  lines?: number;
  suppressed?: number;
}

/** A stream and a logger that keeps its records; `next(n)` resolves once n records are logged. */
function rig(limits: Partial<StderrLimits> = {}): {
  stream: PassThrough;
  records: Record[];
  next: (n: number) => Promise<Record[]>;
  log: StderrLog;
} {
  const records: Record[] = [];
  const waiters: { n: number; resolve: (r: Record[]) => void }[] = [];
  const logger = new Logger('debug', (line) => {
    records.push(JSON.parse(line) as Record);
    for (const w of [...waiters])
      if (records.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(records);
      }
  });
  const stream = new PassThrough();
  const log = new StderrLog(stream, logger, { ...DEFAULT_STDERR_LIMITS, ...limits });
  // The record timer is unref'd (a server's open pipe keeps the gateway alive, not it): a waiting test holds the loop.
  const next = (n: number): Promise<Record[]> =>
    records.length >= n
      ? Promise.resolve(records)
      : new Promise((resolve) => {
          const hold = setTimeout(() => {}, 5000);
          waiters.push({
            n,
            resolve: (r) => {
              clearTimeout(hold);
              resolve(r);
            },
          });
        });
  return { stream, records, next, log };
}

const TRACEBACK = [
  'Traceback (most recent call last):',
  '  File "/srv/app/server.py", line 42, in call_tool',
  '    result = await handler(arguments)',
  '  File "/srv/app/tools.py", line 7, in lookup',
  '    raise KeyError(key)',
  "KeyError: 'missing'",
];

void describe('StderrLog', { timeout: 10_000 }, () => {
  void it('logs a traceback written at once as one warn record, every line in the tail', { timeout: 5000 }, async () => {
    const { stream, next, log } = rig();
    stream.write(`${TRACEBACK.join('\n')}\n`);
    const [record] = await next(1);
    assert.equal(record!.level, 'warn');
    assert.equal(record!.msg, 'server stderr');
    assert.equal(record!.lines, TRACEBACK.length);
    assert.equal(record!.stderr, TRACEBACK.join('\n'));
    assert.deepEqual(log.lines, TRACEBACK);
  });

  void it('gathers lines arriving in pieces within the quiet window; chatter is debug', { timeout: 5000 }, async () => {
    const { stream, next } = rig({ quietMs: 200 });
    stream.write('INFO starting up\nlistening on std');
    stream.write('io\n');
    stream.write('loaded 12 tools\n');
    const [record] = await next(1);
    assert.equal(record!.level, 'debug');
    assert.equal(record!.stderr, 'INFO starting up\nlistening on stdio\nloaded 12 tools');
  });

  void it('bounds a record in lines and in bytes', { timeout: 5000 }, async () => {
    const byLines = rig({ maxRecordLines: 3 });
    byLines.stream.write('a\nb\nc\nd\ne\n');
    const lines = await byLines.next(2);
    assert.deepEqual(
      lines.map((r) => r.stderr),
      ['a\nb\nc', 'd\ne'],
    );

    const byBytes = rig({ maxRecordBytes: 25 });
    byBytes.stream.write(`${'x'.repeat(10)}\n${'y'.repeat(10)}\n${'z'.repeat(10)}\n`);
    const bytes = await byBytes.next(2);
    assert.deepEqual(
      bytes.map((r) => r.stderr),
      [`${'x'.repeat(10)}\n${'y'.repeat(10)}`, 'z'.repeat(10)],
    );
  });

  void it('ends a record at its age bound even while lines keep coming', { timeout: 5000 }, async () => {
    const { stream, next } = rig({ quietMs: 1000, maxRecordMs: 50 });
    const timer = setInterval(() => stream.write('tick\n'), 10);
    try {
      const records = await next(2);
      assert.ok(records[0]!.lines! >= 1 && records[0]!.lines! < 50, `${records[0]!.lines} lines in the first record`);
    } finally {
      clearInterval(timer);
    }
  });

  void it('logs what is gathered when the stream ends, and the rate limit still counts lines', { timeout: 5000 }, async () => {
    const { stream, next, records } = rig({ burst: 3, perSecond: 0.001, quietMs: 60_000, maxRecordMs: 60_000 });
    stream.end('one\ntwo\nthree\nfour\nfive\n');
    await next(2);
    assert.deepEqual(
      records.map((r) => [r.level, r.msg]),
      [
        ['debug', 'server stderr'],
        ['warn', 'server stderr lines suppressed (rate limit)'],
      ],
    );
    assert.equal(records[0]!.stderr, 'one\ntwo\nthree');
    assert.equal(records[1]!.suppressed, 2);
  });

  void it('takes a line for an error by how it starts or by a level in capitals, not by a word in passing', { timeout: 5000 }, async () => {
    for (const [line, level] of [
      ['Error: connect ECONNREFUSED 127.0.0.1:5432', 'warn'],
      ['2026-11-26 12:00:00 ERROR root: lookup failed', 'warn'],
      ['fatal: cannot start', 'warn'],
      ['panic: runtime error: index out of range', 'warn'],
      ['    at Object.<anonymous> TypeError: x is not a function', 'warn'],
      ['no errors found in 12 files', 'debug'],
      ['retrying after an error budget check', 'debug'],
    ] as const) {
      const { stream, next } = rig();
      stream.write(`${line}\n`);
      const [record] = await next(1);
      assert.equal(record!.level, level, line);
    }
  });
});
