// mcpgate's JSON-RPC error codes against the codes the MCP specification, its drafts and the official
// SDKs define: no mcpgate code may equal one of them unless it carries that code's own meaning, none
// may sit in the band the 2026-07-28 revision reserves for the specification or in the legacy band
// it tells new implementations to leave, and a 2026-07-28 agent never gets a code that revision
// forbids. The bands and the codes are read from the revision's own text ("Error Codes", basic
// protocol, kept verbatim in test/fixtures/spec/), so a change of the specification shows here.

import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rpcCodeOf, useDraftRateLimitedCode, GatewayError } from '../../../src/errors.js';
import { errorRegistry } from '../../helpers/error-registry.js';

/** A code of the registry: what a GatewayError carries. */
type ErrorCode = GatewayError['code'];
import { forModernAgent } from '../../../src/wire/modern-answers.js';

/** The revision's "Error Codes" section (dist/test/unit/codebase → test/fixtures/spec). */
const TEXT = readFileSync(
  join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'spec', '2026-07-28-error-codes.md'),
  'utf8',
);

/** `-A` to `-B` in the line that starts with `lead`. */
function band(lead: RegExp): { from: number; to: number } {
  const line = TEXT.split('\n').find((l) => lead.test(l));
  assert.ok(line !== undefined, `the revision's text has no line matching ${String(lead)}`);
  const m = /`(-\d+)` to `(-\d+)`/.exec(line);
  assert.ok(m !== null, `no range in "${line}"`);
  const [a, b] = [Number(m[1]), Number(m[2])];
  return { from: Math.min(a, b), to: Math.max(a, b) };
}

/** The band -32020…-32099 only the specification assigns codes in. */
const RESERVED_FOR_SPEC = band(/reserved for the MCP specification/);
/** The legacy band new implementations should not use (-32000…-32019). */
const LEGACY = band(/— legacy\./);
/** JSON-RPC's reserved range, outside which an implementation's new codes belong. */
const JSONRPC_RESERVED = (() => {
  const m = /outside the JSON-RPC reserved range \(`(-\d+)` to\s+`(-\d+)`\)/.exec(TEXT.replace(/\n/g, ' '));
  assert.ok(m !== null, 'the revision names the JSON-RPC reserved range');
  return { from: Number(m[1]), to: Number(m[2]) };
})();
/** The codes the revision defines, from its table: `| \`-32020\` | [\`HeaderMismatch\`](…) |`. */
const SPEC_DEFINED = [...TEXT.matchAll(/^\| `(-\d+)` \| \[`(\w+)`\]/gm)].map((m) => ({ code: Number(m[1]), name: m[2]! }));
/** The codes of earlier revisions it forbids: "Implementations of this protocol version MUST NOT emit these codes:" and its list. */
const FORBIDDEN = (() => {
  const at = TEXT.indexOf('MUST NOT** emit these codes');
  assert.ok(at >= 0, 'the revision lists the codes it forbids');
  const list = TEXT.slice(at).split('\n\n')[1] ?? '';
  return [...list.matchAll(/^- `(-\d+)` — ([^(]+?) \(/gm)].map((m) => ({ code: Number(m[1]), meaning: m[2]!.trim() }));
})();

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
  ...FORBIDDEN.map(({ code, meaning }) => ({ code, meaning, source: 'MCP 2025-11-25 (forbidden to 2026-07-28 peers, never reused)' })),
  ...SPEC_DEFINED.map(({ code, name }) => ({ code, meaning: name, source: 'MCP 2026-07-28 basic protocol "Error Codes"' })),
  { code: -32023, meaning: 'rate limited', source: 'SEP-3304 draft "Standardizing Rate-Limiting Errors"' },
  { code: -32800, meaning: 'request cancelled', source: 'Python SDK mcp.server.streamable_http.REQUEST_CANCELLED (LSP)' },
];

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
  MCPG_ARGUMENTS_INVALID: 'invalid params',
  MCPG_NOT_HELD: 'invalid params',
  MCPG_APPROVAL_OUTDATED: 'invalid params',
  MCPG_CONFIG_INVALID: 'invalid params',
  MCPG_USAGE: 'invalid params',
  MCPG_INTERNAL: 'internal error',
  MCPG_PIN_STORE_INVALID: 'internal error',
  MCPG_RESOURCE_NOT_FOUND: 'resource not found',
};

const entries = errorRegistry().map(({ code, rpc }) => [code as ErrorCode, { rpc }] as const);

