// JSON-RPC 2.0 message shapes and the few encoders the hot path needs. Messages are parsed once with
// JSON.parse and classified by shape; nothing here re-validates a result's content. One bound applies
// to every message in both directions as it is parsed: its nesting depth. JSON.parse itself copes with
// any depth, but JSON.stringify and every recursive walk after it do not (a 20,000-deep array throws
// RangeError from inside whatever handler re-encodes it), so nothing deeper than the limit gets in.
// Over stdio the messages are framed one per line (below), as MCP's stdio transport says.

import type { Readable } from 'node:stream';
import { GatewayError, type JsonRpcErrorObject } from '../errors.js';

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}
interface JsonRpcResult {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}
interface JsonRpcError {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: JsonRpcErrorObject;
}
export type JsonRpcResponse = JsonRpcResult | JsonRpcError;

export type Classified =
  | { kind: 'request'; msg: JsonRpcRequest }
  | { kind: 'notification'; msg: JsonRpcNotification }
  | { kind: 'response'; msg: JsonRpcResponse }
  | { kind: 'invalid'; error: GatewayError; id: RequestId | null };

/** The default nesting limit: far above any real MCP message, far below what overflows the stack. */
const DEFAULT_MAX_DEPTH = 128;

/**
 * The nesting limit for every message parsed from now on (`--max-depth`). One setting for the whole
 * process, made once at start by the command line, because both directions and every transport share
 * the parser.
 */
export const wireLimits = { maxDepth: DEFAULT_MAX_DEPTH };

/**
 * True when `value` nests objects or arrays deeper than `max` levels (a bare object is one level).
 * Walks only the structure, never a string's characters, and stops as soon as the limit is passed,
 * so its own recursion is bounded by `max`.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null && nestedDeeperThan(item, max - 1)) return true;
    }
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item === 'object' && item !== null && nestedDeeperThan(item, max - 1)) return true;
  }
  return false;
}

function isId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses one line and sorts it into request / notification / response, or says why it is invalid. */
export function parseMessage(line: string): Classified {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { kind: 'invalid', id: null, error: new GatewayError('MCPG_PARSE_ERROR', `parse error: ${(err as Error).message}`) };
  }
  // A text of n characters nests at most n/2 levels: short messages (most of them) skip the walk.
  return classify(value, line.length > 2 * wireLimits.maxDepth);
}

/**
 * Sorts a parsed value into request / notification / response, or says why it is invalid.
 * `checkDepth` false skips the nesting check, for a caller that knows the text was too short to nest
 * past the limit.
 */
export function classify(value: unknown, checkDepth = true): Classified {
  if (checkDepth && nestedDeeperThan(value, wireLimits.maxDepth)) {
    const id = isObject(value) && isId(value.id) ? value.id : null;
    return {
      kind: 'invalid',
      id,
      error: new GatewayError(
        'MCPG_MESSAGE_TOO_DEEP',
        `message nests deeper than ${wireLimits.maxDepth} levels (the limit is --max-depth); it was not processed`,
        { detail: { maxDepth: wireLimits.maxDepth } },
      ),
    };
  }
  if (!isObject(value)) {
    const what = Array.isArray(value)
      ? 'a batch (JSON array); MCP 2025-11-25 does not allow batches'
      : `a ${value === null ? 'null' : typeof value}`;
    return invalid(null, `invalid request: expected a JSON-RPC message object, got ${what}`);
  }
  const id = isId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0') return invalid(id, 'invalid request: "jsonrpc" must be "2.0"');
  if (value.params !== undefined && !isObject(value.params)) return invalid(id, 'invalid request: "params" must be an object');
  if (typeof value.method === 'string') {
    if (value.id === undefined) return { kind: 'notification', msg: value as unknown as JsonRpcNotification };
    if (!isId(value.id)) return invalid(null, 'invalid request: "id" must be a string or a number');
    return { kind: 'request', msg: value as unknown as JsonRpcRequest };
  }
  if (value.method !== undefined) return invalid(id, 'invalid request: "method" must be a string');
  if ('result' in value) {
    if ('error' in value)
      return invalid(isId(value.id) ? value.id : null, 'invalid response: a response carries "result" or "error", not both');
    if (!isId(value.id)) return invalid(null, 'invalid response: "id" must be a string or a number');
    if (!isObject(value.result)) return invalid(value.id, 'invalid response: "result" must be an object');
    return { kind: 'response', msg: value as unknown as JsonRpcResult };
  }
  if ('error' in value) {
    const err = value.error;
    if (!isObject(err) || typeof err.code !== 'number' || typeof err.message !== 'string') {
      return invalid(id, 'invalid response: "error" must have a numeric code and a string message');
    }
    return { kind: 'response', msg: value as unknown as JsonRpcError };
  }
  return invalid(id, 'invalid request: a message needs a "method", a "result" or an "error"');
}

function invalid(id: RequestId | null, message: string): Classified {
  return { kind: 'invalid', id, error: new GatewayError('MCPG_INVALID_REQUEST', message) };
}

export function encodeResult(id: RequestId, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`;
}

export function encodeError(id: RequestId | null, error: JsonRpcErrorObject): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify(error)}}`;
}

