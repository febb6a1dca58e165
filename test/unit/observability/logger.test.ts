// Structured logging (src/observability/logger.ts): level filtering, child context, redaction of
// secret-looking fields, errors as `{message, code, stack}` (the stack of an expected error only at debug), and a sink that throws never
// takes the caller down.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Logger, isLogFormat, isLogLevel, logStyleFor } from '../../../src/observability/logger.js';
import { GatewayError } from '../../../src/errors.js';

type LogLevel = NonNullable<ConstructorParameters<typeof Logger>[0]>;
type LogStyle = ReturnType<typeof logStyleFor>;

/** A logger writing into an array; `records()` parses each line and drops the timestamp. */
function capture(level: LogLevel) {
  const lines: string[] = [];
  const log = new Logger(level, (line) => lines.push(line));
  const records = (): Record<string, unknown>[] =>
    lines.map((line) => {
      assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), 'one JSON object per line');
      const record = JSON.parse(line) as Record<string, unknown>;
      assert.match(String(record.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      delete record.time;
      return record;
    });
  return { log, lines, records };
}

void describe('Logger', { timeout: 5000 }, () => {
  void it('drops lines below the level', { timeout: 5000 }, () => {
    const { log, records } = capture('warn');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    assert.deepEqual(records(), [
      { level: 'warn', msg: 'w' },
      { level: 'error', msg: 'e' },
    ]);
    assert.deepEqual([log.enabled('debug'), log.enabled('info'), log.enabled('warn'), log.enabled('error')], [false, false, true, true]);
  });

  void it('silent drops everything; setLevel changes the level for parent and children', { timeout: 5000 }, () => {
    const { log, lines, records } = capture('silent');
    const child = log.child({ server: 'fs' });
    log.error('e');
    child.error('e');
    assert.equal(lines.length, 0);
    log.setLevel('debug');
    child.debug('now visible');
    assert.deepEqual(records(), [{ level: 'debug', msg: 'now visible', server: 'fs' }]);
  });

  void it('children carry their context, nested, and fields are added per line', { timeout: 5000 }, () => {
    const { log, records } = capture('info');
    const child = log.child({ server: 'fs' }).child({ agent: 'a1' });
    child.info('hello', { tools: 3 });
    log.info('parent has no context');
    assert.deepEqual(records(), [
      { level: 'info', msg: 'hello', server: 'fs', agent: 'a1', tools: 3 },
      { level: 'info', msg: 'parent has no context' },
    ]);
  });

  void it('redacts secret-looking field names, whatever their case', { timeout: 5000 }, () => {
    const { log, records } = capture('info');
    log.info('m', {
      authorization: 'Bearer abc',
      Authorization: 'Bearer abc',
      token: 't',
      accessToken: 't',
      api_key: 'k',
      apiKey: 'k',
      'x-api-key': 'k',
      password: 'p',
      clientSecret: 's',
      cookie: 'c',
      server: 'fs',
      count: 2,
    });
    const redacted = '[redacted]';
    assert.deepEqual(records(), [
      {
        level: 'info',
        msg: 'm',
        authorization: redacted,
        Authorization: redacted,
        token: redacted,
        accessToken: redacted,
        api_key: redacted,
        apiKey: redacted,
        'x-api-key': redacted,
        password: redacted,
        clientSecret: redacted,
        cookie: redacted,
        server: 'fs',
        count: 2,
      },
    ]);
    assert.ok(!records().some((r) => JSON.stringify(r).includes('Bearer')));
  });

  void it("redacts secret-looking keys of a child logger's context too", { timeout: 5000 }, () => {
    const { log, records } = capture('info');
    log.child({ server: 'remote', authorization: 'Bearer abc' }).info('m');
    assert.deepEqual(records(), [{ level: 'info', msg: 'm', server: 'remote', authorization: '[redacted]' }]);
  });

  void it('keeps the stack of an unexpected error always, of a GatewayError only at debug', { timeout: 5000 }, () => {
    const { log, records } = capture('info');
    const nodeErr = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const cause = new Error('socket hang up');
    log.error('failed', {
      plain: new Error('boom'),
      gateway: new GatewayError('MCPG_SERVER_TIMEOUT', 'too slow', { server: 'fs' }),
      node: nodeErr,
      wrapped: new GatewayError('MCPG_SERVER_UNAVAILABLE', 'gone', { cause }),
    });
    const [record] = records();
    const field = (name: string): Record<string, unknown> => record![name] as Record<string, unknown>;
    assert.equal(field('plain').message, 'boom');
    assert.match(String(field('plain').stack), /^Error: boom\n\s+at /);
    assert.deepEqual(field('gateway'), { message: 'too slow', code: 'MCPG_SERVER_TIMEOUT' }, 'an expected error: no stack at info');
    assert.equal(field('node').code, 'ENOENT');
    assert.match(String(field('node').stack), /\n\s+at /);
    assert.equal(field('wrapped').stack, undefined);
    assert.match(
      String((field('wrapped').cause as Record<string, unknown>).stack),
      /^Error: socket hang up\n\s+at /,
      'an unexpected cause keeps its stack',
    );

    const debug = capture('debug');
    debug.log.warn('failed', { error: new GatewayError('MCPG_SERVER_TIMEOUT', 'too slow') });
    const err = debug.records()[0]!.error as Record<string, unknown>;
    assert.equal(err.code, 'MCPG_SERVER_TIMEOUT');
    assert.match(String(err.stack), /^GatewayError: too slow\n\s+at /, 'at debug, an expected error keeps its stack too');
  });

  void it('a sink that throws never throws out of a log call', { timeout: 5000 }, () => {
    let calls = 0;
    const log = new Logger('debug', () => {
      calls++;
      throw new Error('EPIPE');
    });
    assert.doesNotThrow(() => {
      log.debug('a');
      log.info('b');
      log.child({ server: 'x' }).error('c', { error: new Error('e') });
    });
    assert.equal(calls, 3);
  });

  void it('a field that cannot be serialised drops the line, not the caller', { timeout: 5000 }, () => {
    const { log, lines } = capture('info');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.doesNotThrow(() => log.info('cyclic', { cyclic, big: 1n }));
    log.info('after');
    assert.equal(lines.length, 1);
  });

  void it('isLogLevel accepts exactly the five levels', { timeout: 5000 }, () => {
    assert.deepEqual(['debug', 'info', 'warn', 'error', 'silent', 'trace', 'INFO', ''].map(isLogLevel), [
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});

describe('Logger: the pretty format and how it is chosen', { timeout: 5000 }, () => {
  const capture = (style: LogStyle, level: LogLevel = 'debug'): { log: Logger; lines: string[] } => {
    const lines: string[] = [];
    return { log: new Logger(level, (line) => lines.push(line), {}, style), lines };
  };

  it('writes time, level, [server] [agent], the message, then the other fields; secrets redacted', () => {
    const { log, lines } = capture({ format: 'pretty' });
    log
      .child({ server: 'echo' })
      .info('server "echo": starting → ready', { agent: 'ci-bot', tools: 3, note: 'two words', token: 'sk-live-123' });
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[echo\] \[ci-bot\] server "echo": starting → ready tools=3 note="two words" token=\[redacted\]\n$/,
    );
    assert.ok(!lines[0]!.includes('sk-live-123'));
    assert.ok(!lines[0]!.includes('\x1b['), 'no colour unless asked');
  });

  it('an error shows as its message and code, an unexpected one with its stack below', () => {
    const { log, lines } = capture({ format: 'pretty' }, 'info');
    log.error('starting servers failed', { error: new GatewayError('MCPG_SERVER_UNAVAILABLE', 'server "x" exited') });
    assert.match(lines[0]!, /ERROR starting servers failed: server "x" exited \(MCPG_SERVER_UNAVAILABLE\)\n$/);
    log.error('bug', { error: new Error('boom') });
    assert.match(lines[1]!, /ERROR bug: boom\n\s+at /, 'the stack follows on the next lines');
  });

  it('colours the level when asked', () => {
    const { log, lines } = capture({ format: 'pretty', colour: true });
    log.warn('careful');
    assert.ok(lines[0]!.includes('\x1b[33mWARN '), lines[0]);
  });

  it('pretty at a terminal, JSON otherwise; --log-format wins; NO_COLOR and FORCE_COLOR are honoured', () => {
    assert.deepEqual(logStyleFor(undefined, true, {}), { format: 'pretty', colour: true });
    assert.deepEqual(logStyleFor(undefined, true, { NO_COLOR: '1' }), { format: 'pretty', colour: false });
    assert.deepEqual(logStyleFor(undefined, false, {}), { format: 'json', colour: false });
    assert.deepEqual(logStyleFor('pretty', false, {}), { format: 'pretty', colour: false });
    assert.deepEqual(logStyleFor('pretty', false, { FORCE_COLOR: '1' }), { format: 'pretty', colour: true });
    assert.deepEqual(logStyleFor('json', true, {}), { format: 'json', colour: false });
    assert.ok(isLogFormat('pretty') && isLogFormat('json') && !isLogFormat('text'));
  });
});
