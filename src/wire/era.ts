// The stateless 2026-07-28 revision on the agent side: which era a message belongs to (per request,
// body first, as the spec's compatibility section says), its `_meta` envelope, the Streamable HTTP
// standard headers checked against the body (SEP-2243), and the small edits that turn a 2025-era
// result line into a 2026-era one. Pure: no I/O, no state.

import type { RequestId } from './jsonrpc.js';

/** The modern revisions mcpgate serves to agents. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
export const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

/** The spec's error codes of the modern revision. */
export const HEADER_MISMATCH = -32020;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

/** Whether a revision belongs to the modern (2026-07-28 and later) era: they sort after every 2025 one. */
export function isModernVersion(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= '2026-07-28';
}

/** Whether a revision is of the session era: a date before 2026-07-28 (2024-11-05, 2025-03-26, …). */
function isLegacyRevision(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version < '2026-07-28';
}

/** The per-request envelope of a modern request, once checked. */
export interface Envelope {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  logLevel?: string;
  /**
   * The agent's `Mcp-Param-*` headers (SEP-2243: tool parameters mirrored in headers), set by the HTTP
   * front: sent on unchanged to a modern HTTP server with this request.
   */
  paramHeaders?: Readonly<Record<string, string>>;
}

/** A message's era, or why it is refused (with the HTTP status the spec gives it). */
export type EraOf =
  | { era: 'legacy' }
  | { era: 'modern'; envelope: Envelope | undefined }
  | { era: 'refused'; status: number; code: number; message: string; data?: unknown };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `_meta` of a message's params, if it is an object. */
function metaOf(params: unknown): Record<string, unknown> | undefined {
  if (!isObject(params)) return undefined;
  const meta = params._meta;
  return isObject(meta) ? meta : undefined;
}

/** Whether `line` may be a modern message (a cheap test before parsing on a legacy hot path). */
export function mayBeModern(line: string): boolean {
  return line.includes(PROTOCOL_VERSION_KEY);
}

/**
 * The era of one JSON-RPC request or notification (a response always belongs to the legacy era).
 * A request is modern when it carries the envelope claim (`_meta[protocolVersion]`); `initialize`
 * without a valid modern claim stays the legacy handshake. A claim must be well formed and name a
 * revision mcpgate serves.
 */
export function eraOf(method: string, params: unknown, isRequest: boolean): EraOf {
  const meta = metaOf(params);
  if (meta === undefined || !(PROTOCOL_VERSION_KEY in meta)) return { era: 'legacy' };
  const version = meta[PROTOCOL_VERSION_KEY];
  if (typeof version !== 'string') return invalidEnvelope(`${PROTOCOL_VERSION_KEY}: expected a protocol version string`);
  if (!isModernVersion(version) && isLegacyRevision(version)) {
    // A 2025 revision named in the envelope: the legacy era (its sessions decide the rest). Any other
    // claim (a later revision, or one not in date form) is a modern client's: refused below, with
    // the versions mcpgate serves.
    return { era: 'legacy' };
  }
  if (method === 'initialize' && !isObject(meta[CLIENT_CAPABILITIES_KEY])) return { era: 'legacy' };
  if (!isRequest) return { era: 'modern', envelope: undefined };
  const capabilities = meta[CLIENT_CAPABILITIES_KEY];
  if (!isObject(capabilities))
    return invalidEnvelope(`${CLIENT_CAPABILITIES_KEY}: ${capabilities === undefined ? 'missing' : 'expected an object'}`);
  const logLevel = meta[LOG_LEVEL_KEY];
  if (logLevel !== undefined && typeof logLevel !== 'string') return invalidEnvelope(`${LOG_LEVEL_KEY}: expected a string`);
  if (!MODERN_PROTOCOL_VERSIONS.includes(version)) {
    return {
      era: 'refused',
      status: 400,
      code: UNSUPPORTED_PROTOCOL_VERSION,
      message: `Unsupported protocol version: ${version}`,
      data: { supported: [...MODERN_PROTOCOL_VERSIONS], requested: version },
    };
  }
  return { era: 'modern', envelope: { protocolVersion: version, capabilities, ...(logLevel !== undefined && { logLevel }) } };
}

function invalidEnvelope(problem: string): EraOf {
  return { era: 'refused', status: 400, code: -32602, message: `Invalid _meta envelope for protocol revision 2026-07-28: ${problem}` };
}

/** The body field the `Mcp-Name` header mirrors, per method (SEP-2243). */
const NAME_FIELD: Readonly<Record<string, string | undefined>> = Object.assign(Object.create(null) as Record<string, string>, {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
});

interface StandardHeaders {
  protocolVersion: string | undefined;
  method: string | undefined;
  name: string | undefined;
}

/**
 * The standard request headers of a modern POST checked against its body: `MCP-Protocol-Version`
 * and `Mcp-Method` are required on every request and must match; `Mcp-Name` is required where the
 * body has the field it mirrors and must match it (a `=?base64?…?=` value is decoded first). Legacy
 * requests are never checked here. Undefined when they agree; otherwise the -32020 refusal.
 */
