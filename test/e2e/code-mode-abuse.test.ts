// The abuse and escape suite of code mode through the real gateway (Streamable HTTP, real
// child-process servers, the official TypeScript SDK client): each hostile program runs on a fresh
// gateway and is contained — its run ends with its own error, is stopped at its limit, or finds
// nothing of the host — while ANOTHER agent's direct calls on that gateway keep being answered
// promptly, and afterwards a well-behaved run still answers. Cases run a few gateways at a time, with
// short wall times, so the suite stays quick on a small machine.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { fixtureServer, tempDir, textOf, until, writeConfig } from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules } from '../helpers/http.js';

const CASE = { timeout: 90_000 };
/** Gateways at once: each runs a hostile program on its worker threads. */
const PARALLEL = 3;
/** The slowest another agent's direct call may be answered while a hostile run goes on (a loaded machine). */
const NEIGHBOUR_MS = 3000;

interface RunOutcome {
  value?: unknown;
  truncated?: boolean;
  console?: string;
  error?: { code: string; message: string };
  calls: { name: string; ok: boolean; code?: string }[];
  run: string;
}

interface Contained {
  out: RunOutcome;
  text: string;
}

interface CaseOptions {
  /** The code agent's `code.limits` besides a short wall time. */
  limits?: Record<string, number>;
  /** Cancel run_code once an inner call has finished (its progress notification): the program is mid-run. */
  cancelOnProgress?: boolean;
  /** The server must see its `slow({ms})` call with this `ms` cancelled (its marker file). */
  serverCancels?: number;
  /** The slowest the other agent's call may be answered (default NEIGHBOUR_MS). */
  neighbourMs?: number;
}

/**
 * Starts a fresh gateway, runs `code` as the code agent while another agent calls a tool directly
 * every few milliseconds, and checks the other agent was answered throughout and the gateway still
 * runs a program afterwards.
 */
