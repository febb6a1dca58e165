// The abuse and escape suite of the code engine (src/code/run-program.ts): each hostile program is
// contained — its run ends with its own error or is stopped at its limit — while the host stays
// healthy: a timer on the host keeps firing (the program computes on a worker thread), and a
// well-behaved run started beside it still answers. Nothing of the host is reachable from inside.

import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errorRegistry } from '../../helpers/error-registry.js';
import type { CodeLimits, ProgramOutcome } from '../../../src/code/program.js';
import { run, testHost, type TestHost } from '../../helpers/program-host.js';

const T = { timeout: 60_000 };
/**
 * The longest the host's event loop may go without its timer here: programs compute on worker
 * threads, so this bounds only the host's own share of a run (copying a large result) on a loaded
 * test machine — never the program's computing, which may last the run's wall time.
 */
const SLACK_MS = 1500;

interface Contained {
  outcome: ProgramOutcome;
  host: TestHost;
  /** The longest the host's event loop went without its 5 ms timer firing during the run. */
  longestGap: number;
}

/** Runs a hostile program beside a heartbeat and a well-behaved run, and checks the host kept going. */
async function contained(code: string, limits: Partial<CodeLimits> = {}, signal?: AbortSignal): Promise<Contained> {
  let last = performance.now();
  let longestGap = 0;
  const beat = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 5);
  const host = testHost();
  try {
    const neighbour = run('const r = await tools.t.echo({ ms: 50, n: 7 }); return r.structuredContent.n;');
    const outcome = await run(code, host, limits, signal);
    const beside = await neighbour;
    assert.ok(beside.ok, `the neighbouring run: ${JSON.stringify(beside)}`);
    assert.equal(beside.value, 7);
    return { outcome, host, longestGap };
  } finally {
    clearInterval(beat);
    longestGap = Math.max(longestGap, performance.now() - last);
    assert.ok(longestGap < SLACK_MS, `the event loop was held ${longestGap.toFixed(0)} ms`);
  }
}

function failed(outcome: ProgramOutcome, code: string): Extract<ProgramOutcome, { ok: false }> {
  assert.equal(outcome.ok, false, JSON.stringify(outcome).slice(0, 500));
  assert.ok(!outcome.ok);
  assert.equal(outcome.code, code, outcome.message);
  assert.ok(
    errorRegistry().some((entry) => entry.code === code),
    `${code} is in src/errors.ts`,
  );
  return outcome;
}

// The engine's WebAssembly module is compiled once per process: not inside a timed case.
before(async () => {
  await run('return 0;');
});

