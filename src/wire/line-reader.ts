// Newline-delimited message framing for stdio (MCP's stdio transport: one JSON-RPC message per line).
// Works on raw bytes and decodes each complete line once (a 0x0A byte never occurs inside a UTF-8
// sequence, so a character split across chunks is whole by the time its line is). Bounded: a line
// longer than `maxLineLength` bytes is discarded up to its newline and reported once, so a peer that
// never sends a newline cannot grow our memory without limit.

import type { Readable } from 'node:stream';

export const DEFAULT_MAX_LINE_LENGTH = 64 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

export interface LineReaderHandlers {
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
