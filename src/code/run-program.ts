// Running one agent's program: the checks made before any sandbox is used, then the run itself on a
// worker of the caller's `CodeRunner` (or the process's own). See code-runner.ts for the pool and
// the main thread's side of a run, sandbox-run.ts for the run inside its worker.

import { sharedCodeRunner } from './code-runner.js';
import type { ProgramOutcome, RunRequest } from './program.js';

/** Run `request.code` once in a fresh sandbox; never throws (every failure is an outcome). */
export async function runProgram(request: RunRequest): Promise<ProgramOutcome> {
  const { code, limits, signal } = request;
  const size = Buffer.byteLength(code);
  if (size > limits.codeBytes) {
    return refused('MCPG_CODE_TOO_LARGE', `the program is ${size} bytes, over its ${limits.codeBytes}-byte limit`);
  }
  if (signal.aborted) return refused('MCPG_CODE_CANCELLED', 'the run was cancelled before it started');
  return (request.runner ?? sharedCodeRunner()).run(request);
}

function refused(code: string, message: string): ProgramOutcome {
  return { ok: false, code, message, console: '', calls: [] };
}