void describe('code engine: abuse is contained', () => {
  void it('while(true) ends at the wall time', T, async () => {
    const started = performance.now();
    const { outcome } = await contained('while (true) {}', { wallMs: 300 });
    failed(outcome, 'MCPG_CODE_TIMEOUT');
    assert.ok(performance.now() - started < 300 + SLACK_MS);
  });

  void it('a loop after an await ends, and the call before it is listed', T, async () => {
    const { outcome } = await contained('await tools.t.echo({}); for (;;) {}', { wallMs: 300 });
    assert.deepEqual(
      failed(outcome, 'MCPG_CODE_TIMEOUT').calls.map((c) => c.name),
      ['t__echo'],
    );
  });

  void it('a promise nothing can settle ends the run at once', T, async () => {
    const { outcome } = await contained('await new Promise(() => {});');
    assert.match(failed(outcome, 'MCPG_CODE_ERROR').message, /nothing can settle/);
  });

  void it('an inner call that never answers ends at the wall time, its signal aborted', T, async () => {
    const { outcome, host } = await contained('await tools.t.hang({});', { wallMs: 300 });
    failed(outcome, 'MCPG_CODE_TIMEOUT');
    assert.equal(host.seen[0]?.aborted, true);
  });

  void it('deep recursion is a memory error', T, async () => {
    const { outcome } = await contained('function f(n) { return f(n + 1) + 1; } return f(0);');
    failed(outcome, 'MCPG_CODE_MEMORY');
  });

  void it('a deeply nested return value is contained', T, async () => {
    const { outcome } = await contained('let o = {}; for (let i = 0; i < 200000; i++) o = { o }; return o;');
    assert.equal(outcome.ok, false);
  });

  void it('a 1 GiB buffer is refused', T, async () => {
    const { outcome } = await contained('const b = new Uint8Array(1024 * 1024 * 1024); return b.length;');
    failed(outcome, 'MCPG_CODE_MEMORY');
  });

  void it('heap growth stops at the memory limit', T, async () => {
    const { outcome } = await contained('const keep = []; for (;;) keep.push(new Array(10000).fill(keep.length));', {
      memoryBytes: 16 * 1024 * 1024,
    });
    failed(outcome, 'MCPG_CODE_MEMORY');
  });

  void it('many small allocations stop at the memory limit', T, async () => {
    const { outcome } = await contained('const keep = []; for (;;) keep.push({ n: keep.length, s: "v" + keep.length });', {
      memoryBytes: 8 * 1024 * 1024,
    });
    assert.equal(outcome.ok, false);
    assert.ok(!outcome.ok);
    assert.ok(['MCPG_CODE_MEMORY', 'MCPG_CODE_TIMEOUT'].includes(outcome.code), outcome.code);
  });

  void it('doubling a string stops', T, async () => {
    const { outcome } = await contained('let s = "x"; for (;;) s = s + s;');
    failed(outcome, 'MCPG_CODE_MEMORY');
  });

  void it('10,000 inner calls stop at the call limit', T, async () => {
    const { outcome, host } = await contained('for (let i = 0; i < 10000; i++) await tools.t.echo({ i });');
    const failure = failed(outcome, 'MCPG_CODE_TOO_MANY_CALLS');
    assert.equal(failure.calls.length, 200);
    assert.equal(host.seen.length, 200);
  });

  void it('1,000 concurrent calls: past the call limit the run stops; within it they queue at the cap', T, async () => {
    const over = await contained('await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.t.echo({ i })));');
    failed(over.outcome, 'MCPG_CODE_TOO_MANY_CALLS');
    assert.equal(over.host.seen.length, 0);
    const within = await contained('return (await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.t.echo({ i })))).length;', {
      innerCalls: 1000,
    });
    assert.ok(within.outcome.ok, JSON.stringify(within.outcome).slice(0, 300));
    assert.equal(within.outcome.value, 1000);
    assert.equal(within.host.peak, 8);
  });

  void it('arguments nested deeper than a message may are refused as a direct call would be', T, async () => {
    const { outcome, host } = await contained(
      'let a = {}; for (let i = 0; i < 5000; i++) a = { a }; try { await tools.t.echo(a); } catch (e) { return e.code; }',
    );
    assert.ok(outcome.ok, JSON.stringify(outcome).slice(0, 300));
    assert.equal(outcome.value, 'MCPG_MESSAGE_TOO_DEEP');
    assert.equal(host.seen.length, 0);
  });

  void it('a 20 MB inner result is not delivered', T, async () => {
    const { outcome } = await contained('const r = await tools.t.big({ bytes: 20 * 1024 * 1024 }); return r.content[0].text.length;');
    const failure = failed(outcome, 'MCPG_CODE_TOO_LARGE');
    assert.deepEqual(
      failure.calls.map((c) => [c.name, c.code]),
      [['t__big', 'MCPG_CODE_TOO_LARGE']],
    );
  });

  void it('a 1 MB return value is cut with a note', T, async () => {
    const { outcome } = await contained('return "y".repeat(1024 * 1024);');
    assert.ok(outcome.ok);
    assert.equal(outcome.truncated, true);
    assert.equal(outcome.value, undefined);
    assert.ok(Buffer.byteLength(outcome.returnedText) < 256 * 1024 + 200);
    assert.match(outcome.returnedText, /returned value cut: its JSON is 1048578 characters/);
  });

  void it('10 MB of console output is cut at its limit', T, async () => {
    const { outcome } = await contained('const line = "z".repeat(1000); for (let i = 0; i < 10000; i++) console.log(line); return "done";');
    assert.ok(outcome.ok, JSON.stringify(outcome).slice(0, 300));
    assert.ok(Buffer.byteLength(outcome.console) <= 64 * 1024 + 100);
    assert.match(outcome.console, /\[console output cut at 65536 bytes\]\n$/);
  });

  void it('cancel mid-run stops the program and aborts its in-flight calls', T, async () => {
    const cancel = new AbortController();
    const started = performance.now();
    setTimeout(() => cancel.abort(), 100);
    const { outcome, host } = await contained('await Promise.all([tools.t.hang({}), tools.t.echo({ ms: 5000 })]);', {}, cancel.signal);
    failed(outcome, 'MCPG_CODE_CANCELLED');
    assert.ok(performance.now() - started < 2000);
    assert.deepEqual(
      host.seen.map((s) => s.aborted),
      [true, true],
    );
  });
});

