// The pool of worker threads that runs programs, and the main-thread side of each run. A program
// computes on its worker's thread, so however long it runs it never holds the gateway's event loop;
// the main thread keeps what belongs to the gateway: the host's inner calls (the worker asks over
// its port, the answer goes back as the JSON text the sandbox gets), the run's wall clock (started
// when the worker says the program started, paused while a call waits on a person), and cancellation. To stop a run the main thread sets the
// worker's shared flag, which the engine's interrupt handler reads even mid-loop, and says so over
// the port; a worker that has not stopped within a short grace is ended and replaced, as is one
// that crashes or runs out of memory — only its own run fails.
//
// Workers start when a run needs one, stay warm (the engine's WebAssembly module compiled) while
// idle without keeping the process alive, and are ended by `close()`.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { sandboxAnswer } from './inner-answer.js';
import type { InnerCallRecord, InnerOutcome, ProgramOutcome, ProgramRunner, ProgramTool, RunRequest } from './program.js';
import { RunClock } from './run-clock.js';
import {
  CANCELLED_MESSAGE,
  STOP_CANCELLED,
  STOP_NONE,
  STOP_TIMEOUT,
  memoryMessage,
  timeoutMessage,
  type FromWorker,
  type RunCode,
  type ToWorker,
} from './worker-messages.js';
import { wireLimits } from '../wire/jsonrpc.js';

interface CodeRunnerOptions {
  /** Worker threads at most (default: the smaller of 4 and the machine's cores). */
  workers?: number;
  /** Runs waiting for a free worker at most; one more is refused with `MCPG_CODE_QUEUE_FULL` (default 64). */
  queued?: number;
  /** How long a stopped run's worker may take to stop before it is ended and replaced (default 500 ms). */
  graceMs?: number;
  /** The worker's script (default: `run-worker.js` beside this file). */
  workerScript?: URL;
}

/**
 * The V8 heap a worker may use besides its engines' WebAssembly memories (which are capped per run):
 * the strings that cross its port. Past it the worker is ended and its run fails with `MCPG_CODE_MEMORY`.
 */
const WORKER_HEAP_MB = 512;
/**
 * How long a worker may take to start a run (a new worker compiles the engine first) before the run
 * ends as timed out; the run's own wall clock starts when its program does.
 */
const START_MS = 15_000;

interface PendingRun {
  request: RunRequest;
  resolve: (outcome: ProgramOutcome) => void;
  /** While queued: takes the run out of the queue when it is cancelled. */
  onAbort?: () => void;
}

interface CallState {
  controller: AbortController;
  tool: ProgramTool | undefined;
  waiting: boolean;
}

interface ActiveRun extends PendingRun {
  id: number;
  slot: Slot;
  clock: RunClock;
  tools: Map<string, ProgramTool>;
  calls: Map<number, CallState>;
  records: InnerCallRecord[];
  stopping: boolean;
  grace: NodeJS.Timeout | undefined;
  /** Until the worker says the program started (then the wall clock runs). */
  starting: NodeJS.Timeout | undefined;
}

interface Slot {
  worker: Worker;
  control: Int32Array;
  active: ActiveRun | undefined;
  /** Ended by the runner (crashed, stuck or closed): no longer in the pool. */
  gone: boolean;
}

export class CodeRunner implements ProgramRunner {
  private readonly size: number;
  private readonly queued: number;
  private readonly graceMs: number;
  private readonly script: URL;
  private readonly slots = new Set<Slot>();
  private readonly queue: PendingRun[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: CodeRunnerOptions = {}) {
    this.size = Math.max(1, options.workers ?? Math.min(4, availableParallelism()));
    this.queued = Math.max(0, options.queued ?? 64);
    this.graceMs = options.graceMs ?? 500;
    this.script = options.workerScript ?? new URL('./run-worker.js', import.meta.url);
  }

  /** Runs the program on a free worker, or queues it; never throws. */
  run(request: RunRequest): Promise<ProgramOutcome> {
    return new Promise((resolve) => {
      const pending: PendingRun = { request, resolve };
      if (this.closed) return resolve(failure('MCPG_CODE_CANCELLED', 'the run was cancelled: the sandbox pool is closed'));
      const slot = this.freeSlot();
      if (slot !== undefined) return this.dispatch(pending, slot);
      if (this.queue.length >= this.queued) {
        return resolve(
          failure(
            'MCPG_CODE_QUEUE_FULL',
            `all ${this.size} sandbox workers are busy and ${this.queued} runs already wait for one; try again shortly`,
          ),
        );
      }
      pending.onAbort = () => {
        const at = this.queue.indexOf(pending);
        if (at >= 0) this.queue.splice(at, 1);
        resolve(failure('MCPG_CODE_CANCELLED', 'the run was cancelled before it started'));
      };
      request.signal.addEventListener('abort', pending.onAbort, { once: true });
      this.queue.push(pending);
    });
  }

