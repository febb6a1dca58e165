// A program host for the code engine's tests: real asynchronous tools (timers, abort signals), the
// boundary the engine is built against, with what each call saw recorded for the tests to check.

import { DEFAULT_CODE_LIMITS, type CodeLimits, type InnerOutcome, type ProgramHost, type ProgramOutcome } from '../../src/code/program.js';
import { runProgram } from '../../src/code/run-program.js';

export interface SeenCall {
  name: string;
  args: unknown;
  aborted: boolean;
}

export interface TestHost extends ProgramHost {
  seen: SeenCall[];
  /** The most calls that were in flight at once. */
  peak: number;
}

/**
 * Tools of server `t`: echo({ms, ...}) answers its arguments after `ms`; fail() is a tool error;
 * deny() a refusal; image() an image result; big({bytes}) a text of that size; hang() never answers
 * until its signal aborts; approve({ms}) waits `ms` on a person (the clock paused).
 */
export function testHost(): TestHost {
  const names = ['echo', 'fail', 'deny', 'image', 'big', 'hang', 'approve'];
  let running = 0;
  const host: TestHost = {
    seen: [],
    peak: 0,
    tools: names.map((tool) => ({ name: `t__${tool}`, server: 't', tool })),
    async call(name, args, { signal, waiting }): Promise<InnerOutcome> {
      const seen: SeenCall = { name, args, aborted: false };
      host.seen.push(seen);
      signal.addEventListener('abort', () => (seen.aborted = true), { once: true });
      running += 1;
      host.peak = Math.max(host.peak, running);
      try {
        const a = (args ?? {}) as { ms?: number; bytes?: number };
        switch (name) {
          case 't__echo':
            await sleep(a.ms ?? 0, signal);
            return { ok: true, result: { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: args } };
          case 't__fail':
            return { ok: true, result: { isError: true, content: [{ type: 'text', text: 'disk full' }] } };
          case 't__deny':
            return { ok: false, code: 'MCPG_POLICY_DENIED', message: 'unknown tool: t__deny' };
          case 't__image':
            return {
              ok: true,
              result: { content: [{ type: 'image', mimeType: 'image/png', data: Buffer.alloc(3000).toString('base64') }] },
            };
          case 't__big':
            return { ok: true, result: { content: [{ type: 'text', text: 'x'.repeat(a.bytes ?? 0) }] } };
          case 't__hang':
            await sleep(3_600_000, signal);
            return { ok: false, code: 'MCPG_INTERNAL', message: 'unreachable' };
          case 't__approve':
            waiting(true);
            await sleep(a.ms ?? 0, signal);
            waiting(false);
            return { ok: true, result: { content: [{ type: 'text', text: 'approved' }] } };
          default:
            return { ok: false, code: 'MCPG_TOOL_NOT_FOUND', message: `unknown tool: ${name}` };
        }
      } catch {
        return { ok: false, code: 'MCPG_INTERNAL', message: 'aborted' };
      } finally {
        running -= 1;
      }
    },
  };
  return host;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      },
      { once: true },
    );
  });
}

/** Runs `code` against `host` with the default limits changed by `limits`. */
export function run(
  code: string,
  host: ProgramHost = testHost(),
  limits: Partial<CodeLimits> = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<ProgramOutcome> {
  return runProgram({ code, host, limits: { ...DEFAULT_CODE_LIMITS, ...limits }, signal });
}
