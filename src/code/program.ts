// The program interface: what code mode hands the sandbox (an agent's program, the tools it may call
// and how to call them, the limits) and what comes back (the returned value or a typed failure, the
// captured console and every inner call made). The sandbox itself (a fresh QuickJS engine per run)
// lives beside this file; a caller codes against these types only.

/** What one run may use; each breach ends the run with its own `MCPG_CODE_*` code. */
export interface CodeLimits {
  /** Wall-clock time of the run, excluding time an inner call spends waiting on a person. */
  wallMs: number;
  /** The engine's memory: its WebAssembly memory is capped at this many bytes. */
  memoryBytes: number;
  /** Inner calls one run may start in all. */
  innerCalls: number;
  /** Inner calls running at once; more wait in a queue. */
  callsInFlight: number;
  /** Size of the program's source, in UTF-8 bytes. */
  codeBytes: number;
  /** Size of the returned value's JSON text handed back; longer text is cut with a note. */
  returnBytes: number;
  /** Size of one inner result's JSON delivered into the sandbox; a larger one is refused. */
  innerResultBytes: number;
  /** Console text kept; what goes past it is dropped with a note. */
  consoleBytes: number;
}

export const DEFAULT_CODE_LIMITS: CodeLimits = Object.freeze({
  wallMs: 30_000,
  memoryBytes: 64 * 1024 * 1024,
  innerCalls: 200,
  callsInFlight: 8,
  codeBytes: 100 * 1024,
  returnBytes: 256 * 1024,
  innerResultBytes: 1024 * 1024,
  consoleBytes: 64 * 1024,
});

/** What the program sees as the answer of one inner call: the MCP CallToolResult, or a refusal. */
export type InnerOutcome =
  | { ok: true; result: unknown /* CallToolResult JSON */ }
  | { ok: false; code: string /* MCPG_* or 'TOOL_ERROR' */; message: string; server?: string; tool?: string };

/** One tool the program may call, by its exact public name and as `tools.<server>.<tool>(args)`. */
export interface ProgramTool {
  /** The exact public name (`server__tool`), the one `tools.call(name, args)` takes. */
  name: string;
  /** The property of `tools` the tool sits under. */
  server: string;
  /** The property of `tools.<server>` that calls it. */
  tool: string;
}

/** What the host gets with each inner call. */
export interface InnerCallOptions {
  /** Aborted when the run is cancelled or ends while the call is in flight. */
  signal: AbortSignal;
  /**
   * The host says the call is waiting on a person (`true`, e.g. an approval) or no longer is
   * (`false`): the run's wall clock does not count that wait. Calls nest: the clock runs again when
   * every waiting call has said `false` (or settled).
   */
  waiting: (pause: boolean) => void;
}

export interface ProgramHost {
  /** The tools the program may call; any other name is refused inside the sandbox as unknown. */
  tools: readonly ProgramTool[];
  /**
   * Make one inner call. The host's answer is delivered into the sandbox as a JSON copy; a thrown
   * error counts as a refusal with code `MCPG_INTERNAL` and a generic message (never its stack).
   */
  call(name: string, args: unknown, options: InnerCallOptions): Promise<InnerOutcome>;
  /** Told once per finished inner call, in the order they finish (for progress notifications). */
  onInnerCall?(record: InnerCallRecord): void;
}

/** One finished inner call, as the run's summary and the progress report name it. */
export interface InnerCallRecord {
  name: string;
  ok: boolean;
  /** The refusal's `MCPG_*` code, or `TOOL_ERROR` for a result with `isError`. */
  code?: string;
  /** From the program's call to its answer: a wait in the queue and a wait on a person included. */
  ms: number;
  /** Refused inside the sandbox (a name the host did not give, arguments nested too deep): the host never saw it. */
  inside?: true;
}

/** How a run ended. */
export type ProgramOutcome =
  | {
      ok: true;
      /** The returned value, parsed from its JSON (`undefined` when the program returned nothing or it was cut). */
      value: unknown;
      /** The value's JSON text ('' for nothing), cut at `returnBytes` (then `truncated`, and a note ends the text). */
      returnedText: string;
      truncated: boolean;
      console: string;
      calls: InnerCallRecord[];
    }
  | {
      ok: false;
      /** An `MCPG_CODE_*` code (see `src/errors.ts`). */
      code: string;
      /** The program's own message, or the limit it broke; never a host stack or path. */
      message: string;
      /** Where in the agent's code (1-based), when the engine knows. */
      line?: number;
      column?: number;
      /** The uncaught error's own `code`: a refusal's `MCPG_*` code, or `TOOL_ERROR`. */
      thrownCode?: string;
      /** The server and tool an uncaught refusal or tool error came from. */
      server?: string;
      tool?: string;
      console: string;
      calls: InnerCallRecord[];
    };

/** Everything `runProgram` takes besides the code. */
export interface RunRequest {
  code: string;
  host: ProgramHost;
  limits: CodeLimits;
  /** Cancels the run: the program stops, in-flight inner calls' signals abort. */
  signal: AbortSignal;
  /**
   * What runs it: a pool of worker threads (`CodeRunner`), whose owner closes it. Without one, the
   * process's own pool (whose idle workers never keep the process alive).
   */
  runner?: ProgramRunner;
}

/** Runs programs (`CodeRunner`: a pool of worker threads). */
export interface ProgramRunner {
  run(request: RunRequest): Promise<ProgramOutcome>;
}
