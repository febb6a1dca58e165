// Programs run on worker threads (src/code/code-runner.ts): however long one computes, the host's
// event loop keeps turning; a run is stopped mid-loop when cancelled; a worker that dies ends only
// its own run and is replaced; a run takes the engine made in advance only for its own memory limit;
// the pool is bounded, queues runs past its size, refuses past its queue, and ends everything when
// closed.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CodeRunner } from '../../../src/code/code-runner.js';
import { DEFAULT_CODE_LIMITS, type CodeLimits, type ProgramOutcome } from '../../../src/code/program.js';
import { runProgram } from '../../../src/code/run-program.js';
import { run, testHost } from '../../helpers/program-host.js';

const T = { timeout: 60_000 };
/** How much later the host's 5 ms timer may fire while a program computes than while nothing runs. */
const HEARTBEAT_SLACK_MS = 50;
/** How late the timer fires on this machine with nothing running (a loaded machine's own scheduling). */
let idleGap = 0;

/** Runs `work` beside a 5 ms timer; answers its result and the timer's longest gap. */
async function beside<T>(work: () => Promise<T>): Promise<{ result: T; longestGap: number }> {
  let last = performance.now();
  let longestGap = 0;
  const beat = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last - 5);
    last = now;
  }, 5);
  try {
    const result = await work();
    return { result, longestGap: Math.max(longestGap, performance.now() - last - 5) };
  } finally {
    clearInterval(beat);
  }
}

function runOn(
  runner: CodeRunner,
  code: string,
  limits: Partial<CodeLimits> = {},
  signal = new AbortController().signal,
): Promise<ProgramOutcome> {
  return runProgram({ code, host: testHost(), limits: { ...DEFAULT_CODE_LIMITS, ...limits }, signal, runner });
}

const COMPUTE_2S = 'const end = Date.now() + 2000; let n = 0; while (Date.now() < end) n += 1; return n > 0;';

// Each worker compiles the engine's module on its first run: not inside a timed case.
before(async () => {
  await Promise.all([run('return 0;'), run('return 0;')]);
  idleGap = (await beside(() => new Promise((resolve) => setTimeout(resolve, 1500)))).longestGap;
});

void describe('code workers: the host keeps going', () => {
  void it('while(true) does not hold the host event loop', T, async () => {
    const { result, longestGap } = await beside(() => run('while (true) {}', testHost(), { wallMs: 1500 }));
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.code, 'MCPG_CODE_TIMEOUT');
    assert.ok(
      longestGap < idleGap + HEARTBEAT_SLACK_MS,
      `the host's timer was late by ${longestGap.toFixed(0)} ms (${idleGap.toFixed(0)} ms idle)`,
    );
  });

  void it('a 2-second pure compute loop finishes, and does not hold the host event loop', T, async () => {
    const { result, longestGap } = await beside(() => run(COMPUTE_2S));
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.value, true);
    assert.ok(
      longestGap < idleGap + HEARTBEAT_SLACK_MS,
      `the host's timer was late by ${longestGap.toFixed(0)} ms (${idleGap.toFixed(0)} ms idle)`,
    );
  });

  void it('cancel mid-compute ends the run promptly', T, async () => {
    const cancel = new AbortController();
    const started = performance.now();
    setTimeout(() => cancel.abort(), 200);
    const outcome = await run('let n = 0; for (;;) n += 1;', testHost(), {}, cancel.signal);
    const took = performance.now() - started;
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_CANCELLED');
    assert.ok(took < 200 + 400, `the run ended ${took.toFixed(0)} ms after it started`);
  });
});

