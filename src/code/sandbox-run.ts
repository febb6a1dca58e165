// One run inside a worker thread: a fresh QuickJS engine (its own WebAssembly instance and capped
// memory), the prelude's `tools` and `console` around two host functions, and a driver that enters
// the engine to start the program and each time an inner call settles. The inner calls themselves
// are made on the main thread (`code-runner.ts`), which is told of each over the worker's port and
// answers with the JSON text the sandbox gets; calls beyond `callsInFlight` wait in a queue here.
//
// The main thread owns the run's wall clock and its cancellation: it says "stop" through a shared
// flag that the engine's interrupt handler reads, so a program computing without a pause is stopped
// where it is, and through a message when the run is waiting. The run ends at the first breach of a
// limit, when the program's promise settles, when it awaits something nothing can settle, or when
// it is stopped.

import type { QuickJSHandle } from 'quickjs-emscripten-core';
import { type Engine, isEngineTrap } from './engine.js';
import { sandboxAnswer, type SandboxAnswer } from './inner-answer.js';
import type { CodeLimits, InnerCallRecord, InnerOutcome, ProgramOutcome, ProgramTool } from './program.js';
import { PRELUDE, PRELUDE_FILE, PROGRAM_FILE, PROGRAM_PREFIX, PROGRAM_SUFFIX } from './prelude.js';
import {
  CANCELLED_MESSAGE,
  STOP_CANCELLED,
  STOP_NONE,
  memoryMessage,
  timeoutMessage,
  type RunCode,
  type SandboxRequest,
} from './worker-messages.js';
import { nestedDeeperThan } from '../wire/jsonrpc.js';

interface Stop {
  code: RunCode;
  message: string;
}

interface InnerCall {
  id: number;
  name: string;
  args: unknown;
  tool: ProgramTool | undefined;
  /** When the program called it (it may then wait in the queue). */
  called: number;
  /** Its arguments nest deeper than a direct call's message may: refused as that call would be. */
  tooDeep: boolean;
}

/** What a run in the worker needs from the thread that owns it. */
interface SandboxLink {
  /**
   * Make inner call `id` on the main thread; its answer comes back through `SandboxRun.answer`. `at`:
   * when the program made it (`performance.timeOrigin` + now: comparable across threads), so the main
   * thread, which records each call it answers, counts the call's wait in the queue here too.
   */
  call(id: number, name: string, args: unknown, at: number): void;
  /** A call refused inside the sandbox finished: the main thread never saw it. */
  record(record: InnerCallRecord): void;
  /** The run ended. */
  done(outcome: ProgramOutcome): void;
  /** Slot 0 is `STOP_NONE` until the main thread stops the run (`STOP_CANCELLED` or `STOP_TIMEOUT`). */
  control: Int32Array;
}

interface Thrown {
  name?: string;
  message?: string;
  stack?: string;
  code?: string;
  server?: string;
  tool?: string;
}

export class SandboxRun {
  private readonly limits: CodeLimits;
  private readonly tools = new Map<string, ProgramTool>();

  private readonly queue: InnerCall[] = [];
  private readonly inFlight = new Map<number, InnerCall>();
  private readonly calls: InnerCallRecord[] = [];
  private started = 0;

  private readonly consoleParts: string[] = [];
  private consoleUsed = 0;
  private consoleCut = false;

  private main: QuickJSHandle | undefined;
  private finishFn: QuickJSHandle | undefined;
  private describeFn: QuickJSHandle | undefined;
  private deliverFn: QuickJSHandle | undefined;

  private inEngine = false;
  private stopped: Stop | undefined;
  private finished = false;

  constructor(
    private readonly engine: Engine,
    private readonly request: SandboxRequest,
    private readonly link: SandboxLink,
  ) {
    this.limits = request.limits;
    for (const tool of request.tools) this.tools.set(tool.name, tool);
    engine.runtime.setInterruptHandler(() => this.interrupt());
  }

  /** Starts the program; the outcome goes to the link's `done`. */
  run(): void {
    if (this.checkControl()) this.finish();
    else this.begin(this.request.code);
  }

  /** The main thread stopped the run (it may be waiting on inner calls, not in the engine). */
  halt(): void {
    this.checkControl();
    if (!this.inEngine) this.finish();
  }

  /** An inner call's answer from the main thread. */
  answer(id: number, answer: SandboxAnswer): void {
    const call = this.inFlight.get(id);
    if (call !== undefined) this.settle(call, answer);
  }

  /** Reads the main thread's stop flag; true when the run is to stop. */
  private checkControl(): boolean {
    if (this.stopped !== undefined) return true;
    const flag = Atomics.load(this.link.control, 0);
    if (flag === STOP_NONE) return false;
    this.stopped =
      flag === STOP_CANCELLED
        ? { code: 'MCPG_CODE_CANCELLED', message: CANCELLED_MESSAGE }
        : { code: 'MCPG_CODE_TIMEOUT', message: timeoutMessage(this.limits.wallMs) };
    return true;
  }