async function contained(code: string, options: CaseOptions = {}): Promise<Contained> {
  const dir = await tempDir();
  const coder = makeToken();
  const other = makeToken();
  const config = await writeConfig(dir, { store: fixtureServer('code-tools-server', ['--marker-dir', dir.path]) });
  const rules = await writeRules(dir, {
    agents: {
      coder: { tokens: [coder.hash], allow: { servers: ['store'] }, mode: 'code', code: { limits: { wallMs: 1500, ...options.limits } } },
      other: { tokens: [other.hash], allow: { servers: ['store'] } },
    },
  });
  const gate = await startHttpGateway({ config, args: ['--rules', rules, '--pins', 'off'] });
  const clients: Client[] = [];
  try {
    const agent = (await connectAgent(gate.url, { token: coder.token })).client;
    const neighbour = (await connectAgent(gate.url, { token: other.token })).client;
    clients.push(agent, neighbour);
    // The other agent's direct calls, one after another, for as long as the run lasts.
    let running = true;
    let answered = 0;
    let slowest = 0;
    const beside = (async () => {
      while (running) {
        const started = performance.now();
        const result = await neighbour.callTool({ name: 'store__echo', arguments: { n: answered } });
        assert.deepEqual(result.structuredContent, { n: answered });
        slowest = Math.max(slowest, performance.now() - started);
        answered += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const cancel = new AbortController();
    const onprogress = options.cancelOnProgress === true ? () => cancel.abort() : undefined;
    let out: RunOutcome;
    let text: string;
    try {
      const result = await agent.callTool(
        { name: 'run_code', arguments: { code } },
        { signal: cancel.signal, timeout: 60_000, ...(onprogress && { onprogress }) },
      );
      out = result.structuredContent as RunOutcome;
      text = textOf(result);
    } catch (err) {
      if (options.cancelOnProgress !== true) throw err;
      out = { calls: [], run: '', error: { code: 'cancelled by the agent', message: String(err) } };
      text = '';
    } finally {
      running = false;
      await beside;
    }
    assert.ok(answered >= 1, 'the other agent was answered during the run');
    assert.ok(slowest < (options.neighbourMs ?? NEIGHBOUR_MS), `the other agent waited ${slowest.toFixed(0)} ms for an answer`);
    const marker = options.serverCancels === undefined ? undefined : dir.file(`cancelled-${options.serverCancels}`);
    if (marker !== undefined) assert.ok(await until(() => existsSync(marker)), 'the server saw its call cancelled');
    // The gateway is healthy: the same agent's next program runs, and sees a clean engine.
    const after = await agent.callTool({
      name: 'run_code',
      arguments: {
        code: `return [(await tools.store.echo({ok: 1})).structuredContent.ok, typeof ({}).polluted, typeof globalThis.escaped];`,
      },
    });
    assert.deepEqual((after.structuredContent as RunOutcome).value, [1, 'undefined', 'undefined'], textOf(after));
    return { out, text };
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    await gate.stop();
    await dir.remove();
  }
}

function failed(c: Contained, code: string): RunOutcome {
  assert.equal(c.out.error?.code, code, `${c.text.slice(0, 300)}`);
  assert.doesNotMatch(c.text, /\/work\/|node:internal|dist\/src|\.js:\d/, 'no host path or stack crosses');
  return c.out;
}

describe('code mode through the gateway: abuse is contained', { concurrency: PARALLEL }, () => {
  it('while(true) ends at the wall time', CASE, async () => {
    failed(await contained('while (true) {}'), 'MCPG_CODE_TIMEOUT');
  });

  it('a loop after an await ends, and the call before it is listed', CASE, async () => {
    const out = failed(await contained('await tools.store.echo({}); for (;;) {}'), 'MCPG_CODE_TIMEOUT');
    assert.deepEqual(
      out.calls.map((c) => c.name),
      ['store__echo'],
    );
  });

  it('a promise nothing can settle ends the run', CASE, async () => {
    assert.match(failed(await contained('await new Promise(() => {});'), 'MCPG_CODE_ERROR').error!.message, /nothing can settle/);
  });

  it('deep recursion is a memory error', CASE, async () => {
    failed(await contained('function f(n) { return f(n + 1) + 1; } return f(0);'), 'MCPG_CODE_MEMORY');
  });

  it('a 1 GiB buffer is refused', CASE, async () => {
    failed(await contained('const b = new Uint8Array(1024 * 1024 * 1024); return b.length;'), 'MCPG_CODE_MEMORY');
  });

  it('heap growth stops at the memory limit', CASE, async () => {
    const c = await contained('const keep = []; for (;;) keep.push(new Array(10000).fill(keep.length));', {
      limits: { memoryBytes: 16 * 1024 * 1024 },
    });
    failed(c, 'MCPG_CODE_MEMORY');
  });

  it('doubling a string stops', CASE, async () => {
    failed(await contained('let s = "x"; for (;;) s = s + s;'), 'MCPG_CODE_MEMORY');
  });

  it('10,000 inner calls stop at the call limit, each made one a real call', CASE, async () => {
    const out = failed(
      await contained('for (let i = 0; i < 10000; i++) await tools.store.echo({ i });', { limits: { wallMs: 20000 } }),
      'MCPG_CODE_TOO_MANY_CALLS',
    );
    assert.equal(out.calls.length, 200);
    assert.ok(out.calls.every((c) => c.ok));
  });

  it('1,000 concurrent calls: past the call limit none is made; within it they all answer', CASE, async () => {
    const over = failed(
      await contained('await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.store.echo({ i })));'),
      'MCPG_CODE_TOO_MANY_CALLS',
    );
    assert.equal(over.calls.length, 0);
    const within = await contained(
      'return (await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.store.echo({ i })))).reduce((n, r) => n + r.structuredContent.i, 0);',
      { limits: { innerCalls: 1000, wallMs: 30000 } },
    );
    assert.equal(within.out.value, (999 * 1000) / 2, within.text.slice(0, 300));
  });

  it('a 20 MB inner result is not delivered into the program', CASE, async () => {
    const out = failed(
      await contained('const r = await tools.store.big({ bytes: 20 * 1024 * 1024 }); return r.content[0].text.length;', {
        limits: { wallMs: 20000 },
        // The gateway reads the server's 20 MB answer on its event loop, as for a direct call of the tool.
        neighbourMs: 8000,
      }),
      'MCPG_CODE_TOO_LARGE',
    );
    assert.deepEqual(
      out.calls.map((c) => [c.name, c.code]),
      [['store__big', 'MCPG_CODE_TOO_LARGE']],
    );
  });

  it('a 1 MB return value is cut with a note', CASE, async () => {
    const c = await contained('return "y".repeat(1024 * 1024);');
    assert.equal(c.out.truncated, true);
    assert.ok(Buffer.byteLength(c.text) < 256 * 1024 + 200);
    assert.match(c.text, /returned value cut: its JSON is 1048578 characters/);
  });

  it('10 MB of console output is cut at its limit', CASE, async () => {
    const c = await contained('const line = "z".repeat(1000); for (let i = 0; i < 10000; i++) console.log(line); return "done";');
    assert.equal(c.out.value, 'done');
    assert.ok(Buffer.byteLength(c.out.console ?? '') <= 64 * 1024 + 100);
    assert.match(c.out.console ?? '', /\[console output cut at 65536 bytes\]\n$/);
  });

  it('cancel mid-run stops the program and cancels its inner call on the server', CASE, async () => {
    const c = await contained(
      'await Promise.all([tools.store.slow({ms: 4567}), (async () => { for (;;) await tools.store.echo({}); })()]);',
      {
        cancelOnProgress: true,
        serverCancels: 4567,
        limits: { wallMs: 20000, innerCalls: 10000 },
      },
    );
    assert.equal(c.out.error?.code, 'cancelled by the agent');
  });
});

describe('code mode through the gateway: nothing of the host is reachable', { concurrency: PARALLEL }, () => {
  const probe = (reach: string): string =>
    `const F = ${reach}; return [F("return typeof process")(), F("return typeof require")(), F("return typeof tools")(), (F("globalThis.escaped = 1"), 0)];`;

  for (const [what, reach] of [
    ['the global', 'globalThis.constructor.constructor'],
    ['a bridged function', 'tools.store.echo.constructor.constructor'],
    ['a promise', 'tools.store.echo({}).constructor.constructor'],
    ['a result', '(await tools.store.echo({})).constructor.constructor'],
    ['an error', '(await tools.call("store__nope", {}).catch((e) => e)).constructor.constructor'],
  ] as const) {
    it(`constructor.constructor through ${what} is the sandbox's own Function`, CASE, async () => {
      const c = await contained(probe(reach));
      assert.deepEqual(c.out.value, ['undefined', 'undefined', 'object', 0], c.text.slice(0, 300));
    });
  }

  it('has no import(), require, process, fetch, WebAssembly, timers or Buffer', CASE, async () => {
    const c = await contained(`
      let imported;
      try { await import("node:fs"); imported = "loaded"; } catch (e) { imported = e.name; }
      return [imported, typeof require, typeof process, typeof fetch, typeof WebAssembly, typeof setTimeout, typeof Buffer, typeof module];`);
    assert.deepEqual(c.out.value, ['ReferenceError', ...Array<string>(7).fill('undefined')], c.text.slice(0, 300));
  });

  it('Error.prepareStackTrace inside changes nothing, and no host path crosses', CASE, async () => {
    const c = await contained(`
      Error.prepareStackTrace = () => "/etc/passwd at host.js:1:1";
      Error.captureStackTrace = () => {};
      await tools.store.echo({});
      throw new Error("from inside");`);
    assert.equal(failed(c, 'MCPG_CODE_ERROR').error!.message, 'Error: from inside');
    assert.doesNotMatch(c.text, /passwd/);
  });

  it('prototype pollution stays inside: the server and the agent get plain JSON, the next run a clean engine', CASE, async () => {
    const c = await contained(`Object.prototype.polluted = "yes"; Array.prototype.push = null; JSON.stringify = () => "{}";
       const echoed = await tools.store.echo(JSON.parse('{"__proto__": {"polluted": "args"}, "x": 1}'));
       return { echoed: echoed.content[0].text, value: JSON.parse('{"__proto__": {"polluted": "value"}, "y": 2}') };`);
    const value = c.out.value as { echoed: string; value: Record<string, unknown> };
    // What the server was sent and what the agent is answered carry no __proto__ key and no pollution.
    assert.deepEqual(JSON.parse(value.echoed), { x: 1 });
    assert.deepEqual(Object.keys(value.value), ['y']);
    assert.equal(Object.getPrototypeOf(value.value), Object.prototype);
  });
});