  /** Workers now in the pool, busy or warm. */
  get workers(): number {
    return this.slots.size;
  }

  /** Ends every run (cancelled), every queued run and every worker. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) {
      if (pending.onAbort !== undefined) pending.request.signal.removeEventListener('abort', pending.onAbort);
      pending.resolve(failure('MCPG_CODE_CANCELLED', 'the run was cancelled: the sandbox pool is closed'));
    }
    const ending: Promise<number>[] = [];
    for (const slot of [...this.slots]) {
      if (slot.active !== undefined)
        this.end(slot.active, this.forced(slot.active, 'MCPG_CODE_CANCELLED', 'the run was cancelled: the sandbox pool is closed'));
      ending.push(this.drop(slot));
    }
    await Promise.all(ending);
  }

  private freeSlot(): Slot | undefined {
    for (const slot of this.slots) if (slot.active === undefined) return slot;
    if (this.slots.size < this.size) return this.spawn();
    return undefined;
  }

  private spawn(): Slot {
    const control = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(this.script, {
      workerData: { control: control.buffer },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    const slot: Slot = { worker, control, active: undefined, gone: false };
    worker.on('message', (message: FromWorker) => this.heard(slot, message));
    worker.on('error', (err: Error & { code?: string }) => {
      const run = slot.active;
      this.drop(slot).catch(() => undefined);
      if (run === undefined) return;
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        this.end(run, this.forced(run, 'MCPG_CODE_MEMORY', memoryMessage(run.request.limits.memoryBytes)));
      else this.end(run, this.forced(run, 'MCPG_INTERNAL', 'the sandbox failed while running the program'));
    });
    worker.on('exit', () => {
      const run = slot.active;
      this.drop(slot).catch(() => undefined);
      if (run !== undefined) this.end(run, this.forced(run, 'MCPG_INTERNAL', 'the sandbox failed while running the program'));
    });
    worker.unref();
    this.slots.add(slot);
    return slot;
  }

  /** Takes a slot out of the pool and ends its worker. */
  private drop(slot: Slot): Promise<number> {
    if (slot.gone) return Promise.resolve(0);
    slot.gone = true;
    this.slots.delete(slot);
    return slot.worker.terminate();
  }

  private dispatch(pending: PendingRun, slot: Slot): void {
    const { request } = pending;
    if (pending.onAbort !== undefined) request.signal.removeEventListener('abort', pending.onAbort);
    const run: ActiveRun = {
      ...pending,
      id: this.nextId++,
      slot,
      clock: new RunClock(request.limits.wallMs, () => this.stopRun(run, STOP_TIMEOUT)),
      tools: new Map(request.host.tools.map((tool) => [tool.name, tool])),
      calls: new Map(),
      records: [],
      stopping: false,
      grace: undefined,
      starting: undefined,
    };
    run.onAbort = () => this.stopRun(run, STOP_CANCELLED);
    slot.active = run;
    slot.worker.ref();
    Atomics.store(slot.control, 0, STOP_NONE);
    const message: ToWorker = {
      type: 'run',
      run: run.id,
      code: request.code,
      tools: request.host.tools.map(({ name, server, tool }) => ({ name, server, tool })),
      limits: { ...request.limits },
      maxDepth: wireLimits.maxDepth,
    };
    slot.worker.postMessage(message);
    run.starting = setTimeout(() => this.stopRun(run, STOP_TIMEOUT), START_MS);
    request.signal.addEventListener('abort', run.onAbort, { once: true });
    if (request.signal.aborted) this.stopRun(run, STOP_CANCELLED);
  }

  private heard(slot: Slot, message: FromWorker): void {
    const run = slot.active;
    if (run === undefined || run.id !== message.run) return;
    switch (message.type) {
      case 'started':
        if (run.starting === undefined) return;
        clearTimeout(run.starting);
        run.starting = undefined;
        if (!run.stopping) run.clock.start();
        return;
      case 'call':
        this.call(run, message.call, message.name, message.args, message.at);
        return;
      case 'record':
        this.recorded(run, message.record);
        return;
      case 'done':
        this.end(run, message.outcome);
        return;
    }
  }

  /** An inner call finished: kept for an outcome the main thread must make, and told to the host. */
  private recorded(run: ActiveRun, record: InnerCallRecord): void {
    run.records.push(record);
    try {
      run.request.host.onInnerCall?.(record);
    } catch {
      // A progress listener's failure is not the program's.
    }
  }

