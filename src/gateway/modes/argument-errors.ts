// An error about a call's arguments that tells the agent how to call the tool: when mcpgate refuses
// the arguments (MCPG_ARGUMENTS_INVALID, the gate's check against the input schema) or the server
// answers a tools/call with -32602 (invalid params), the error names the tool and carries its
// compact signature (tool-declarations.ts) in the message and in `data` — `data.tool`, and
// `data.signature`: `name(param: type, optional?: type)` — so the agent can fix the call at once,
// without another search or describe step. The server's own message and data are kept.

import { GatewayError, JSONRPC } from '../../errors.js';
import { compactSignature } from './tool-declarations.js';

/** `name(param: type, optional?: type)`: the tool's call as a search hit shows it. */
function signatureLine(name: string, inputSchema: unknown): string {
  return `${name}${compactSignature(inputSchema).text}`;
}

/** The message with the signature added, saying how the tool is called. */
function signedMessage(message: string, signature: string): string {
  return `${message} — the tool takes ${signature}`;
}

/**
 * A server's error answer to a tools/call, edited in place when it is -32602: the tool's name and
 * signature added to its message and data. True when it changed (the answer is then encoded again).
 */
export function signServerError(error: { code?: unknown; message?: unknown; data?: unknown }, name: string, inputSchema: unknown): boolean {
  if (error.code !== JSONRPC.INVALID_PARAMS) return false;
  const signature = signatureLine(name, inputSchema);
  error.message = signedMessage(typeof error.message === 'string' ? error.message : 'invalid params', signature);
  const data = error.data;
  // The server's own data is kept: an object's keys beside ours, anything else under `serverData`.
  error.data =
    typeof data === 'object' && data !== null && !Array.isArray(data)
      ? { ...(data as Record<string, unknown>), tool: name, signature }
      : { tool: name, signature, ...(data !== undefined && { serverData: data }) };
  return true;
}

/** mcpgate's own refusal of a call's arguments (MCPG_ARGUMENTS_INVALID), with the tool's signature added; other errors as they are. */
export function signArgumentsError(err: GatewayError, name: string, inputSchema: unknown): GatewayError {
  if (err.code !== 'MCPG_ARGUMENTS_INVALID' || err.detail?.signature !== undefined) return err;
  const signature = signatureLine(name, inputSchema);
  return new GatewayError(err.code, signedMessage(err.message, signature), {
    server: err.server,
    detail: { ...err.detail, tool: name, signature },
    cause: err,
  });
}
