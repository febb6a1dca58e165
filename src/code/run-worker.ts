// A code worker thread: runs one program at a time for the main thread's `CodeRunner`, each in a
// fresh engine (the WebAssembly module is compiled once per worker and kept while it is warm). Once a
// run has ended, the worker makes the next run's engine while it waits: never used, and the next run
// with the same memory limit takes it, so making one is off that run's path. It makes no inner call
// itself: each goes to the main thread and its answer comes back.

import { parentPort, workerData } from 'node:worker_threads';
import { newEngine, type Engine } from './engine.js';
import type { ProgramOutcome } from './program.js';
import { SandboxRun } from './sandbox-run.js';
import type { FromWorker, ToWorker } from './worker-messages.js';

const port = parentPort!;
const control = new Int32Array((workerData as { control: SharedArrayBuffer }).control);
let current: { id: number; run: SandboxRun | undefined } | undefined;
/** The next run's engine, made after the last run ended; no run has touched it. */
let spare: { heapBytes: number; engine: Promise<Engine> } | undefined;

/** Makes a spare engine for a run of `heapBytes`, once the thread is free to. */
function prepare(heapBytes: number): void {
  setImmediate(() => {
    if (current !== undefined || spare !== undefined) return;
    const made = { heapBytes, engine: newEngine(heapBytes) };
    spare = made;
    made.engine.catch(() => {
      if (spare === made) spare = undefined;
    });
  });
}

/** A fresh engine for a run: the spare where it was made for the same limit, else a new one. */
function engineFor(heapBytes: number): Promise<Engine> {
  const ready = spare;
  spare = undefined;
  if (ready !== undefined && ready.heapBytes === heapBytes) return ready.engine.catch(() => newEngine(heapBytes));
  return newEngine(heapBytes);
}

function send(message: FromWorker): void {
  port.postMessage(message);
}

function finished(id: number, heapBytes: number, outcome: ProgramOutcome): void {
  if (current?.id === id) current = undefined;
  send({ type: 'done', run: id, outcome });
  prepare(heapBytes);
}

async function start(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const id = message.run;
  const heapBytes = message.limits.memoryBytes;
  current = { id, run: undefined };
  let engine;
  try {
    engine = await engineFor(heapBytes);
  } catch {
    finished(id, heapBytes, { ok: false, code: 'MCPG_INTERNAL', message: 'the sandbox could not be started', console: '', calls: [] });
    return;
  }
  const run = new SandboxRun(engine, message, {
    call: (call, name, args, at) => send({ type: 'call', run: id, call, name, args, at }),
    record: (record) => send({ type: 'record', run: id, record }),
    done: (outcome) => finished(id, heapBytes, outcome),
    control,
  });
  if (current?.id === id) current.run = run;
  // The run's wall clock starts now: a new worker's start and the engine's making are not the program's.
  send({ type: 'started', run: id });
  run.run();
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'run':
      void start(message);
      return;
    case 'answer':
      if (current?.id === message.run) current.run?.answer(message.call, message.answer);
      return;
    case 'stop':
      if (current?.id === message.run) current.run?.halt();
      return;
  }
});
