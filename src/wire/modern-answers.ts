// What a 2026-07-28 agent must not be sent, rewritten at the edge where its answer is written (the
// HTTP front's modern POST and the stdio front's modern requests). That revision ("Error Codes",
// basic protocol) forbids two codes of earlier revisions: -32002 (resource not found, now -32602)
// and -32042 (URL elicitation required, replaced by an input request of the multi round-trip
// pattern). Both can reach a modern agent from a 2025 server (its error passed on unchanged) and
// -32002 from mcpgate itself (MCPG_RESOURCE_NOT_FOUND, which legacy agents still get as -32002).
// A -32042 that reaches here (the agent takes no URL-mode elicitation, or declined it: otherwise
// gateway/modern asks it as an input request and sends the call again) becomes mcpgate's own
// MCPG_URL_ELICITATION_REQUIRED with the server's data kept (the URLs to open). The message and the
// rest of the data are kept.

import { JSONRPC, rpcCodeOf } from '../errors.js';

/** Codes of earlier revisions that a 2026-07-28 agent must not get. */
const FORBIDDEN_TO_MODERN = { RESOURCE_NOT_FOUND: -32002, URL_ELICITATION_REQUIRED: -32042 } as const;

/** `line` (one JSON-RPC message for a modern agent) with a forbidden error code replaced; the same string otherwise. */
export function forModernAgent(line: string): string {
  // A substring test keeps every ordinary answer free of a parse.
  if (!line.includes('"error"') || !(line.includes('-32002') || line.includes('-32042'))) return line;
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return line;
  }
  if (!isObject(msg) || !isObject(msg.error)) return line;
  const error = msg.error;
  if (error.code === FORBIDDEN_TO_MODERN.RESOURCE_NOT_FOUND) {
    error.code = JSONRPC.INVALID_PARAMS;
  } else if (error.code === FORBIDDEN_TO_MODERN.URL_ELICITATION_REQUIRED) {
    error.code = rpcCodeOf('MCPG_URL_ELICITATION_REQUIRED');
    const data = error.data;
    error.data = { ...(isObject(data) ? data : data === undefined ? {} : { serverData: data }), code: 'MCPG_URL_ELICITATION_REQUIRED' };
  } else {
    return line;
  }
  return JSON.stringify(msg);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