export function checkHeaders(
  headers: StandardHeaders,
  method: string,
  params: unknown,
  envelope: Envelope | undefined,
  isRequest: boolean,
): EraOf | undefined {
  const version = headers.protocolVersion?.trim();
  const claimed = envelope?.protocolVersion ?? (metaOf(params)?.[PROTOCOL_VERSION_KEY] as string | undefined);
  if (version !== undefined && claimed !== undefined && version !== claimed) {
    return mismatch(version, `the body envelope names protocol version ${claimed} but the MCP-Protocol-Version header names ${version}`);
  }
  const methodHeader = headers.method?.trim();
  if (methodHeader !== undefined && methodHeader !== method)
    return mismatch(methodHeader, `the body names method ${method} but the Mcp-Method header names ${methodHeader}`);
  if (!isRequest) return undefined;
  if (version === undefined)
    return mismatch(
      '(missing)',
      `the body envelope names protocol version ${claimed ?? '?'} but the required MCP-Protocol-Version header is absent`,
    );
  if (methodHeader === undefined)
    return mismatch('(missing)', `the body names method ${method} but the required Mcp-Method header is absent`);
  const field = NAME_FIELD[method];
  if (field === undefined) return undefined;
  const value = isObject(params) && typeof params[field] === 'string' ? params[field] : undefined;
  const nameHeader = headers.name?.trim();
  if (nameHeader === undefined) {
    return value === undefined
      ? undefined
      : mismatch('(missing)', `the body carries params.${field}="${value}" but the required Mcp-Name header is absent`);
  }
  const decoded = decodeHeaderValue(nameHeader);
  if (decoded === undefined) return mismatch(nameHeader, 'the Mcp-Name header carries an invalid Base64 sentinel value');
  if (value !== undefined && decoded !== value)
    return mismatch(nameHeader, `the body carries params.${field}="${value}" but the Mcp-Name header names "${decoded}"`);
  return undefined;
}

function mismatch(header: string, body: string): EraOf {
  return {
    era: 'refused',
    status: 400,
    code: HEADER_MISMATCH,
    message: `Bad Request: the request headers and body disagree: ${body}`,
    data: { mismatch: { header, body } },
  };
}

/** A header value, decoding the `=?base64?…?=` sentinel used for values that are not plain ASCII. */
function decodeHeaderValue(value: string): string | undefined {
  const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (m === null) return value.startsWith('=?base64?') ? undefined : value;
  const bytes = Buffer.from(m[1]!, 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

/** `Mcp-Param-*` headers one request may carry on to a server. */
const MAX_PARAM_HEADERS = 32;

/** The `Mcp-Param-*` headers of a request (lower-case names), undefined when none, or why they are refused. */
export function paramHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string> | undefined | string {
  let found: Record<string, string> | undefined;
  let count = 0;
  for (const [name, value] of Object.entries(headers)) {
    // node:http joins a repeated header of this kind into one value, as HTTP defines it: sent on as such.
    if (!name.startsWith('mcp-param-') || typeof value !== 'string') continue;
    if (++count > MAX_PARAM_HEADERS) return `more than ${MAX_PARAM_HEADERS} Mcp-Param-* headers`;
    (found ??= {})[name] = value;
  }
  return found;
}

/** Removes the envelope's reserved keys from a request's `_meta` (what a 2025-era server gets). */
export function stripEnvelope(params: Record<string, unknown> | undefined): void {
  const meta = metaOf(params);
  if (meta === undefined) return;
  for (const key of Object.keys(meta))
    if (key.startsWith('io.modelcontextprotocol/') && key !== 'io.modelcontextprotocol/related-task') delete meta[key];
  if (Object.keys(meta).length === 0) delete params!._meta;
}

/**
 * A 2025-era response line made a 2026-era one: `resultType: "complete"` (every modern result
 * carries it) and `extra` members (cache hints) put at the start of `result`. A line whose result
 * starts where mcpgate and the SDKs put it is edited as text; any other is parsed and re-encoded.
 * Error responses are returned unchanged.
 */
export function completeResult(line: string, id: RequestId, extra: Record<string, unknown> = {}): string {
  let members = '"resultType":"complete"';
  for (const [key, value] of Object.entries(extra)) members += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  for (const prefix of [`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{`, '{"result":{']) {
    if (!line.startsWith(prefix)) continue;
    const rest = line.slice(prefix.length);
    if (/"resultType"\s*:/.test(rest)) break; // the result names its own type: parse to decide
    return `${prefix}${members}${rest.startsWith('}') ? '' : ','}${rest}`;
  }
  const parsed = JSON.parse(line) as { result?: unknown };
  if (!isObject(parsed.result)) return line;
  parsed.result = { resultType: 'complete', ...extra, ...parsed.result };
  return JSON.stringify(parsed);
}

/** MCPGATE_REQUEST_STATE_KEY: 32 bytes as 64 hex digits or base64; undefined when unset; throws when malformed. */
export function parseRequestStateKey(text: string | undefined): Buffer | undefined {
  if (text === undefined || text === '') return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new RangeError('MCPGATE_REQUEST_STATE_KEY must be 32 bytes: 64 hex digits or base64 (openssl rand -hex 32)');
  return key;
}
