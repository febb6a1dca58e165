// A code worker that dies on purpose: the real worker (src/code/run-worker.ts), except that a run
// whose program mentions CRASH_WORKER ends the thread as it starts, as a crash would.

import { parentPort } from 'node:worker_threads';
import '../../src/code/run-worker.js';

// Heard after the real worker's listener, which only begins the run (making its engine is async).
parentPort!.on('message', (message: { type: string; code?: string }) => {
  if (message.type === 'run' && message.code?.includes('CRASH_WORKER') === true) process.exit(3);
});
