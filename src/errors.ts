// The error registry: every failure mcpgate reports has one stable `MCPG_*` code, documented in
// docs/errors.md (test/unit/codebase/errors-doc.test.ts keeps the two in step). Wire errors (what an agent sees as a
// JSON-RPC error) carry the code in `error.data.code`; local errors (CLI, config) print it.
// An agent's mistake maps to a JSON-RPC code the agent can act on (-32600/-32601/-32602); a server's
// failure maps to a distinct code of mcpgate's own and names the server, so an agent is never blamed
// for a server's fault. Every code of mcpgate's own is in -31000…-31099, outside the bands the MCP
// specification reserves (docs/errors.md "Where the numbers sit" says why;
// test/unit/codebase/error-codes-spec.test.ts checks the registry against the revision's own text, and
// wire/modern-answers.ts rewrites what a 2026-07-28 agent must not get).

export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** MCP's "resource not found" (2025-11-25, resources/read). */
  RESOURCE_NOT_FOUND: -32002,
  /**
   * "Rate limited" as the specification's draft defines it (SEP-3304 "Standardizing Rate-Limiting
   * Errors": `error.data.retryAfterMs`, optional `limit` and `remaining`; HTTP 429 with
   * `Retry-After`). The draft is not part of any revision, so it is sent only when the operator
   * turns it on (`serve --draft-rate-limited-code`, `useDraftRateLimitedCode`).
   */
  DRAFT_RATE_LIMITED: -32023,
} as const;

