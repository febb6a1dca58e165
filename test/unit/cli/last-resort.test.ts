// The last-resort handler (src/cli/last-resort.ts): an error that escaped every handler is logged with
// its stack, every server's process group is killed, and the process exits non-zero — once, even if
// more errors follow while it does so. (Emitting a real uncaughtException here would hit the test
// runner's own handler, so the installed handler is taken from the process and called as the process
// would call it.)

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { installLastResort } from '../../../src/cli/last-resort.js';
import { Logger } from '../../../src/observability/logger.js';

/** The handler `installLastResort` puts on `uncaughtException` (taken off again before it is called). */
function fatalHandler(log: Logger, killServers: () => void, exit: (code: number) => void): (err: unknown) => void {
  const before = process.listeners('uncaughtException');
  const uninstall = installLastResort(log, killServers, exit);
  const installed = process.listeners('uncaughtException').filter((l) => !before.includes(l));
  const rejection = process.listeners('unhandledRejection').at(-1);
  uninstall();
  assert.equal(installed.length, 1);
  assert.equal(rejection, installed[0], 'one handler for both');
  return installed[0]! as (err: unknown) => void;
}

void describe('the last-resort handler', { timeout: 5000 }, () => {
  void it('logs once, kills the servers and exits 1', { timeout: 5000 }, () => {
    const lines: string[] = [];
    const steps: string[] = [];
    const onFatal = fatalHandler(
      new Logger('info', (line) => lines.push(line)),
      () => steps.push('kill'),
      (code) => steps.push(`exit ${code}`),
    );
    onFatal(new RangeError('Maximum call stack size exceeded'));
    onFatal(new Error('a second one'));
    assert.deepEqual(steps, ['kill', 'exit 1']);
    assert.equal(lines.length, 1);
    const entry = JSON.parse(lines[0]!) as { level: string; msg: string; error?: unknown };
    assert.equal(entry.level, 'error');
    assert.match(entry.msg, /escaped every handler/);
    assert.match(JSON.stringify(entry.error), /Maximum call stack size exceeded/);
  });

  void it('still exits when killing the servers throws', { timeout: 5000 }, () => {
    const steps: string[] = [];
    const onFatal = fatalHandler(
      new Logger('silent', () => {}),
      () => {
        throw new Error('kill failed');
      },
      (code) => steps.push(`exit ${code}`),
    );
    assert.throws(() => onFatal(new Error('boom')), /kill failed/);
    assert.deepEqual(steps, ['exit 1']);
  });

  void it('is installed for uncaught exceptions and rejections, and uninstalled', { timeout: 5000 }, () => {
    const before = [process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')];
    const uninstall = installLastResort(
      new Logger('silent', () => {}),
      () => {},
      () => {},
    );
    assert.deepEqual(
      [process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')],
      [before[0]! + 1, before[1]! + 1],
    );
    uninstall();
    assert.deepEqual([process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')], before);
  });
});
