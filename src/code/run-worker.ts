// A code worker thread: runs one program at a time for the main thread's `CodeRunner`, each in a
// fresh engine (the WebAssembly module is compiled once per worker and kept while it is warm). It
// makes no inner call itself: each goes to the main thread and its answer comes back.

import { parentPort, workerData } from 'node:worker_threads';
import { newEngine } from './engine.js';
import type { ProgramOutcome } from './program.js';
import { SandboxRun } from './sandbox-run.js';
import type { FromWorker, ToWorker } from './worker-messages.js';

const port = parentPort!;
const control = new Int32Array((workerData as { control: SharedArrayBuffer }).control);
let current: { id: number; run: SandboxRun | undefined } | undefined;

function send(message: FromWorker): void {
  port.postMessage(message);
}

function finished(id: number, outcome: ProgramOutcome): void {
  if (current?.id === id) current = undefined;
  send({ type: 'done', run: id, outcome });
}

async function start(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const id = message.run;
  current = { id, run: undefined };
  let engine;
  try {
    engine = await newEngine(message.limits.memoryBytes);
  } catch {
    finished(id, { ok: false, code: 'MCPG_INTERNAL', message: 'the sandbox could not be started', console: '', calls: [] });
    return;
  }
  const run = new SandboxRun(engine, message, {
    call: (call, name, args, at) => send({ type: 'call', run: id, call, name, args, at }),
    record: (record) => send({ type: 'record', run: id, record }),
    done: (outcome) => finished(id, outcome),
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
