// Turns a JSON.parse SyntaxError into a line, a column and a message fit to show. Node 20's V8 gives
// `… in JSON at position N` for some errors but `Unexpected token 'x', "<the whole text>" is not valid
// JSON` (no position, and the file's contents — maybe secrets — in the message) for others, so when
// there is no position we find it with a small scanner of our own.

interface JsonErrorLocation {
  /** 1-based. */
  readonly line: number;
  /** 1-based, in UTF-16 code units. */
  readonly column: number;
  readonly message: string;
}

export function locateJsonError(text: string, error: SyntaxError): JsonErrorLocation {
  const positional = /^(.*?) in JSON at position (\d+)/s.exec(error.message);
  const token = /^Unexpected token '(.+?)', .* is not valid JSON$/s.exec(error.message);
  let offset: number;
  let message: string;
  if (positional) {
    offset = Number(positional[2]);
    message = positional[1] ?? error.message;
  } else {
    offset = findSyntaxErrorOffset(text) ?? text.length;
    // Never echo V8's "<text> is not valid JSON": the text is the file, secrets included.
    if (token?.[1] !== undefined) message = `Unexpected character ${JSON.stringify(token[1])}`;
    else message = error.message.includes('is not valid JSON') ? 'Syntax error' : error.message;
  }
  return { ...lineAndColumn(text, offset), message: message.charAt(0).toLowerCase() + message.slice(1) };
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.min(offset, text.length));
  const lastBreak = before.lastIndexOf('\n');
  let line = 1;
  for (let i = before.indexOf('\n'); i >= 0; i = before.indexOf('\n', i + 1)) line++;
  return { line, column: offset - lastBreak };
}

class Stop extends Error {
  constructor(readonly offset: number) {
    super(`JSON syntax error at ${offset}`);
  }
}

const ESCAPES = '"\\/bfnrtu';
const isDigit = (c: string): boolean => c >= '0' && c <= '9';

/** The offset of the first character that makes `text` invalid JSON (RFC 8259), or undefined if none. */
function findSyntaxErrorOffset(text: string): number | undefined {
  let i = 0;
  const stop = (): never => {
    throw new Stop(i);
  };
  const skipSpace = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const expect = (char: string): void => {
    skipSpace();
    if (text.charAt(i) !== char) stop();
    i++;
  };
  const string = (): void => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) stop();
      const code = text.charCodeAt(i);
      if (code === 0x22) {
        i++;
        return;
      }
      if (code < 0x20) stop();
      if (code === 0x5c) {
        i++;
        if (i >= text.length || !ESCAPES.includes(text.charAt(i))) stop();
        if (text.charAt(i) === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (!/[0-9a-fA-F]/.test(text.charAt(i))) stop();
          }
        }
      }
      i++;
    }
  };
  const digits = (): void => {
    if (!isDigit(text.charAt(i))) stop();
    while (isDigit(text.charAt(i))) i++;
  };
  const number = (): void => {
    if (text.charAt(i) === '-') i++;
    if (text.charAt(i) === '0') i++;
    else digits();
    if (text.charAt(i) === '.') {
      i++;
      digits();
    }
    if (text.charAt(i) === 'e' || text.charAt(i) === 'E') {
      i++;
      if (text.charAt(i) === '+' || text.charAt(i) === '-') i++;
      digits();
    }
  };
  const value = (): void => {
    skipSpace();
    const c = text.charAt(i);
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      skipSpace();
      if (text.charAt(i) === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === '{') {
          skipSpace();
          if (text.charAt(i) !== '"') stop();
          string();
          expect(':');
        }
        value();
        skipSpace();
        if (text.charAt(i) === close) {
          i++;
          return;
        }
        expect(',');
      }
    }
    if (c === '"') return string();
    if (c === '-' || isDigit(c)) return number();
    for (const literal of ['true', 'false', 'null']) {
      if (c !== literal.charAt(0)) continue;
      for (const expected of literal) {
        if (text.charAt(i) !== expected) stop();
        i++;
      }
      return;
    }
    stop();
  };
  try {
    value();
    skipSpace();
    if (i < text.length) stop();
    return undefined;
  } catch (thrown) {
    if (thrown instanceof Stop) return thrown.offset;
    return undefined; // e.g. RangeError from absurd nesting: fall back to the end of the text
  }
}