void describe('code engine: nothing of the host is reachable', () => {
  const probe = (reach: string): string =>
    `const F = ${reach}; return [F("return typeof process")(), F("return typeof require")(), F("return typeof tools")(), (F("globalThis.escaped = 1"), 0)];`;

  for (const [what, reach] of [
    ['the global', 'globalThis.constructor.constructor'],
    ['a bridged function', 'tools.t.echo.constructor.constructor'],
    ['the exact-name function', 'tools.call.constructor'],
    ['console', 'console.log.constructor'],
    ['a promise', 'tools.t.echo({}).constructor.constructor'],
    ['a result', '(await tools.t.echo({})).constructor.constructor'],
    ['an error', '(await tools.t.deny({}).catch((e) => e)).constructor.constructor'],
  ] as const) {
    void it(`constructor.constructor through ${what} is the sandbox's own Function`, T, async () => {
      const { outcome } = await contained(probe(reach));
      assert.ok(outcome.ok, JSON.stringify(outcome).slice(0, 300));
      assert.deepEqual(outcome.value, ['undefined', 'undefined', 'object', 0]);
      assert.equal((globalThis as { escaped?: unknown }).escaped, undefined);
    });
  }

  void it('has no import(), require, process, fetch, WebAssembly, timers or Atomics', T, async () => {
    const { outcome } = await contained(`
      let imported;
      try { await import("node:fs"); imported = "loaded"; } catch (e) { imported = e.name; }
      return [imported, typeof require, typeof process, typeof fetch, typeof WebAssembly, typeof setTimeout,
        typeof setInterval, typeof queueMicrotask, typeof Atomics, typeof SharedArrayBuffer, typeof Buffer, typeof module];`);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.deepEqual(outcome.value, [
      'ReferenceError',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
  });

  void it('Error.prepareStackTrace inside changes nothing outside, and no host path crosses', T, async () => {
    const before = (Error as { prepareStackTrace?: unknown }).prepareStackTrace;
    const { outcome } = await contained(`
      Error.prepareStackTrace = () => "/etc/passwd at host.js:1:1";
      Error.captureStackTrace = () => {};
      await tools.t.echo({});
      throw new Error("from inside");`);
    const failure = failed(outcome, 'MCPG_CODE_ERROR');
    assert.equal(failure.message, 'Error: from inside');
    assert.equal((Error as { prepareStackTrace?: unknown }).prepareStackTrace, before);
    assert.doesNotMatch(JSON.stringify(failure), /\/work|node:|\.ts|dist\/|passwd/);
  });

  void it('prototype pollution stays inside; a __proto__ key never comes out', T, async () => {
    const host = testHost();
    let last = 0;
    const beat = setInterval(() => (last += 1), 5);
    const outcome = await run(
      `Object.prototype.polluted = "yes"; Array.prototype.push = null; JSON.stringify = () => "{}";
       await tools.t.echo(JSON.parse('{"__proto__": {"polluted": "args"}, "x": 1}'));
       return JSON.parse('{"__proto__": {"polluted": "value"}, "y": 2}');`,
      host,
    );
    clearInterval(beat);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
    assert.equal(typeof [].push, 'function');
    assert.equal(JSON.stringify({ a: 1 }), '{"a":1}');
    assert.deepEqual(Object.keys(outcome.value as object), ['y']);
    assert.deepEqual(Object.keys(host.seen[0]!.args as object), ['x']);
    assert.equal(Object.getPrototypeOf(outcome.value), Object.prototype);
  });
});