  /** Installs the prelude and starts the program. */
  private begin(code: string): void {
    const { context } = this.engine;
    const started = this.enter(() => {
      const hostCall = context.newFunction('call', (name, args) => this.hostCall(name, args));
      const hostLog = context.newFunction('log', (level, text) => this.hostLog(level, text));
      const tools = context.newString(JSON.stringify(this.request.tools.map((t) => [t.name, t.server, t.tool])));
      const room = context.newNumber(this.limits.consoleBytes);
      const prelude = context.evalCode(PRELUDE, PRELUDE_FILE);
      if (prelude.error !== undefined) return undefined;
      const helpers = context.callFunction(prelude.value, context.undefined, hostCall, hostLog, tools, room);
      if (helpers.error !== undefined) return undefined;
      this.finishFn = context.getProp(helpers.value, 0);
      this.describeFn = context.getProp(helpers.value, 1);
      this.deliverFn = context.getProp(helpers.value, 2);
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
   * Runs `work` inside the engine. A throw from the engine's host side (the thread's own stack
   * overflowing under a deep recursion, or a broken instance) ends the run.
   */
  private enter<T>(work: () => T): T | undefined {
    this.inEngine = true;
    try {
      return work();
    } catch (err) {
      if (err instanceof RangeError) this.stop('MCPG_CODE_MEMORY', "the program went deeper than the engine's stack allows");
      else if (isEngineTrap(err) && this.engine.memory.buffer.byteLength >= this.limits.memoryBytes)
        this.stop('MCPG_CODE_MEMORY', memoryMessage(this.limits.memoryBytes));
      else this.stop('MCPG_INTERNAL', 'the sandbox failed while running the program');
      return undefined;
    } finally {
      this.inEngine = false;
    }
  }

  /**
   * The engine asks this every few thousand operations: true stops the program where it is. The
   * run has its own thread, so a program may compute as long as its wall time allows; the main
   * thread's clock says when that is over.
   */
  private interrupt(): boolean {
    return this.checkControl();
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

  /**
   * The program called a tool: its number now (the prelude keeps the promise of its answer), the call
   * itself once the engine is left. A call not made (the run is stopping) is never answered.
   */
  private hostCall(nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle | undefined {
    // What this function throws would reach the program with the host's message: nothing may.
    try {
      const { context } = this.engine;
      if (this.stopped !== undefined) return undefined;
      const name = context.getString(nameHandle);
      const text = context.getString(argsHandle);
      this.started += 1;
      if (this.started > this.limits.innerCalls) {
        this.stopped = {
          code: 'MCPG_CODE_TOO_MANY_CALLS',
          message: `the program started more than its limit of ${this.limits.innerCalls} inner calls and was stopped at ${name}`,
        };
        return undefined;
      }
      const size = Buffer.byteLength(text);
      if (size > this.limits.innerResultBytes) {
        this.stopped = {
          code: 'MCPG_CODE_TOO_LARGE',
          message: `the arguments of ${name} are ${size} bytes of JSON, over the ${this.limits.innerResultBytes}-byte limit`,
        };
        return undefined;
      }
      const args = parseFromSandbox(text);
      // A direct call's arguments sit two levels down in its message, which may nest `maxDepth` deep.
      const depth = this.request.maxDepth - 2;
      const tooDeep = text.length > 2 * depth && nestedDeeperThan(args, depth);
      const id = this.started;
      this.queue.push({ id, name, args, tool: this.tools.get(name), called: performance.now(), tooDeep });
      return context.newNumber(id);
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
    this.inFlight.set(call.id, call);
    if (call.tool === undefined || call.tooDeep) {
      const refusal: InnerOutcome =
        call.tool === undefined
          ? { ok: false, code: 'MCPG_TOOL_NOT_FOUND', message: `unknown tool: ${call.name}` }
          : {
              ok: false,
              code: 'MCPG_MESSAGE_TOO_DEEP',
              message: `message nests deeper than ${this.request.maxDepth} levels (the limit is --max-depth); it was not processed`,
            };
      const answer = sandboxAnswer(refusal, call.tool, this.limits.innerResultBytes);
      queueMicrotask(() => this.settle(call, answer));
      return;
    }
    this.link.call(call.id, call.name, call.args, performance.timeOrigin + call.called);
  }

  /** An inner call's answer: recorded, copied into the engine, and the program runs on. */
  private settle(call: InnerCall, answer: SandboxAnswer): void {
    if (this.finished || !this.inFlight.has(call.id)) return;
    this.inFlight.delete(call.id);
    const code = answer.ok ? answer.code : 'MCPG_CODE_TOO_LARGE';
    const record: InnerCallRecord = { name: call.name, ok: code === undefined, ms: Math.round(performance.now() - call.called) };
    if (code !== undefined) record.code = code;
    this.calls.push(record);
    if (call.tool === undefined || call.tooDeep) {
      record.inside = true;
      this.link.record(record);
    }
    if (!answer.ok) {
      this.stop(
        'MCPG_CODE_TOO_LARGE',
        `the result of ${call.name} is ${answer.bytes} bytes of JSON, over the ${this.limits.innerResultBytes}-byte limit on one inner result`,
      );
      return;
    }
    this.drive(() => {
      const { context } = this.engine;
      const id = context.newNumber(call.id);
      const text = context.newString(answer.json);
      const delivered = context.callFunction(this.deliverFn!, context.undefined, id, text);
      id.dispose();
      text.dispose();
      (delivered.error ?? delivered.value).dispose();
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
    let code: RunCode = 'MCPG_CODE_ERROR';
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
  private stop(code: RunCode, message: string): void {
    this.stopped ??= { code, message };
    if (!this.inEngine) this.finish();
  }

  private finish(returned?: string): void {
    if (this.finished) return;
    this.finished = true;
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
      this.link.done(outcome);
      return;
    }
    this.link.done({ ok: true, ...returnedValue(returned, this.limits.returnBytes), console, calls });
  }
}

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
