// What a program can rely on (src/code/run-program.ts): its return value as JSON, `tools.<server>.<tool>`
// and `tools.call(name)`, awaited inner calls in parallel up to the cap, tool errors and refusals
// thrown with their server, tool and code, an uncaught error's line and column in the agent's code,
// the captured console, binary results as descriptors, and the clock paused while a person decides.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { run, testHost } from '../../helpers/program-host.js';

const T = { timeout: 30_000 };

void describe('code engine: a program and its inner calls', () => {
  void it('returns the value as JSON text and as a value', T, async () => {
    const outcome = await run('const x = 20; return { sum: x + 22, list: [1, "two", null] };');
    assert.equal(outcome.ok, true);
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.value, { sum: 42, list: [1, 'two', null] });
    assert.equal(outcome.returnedText, '{"sum":42,"list":[1,"two",null]}');
    assert.equal(outcome.truncated, false);
    assert.deepEqual(outcome.calls, []);
  });

  void it('returns nothing as an undefined value and empty text', T, async () => {
    const outcome = await run('const x = 1;');
    assert.ok(outcome.ok);
    assert.equal(outcome.value, undefined);
    assert.equal(outcome.returnedText, '');
  });

  void it('calls tools by server and tool, and by exact name', T, async () => {
    const host = testHost();
    const outcome = await run(
      'const a = await tools.t.echo({ n: 1 }); const b = await tools.call("t__echo", { n: 2 }); return [a.structuredContent.n, b.structuredContent.n];',
      host,
    );
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.deepEqual(outcome.value, [1, 2]);
    assert.deepEqual(
      host.seen.map((s) => [s.name, s.args]),
      [
        ['t__echo', { n: 1 }],
        ['t__echo', { n: 2 }],
      ],
    );
    assert.deepEqual(
      outcome.calls.map((c) => [c.name, c.ok]),
      [
        ['t__echo', true],
        ['t__echo', true],
      ],
    );
  });

  void it('runs Promise.all in parallel: five 200 ms calls take about 200 ms', T, async () => {
    const started = performance.now();
    const outcome = await run('return (await Promise.all([1, 2, 3, 4, 5].map((n) => tools.t.echo({ ms: 200, n })))).length;');
    const took = performance.now() - started;
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(outcome.value, 5);
    assert.ok(took >= 195 && took < 700, `took ${took.toFixed(0)} ms`);
  });

  void it('keeps at most callsInFlight calls running; the rest wait in the queue', T, async () => {
    const host = testHost();
    const outcome = await run('await Promise.all(Array.from({ length: 12 }, () => tools.t.echo({ ms: 20 }))); return "done";', host, {
      callsInFlight: 3,
    });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(host.seen.length, 12);
    assert.equal(host.peak, 3);
  });

  void it('throws a tool error with its server, tool and text, and a refusal with its code', T, async () => {
    const outcome = await run(`
      const seen = [];
      try { await tools.t.fail({}); } catch (e) { seen.push([e.name, e.code, e.server, e.tool, e.text, e.message]); }
      try { await tools.t.deny({}); } catch (e) { seen.push([e.name, e.code, e.server, e.tool, e.message]); }
      try { await tools.call("nope__x", {}); } catch (e) { seen.push([e.name, e.code, e.message]); }
      return seen;`);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.deepEqual(outcome.value, [
      ['ToolError', 'TOOL_ERROR', 't', 'fail', 'disk full', 'disk full'],
      ['RefusalError', 'MCPG_POLICY_DENIED', 't', 'deny', 'unknown tool: t__deny'],
      ['RefusalError', 'MCPG_TOOL_NOT_FOUND', 'unknown tool: nope__x'],
    ]);
    assert.deepEqual(
      outcome.calls.map((c) => [c.name, c.ok, c.code]),
      [
        ['t__fail', false, 'TOOL_ERROR'],
        ['t__deny', false, 'MCPG_POLICY_DENIED'],
        ['nope__x', false, 'MCPG_TOOL_NOT_FOUND'],
      ],
    );
  });

  void it('answers an uncaught error with its message, line and column in the agent code, and the calls made', T, async () => {
    const outcome = await run('await tools.t.echo({});\nconst o = null;\n  o.field = 1;');
    assert.equal(outcome.ok, false);
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_ERROR');
    assert.match(outcome.message, /^TypeError: /);
    assert.equal(outcome.line, 3);
    assert.equal(outcome.column, 4);
    assert.deepEqual(
      outcome.calls.map((c) => c.name),
      ['t__echo'],
    );
    assert.doesNotMatch(JSON.stringify(outcome), /\/work|node:|\.ts:|dist\//);
  });

  void it('points an uncaught refusal at the line that called, with its code, server and tool', T, async () => {
    const outcome = await run('const a = 1;\nawait tools.t.deny({});');
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_ERROR');
    assert.equal(outcome.thrownCode, 'MCPG_POLICY_DENIED');
    assert.equal(outcome.server, 't');
    assert.equal(outcome.tool, 'deny');
    assert.equal(outcome.line, 2);
    assert.equal(outcome.column, 19);
  });

  void it('reports code that does not parse as MCPG_CODE_SYNTAX, with nothing run', T, async () => {
    const host = testHost();
    const outcome = await run('await tools.t.echo({});\nconst = 3;', host);
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_SYNTAX');
    assert.equal(outcome.line, 2);
    assert.equal(host.seen.length, 0);
  });

  void it('captures console output, bounded', T, async () => {
    const outcome = await run('console.log("a", 1, { b: 2 }); console.warn("careful"); console.error(new Error("bad").message); return 0;');
    assert.ok(outcome.ok);
    assert.equal(outcome.console, 'a 1 {"b":2}\nwarn: careful\nerror: bad\n');
  });

  void it('delivers an image as a descriptor, never its bytes', T, async () => {
    const outcome = await run('const r = await tools.t.image({}); return r.content[0];');
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.value, { type: 'image', mimeType: 'image/png', bytes: 3000 });
  });

  void it('does not count a wait on a person against the wall time', T, async () => {
    const paused = await run('await tools.t.approve({ ms: 600 }); return "ok";', testHost(), { wallMs: 300 });
    assert.ok(paused.ok, JSON.stringify(paused));
    const counted = await run('await tools.t.echo({ ms: 600 }); return "ok";', testHost(), { wallMs: 300 });
    assert.ok(!counted.ok);
    assert.equal(counted.code, 'MCPG_CODE_TIMEOUT');
  });

  void it('tells the host of every finished inner call, in order', T, async () => {
    const host = testHost();
    const finished: string[] = [];
    host.onInnerCall = (record) => finished.push(`${record.name}:${record.ok}`);
    const outcome = await run('await Promise.all([tools.t.echo({ ms: 60 }), tools.t.fail({}).catch(() => 0)]); return 1;', host);
    assert.ok(outcome.ok);
    assert.deepEqual(finished, ['t__fail:false', 't__echo:true']);
  });

  void it('cancels the calls still in flight when the program returns without awaiting them', T, async () => {
    const host = testHost();
    const outcome = await run('tools.t.hang({}); await tools.t.echo({}); return "early";', host);
    assert.ok(outcome.ok);
    assert.equal(outcome.value, 'early');
    assert.deepEqual(
      host.seen.map((s) => [s.name, s.aborted]),
      [
        ['t__hang', true],
        ['t__echo', false],
      ],
    );
    assert.deepEqual(
      outcome.calls.map((c) => c.name),
      ['t__echo'],
    );
  });

  void it('refuses code over codeBytes before running it', T, async () => {
    const outcome = await run(`return ${JSON.stringify('x'.repeat(2000))};`, testHost(), { codeBytes: 1000 });
    assert.ok(!outcome.ok);
    assert.equal(outcome.code, 'MCPG_CODE_TOO_LARGE');
  });

  void it('gives each run a fresh engine: nothing one run leaves is seen by the next', T, async () => {
    await run('globalThis.left = 1; Object.prototype.polluted = 1; return 0;');
    const outcome = await run('return [typeof left, ({}).polluted === undefined];');
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.value, ['undefined', true]);
  });
});