void describe('code workers: the pool', () => {
  const runners: CodeRunner[] = [];
  after(async () => {
    await Promise.all(runners.map((runner) => runner.close()));
  });
  function runner(options: ConstructorParameters<typeof CodeRunner>[0]): CodeRunner {
    const made = new CodeRunner(options);
    runners.push(made);
    return made;
  }

  void it("a new worker's start is not the program's: a first run within a short wall time answers", T, async () => {
    // A new worker compiles the engine before its first program, which takes longer than 30 ms.
    const fresh = runner({ workers: 1 });
    const outcome = await runOn(fresh, 'return 42;', { wallMs: 30 });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(outcome.value, 42);
  });

  void it('a run on a worker that has made the next engine still gets its own memory limit', T, async () => {
    // After a run the worker makes the next run's engine for that run's limit; a run with a smaller
    // limit must not take it.
    const pool = runner({ workers: 1 });
    // About 24 MB: inside the default limit, over a 16 MiB one.
    const hold = 'const keep = []; for (let i = 0; i < 300; i++) keep.push(new Array(10000).fill(i)); return keep.length;';
    const first = await runOn(pool, hold);
    assert.ok(first.ok, JSON.stringify(first));
    const small = await runOn(pool, hold, { memoryBytes: 16 * 1024 * 1024 });
    assert.ok(!small.ok, 'the 16 MiB run was given a larger engine');
    assert.equal(small.code, 'MCPG_CODE_MEMORY');
    // And the next run, at the default limit again, still starts and holds as much.
    const after = await runOn(pool, hold);
    assert.ok(after.ok, JSON.stringify(after));
    assert.equal(after.value, 300);
  });

  void it('a worker that dies ends only its run, and is replaced', T, async () => {
    const pool = runner({ workers: 1, workerScript: new URL('../../helpers/crashing-code-worker.js', import.meta.url) });
    assert.equal((await runOn(pool, 'return 1;')).ok, true);
    const crashed = await runOn(pool, '/* CRASH_WORKER */ return 1;');
    assert.ok(!crashed.ok);
    assert.equal(crashed.code, 'MCPG_INTERNAL');
    assert.equal(crashed.message, 'the sandbox failed while running the program');
    const after = await runOn(pool, 'return 2;');
    assert.ok(after.ok, JSON.stringify(after));
    assert.equal(after.value, 2);
    assert.equal(pool.workers, 1);
  });

  void it('a worker that does not stop within its grace is ended, and replaced', T, async () => {
    const pool = runner({ workers: 1, graceMs: 50 });
    // A sort without a comparator runs no JavaScript: the interrupt handler is not asked meanwhile.
    const slow =
      'const a = []; for (let i = 0; i < 3e6; i += 1) a.push(String((i * 7919) % 1000003)); a.sort(); a.sort(); a.sort(); return 1;';
    const cancel = new AbortController();
    const running = runOn(pool, slow, {}, cancel.signal);
    const queued = runOn(pool, 'return 4;');
    setTimeout(() => cancel.abort(), 100);
    const outcome = await running;
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_CANCELLED');
    // The run queued behind it goes to a new worker, not to the one being ended.
    const behind = await queued;
    assert.ok(behind.ok, JSON.stringify(behind));
    assert.equal(behind.value, 4);
    const next = await runOn(pool, 'return 3;');
    assert.ok(next.ok, JSON.stringify(next));
    assert.equal(pool.workers, 1);
  });

  void it('queues runs past its size and refuses them past its queue', T, async () => {
    const pool = runner({ workers: 1, queued: 1 });
    const ended: string[] = [];
    const first = runOn(pool, 'const end = Date.now() + 300; while (Date.now() < end) {} return "first";').then((o) => {
      ended.push('first');
      return o;
    });
    const second = runOn(pool, 'return "second";').then((o) => {
      ended.push('second');
      return o;
    });
    const third = await runOn(pool, 'return "third";');
    assert.ok(!third.ok);
    assert.equal(third.code, 'MCPG_CODE_QUEUE_FULL');
    const [a, b] = await Promise.all([first, second]);
    assert.ok(a.ok && b.ok);
    assert.deepEqual([a.value, b.value], ['first', 'second']);
    assert.deepEqual(ended, ['first', 'second']);
    assert.equal(pool.workers, 1);
  });

  void it('a queued run that is cancelled never starts', T, async () => {
    const pool = runner({ workers: 1 });
    const first = runOn(pool, 'const end = Date.now() + 300; while (Date.now() < end) {} return 1;');
    const cancel = new AbortController();
    const second = runOn(pool, 'return 2;', {}, cancel.signal);
    cancel.abort();
    const outcome = await second;
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_CANCELLED');
    assert.equal(outcome.message, 'the run was cancelled before it started');
    assert.equal((await first).ok, true);
  });

  void it('close() ends the runs in progress and every worker', T, async () => {
    const pool = runner({ workers: 2 });
    const running = runOn(pool, 'for (;;) {}');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await pool.close();
    const outcome = await running;
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_CANCELLED');
    assert.equal(pool.workers, 0);
    const later = await runOn(pool, 'return 1;');
    assert.equal(later.ok, false);
  });
});