/** Every code, with the JSON-RPC code it maps to on the wire and a one-line summary. */
const ERROR_CODES = {
  MCPG_PARSE_ERROR: { rpc: JSONRPC.PARSE_ERROR, summary: 'A message was not valid JSON.' },
  MCPG_INVALID_REQUEST: { rpc: JSONRPC.INVALID_REQUEST, summary: 'A message was JSON but not a valid JSON-RPC 2.0 message.' },
  MCPG_METHOD_NOT_FOUND: { rpc: JSONRPC.METHOD_NOT_FOUND, summary: 'The agent called a method the gateway does not serve.' },
  MCPG_INVALID_PARAMS: { rpc: JSONRPC.INVALID_PARAMS, summary: "A request's params were missing or malformed." },
  MCPG_TOOL_NOT_FOUND: { rpc: JSONRPC.INVALID_PARAMS, summary: 'No tool of that name is in the catalog.' },
  MCPG_ARGUMENTS_INVALID: {
    rpc: JSONRPC.INVALID_PARAMS,
    summary: "The call's arguments do not have the types its tool's input schema declares; checked before an approval rule reads them.",
  },
  MCPG_PROMPT_NOT_FOUND: { rpc: JSONRPC.INVALID_PARAMS, summary: 'No prompt of that name is in the catalog.' },
  MCPG_RESOURCE_NOT_FOUND: { rpc: JSONRPC.RESOURCE_NOT_FOUND, summary: 'The URI does not belong to any server in the catalog.' },
  MCPG_MESSAGE_TOO_LARGE: { rpc: JSONRPC.INVALID_REQUEST, summary: 'A message exceeded the size limit and was discarded.' },
  MCPG_MESSAGE_TOO_DEEP: {
    rpc: JSONRPC.INVALID_REQUEST,
    summary: 'A message nested objects or arrays deeper than the limit and was not processed.',
  },
  MCPG_CAPABILITY_UNSUPPORTED: {
    rpc: JSONRPC.METHOD_NOT_FOUND,
    summary: 'The other side did not declare the capability this request needs.',
  },
  MCPG_SHUTTING_DOWN: { rpc: -31010, summary: 'The gateway is shutting down and takes no new requests.' },
  MCPG_SERVER_UNAVAILABLE: {
    rpc: -31011,
    summary: 'The server that owns the tool is not connected (failed to start, exited, or is restarting).',
  },
  MCPG_SERVER_TIMEOUT: { rpc: -31012, summary: 'The server did not answer within its timeout; the request was cancelled on the server.' },
  MCPG_SERVER_BAD_RESPONSE: { rpc: -31013, summary: 'The server sent something that is not a valid MCP message or result.' },
  MCPG_SERVER_START_FAILED: { rpc: -31014, summary: 'The server could not be started or did not complete initialization.' },
  MCPG_SANDBOX_UNAVAILABLE: {
    rpc: -31050,
    summary: 'A sandboxed server was not started: this system has no sandbox mechanism (Linux with bubblewrap).',
  },
  MCPG_AGENT_UNAVAILABLE: {
    rpc: -31015,
    summary: 'A server asked the agent something (sampling, elicitation, roots) but no agent could answer.',
  },
  MCPG_OVERLOADED: { rpc: -31016, summary: 'The agent has too many requests in flight; new ones are refused until some finish.' },
  MCPG_POLICY_DENIED: {
    rpc: -31018,
    summary: "The agent's rules do not allow this tool, resource or prompt (the same answer whether it exists or not).",
  },
  MCPG_TOOL_HELD: {
    rpc: -31017,
    summary: "The tool's definition is new or changed and not approved yet (pins); the message gives the command that approves it.",
  },
  MCPG_PIN_STORE_INVALID: {
    rpc: JSONRPC.INTERNAL_ERROR,
    summary: 'The pin store in the state directory cannot be read or is corrupt; nothing is released until it is fixed.',
  },
  MCPG_NOT_HELD: { rpc: JSONRPC.INVALID_PARAMS, summary: 'mcpgate approve named a tool that is not held.' },
  MCPG_APPROVAL_OUTDATED: {
    rpc: JSONRPC.INVALID_PARAMS,
    summary: 'mcpgate approve named a definition that has changed again since it was shown.',
  },
  MCPG_UNAUTHORIZED: {
    rpc: JSONRPC.INVALID_REQUEST,
    summary: 'An HTTP request carried no bearer token, or one that is unknown, expired or badly signed (HTTP 401).',
  },
  MCPG_OPERATORS_ONLY: {
    rpc: -31060,
    summary: "An agent's token asked for an operator's route (/status); it answers an admin's token (the rules' admins) (HTTP 403).",
  },
  MCPG_CALL_DENIED: {
    rpc: -31075,
    summary:
      "A call the rules say needs a person's approval was denied by an admin (console or mcpgate approve-call); the message gives who and why. The server was not called.",
  },
  MCPG_APPROVAL_EXPIRED: {
    rpc: -31076,
    summary:
      "A call the rules say needs a person's approval was not approved in time (or its approval could not be waited for); the server was not called.",
  },
  MCPG_GUARD_BLOCKED: {
    rpc: -31070,
    summary:
      "The built-in guards found a secret (or data the rules guard) in a call's arguments, or something the rules block in a server's answer; the call was not sent, or the answer not passed on. `data.found` names the detectors, never the value.",
  },
  MCPG_INTERCEPTOR_DENIED: {
    rpc: -31110,
    summary:
      "An interceptor (an interceptor server's validator in active mode) judged a call's request or its server's answer invalid with severity error; the call was not sent, or the answer not passed on. `data.interceptor` names it, `data.messages` says why.",
  },
  MCPG_INTERCEPTOR_FAILED: {
    rpc: -31111,
    summary:
      'An interceptor that is not fail-open crashed, timed out, answered something other than a result of its type, or its server was unavailable; the call was not sent, or the answer not passed on (fail-closed).',
  },
  MCPG_SKILL_HELD: {
    rpc: -31080,
    summary:
      "The skill is new or changed (its frontmatter or a file's digest) and not approved yet (pins), or it was never reviewed; the message gives the command that approves it.",
  },
  MCPG_SKILL_MISMATCH: {
    rpc: -31081,
    summary:
      "A skill file's bytes from its server do not match the size and digest of its skill's entry (the approved one, or with pins off the listed one), a SKILL.md's frontmatter differs from the entry's, or the file is not in the approved manifest; mcpgate did not relay them, nor any file of a skill that failed so until its entry changes.",
  },
  MCPG_ORIGIN_FORBIDDEN: {
    rpc: JSONRPC.INVALID_REQUEST,
    summary: 'An HTTP request came with an Origin that is not on the allowed list (HTTP 403, DNS-rebinding protection).',
  },
  MCPG_HOST_FORBIDDEN: {
    rpc: JSONRPC.INVALID_REQUEST,
    summary: 'An HTTP request named a Host that is not this machine or an allowed name (HTTP 403, DNS-rebinding protection).',
  },
  MCPG_AGENT_TOO_SLOW: {
    rpc: -31020,
    summary: 'An agent stopped reading what mcpgate sent it; past the buffer limit its stream, session or (stdio) the gateway was ended.',
  },
  MCPG_SESSION_NOT_FOUND: {
    rpc: JSONRPC.INVALID_REQUEST,
    summary: 'The Mcp-Session-Id is unknown, expired or ended; start a new session with initialize (HTTP 404).',
  },
  MCPG_EVENT_ID_UNKNOWN: {
    rpc: -31041,
    summary:
      'A GET with Last-Event-ID named an event this session cannot resume from: unknown, of another session, or past the replay buffer (HTTP 400).',
  },
  MCPG_FORWARD_REFUSED: {
    rpc: -31021,
    summary:
      'A request claiming to be forwarded by another worker of the cluster was not signed with the cluster secret, or too long ago (HTTP 403).',
  },
  MCPG_SESSION_LIMIT: {
    rpc: -31019,
    summary:
      'The limit on sessions (per agent or in total) is reached; end or let idle sessions expire (HTTP 429 per agent, 503 in total).',
  },
  MCPG_SERVER_NEEDS_LOGIN: {
    rpc: -31033,
    summary: 'A remote server wants an OAuth access token mcpgate does not have and cannot refresh; run `mcpgate login SERVER`.',
  },
  MCPG_SERVER_AUTH_REFUSED: {
    rpc: -31034,
    summary:
      "A remote server's authorization server refused mcpgate's credentials, or named an authorization server they are not for; the server is parked until the credentials change or its next scheduled try.",
  },
  MCPG_REQUEST_STATE_INVALID: {
    rpc: -31031,
    summary: "A modern agent's retry carried a requestState mcpgate did not issue to it, or one altered, expired or already used.",
  },
  MCPG_RATE_LIMITED: {
    rpc: -31023,
    summary:
      "A tool call was over a limit of the rules' `limits` (calls per window, or calls in flight); `data.retryAfterMs` says when to try again (HTTP 429 with Retry-After).",
  },
  MCPG_POOL_EXHAUSTED: {
    rpc: -31030,
    summary: "A per-agent or per-session server's pool is at its cap and every connection in it is busy; try again when one is idle.",
  },
  MCPG_INPUT_ROUNDS_EXCEEDED: {
    rpc: -31047,
    summary: "A modern server kept answering a call with input-required results past mcpgate's limit of rounds; the call was ended.",
  },
  MCPG_INPUT_FAILED: {
    rpc: -31048,
    summary:
      "A modern server's input request (sampling, elicitation, roots) could not be answered by the agent, so the call could not be retried.",
  },
  MCPG_URL_ELICITATION_REQUIRED: {
    rpc: -31042,
    summary:
      "A 2025 server answered a 2026-07-28 agent's request with URL elicitation required (-32042, which that revision forbids), and the agent does not take URL-mode elicitation or declined it; the server's data (the URLs to open) is kept: open them, then retry.",
  },
  MCPG_CODE_SYNTAX: {
    rpc: -31061,
    summary: "A code-mode program did not parse; the message gives the line and column in the agent's code.",
  },
  MCPG_CODE_ERROR: {
    rpc: -31062,
    summary:
      "A code-mode program threw and did not catch it; the message, line and column are the agent's code's, with the inner calls already made.",
  },
  MCPG_CODE_TIMEOUT: {
    rpc: -31063,
    summary: 'A code-mode program ran past its wall-time limit (waits on a person excluded) and was stopped.',
  },
  MCPG_CODE_MEMORY: {
    rpc: -31064,
    summary: "A code-mode program used more than its memory limit (or its engine's stack) and was stopped.",
  },
  MCPG_CODE_TOO_MANY_CALLS: { rpc: -31065, summary: 'A code-mode program started more inner calls than its limit and was stopped.' },
  MCPG_CODE_TOO_LARGE: {
    rpc: -31066,
    summary: "A code-mode program's source, or an inner result to be delivered into it, was larger than its limit; the run was stopped.",
  },
  MCPG_CODE_CANCELLED: { rpc: -31067, summary: 'A code-mode run was cancelled; its in-flight inner calls were cancelled too.' },
  MCPG_CODE_BUSY: { rpc: -31068, summary: 'An agent session already has as many code-mode runs going as its limit allows.' },
  MCPG_CODE_TOOL_FORBIDDEN: {
    rpc: -31069,
    summary: "A program called a tool that may not be called from code (not read-only, and not named by the rules' code.allow).",
  },
  MCPG_CODE_QUEUE_FULL: {
    rpc: -31109,
    summary: 'Every code-mode sandbox worker was busy and the queue of runs waiting for one was full; the run did not start.',
  },
  MCPG_CONFIG_INVALID: { rpc: JSONRPC.INVALID_PARAMS, summary: 'A configuration file could not be read, parsed or validated.' },
  MCPG_USAGE: { rpc: JSONRPC.INVALID_PARAMS, summary: 'The command line was not understood.' },
  MCPG_INTERNAL: { rpc: JSONRPC.INTERNAL_ERROR, summary: 'A bug in mcpgate; the message says where.' },
} as const satisfies Record<string, { rpc: number; summary: string }>;

