// Newline-delimited message framing for stdio (MCP's stdio transport: one JSON-RPC message per line).
// Bounded: a line longer than `maxLineLength` is discarded up to its newline and reported once, so a
// peer that never sends a newline cannot grow our memory without limit.

import type { Readable } from 'node:stream';

export const DEFAULT_MAX_LINE_LENGTH = 64 * 1024 * 1024;

export interface LineReaderHandlers {
  line(line: string): void;
  /** A line exceeded the limit; `length` is how much of it had arrived when it was dropped. */
  overflow?(length: number): void;
  end?(): void;
}

/** Reads `stream` as UTF-8 lines (CRLF tolerated) and calls `handlers.line` for each non-empty line. */
export function readLines(stream: Readable, handlers: LineReaderHandlers, maxLineLength = DEFAULT_MAX_LINE_LENGTH): () => void {
  stream.setEncoding('utf8');
  let pending = '';
  let discarding = false;

  const emit = (line: string): void => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.length > 0) handlers.line(text);
  };

  const onData = (chunk: string): void => {
    let start = 0;
    let nl = chunk.indexOf('\n');
    while (nl !== -1) {
      if (discarding) {
        discarding = false;
      } else if (pending.length > 0) {
        const line = pending + chunk.slice(start, nl);
        pending = '';
        if (line.length > maxLineLength) handlers.overflow?.(line.length);
        else emit(line);
      } else if (nl - start > maxLineLength) {
        handlers.overflow?.(nl - start);
      } else {
        emit(chunk.slice(start, nl));
      }
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    if (start < chunk.length && !discarding) {
      pending += start === 0 ? chunk : chunk.slice(start);
      if (pending.length > maxLineLength) {
        handlers.overflow?.(pending.length);
        pending = '';
        discarding = true;
      }
    }
  };
  const onEnd = (): void => {
    if (pending.length > 0 && !discarding) emit(pending);
    pending = '';
    handlers.end?.();
  };

  stream.on('data', onData);
  stream.once('end', onEnd);
  return () => {
    stream.off('data', onData);
    stream.off('end', onEnd);
  };
}
