// What the main thread and a code worker say to each other over the worker's port, and the shared
// flag through which the main thread stops a run that is computing (the worker's event loop does
// not turn while its engine runs, but its interrupt handler reads the flag).

import type { SandboxAnswer } from './inner-answer.js';
import type { CodeLimits, InnerCallRecord, ProgramOutcome, ProgramTool } from './program.js';

/** The codes a run ends with, each in src/errors.ts. */
export type RunCode =
  | 'MCPG_CODE_SYNTAX'
  | 'MCPG_CODE_ERROR'
  | 'MCPG_CODE_TIMEOUT'
  | 'MCPG_CODE_MEMORY'
  | 'MCPG_CODE_TOO_MANY_CALLS'
  | 'MCPG_CODE_TOO_LARGE'
  | 'MCPG_CODE_CANCELLED'
  | 'MCPG_CODE_QUEUE_FULL'
  | 'MCPG_INTERNAL';

/** Slot 0 of the control flag: the run goes on, was cancelled, or ran out of wall time. */
export const STOP_NONE = 0;
export const STOP_CANCELLED = 1;
export const STOP_TIMEOUT = 2;

/** What a run in the worker gets besides its engine. */
export interface SandboxRequest {
  code: string;
  tools: readonly ProgramTool[];
  limits: CodeLimits;
  /** The gateway's `--max-depth` (a worker's own copy of the wire limits keeps the default). */
  maxDepth: number;
}

export type ToWorker =
  | ({ type: 'run'; run: number } & SandboxRequest)
  | { type: 'answer'; run: number; call: number; answer: SandboxAnswer }
  | { type: 'stop'; run: number };

export type FromWorker =
  | { type: 'started'; run: number }
  | { type: 'call'; run: number; call: number; name: string; args: unknown; at: number }
  | { type: 'record'; run: number; record: InnerCallRecord }
  | { type: 'done'; run: number; outcome: ProgramOutcome };

/** The limits' messages, the same whichever thread notices the breach. */
export function timeoutMessage(wallMs: number): string {
  return `the program ran longer than its ${wallMs} ms limit and was stopped`;
}

export function memoryMessage(memoryBytes: number): string {
  return `the program used more than its ${memoryBytes}-byte memory limit and was stopped`;
}

export const CANCELLED_MESSAGE = 'the run was cancelled';