type ErrorCode = keyof typeof ERROR_CODES;

interface GatewayErrorOptions {
  /** The configured name of the server to blame, when one is. */
  server?: string;
  /** Extra machine-readable detail for `error.data` (must be JSON-serialisable). */
  detail?: Record<string, unknown>;
  cause?: unknown;
}

/** A failure with a stable code. `toJsonRpc()` is the only way it reaches the wire. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly server: string | undefined;
  readonly detail: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.server = options.server;
    this.detail = options.detail;
  }

  get rpcCode(): number {
    return rpcCodeOf(this.code);
  }

  /** The JSON-RPC `error` object: message, numeric code, and `data.code` (never a stack trace). */
  toJsonRpc(): JsonRpcErrorObject {
    // Detail first, so a detail key can never replace the stable code or the server to blame.
    const data: Record<string, unknown> = { ...this.detail, code: this.code };
    if (this.server !== undefined) data.server = this.server;
    return { code: this.rpcCode, message: this.message, data };
  }
}

/**
 * Whether a rate-limited refusal is sent with the specification draft's code (-32023) instead of
 * mcpgate's own (-31023). Off until the specification adopts the draft; the same `data` and HTTP 429
 * either way. One setting for the whole process, set once at start (`serve --draft-rate-limited-code`).
 */
let draftRateLimited = false;

export function useDraftRateLimitedCode(on: boolean): void {
  draftRateLimited = on;
}

/** The JSON-RPC code `code` is sent with now (the registry's, or the draft's for a rate-limited refusal when on). */
export function rpcCodeOf(code: ErrorCode): number {
  return code === 'MCPG_RATE_LIMITED' && draftRateLimited ? JSONRPC.DRAFT_RATE_LIMITED : ERROR_CODES[code].rpc;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Turns anything thrown into a GatewayError, keeping GatewayErrors as they are. */
export function asGatewayError(err: unknown, fallback: ErrorCode = 'MCPG_INTERNAL', server?: string): GatewayError {
  if (err instanceof GatewayError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError(fallback, message, { server, cause: err });
}