  /**
   * One inner call the program made: through the host, its answer back to the worker, and recorded
   * here (the worker records it for the outcome it makes; one message less per call than its telling).
   */
  private call(run: ActiveRun, id: number, name: string, args: unknown, at: number): void {
    const state: CallState = { controller: new AbortController(), tool: run.tools.get(name), waiting: false };
    run.calls.set(id, state);
    let answer: Promise<InnerOutcome>;
    try {
      answer = run.request.host.call(name, args, {
        signal: state.controller.signal,
        waiting: (pause) => this.waiting(run, state, pause),
      });
    } catch {
      answer = Promise.resolve(internalFailure);
    }
    const settle = (outcome: InnerOutcome): void => {
      if (run.slot.active !== run || run.calls.get(id) !== state) return;
      run.calls.delete(id);
      if (state.waiting) this.waiting(run, state, false);
      const answer = sandboxAnswer(outcome, state.tool, run.request.limits.innerResultBytes);
      const message: ToWorker = { type: 'answer', run: run.id, call: id, answer };
      run.slot.worker.postMessage(message);
      // As the worker records it when the answer arrives: a result too large to deliver is its own code.
      const code = answer.ok ? answer.code : 'MCPG_CODE_TOO_LARGE';
      const record: InnerCallRecord = { name, ok: code === undefined, ms: Math.round(performance.timeOrigin + performance.now() - at) };
      if (code !== undefined) record.code = code;
      this.recorded(run, record);
    };
    answer.then(settle, () => settle(internalFailure));
  }

  private waiting(run: ActiveRun, state: CallState, pause: boolean): void {
    if (run.slot.active !== run || state.waiting === pause || ![...run.calls.values()].includes(state)) return;
    state.waiting = pause;
    if (pause) run.clock.pause();
    else run.clock.resume();
  }

  /** The main thread stops a run: the worker is told, and given a grace to stop. */
  private stopRun(run: ActiveRun, flag: typeof STOP_CANCELLED | typeof STOP_TIMEOUT): void {
    if (run.stopping || run.slot.active !== run) return;
    run.stopping = true;
    Atomics.store(run.slot.control, 0, flag);
    const message: ToWorker = { type: 'stop', run: run.id };
    run.slot.worker.postMessage(message);
    run.grace = setTimeout(() => {
      if (run.slot.active !== run) return;
      const outcome =
        flag === STOP_CANCELLED
          ? this.forced(run, 'MCPG_CODE_CANCELLED', CANCELLED_MESSAGE)
          : this.forced(run, 'MCPG_CODE_TIMEOUT', timeoutMessage(run.request.limits.wallMs));
      // Out of the pool first, so the next queued run does not go to the worker being ended.
      this.drop(run.slot).catch(() => undefined);
      this.end(run, outcome);
    }, this.graceMs);
  }

  /** The outcome of a run whose worker could not say it: the calls the main thread saw, no console. */
  private forced(run: ActiveRun, code: RunCode, message: string): ProgramOutcome {
    return { ok: false, code, message, console: '', calls: [...run.records] };
  }

  /** A run is over: its calls still in flight are cancelled, its worker takes the next run. */
  private end(run: ActiveRun, outcome: ProgramOutcome): void {
    const { slot } = run;
    if (slot.active !== run) return;
    slot.active = undefined;
    if (run.grace !== undefined) clearTimeout(run.grace);
    if (run.starting !== undefined) clearTimeout(run.starting);
    run.clock.stop();
    if (run.onAbort !== undefined) run.request.signal.removeEventListener('abort', run.onAbort);
    for (const state of run.calls.values()) state.controller.abort(new Error('the run ended'));
    run.calls.clear();
    if (!slot.gone) slot.worker.unref();
    run.resolve(outcome);
    this.next();
  }

  /** Starts queued runs while a worker is free. */
  private next(): void {
    while (!this.closed && this.queue.length > 0) {
      const slot = this.freeSlot();
      if (slot === undefined) return;
      this.dispatch(this.queue.shift()!, slot);
    }
  }
}

const internalFailure: InnerOutcome = { ok: false, code: 'MCPG_INTERNAL', message: 'the inner call failed inside the gateway' };

function failure(code: RunCode, message: string): ProgramOutcome {
  return { ok: false, code, message, console: '', calls: [] };
}

let shared: CodeRunner | undefined;

/**
 * The process's own runner, for callers that do not hold one: its idle workers do not keep the
 * process alive, and they end with it.
 */
export function sharedCodeRunner(): CodeRunner {
  shared ??= new CodeRunner();
  return shared;
}
