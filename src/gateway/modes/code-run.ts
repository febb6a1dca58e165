// One code-mode run (run_code): an agent's program executed in a fresh sandbox (src/code), whose every
// inner call is an ordinary tools/call of the same agent through its session's own path (rules, pins,
// the gate's approvals and limits, views, sanitizing, metrics, the audit trail naming the run), after
// the one check code adds: a tool that is not annotated read-only may be called from code only where
// the rules' `code.allow` names it. The run answers with the returned value as JSON text and
// `structuredContent` {value, calls}; a failure answers `isError` with the code, message, line,
// column and the calls already made. Its audit line carries the program's sha256 and bounded text.

import { createHash, randomBytes } from 'node:crypto';
import {
  DEFAULT_CODE_LIMITS,
  type CodeLimits,
  type InnerCallRecord,
  type InnerOutcome,
  type ProgramOutcome,
  type ProgramTool,
  type ProgramRunner,
} from '../../code/program.js';
import { runProgram } from '../../code/run-program.js';
import { GatewayError } from '../../errors.js';
import type { AuditLog } from '../../observability/audit.js';
import { codeMayCall } from '../../rules/code-settings.js';
import type { CodeSettings } from '../../rules/compiled.js';
import type { RequestId } from '../../wire/jsonrpc.js';
import type { CodeBoard } from './code-board.js';
import { isReadOnly } from './tool-declarations.js';
import type { InnerAnswer, InnerToolCall } from './session-mode.js';

/** The program text kept in the audit line; the digest covers the whole. */
const AUDIT_PROGRAM_CHARS = 4096;
/** Runs one session may have going at once unless the rules say otherwise. */
export const DEFAULT_RUNS_IN_FLIGHT = 2;

/** What one run reads of its session and the gateway. */
interface RunParts {
  readonly agent: string;
  readonly session: string;
  readonly settings: CodeSettings | undefined;
  readonly audit: AuditLog | undefined;
  readonly board: CodeBoard;
  readonly runner: ProgramRunner;
  /** The tools the program may name (callable by the agent, or held: a held one is refused as directly). */
  readonly tools: readonly ProgramTool[];
  /**
   * A tool's listed view and server entry by the name the session calls it by (undefined: unknown to
   * it); on a curated view, the arguments its server gets for a program's (undefined: the view refuses them).
   */
  lookup(name: string):
    | {
        readonly view: Readonly<Record<string, unknown>>;
        readonly server: string;
        readonly original: string;
        readonly serverArgs?: (args: Record<string, unknown>) => Record<string, unknown> | undefined;
      }
    | undefined;
  /** The session's path for one inner call. */
  callInner(call: InnerToolCall): Promise<InnerAnswer>;
  /** Told once per finished inner call (a progress notification when the agent asked for progress). */
  progress(record: InnerCallRecord, done: number): void;
}

/** The limits of one run: the sandbox's defaults under the rules' `code.limits`. */
function runLimits(settings: CodeSettings | undefined): CodeLimits {
  const { runsInFlight: _runs, ...limits } = settings?.limits ?? {};
  void _runs;
  return { ...DEFAULT_CODE_LIMITS, ...limits };
}

/** A run's id: short, random, unique enough to name it in the audit trail and the console. */
export function newRunId(): string {
  return `run_${randomBytes(6).toString('hex')}`;
}

/** Runs `code` for the agent's request `about`; resolves to the tools/call result (never rejects). */
export async function runCode(
  parts: RunParts,
  request: { readonly run: string; readonly about: RequestId; readonly code: string; readonly signal: AbortSignal },
): Promise<Record<string, unknown>> {
  const { run, about, code, signal } = request;
  const started = performance.now();
  const end = parts.board.started();
  const counts = { ok: 0, error: 0, refused: 0 };
  let done = 0;
  const outcome: ProgramOutcome = await runProgram({
    code,
    limits: runLimits(parts.settings),
    signal,
    runner: parts.runner,
    host: {
      tools: parts.tools,
      call: (name, args, options) =>
        innerCall(parts, { run, about, name, args, signal: options.signal, waiting: (pause) => options.waiting(pause) }),
      onInnerCall: (record) => {
        if (record.ok) counts.ok += 1;
        else if (record.code === 'TOOL_ERROR') counts.error += 1;
        else counts.refused += 1;
        // A call the sandbox refused itself never reached the agent's path, which audits every other.
        if (record.inside === true)
          parts.audit?.record({
            event: 'call',
            agent: parts.agent,
            session: parts.session,
            method: 'tools/call',
            tool: record.name,
            decision: 'allowed',
            outcome: 'failed',
            ...(record.code !== undefined && { code: record.code }),
            run,
          });
        parts.progress(record, ++done);
      },
    },
  });
  const durationMs = Math.round((performance.now() - started) * 10) / 10;
  const failed = outcome.ok ? undefined : outcome.code;
  end({ run, agent: parts.agent, session: parts.session, outcome: failed ?? 'ok', durationMs, calls: counts });
  parts.audit?.record({
    event: 'run',
    run,
    agent: parts.agent,
    session: parts.session,
    sha256: createHash('sha256').update(code).digest('hex'),
    program: code.length <= AUDIT_PROGRAM_CHARS ? code : code.slice(0, AUDIT_PROGRAM_CHARS),
    ...(code.length > AUDIT_PROGRAM_CHARS && { programTruncated: true }),
    outcome: failed === undefined ? 'ok' : 'failed',
    durationMs,
    calls: outcome.calls.length,
    ...(failed !== undefined && { code: failed }),
  });
  return runResult(run, outcome);
}

