// Running one agent's program: a fresh QuickJS engine per run (its own WebAssembly instance and
// capped memory), the prelude's `tools` and `console` around two host functions, and a driver that
// enters the engine only in bounded stretches — to start the program, and each time an inner call
// settles — so the host's event loop keeps turning while a run waits, and a busy loop is stopped by
// the engine's interrupt handler.
//
// Every inner call is a deferred promise inside the engine; the host's answer is copied in as JSON
// text and the pending jobs are run. Calls beyond `callsInFlight` wait in a queue. The run ends at
// the first breach of a limit, when the program's promise settles, when it awaits something nothing
// can settle, or when it is cancelled; in-flight calls' signals are aborted then.

import type { QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten-core';
import { type Engine, isEngineTrap, newEngine } from './engine.js';
import { sandboxAnswer } from './inner-answer.js';
import type { InnerCallRecord, InnerOutcome, ProgramHost, ProgramOutcome, ProgramTool, RunRequest } from './program.js';
import { PRELUDE, PRELUDE_FILE, PROGRAM_FILE, PROGRAM_PREFIX, PROGRAM_SUFFIX } from './prelude.js';
import { RunClock } from './run-clock.js';
import { nestedDeeperThan, wireLimits } from '../wire/jsonrpc.js';

/**
 * The most CPU time one entry into a run's engine may take: a stretch of the program that computes
 * this long without waiting on an inner call is stopped (`MCPG_CODE_TIMEOUT`), whatever is left of
 * its wall time, so no run holds the host's event loop for long. It is CPU time, not wall time, so a
 * loaded machine does not stop a program that an idle one would finish. One built-in call that runs
 * no JavaScript (a sort without a comparator, `JSON.parse` of a large text) is not interrupted, but
 * is bounded by the memory limit.
 */
const SLICE_MS = 500;
/** How often a long stretch reads the CPU time. */
const CPU_CHECK_MS = 5;

/** The codes a run ends with, each in src/errors.ts. */
type Code =
  | 'MCPG_CODE_SYNTAX'
  | 'MCPG_CODE_ERROR'
  | 'MCPG_CODE_TIMEOUT'
  | 'MCPG_CODE_MEMORY'
  | 'MCPG_CODE_TOO_MANY_CALLS'
  | 'MCPG_CODE_TOO_LARGE'
  | 'MCPG_CODE_CANCELLED'
  | 'MCPG_INTERNAL';

interface Stop {
  code: Code;
  message: string;
}

interface InnerCall {
  name: string;
  args: unknown;
  tool: ProgramTool | undefined;
  deferred: QuickJSDeferredPromise;
  controller?: AbortController;
  /** When the program called it (it may then wait in the queue). */
  called: number;
  /** Its arguments nest deeper than a direct call's message may: refused as that call would be. */
  tooDeep: boolean;
  /** The host said the call waits on a person; the run's clock is paused for it. */
  waiting: boolean;
}

interface Thrown {
  name?: string;
  message?: string;
  stack?: string;
  code?: string;
  server?: string;
  tool?: string;
}

/** Run `request.code` once in a fresh sandbox; never throws (every failure is an outcome). */
export async function runProgram(request: RunRequest): Promise<ProgramOutcome> {
  const { code, limits, signal } = request;
  const size = Buffer.byteLength(code);
  if (size > limits.codeBytes) {
    return refused('MCPG_CODE_TOO_LARGE', `the program is ${size} bytes, over its ${limits.codeBytes}-byte limit`);
  }
  if (signal.aborted) return refused('MCPG_CODE_CANCELLED', 'the run was cancelled before it started');
  let engine: Engine;
  try {
    engine = await newEngine(limits.memoryBytes);
  } catch {
    return refused('MCPG_INTERNAL', 'the sandbox could not be started');
  }
  return new Run(engine, request).outcome;
}

function refused(code: Code, message: string): ProgramOutcome {
  return { ok: false, code, message, console: '', calls: [] };
}

class Run {
  readonly outcome: Promise<ProgramOutcome>;
  private settleOutcome!: (outcome: ProgramOutcome) => void;

  private readonly host: ProgramHost;
  private readonly limits: RunRequest['limits'];
  private readonly signal: AbortSignal;
  private readonly clock: RunClock;
  private readonly tools = new Map<string, ProgramTool>();

  private readonly queue: InnerCall[] = [];
  private readonly inFlight = new Set<InnerCall>();
  private readonly calls: InnerCallRecord[] = [];
  private started = 0;

  private readonly consoleParts: string[] = [];
  private consoleUsed = 0;
  private consoleCut = false;

  private main: QuickJSHandle | undefined;
  private finishFn: QuickJSHandle | undefined;
  private describeFn: QuickJSHandle | undefined;

  private inEngine = false;
  /** When the run's wall time ends, as `performance.now()` reads it (Infinity while paused). */
  private wallEnd = 0;
  /** When the engine was last entered, as `performance.now()` reads it. */
  private enteredAt = 0;
  /**
   * The process's CPU time once a stretch has held the engine for a quarter slice, with that wall
   * time: reading CPU time is a system call, so a short stretch (nearly all of them) never makes it.
   */
  private cpuMark: { cpu: NodeJS.CpuUsage; held: number; checked: number } | undefined;
  private stopped: Stop | undefined;
  private finished = false;
  private readonly onAbort = (): void => this.stop('MCPG_CODE_CANCELLED', 'the run was cancelled');

  constructor(
    private readonly engine: Engine,
    request: RunRequest,
  ) {
    this.outcome = new Promise((resolve) => (this.settleOutcome = resolve));
    this.host = request.host;
    this.limits = request.limits;
    this.signal = request.signal;
    for (const tool of this.host.tools) this.tools.set(tool.name, tool);
    this.clock = new RunClock(this.limits.wallMs, () =>
      this.stop('MCPG_CODE_TIMEOUT', `the program ran longer than its ${this.limits.wallMs} ms limit and was stopped`),
    );
    engine.runtime.setInterruptHandler(() => this.interrupt());
    this.signal.addEventListener('abort', this.onAbort, { once: true });
    this.clock.start();
    this.begin(request.code);
  }

  /** Installs the prelude and starts the program. */
  private begin(code: string): void {
    const { context } = this.engine;
    const started = this.enter(() => {
      const hostCall = context.newFunction('call', (name, args) => this.hostCall(name, args));
      const hostLog = context.newFunction('log', (level, text) => this.hostLog(level, text));
      const tools = context.newString(JSON.stringify(this.host.tools.map((t) => [t.name, t.server, t.tool])));
      const room = context.newNumber(this.limits.consoleBytes);
      const prelude = context.evalCode(PRELUDE, PRELUDE_FILE);
      if (prelude.error !== undefined) return undefined;
      const helpers = context.callFunction(prelude.value, context.undefined, hostCall, hostLog, tools, room);
      if (helpers.error !== undefined) return undefined;
      this.finishFn = context.getProp(helpers.value, 0);
      this.describeFn = context.getProp(helpers.value, 1);
      return context.evalCode(PROGRAM_PREFIX + code + PROGRAM_SUFFIX, PROGRAM_FILE);
    });
    if (started === undefined) {
      this.stop('MCPG_INTERNAL', 'the sandbox could not be prepared');
      return;
    }
    if (started.error !== undefined) {
      this.endThrown(started.error, true);
      return;
    }
    this.main = started.value;
    this.drive();
  }

  /**
   * Runs `work` inside the engine for at most one slice. A throw from the engine's host side (the
   * host's own stack overflowing under a deep recursion, or a broken instance) ends the run.
   */
  private enter<T>(work: () => T): T | undefined {
    this.enteredAt = performance.now();
    this.wallEnd = this.enteredAt + this.clock.remaining();
    this.cpuMark = undefined;
    this.inEngine = true;
    try {
      return work();
    } catch (err) {
      if (err instanceof RangeError) this.stop('MCPG_CODE_MEMORY', "the program went deeper than the engine's stack allows");
      else if (isEngineTrap(err) && this.engine.memory.buffer.byteLength >= this.limits.memoryBytes)
        this.stop('MCPG_CODE_MEMORY', this.memoryMessage());
      else this.stop('MCPG_INTERNAL', 'the sandbox failed while running the program');
      return undefined;
    } finally {
      this.inEngine = false;
    }
  }

  private memoryMessage(): string {
    return `the program used more than its ${this.limits.memoryBytes}-byte memory limit and was stopped`;
  }

  /** The engine asks this every few thousand operations: true stops the program where it is. */
  private interrupt(): boolean {
    if (this.stopped !== undefined) return true;
    const now = performance.now();
    if (now >= this.wallEnd) {
      this.stopped = {
        code: 'MCPG_CODE_TIMEOUT',
        message: `the program ran longer than its ${this.limits.wallMs} ms limit and was stopped`,
      };
      return true;
    }
    const held = now - this.enteredAt;
    if (held < SLICE_MS / 4) return false;
    if (this.cpuMark === undefined) {
      this.cpuMark = { cpu: process.cpuUsage(), held, checked: now };
      return false;
    }
    if (now - this.cpuMark.checked < CPU_CHECK_MS) return false;
    this.cpuMark.checked = now;
    // The CPU time before the mark is counted as the whole wall time before it: at most that much.
    const used = process.cpuUsage(this.cpuMark.cpu);
    if (this.cpuMark.held + (used.user + used.system) / 1000 < SLICE_MS) return false;
    this.stopped = {
      code: 'MCPG_CODE_TIMEOUT',
      message: `the program computed for ${SLICE_MS} ms without waiting on an inner call, the most one stretch may, and was stopped`,
    };
    return true;
  }

  /** Runs `first` and what the engine has queued, then looks at the program's promise. */
  private drive(first?: () => void): void {
    if (this.finished) return;
    if (this.stopped === undefined) {
      const { runtime } = this.engine;
      this.enter(() => {
        first?.();
        // A job that ends with an uncatchable error (the interrupt) stops the queue; one that a
        // program's own exception ends does not need another pass, but the loop is cheap.
        for (let pass = 0; pass < 1000 && this.stopped === undefined; pass += 1) {
          const ran = runtime.executePendingJobs();
          if (ran.error === undefined) break;
          ran.error.dispose();
        }
      });
    }
    if (this.stopped !== undefined) return this.finish();
    this.pump();
    if (this.stopped !== undefined) return this.finish();
    if (this.main === undefined) return this.finish();
    const state = this.engine.context.getPromiseState(this.main);
    if (state.type === 'fulfilled') return this.endValue(state.value);
    if (state.type === 'rejected') return this.endThrown(state.error, false);
    if (this.inFlight.size === 0 && this.queue.length === 0) {
      this.stop('MCPG_CODE_ERROR', 'the program is waiting for a promise that nothing can settle (no inner call is in flight)');
    }
  }

  /** The program called a tool: a deferred promise now, the call itself once the engine is left. */
  private hostCall(nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle | undefined {
    // What this function throws would reach the program with the host's message: nothing may.
    try {
      const { context } = this.engine;
      const deferred = context.newPromise();
      if (this.stopped !== undefined) return deferred.handle;
      const name = context.getString(nameHandle);
      const text = context.getString(argsHandle);
      this.started += 1;
      if (this.started > this.limits.innerCalls) {
        this.stopped = {
          code: 'MCPG_CODE_TOO_MANY_CALLS',
          message: `the program started more than its limit of ${this.limits.innerCalls} inner calls and was stopped at ${name}`,
        };
        return deferred.handle;
      }
      const size = Buffer.byteLength(text);
      if (size > this.limits.innerResultBytes) {
        this.stopped = {
          code: 'MCPG_CODE_TOO_LARGE',
          message: `the arguments of ${name} are ${size} bytes of JSON, over the ${this.limits.innerResultBytes}-byte limit`,
        };
        return deferred.handle;
      }
      const args = parseFromSandbox(text);
      // A direct call's arguments sit two levels down in its message, which may nest `maxDepth` deep.
      const depth = wireLimits.maxDepth - 2;
      const tooDeep = text.length > 2 * depth && nestedDeeperThan(args, depth);
      this.queue.push({ name, args, tool: this.tools.get(name), deferred, called: performance.now(), tooDeep, waiting: false });
      return deferred.handle;
    } catch {
      this.stopped ??= { code: 'MCPG_INTERNAL', message: 'the sandbox failed while starting an inner call' };
      return undefined;
    }
  }

  /** Console text from the program; answers how many more bytes will be kept. */
  private hostLog(_level: QuickJSHandle, textHandle: QuickJSHandle): QuickJSHandle | undefined {
    try {
      const { context } = this.engine;
      const room = this.limits.consoleBytes - this.consoleUsed;
      if (room <= 0) return context.newNumber(0);
      const line = context.getString(textHandle) + '\n';
      const size = Buffer.byteLength(line);
      if (size <= room) {
        this.consoleParts.push(line);
        this.consoleUsed += size;
      } else {
        this.consoleParts.push(cutUtf8(line, room));
        this.consoleUsed = this.limits.consoleBytes;
        this.consoleCut = true;
      }
      return context.newNumber(this.limits.consoleBytes - this.consoleUsed);
    } catch {
      return undefined;
    }
  }

  /** Starts queued calls while fewer than `callsInFlight` run. */
  private pump(): void {
    while (this.stopped === undefined && this.inFlight.size < this.limits.callsInFlight && this.queue.length > 0) {
      this.start(this.queue.shift()!);
    }
  }

  private start(call: InnerCall): void {
    const controller = new AbortController();
    call.controller = controller;
    this.inFlight.add(call);
    if (call.tool === undefined || call.tooDeep) {
      const refusal: InnerOutcome =
        call.tool === undefined
          ? { ok: false, code: 'MCPG_TOOL_NOT_FOUND', message: `unknown tool: ${call.name}` }
          : {
              ok: false,
              code: 'MCPG_MESSAGE_TOO_DEEP',
              message: `message nests deeper than ${wireLimits.maxDepth} levels (the limit is --max-depth); it was not processed`,
            };
      queueMicrotask(() => this.settle(call, refusal));
      return;
    }
    let answer: Promise<InnerOutcome>;
    try {
      answer = this.host.call(call.name, call.args, { signal: controller.signal, waiting: (pause) => this.waiting(call, pause) });
    } catch {
      answer = Promise.resolve(internalFailure);
    }
    answer.then(
      (outcome) => this.settle(call, outcome),
      () => this.settle(call, internalFailure),
    );
  }

  private waiting(call: InnerCall, pause: boolean): void {
    if (this.finished || !this.inFlight.has(call) || call.waiting === pause) return;
    call.waiting = pause;
    if (pause) this.clock.pause();
    else this.clock.resume();
  }

  /** An inner call's answer: recorded, copied into the engine, and the program runs on. */
  private settle(call: InnerCall, outcome: InnerOutcome): void {
    if (this.finished || !this.inFlight.has(call)) return;
    this.inFlight.delete(call);
    if (call.waiting) this.waiting(call, false);
    const answer = sandboxAnswer(outcome, call.tool, this.limits.innerResultBytes);
    const code = answer.ok ? answer.code : 'MCPG_CODE_TOO_LARGE';
    const record: InnerCallRecord = { name: call.name, ok: code === undefined, ms: Math.round(performance.now() - call.called) };
    if (code !== undefined) record.code = code;
    this.calls.push(record);
    try {
      this.host.onInnerCall?.(record);
    } catch {
      // A progress listener's failure is not the program's.
    }
    if (!answer.ok) {
      this.stop(
        'MCPG_CODE_TOO_LARGE',
        `the result of ${call.name} is ${answer.bytes} bytes of JSON, over the ${this.limits.innerResultBytes}-byte limit on one inner result`,
      );
      return;
    }
    this.drive(() => {
      const text = this.engine.context.newString(answer.json);
      call.deferred.resolve(text);
      text.dispose();
    });
  }

  /** The program returned: its value's JSON, cut at `returnBytes`. */
  private endValue(value: QuickJSHandle): void {
    const { context } = this.engine;
    const text = this.enter(() => {
      const limit = context.newNumber(this.limits.returnBytes);
      const result = context.callFunction(this.finishFn!, context.undefined, value, limit);
      limit.dispose();
      if (result.error !== undefined) {
        const thrown = this.read(result.error);
        return { error: thrown.message ?? '' };
      }
      const json = context.getString(result.value);
      result.value.dispose();
      return { json };
    });
    if (this.stopped !== undefined || text === undefined) return this.finish();
    if ('error' in text) {
      this.stopped = { code: 'MCPG_CODE_ERROR', message: `the returned value could not be turned into JSON: ${text.error}` };
      return this.finish();
    }
    this.finish(text.json);
  }

  /** The program threw (or did not parse): its message, and where in the agent's code. */
  private endThrown(error: QuickJSHandle, parsing: boolean): void {
    const thrown = this.enter(() => this.read(error));
    if (this.stopped !== undefined || thrown === undefined) return this.finish();
    const name = thrown.name ?? '';
    const message = thrown.message ?? '';
    const where = location(thrown.stack);
    let code: Code = 'MCPG_CODE_ERROR';
    if (parsing && name === 'SyntaxError') code = 'MCPG_CODE_SYNTAX';
    else if (name === 'InternalError' && /^(out of memory|stack overflow|string too long)/.test(message)) code = 'MCPG_CODE_MEMORY';
    const label = thrown.code !== undefined && /^(MCPG_[A-Z_]+|TOOL_ERROR)$/.test(thrown.code) ? `${name} ${thrown.code}` : name;
    this.stopped = { code, message: label === '' ? message : `${label}: ${message}` };
    this.thrown = { ...where, thrown };
    this.finish();
  }
  private thrown: { line?: number; column?: number; thrown: Thrown } | undefined;

  /** What the program threw, read through the prelude (never the host's own view of it). */
  private read(error: QuickJSHandle): Thrown {
    const { context } = this.engine;
    const described = context.callFunction(this.describeFn!, context.undefined, error);
    error.dispose();
    if (described.error !== undefined) {
      described.error.dispose();
      return { message: 'the program threw a value that could not be read' };
    }
    const text = context.getString(described.value);
    described.value.dispose();
    try {
      return JSON.parse(text) as Thrown;
    } catch {
      return { message: 'the program threw a value that could not be read' };
    }
  }

  /** Ends the run now, or as soon as the engine is left. */
  private stop(code: Code, message: string): void {
    this.stopped ??= { code, message };
    if (!this.inEngine) this.finish();
  }

  private finish(returned?: string): void {
    if (this.finished) return;
    this.finished = true;
    this.clock.stop();
    this.signal.removeEventListener('abort', this.onAbort);
    for (const call of this.inFlight) call.controller?.abort(new Error('the run ended'));
    this.inFlight.clear();
    this.queue.length = 0;
    const console = this.consoleParts.join('') + (this.consoleCut ? `[console output cut at ${this.limits.consoleBytes} bytes]\n` : '');
    const calls = this.calls;
    if (this.stopped !== undefined || returned === undefined) {
      const stop = this.stopped ?? { code: 'MCPG_INTERNAL', message: 'the run ended without an answer' };
      const outcome: ProgramOutcome = { ok: false, code: stop.code, message: stop.message, console, calls };
      if (this.thrown !== undefined) {
        if (this.thrown.line !== undefined) outcome.line = this.thrown.line;
        if (this.thrown.column !== undefined) outcome.column = this.thrown.column;
        const { code, server, tool } = this.thrown.thrown;
        if (code !== undefined) outcome.thrownCode = code;
        if (server !== undefined) outcome.server = server;
        if (tool !== undefined) outcome.tool = tool;
      }
      this.settleOutcome(outcome);
      return;
    }
    this.settleOutcome({ ok: true, ...returnedValue(returned, this.limits.returnBytes), console, calls });
  }
}

const internalFailure: InnerOutcome = { ok: false, code: 'MCPG_INTERNAL', message: 'the inner call failed inside the gateway' };

/** Where in the agent's code a stack's first frame of the program is (its first line shares the wrapper's). */
function location(stack: string | undefined): { line?: number; column?: number } {
  const found = stack === undefined ? null : /program\.js:(\d+)(?::(\d+))?/.exec(stack);
  if (found === null) return {};
  const line = Number(found[1]);
  if (found[2] === undefined) return { line };
  const column = Number(found[2]) - (line === 1 ? PROGRAM_PREFIX.length : 0);
  return { line, column: Math.max(1, column) };
}

/** The finish helper's "<length>:<text>" as the outcome's value and text. */
function returnedValue(text: string, limit: number): { value: unknown; returnedText: string; truncated: boolean } {
  if (text === '') return { value: undefined, returnedText: '', truncated: false };
  const colon = text.indexOf(':');
  const total = Number(text.slice(0, colon));
  const json = text.slice(colon + 1);
  if (json.length === total && (json.length <= limit / 3 || Buffer.byteLength(json) <= limit)) {
    return { value: parseFromSandbox(json), returnedText: json, truncated: false };
  }
  const cut = cutUtf8(json, limit);
  return {
    value: undefined,
    returnedText: `${cut}\n[returned value cut: its JSON is ${total} characters; the first ${Buffer.byteLength(cut)} bytes are shown]`,
    truncated: true,
  };
}

/** JSON text from the sandbox as a value, without `__proto__` keys (an own key, but a trap for a later merge). */
function parseFromSandbox(text: string): unknown {
  return text.includes('"__proto__"')
    ? (JSON.parse(text, (key, value: unknown) => (key === '__proto__' ? undefined : value)) as unknown)
    : (JSON.parse(text) as unknown);
}

/** The longest prefix of `text` that is at most `bytes` bytes of UTF-8, cut at a character boundary. */
function cutUtf8(text: string, bytes: number): string {
  if (text.length * 3 <= bytes) return text;
  const cut = Buffer.from(text).subarray(0, Math.max(0, bytes)).toString('utf8');
  return cut.endsWith('\uFFFD') ? cut.slice(0, -1) : cut;
}
