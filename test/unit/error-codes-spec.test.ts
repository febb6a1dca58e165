// mcpgate's JSON-RPC error codes against the codes the MCP specification, its drafts and the official
// SDKs define: no mcpgate code may equal one of them unless it carries that code's own meaning, and
// none may sit in the band the 2026-07-28 revision reserves for the specification.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CODES, type ErrorCode } from '../../src/errors.js';

/** Every code defined outside mcpgate, with where it is defined and what it means there. */
const DEFINED: ReadonlyArray<{ code: number; meaning: string; source: string }> = [
  { code: -32700, meaning: 'parse error', source: 'JSON-RPC 2.0 §5.1' },
  { code: -32600, meaning: 'invalid request', source: 'JSON-RPC 2.0 §5.1' },
  { code: -32601, meaning: 'method not found', source: 'JSON-RPC 2.0 §5.1' },
  { code: -32602, meaning: 'invalid params', source: 'JSON-RPC 2.0 §5.1' },
  { code: -32603, meaning: 'internal error', source: 'JSON-RPC 2.0 §5.1' },
  {
    code: -32000,
    meaning: 'connection closed',
    source: 'TS SDK ErrorCode.ConnectionClosed; Python SDK mcp_types.jsonrpc.CONNECTION_CLOSED',
  },
  { code: -32001, meaning: 'request timeout', source: 'TS SDK ErrorCode.RequestTimeout; Python SDK mcp_types.jsonrpc.REQUEST_TIMEOUT' },
  {
    code: -32002,
    meaning: 'resource not found',
    source: 'MCP 2025-11-25 server/resources "Error Handling" (reserved, never reused, in 2026-07-28)',
  },
  { code: -32020, meaning: 'header mismatch', source: 'MCP 2026-07-28 schema HeaderMismatchError (SEP-2243, renumbered by spec PR 2907)' },
  {
    code: -32021,
    meaning: 'missing required client capability',
    source: 'MCP 2026-07-28 schema MissingRequiredClientCapabilityError (SEP-2575)',
  },
  { code: -32022, meaning: 'unsupported protocol version', source: 'MCP 2026-07-28 schema UnsupportedProtocolVersionError (SEP-2575)' },
  { code: -32023, meaning: 'rate limited', source: 'SEP-3304 draft "Standardizing Rate-Limiting Errors"' },
  { code: -32042, meaning: 'URL elicitation required', source: 'MCP 2025-11-25 client/elicitation URLElicitationRequiredError (SEP-1036)' },
  { code: -32800, meaning: 'request cancelled', source: 'Python SDK mcp.server.streamable_http.REQUEST_CANCELLED (LSP)' },
];

/** MCP 2026-07-28 basic protocol "Error Codes": only the specification assigns codes in this band. */
const RESERVED_FOR_SPEC = { from: -32099, to: -32020 };

/** The mcpgate codes that use a defined code on purpose, with that code's own meaning. */
const SAME_MEANING: Partial<Record<ErrorCode, string>> = {
  MCPG_PARSE_ERROR: 'parse error',
  MCPG_INVALID_REQUEST: 'invalid request',
  MCPG_MESSAGE_TOO_LARGE: 'invalid request',
  MCPG_MESSAGE_TOO_DEEP: 'invalid request',
  MCPG_UNAUTHORIZED: 'invalid request',
  MCPG_ORIGIN_FORBIDDEN: 'invalid request',
  MCPG_HOST_FORBIDDEN: 'invalid request',
  MCPG_SESSION_NOT_FOUND: 'invalid request',
  MCPG_METHOD_NOT_FOUND: 'method not found',
  MCPG_CAPABILITY_UNSUPPORTED: 'method not found',
  MCPG_INVALID_PARAMS: 'invalid params',
  MCPG_TOOL_NOT_FOUND: 'invalid params',
  MCPG_PROMPT_NOT_FOUND: 'invalid params',
  MCPG_NOT_HELD: 'invalid params',
  MCPG_APPROVAL_OUTDATED: 'invalid params',
  MCPG_CONFIG_INVALID: 'invalid params',
  MCPG_USAGE: 'invalid params',
  MCPG_INTERNAL: 'internal error',
  MCPG_PIN_STORE_INVALID: 'internal error',
  MCPG_RESOURCE_NOT_FOUND: 'resource not found',
  MCPG_RATE_LIMITED: 'rate limited',
};

const entries = Object.entries(ERROR_CODES) as Array<[ErrorCode, { rpc: number }]>;

void describe('the error registry against the codes the specification defines', { timeout: 5000 }, () => {
  void it('uses a defined code only with its own meaning', { timeout: 5000 }, () => {
    for (const [name, { rpc }] of entries) {
      const defined = DEFINED.find((d) => d.code === rpc);
      if (defined === undefined) continue;
      assert.equal(SAME_MEANING[name], defined.meaning, `${name} sends ${rpc}, which ${defined.source} defines as "${defined.meaning}"`);
    }
  });

  void it('sends no code from the band reserved for the specification', { timeout: 5000 }, () => {
    for (const [name, { rpc }] of entries) {
      const reserved = rpc >= RESERVED_FOR_SPEC.from && rpc <= RESERVED_FOR_SPEC.to;
      assert.ok(
        !reserved || DEFINED.some((d) => d.code === rpc && SAME_MEANING[name] === d.meaning),
        `${name} sends ${rpc}, in -32099…-32020 that MCP 2026-07-28 reserves for the specification`,
      );
    }
  });

  void it("gives each of mcpgate's own codes one meaning", { timeout: 5000 }, () => {
    const own = entries.filter(([name]) => SAME_MEANING[name] === undefined);
    const byCode = new Map<number, ErrorCode[]>();
    for (const [name, { rpc }] of own) byCode.set(rpc, [...(byCode.get(rpc) ?? []), name]);
    for (const [rpc, names] of byCode) assert.equal(names.length, 1, `${names.join(', ')} share ${rpc}`);
  });

  void it('keeps its own codes where no specification assigns numbers', { timeout: 5000 }, () => {
    for (const [name, { rpc }] of entries) {
      if (SAME_MEANING[name] !== undefined) continue;
      const implementationDefined = rpc >= -32019 && rpc <= -32003;
      const application = rpc > -32000 || rpc < -32768;
      assert.ok(implementationDefined || application, `${name} sends ${rpc}: use -32019…-32003 or a code outside -32768…-32000`);
    }
  });
});
