// Running one agent's program: a fresh QuickJS engine per run, with its own capped WebAssembly
// memory, an interrupt handler for the wall clock, and the tools bridged as deferred promises.

import type { ProgramOutcome, RunRequest } from './program.js';

/** Run `request.code` once in a fresh sandbox; never throws (every failure is an outcome). */
export function runProgram(request: RunRequest): Promise<ProgramOutcome> {
  void request;
  return Promise.resolve({ ok: false, code: 'MCPG_INTERNAL', message: 'the code engine is not built yet', console: '', calls: [] });
}
