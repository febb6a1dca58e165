// Server-Sent Events framing (the WHATWG "event stream interpretation"), both ways: a streaming parser
// for the remote-server transports (Streamable HTTP response and GET streams, the legacy HTTP+SSE
// stream) and the encoder the HTTP front writes with. Bytes are decoded with one streaming
// TextDecoder, so a character or a line split across chunks is whole when it is interpreted. Bounded
// like the line reader: an event whose data grows past `maxEventLength` characters is discarded up to
// its blank line and reported once. https://html.spec.whatwg.org/multipage/server-sent-events.html

import { DEFAULT_MAX_LINE_LENGTH } from './jsonrpc.js';

export interface SseEvent {
  /** The `event:` field, "message" when absent. */
  readonly event: string;
  /** The `data:` lines joined with "\n". */
  readonly data: string;
  /** The last event id seen on the stream when this event was dispatched ("" if none yet). */
  readonly lastEventId: string;
}

interface SseHandlers {
  event(event: SseEvent): void;
  /** A valid `retry:` field: the reconnection delay the server asks for, in ms. */
  retry?(ms: number): void;
  /** An event exceeded the limit and was dropped; `length` is how many characters of it had arrived. */
  overflow?(length: number): void;
}

const LF = 0x0a;
const CR = 0x0d;

export class SseParser {
  /** The stream's last event id (the `Last-Event-ID` to resume from). Set even by events not dispatched. */
  lastEventId = '';
  private readonly decoder = new TextDecoder('utf-8');
  private partial = '';
  private data = '';
  private hasData = false;
  private type = '';
  private pendingId: string | undefined;
  /** The previous chunk ended with CR: a LF starting the next one belongs to that line end. */
  private skipLF = false;
  private discarding = false;
  /** While discarding: whether the current (unstored) line has characters, so a blank line is told apart. */
  private lineHasChars = false;

  constructor(
    private readonly handlers: SseHandlers,
    private readonly maxEventLength = DEFAULT_MAX_LINE_LENGTH,
  ) {}

  /** Feeds bytes (or already decoded text). */
  push(chunk: Uint8Array | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (text.length > 0) this.feed(text);
  }

  /** The stream ended: an event without its closing blank line is discarded (as the standard says). */
  end(): void {
    const rest = this.decoder.decode();
    if (rest.length > 0) this.feed(rest);
    this.partial = '';
    this.resetEvent();
    this.discarding = false;
  }

  private feed(text: string): void {
    let start = 0;
    if (this.skipLF) {
      this.skipLF = false;
      if (text.charCodeAt(0) === LF) start = 1;
    }
    let nextLF = text.indexOf('\n', start);
    let nextCR = text.indexOf('\r', start);
    while (nextLF !== -1 || nextCR !== -1) {
      const end = nextCR === -1 ? nextLF : nextLF === -1 ? nextCR : Math.min(nextLF, nextCR);
      this.endLine(text, start, end);
      start = end + 1;
      if (text.charCodeAt(end) === CR) {
        if (start === text.length) this.skipLF = true;
        else if (text.charCodeAt(start) === LF) start += 1;
      }
      if (nextLF !== -1 && nextLF < start) nextLF = text.indexOf('\n', start);
      if (nextCR !== -1 && nextCR < start) nextCR = text.indexOf('\r', start);
    }
    if (start < text.length) {
      if (this.discarding) {
        this.lineHasChars = true;
        return;
      }
      this.partial += start === 0 ? text : text.slice(start);
      const size = this.data.length + this.partial.length;
      if (size > this.maxEventLength) this.startDiscarding(size);
    }
  }

  private endLine(text: string, start: number, end: number): void {
    if (this.discarding) {
      const blank = !this.lineHasChars && end === start;
      this.lineHasChars = false;
      if (blank) {
        this.discarding = false;
        this.resetEvent();
      }
      return;
    }
    let line = text.slice(start, end);
    if (this.partial.length > 0) {
      line = this.partial + line;
      this.partial = '';
    }
    if (this.data.length + line.length > this.maxEventLength) {
      this.startDiscarding(this.data.length + line.length);
      this.lineHasChars = false; // that line has ended; the next one starts empty
      return;
    }
    this.interpret(line);
  }

  private interpret(line: string): void {
    if (line.length === 0) return this.dispatch();
    if (line.charCodeAt(0) === 0x3a) return; // ":" comment (keep-alives)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data = this.hasData ? `${this.data}\n${value}` : value;
        this.hasData = true;
        return;
      case 'event':
        this.type = value;
        return;
      case 'id':
        if (!value.includes('\0')) this.pendingId = value;
        return;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.handlers.retry?.(Number(value));
        return;
      default:
      // Unknown fields are ignored.
    }
  }

  private dispatch(): void {
    if (this.pendingId !== undefined) this.lastEventId = this.pendingId;
    const { data, hasData, type } = this;
    this.resetEvent();
    if (!hasData) return;
    this.handlers.event({ event: type === '' ? 'message' : type, data, lastEventId: this.lastEventId });
  }

  private startDiscarding(length: number): void {
    this.partial = '';
    this.resetEvent();
    this.discarding = true;
    this.lineHasChars = true;
    this.handlers.overflow?.(length);
  }

  private resetEvent(): void {
    this.data = '';
    this.hasData = false;
    this.type = '';
    this.pendingId = undefined;
  }
}

/**
 * One event, framed: `event:` and `id:` when given, one `data:` line per line of `data`, then the
 * blank line. Throws on an id or event name that would break the framing (a line break or NUL).
 */
export function sseEvent(data: string, id?: string, event?: string): string {
  let out = '';
  if (event !== undefined) {
    if (/[\r\n]/.test(event)) throw new RangeError('an SSE event name must not contain a line break');
    out += `event: ${event}\n`;
  }
  if (id !== undefined) {
    if (/[\r\n\0]/.test(id)) throw new RangeError('an SSE event id must not contain a line break or NUL');
    out += `id: ${id}\n`;
  }
  if (!data.includes('\n') && !data.includes('\r')) return `${out}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}