void describe('the error registry against the codes the specification defines', { timeout: 5000 }, () => {
  afterEach(() => useDraftRateLimitedCode(false));

  void it("reads the revision's bands and codes from its text", { timeout: 5000 }, () => {
    assert.deepEqual(RESERVED_FOR_SPEC, { from: -32099, to: -32020 });
    assert.deepEqual(LEGACY, { from: -32019, to: -32000 });
    assert.deepEqual(JSONRPC_RESERVED, { from: -32768, to: -32000 });
    assert.ok(SPEC_DEFINED.length >= 3, JSON.stringify(SPEC_DEFINED));
    assert.deepEqual(
      FORBIDDEN.map((f) => f.code),
      [-32002, -32042],
    );
  });

  void it('uses a defined code only with its own meaning', { timeout: 5000 }, () => {
    for (const [name, { rpc }] of entries) {
      const defined = DEFINED.find((d) => d.code === rpc);
      if (defined === undefined) continue;
      assert.equal(SAME_MEANING[name], defined.meaning, `${name} sends ${rpc}, which ${defined.source} defines as "${defined.meaning}"`);
    }
  });

  void it('sends no code from the band reserved for the specification that the revision does not define', { timeout: 5000 }, () => {
    for (const [name] of entries) {
      const rpc = rpcCodeOf(name);
      const reserved = rpc >= RESERVED_FOR_SPEC.from && rpc <= RESERVED_FOR_SPEC.to;
      assert.ok(
        !reserved || SPEC_DEFINED.some((d) => d.code === rpc && SAME_MEANING[name] === d.name),
        `${name} sends ${rpc}, in ${RESERVED_FOR_SPEC.to}…${RESERVED_FOR_SPEC.from} that MCP 2026-07-28 reserves for the specification`,
      );
    }
  });

  void it("gives each of mcpgate's own codes one meaning", { timeout: 5000 }, () => {
    const own = entries.filter(([name]) => SAME_MEANING[name] === undefined);
    const byCode = new Map<number, ErrorCode[]>();
    for (const [name, { rpc }] of own) byCode.set(rpc, [...(byCode.get(rpc) ?? []), name]);
    for (const [rpc, names] of byCode) assert.equal(names.length, 1, `${names.join(', ')} share ${rpc}`);
  });

  void it("keeps its own codes outside JSON-RPC's reserved range (the legacy band included)", { timeout: 5000 }, () => {
    for (const [name, { rpc }] of entries) {
      if (SAME_MEANING[name] !== undefined) continue;
      const outside = rpc > JSONRPC_RESERVED.to || rpc < JSONRPC_RESERVED.from;
      assert.ok(outside, `${name} sends ${rpc}: use a code outside ${JSONRPC_RESERVED.to}…${JSONRPC_RESERVED.from}`);
      assert.ok(rpc > LEGACY.to || rpc < LEGACY.from, `${name} sends ${rpc}, in the legacy band`);
    }
  });

  void it("never sends a 2026-07-28 agent a code the revision forbids, its own or a server's", { timeout: 5000 }, () => {
    const replacedBy = Number(/replaced by `(-\d+)`/.exec(TEXT)![1]);
    const lines = [
      ...entries.map(([name]) => JSON.stringify({ jsonrpc: '2.0', id: 1, error: new GatewayError(name, 'm').toJsonRpc() })),
      // A 2025 server's own errors, passed on unchanged, spaced as the server wrote them.
      ...FORBIDDEN.map(
        ({ code }) => `{"jsonrpc": "2.0", "id": 7, "error": {"code": ${code}, "message": "from the server", "data": {"uri": "x://y"}}}`,
      ),
    ];
    for (const line of lines) {
      const sent = JSON.parse(forModernAgent(line)) as { error: { code: number; message: string; data: Record<string, unknown> } };
      assert.ok(!FORBIDDEN.some((f) => f.code === sent.error.code), `${line} reached a modern agent as ${sent.error.code}`);
      const before = (JSON.parse(line) as { error: { code: number; message: string } }).error;
      assert.equal(sent.error.message, before.message);
      if (before.code === FORBIDDEN[0]!.code) assert.equal(sent.error.code, replacedBy);
      if (before.code === FORBIDDEN[1]!.code) {
        assert.equal(sent.error.code, rpcCodeOf('MCPG_URL_ELICITATION_REQUIRED'));
        assert.deepEqual(sent.error.data, { uri: 'x://y', code: 'MCPG_URL_ELICITATION_REQUIRED' });
      }
    }
    const result = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\\"error\\" -32002"}]}}';
    assert.equal(forModernAgent(result), result, 'a result that only mentions the numbers is left alone');
  });

  void it("sends the draft's rate-limited code only when it is turned on, with the same data", { timeout: 5000 }, () => {
    const refusal = () =>
      new GatewayError('MCPG_RATE_LIMITED', 'over', { detail: { retryAfterMs: 1500, limit: 2, remaining: 0 } }).toJsonRpc();
    const own = refusal();
    assert.ok(own.code > JSONRPC_RESERVED.to || own.code < JSONRPC_RESERVED.from, `by default ${own.code}, outside the reserved range`);
    useDraftRateLimitedCode(true);
    const draft = refusal();
    assert.equal(draft.code, DEFINED.find((d) => d.meaning === 'rate limited')!.code);
    assert.deepEqual(draft.data, own.data);
  });
});
