// Re-addressing an agent's tools/call without re-encoding it (the relay's hot path): the request a server gets
// differs from the agent's line only in its `id` (ours) and `params.name` (the server's own tool
// name), so the line is copied with those two tokens replaced instead of JSON.stringify of the whole
// parsed request. The agent's line has already been parsed (it is valid JSON); this finds the two
// tokens with a scan that understands only what it must — strings (with escapes), nesting — and
// gives up (undefined: the caller encodes the parsed request as before) whenever in doubt: a key
// spelled with an escape (it could be an "id" in disguise), a member twice at any depth, `params._meta`
// present (its progress token and trace context are rewritten on the full path), anything unexpected.
// A member twice matters everywhere: JSON.parse keeps the last, and what the rules, the approval desk
// and the audit trail read is the parsed request; a server whose parser keeps the first would act on
// another value than the one judged. Encoding the parsed request sends it only the one that was judged.

/** Where the top-level id's value and params.name's value are in the line (start inclusive, end exclusive). */
interface LineSpans {
  idStart: number;
  idEnd: number;
  nameStart: number;
  nameEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function skipWs(line: string, i: number): number {
  for (;;) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
}

/** Index just past the string starting at `i` (a quote), or -1. */
function stringEnd(line: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = line.indexOf('"', j);
    if (q === -1) return -1;
    let backslashes = 0;
    for (let k = q - 1; k > i && line.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Containers nested deeper than this are not scanned (the caller encodes the parsed request). */
const MAX_DEPTH = 128;

/**
 * Index just past the JSON value starting at `i`, or -1; also -1 when an object in it has a member
 * twice (compared as the names decode, so `"a"` and `"\u0061"` are the same member).
 */
function valueEnd(line: string, i: number, depth = 0): number {
  const c = line.charCodeAt(i);
  if (c === QUOTE) return stringEnd(line, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    if (depth >= MAX_DEPTH) return -1;
    const close = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
    let j = skipWs(line, i + 1);
    if (line.charCodeAt(j) === close) return j + 1;
    const names = c === OPEN_BRACE ? new Set<string>() : undefined;
    for (;;) {
      if (names !== undefined) {
        if (line.charCodeAt(j) !== QUOTE) return -1;
        const end = stringEnd(line, j);
        if (end === -1) return -1;
        const raw = line.slice(j + 1, end - 1);
        const name = raw.includes('\\') ? decodedName(line.slice(j, end)) : raw;
        if (name === undefined || names.has(name)) return -1;
        names.add(name);
        j = afterColon(line, end);
        if (j === -1) return -1;
      }
      const end = valueEnd(line, j, depth + 1);
      if (end === -1) return -1;
      j = skipWs(line, end);
      const d = line.charCodeAt(j);
      if (d === close) return j + 1;
      if (d !== COMMA) return -1;
      j = skipWs(line, j + 1);
    }
  }
  // number, true, false, null: up to the next delimiter
  let j = i;
  while (j < line.length) {
    const d = line.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d) break;
    j++;
  }
  return j === i ? -1 : j;
}

/** A member name written with escapes, as it decodes; undefined if it does not. */
function decodedName(quoted: string): string | undefined {
  try {
    const name: unknown = JSON.parse(quoted);
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Index just past the key starting at `i` (a quote), or -1 if it has an escape (it could spell any name). */
function keyEnd(line: string, i: number): number {
  for (let j = i + 1; j < line.length; j++) {
    const c = line.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) return -1;
  }
  return -1;
}

/** Whether the key spanning [i, end) (quotes included) is `name`. */
function isKey(line: string, i: number, end: number, name: string): boolean {
  return end - i === name.length + 2 && line.startsWith(name, i + 1);
}

/** Index past a ':' after whitespace, then past whitespace; -1 if there is no ':'. */
function afterColon(line: string, i: number): number {
  i = skipWs(line, i);
  return line.charCodeAt(i) === COLON ? skipWs(line, i + 1) : -1;
}

/** After a member's value: index of the next key (past ','), or -(index past '}') - 2 at the end, or -1. */
function nextMember(line: string, i: number): number {
  i = skipWs(line, i);
  const c = line.charCodeAt(i);
  if (c === COMMA) return skipWs(line, i + 1);
  if (c === CLOSE_BRACE) return -(i + 1) - 2;
  return -1;
}

/** The spans of the top-level `id` and of `params.name` (a string) in a request line, or undefined when in doubt. */
function requestSpans(line: string): LineSpans | undefined {
  let idStart = -1;
  let idEnd = -1;
  let nameStart = -1;
  let nameEnd = -1;
  let sawParams = false;
  const members = new Set<string>();
  let i = skipWs(line, 0);
  if (line.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipWs(line, i + 1);
  for (;;) {
    if (line.charCodeAt(i) !== QUOTE) return undefined;
    const key = keyEnd(line, i);
    if (key === -1) return undefined;
    const at = afterColon(line, key);
    if (at === -1) return undefined;
    const member = line.slice(i + 1, key - 1);
    if (members.has(member)) return undefined;
    members.add(member);
    let end: number;
    if (isKey(line, i, key, 'params')) {
      if (sawParams || line.charCodeAt(at) !== OPEN_BRACE) return undefined;
      sawParams = true;
      // The members of params: `name` (a string), no `_meta`, each once, the rest skipped.
      const params = new Set<string>();
      let j = skipWs(line, at + 1);
      if (line.charCodeAt(j) === CLOSE_BRACE) end = j + 1;
      else {
        for (;;) {
          if (line.charCodeAt(j) !== QUOTE) return undefined;
          const pkey = keyEnd(line, j);
          if (pkey === -1) return undefined;
          const pat = afterColon(line, pkey);
          if (pat === -1) return undefined;
          const param = line.slice(j + 1, pkey - 1);
          if (params.has(param)) return undefined;
          params.add(param);
          if (isKey(line, j, pkey, '_meta')) return undefined; // rewritten on the full path (progress token, trace context)
          const pend = valueEnd(line, pat);
          if (pend === -1) return undefined;
          if (isKey(line, j, pkey, 'name')) {
            if (nameStart !== -1 || line.charCodeAt(pat) !== QUOTE) return undefined;
            nameStart = pat;
            nameEnd = pend;
          }
          j = nextMember(line, pend);
          if (j === -1) return undefined;
          if (j < -1) {
            end = -j - 2;
            break;
          }
        }
      }
    } else {
      end = valueEnd(line, at);
      if (end === -1) return undefined;
      if (isKey(line, i, key, 'id')) {
        if (idStart !== -1) return undefined;
        idStart = at;
        idEnd = end;
      }
    }
    i = nextMember(line, end);
    if (i === -1) return undefined;
    if (i < -1) {
      i = -i - 2;
      break;
    }
  }
  if (skipWs(line, i) !== line.length || idStart === -1 || nameStart === -1) return undefined;
  return { idStart, idEnd, nameStart, nameEnd };
}

/**
 * The agent's request `line` with its id replaced by `id` and params.name by `name`; undefined when
 * the line is not one this can rewrite with certainty (the caller then encodes the parsed request).
 */
export function spliceRequest(line: string, id: number, name: string): string | undefined {
  const spans = requestSpans(line);
  if (spans === undefined) return undefined;
  const { idStart, idEnd, nameStart, nameEnd } = spans;
  const nameJson = JSON.stringify(name);
  const idText = String(id);
  return idStart < nameStart
    ? line.slice(0, idStart) + idText + line.slice(idEnd, nameStart) + nameJson + line.slice(nameEnd)
    : line.slice(0, nameStart) + nameJson + line.slice(nameEnd, idStart) + idText + line.slice(idEnd);
}