export function encodeNotification(method: string, params?: unknown): string {
  return params === undefined
    ? `{"jsonrpc":"2.0","method":${JSON.stringify(method)}}`
    : `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

export function encodeRequest(id: RequestId, method: string, params?: unknown): string {
  return params === undefined
    ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)}}`
    : `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

/**
 * Re-addresses a response line to `newId` without re-encoding its result. We choose the numeric ids
 * we send to servers, so `oldId` is a number we know; serializers put a top-level id either last
 * (`…,"id":7}`, the TypeScript SDK) or right after `jsonrpc` / first (Python SDK, most others). A
 * suffix or prefix match on a line that already parsed as an object with that id can only be the
 * top-level member: anything nested would end in `}}`/`]}` or sit inside a string after a backslash.
 * Returns undefined when neither form matches; the caller then re-encodes.
 */
export function spliceResponseId(line: string, oldId: number, newId: RequestId): string | undefined {
  const idText = String(oldId);
  const suffix = `,"id":${idText}}`;
  const newText = JSON.stringify(newId);
  if (line.endsWith(suffix)) return `${line.slice(0, line.length - suffix.length)},"id":${newText}}`;
  const prefixA = `{"jsonrpc":"2.0","id":${idText},`;
  if (line.startsWith(prefixA) && !mayRepeatId(line, prefixA.length))
    return `{"jsonrpc":"2.0","id":${newText},${line.slice(prefixA.length)}`;
  const prefixB = `{"id":${idText},`;
  if (line.startsWith(prefixB) && !mayRepeatId(line, prefixB.length)) return `{"id":${newText},${line.slice(prefixB.length)}`;
  return undefined;
}

/**
 * Whether a later top-level member is another "id" (JSON.parse keeps the last duplicate, so replacing
 * the first would leave the server's id in force). `from` is just past the prefix's comma. One pass
 * that skips strings and tracks depth; nested "id" keys do not count. The line already parsed, so it
 * is well-formed.
 */
function mayRepeatId(line: string, from: number): boolean {
  // Native substring search first: most results never contain an unescaped "id", so the hot path
  // (Python-style servers put the id first) pays for the character scan only when one is present.
  // (`\u00` covers a key spelled with escapes, such as "\u0069d".)
  if (line.indexOf('"id"', from) === -1 && line.indexOf('\\u00', from) === -1) return false;
  let depth = 0;
  let expectKey = true;
  for (let i = from; i < line.length; i++) {
    const ch = line.charCodeAt(i);
    if (ch === 0x22) {
      // "
      const start = i;
      let escaped = false;
      for (i++; i < line.length && line.charCodeAt(i) !== 0x22; i++) {
        if (line.charCodeAt(i) === 0x5c) {
          // backslash
          escaped = true;
          i++;
        }
      }
      if (depth === 0 && expectKey) {
        const key = line.slice(start, i + 1);
        if (key === '"id"' || (escaped && JSON.parse(key) === 'id')) return true;
        expectKey = false;
      }
    } else if (ch === 0x7b || ch === 0x5b)
      depth++; // { [
    else if (ch === 0x7d || ch === 0x5d)
      depth--; // } ]
    else if (ch === 0x2c && depth === 0) expectKey = true; // ,
  }
  return false;
}

// ── newline-delimited framing (stdio) ───────────────────────────────────────────────────────────────
// Newline-delimited message framing for stdio (MCP's stdio transport: one JSON-RPC message per line).
// Works on raw bytes and decodes each complete line once (a 0x0A byte never occurs inside a UTF-8
// sequence, so a character split across chunks is whole by the time its line is). Bounded: a line
// longer than `maxLineLength` bytes is discarded up to its newline and reported once, so a peer that
// never sends a newline cannot grow our memory without limit.

export const DEFAULT_MAX_LINE_LENGTH = 64 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

interface LineReaderHandlers {
  line(line: string): void;
  /** A line exceeded the limit; `length` is how many bytes of it had arrived when it was dropped. */
  overflow?(length: number): void;
  end?(): void;
}

/** Reads `stream` as UTF-8 lines (CRLF tolerated) and calls `handlers.line` for each non-empty line. */
export function readLines(stream: Readable, handlers: LineReaderHandlers, maxLineLength = DEFAULT_MAX_LINE_LENGTH): () => void {
  let parts: Buffer[] = [];
  let partLength = 0;
  let discarding = false;

  const emit = (buf: Buffer, start: number, end: number): void => {
    if (end > start && buf[end - 1] === CR) end -= 1;
    if (end > start) handlers.line(buf.toString('utf8', start, end));
  };

  const onData = (chunk: Buffer | string): void => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    let nl = buf.indexOf(LF);
    while (nl !== -1) {
      if (discarding) {
        discarding = false;
      } else if (partLength > 0) {
        const length = partLength + nl - start;
        parts.push(buf.subarray(start, nl));
        const line = Buffer.concat(parts, length);
        parts = [];
        partLength = 0;
        if (length > maxLineLength) handlers.overflow?.(length);
        else emit(line, 0, line.length);
      } else if (nl - start > maxLineLength) {
        handlers.overflow?.(nl - start);
      } else {
        emit(buf, start, nl);
      }
      start = nl + 1;
      nl = buf.indexOf(LF, start);
    }
    if (start < buf.length && !discarding) {
      parts.push(start === 0 ? buf : buf.subarray(start));
      partLength += buf.length - start;
      if (partLength > maxLineLength) {
        handlers.overflow?.(partLength);
        parts = [];
        partLength = 0;
        discarding = true;
      }
    }
  };
  const onEnd = (): void => {
    if (partLength > 0 && !discarding) {
      const line = Buffer.concat(parts, partLength);
      emit(line, 0, line.length);
    }
    parts = [];
    partLength = 0;
    handlers.end?.();
  };

  stream.on('data', onData);
  stream.once('end', onEnd);
  return () => {
    stream.off('data', onData);
    stream.off('end', onEnd);
  };
}