/** One inner call: code's own check, then the session's path; its answer as the program sees it. */
async function innerCall(
  parts: RunParts,
  call: {
    readonly run: string;
    readonly about: RequestId;
    readonly name: string;
    readonly args: unknown;
    readonly signal: AbortSignal;
    waiting(pause: boolean): void;
  },
): Promise<InnerOutcome> {
  const { name, args } = call;
  const known = parts.lookup(name);
  if (known !== undefined) {
    const given = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
    const object = given === undefined || known.serverArgs === undefined ? given : known.serverArgs(given);
    const readOnly = isReadOnly(known.view);
    // Arguments the curated view refuses go on to be refused on the call's path, as a direct call's are.
    const viewRefuses = given !== undefined && object === undefined;
    if (
      !viewRefuses &&
      !codeMayCall(parts.settings, { server: known.server, tool: known.original, readOnly, ...(object && { args: object }) })
    ) {
      const refusal = new GatewayError(
        'MCPG_CODE_TOOL_FORBIDDEN',
        `tool "${name}" may not be called from code: it is not read-only and the rules' code.allow does not name it`,
        { server: known.server },
      );
      parts.audit?.record({
        event: 'call',
        agent: parts.agent,
        session: parts.session,
        method: 'tools/call',
        server: known.server,
        tool: name,
        decision: 'denied',
        outcome: 'failed',
        code: refusal.code,
        run: call.run,
      });
      return { ok: false, code: refusal.code, message: refusal.message, server: known.server, tool: name };
    }
  }
  const answer = await parts.callInner({
    name,
    arguments: args,
    run: call.run,
    about: call.about,
    signal: call.signal,
    waiting: (pause) => call.waiting(pause),
  });
  if ('result' in answer) return { ok: true, result: answer.result };
  const data = answer.error.data as { code?: unknown; server?: unknown } | undefined;
  const code = typeof data?.code === 'string' ? data.code : `JSONRPC_${answer.error.code}`;
  return {
    ok: false,
    code,
    message: answer.error.message,
    ...(typeof data?.server === 'string' && { server: data.server }),
    tool: name,
  };
}

/** The tools/call result of a run: the value as JSON text and structured, or the failure as `isError`. */
function runResult(run: string, outcome: ProgramOutcome): Record<string, unknown> {
  const calls = outcome.calls.map((c) => ({ name: c.name, ok: c.ok, ...(c.code !== undefined && { code: c.code }), ms: c.ms }));
  const consoleText = outcome.console;
  const consoleBlock = consoleText === '' ? [] : [{ type: 'text', text: `console:\n${consoleText}` }];
  if (outcome.ok) {
    return {
      content: [{ type: 'text', text: outcome.returnedText }, ...consoleBlock],
      structuredContent: {
        value: outcome.value ?? null,
        ...(outcome.truncated && { truncated: true }),
        calls,
        run,
        ...(consoleText !== '' && { console: consoleText }),
      },
    };
  }
  const where =
    outcome.line === undefined ? '' : ` (line ${outcome.line}${outcome.column === undefined ? '' : `, column ${outcome.column}`})`;
  const made =
    calls.length === 0
      ? 'No inner call was made.'
      : `Inner calls made (${calls.length}): ${calls.map((c) => `${c.name} ${c.ok ? 'ok' : (c.code ?? 'failed')}`).join(', ')}.`;
  return {
    content: [{ type: 'text', text: `${outcome.code}: ${outcome.message}${where}\n${made}` }, ...consoleBlock],
    structuredContent: {
      error: {
        code: outcome.code,
        message: outcome.message,
        ...(outcome.line !== undefined && { line: outcome.line }),
        ...(outcome.column !== undefined && { column: outcome.column }),
      },
      calls,
      run,
      ...(consoleText !== '' && { console: consoleText }),
    },
    isError: true,
  };
}
