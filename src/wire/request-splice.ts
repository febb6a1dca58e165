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
    const j = skipWs(line, i + 1);
    if (line.charCodeAt(j) === close) return j + 1;
    const base = namesTop;
    const end = membersEnd(line, j, close, depth);
    namesTop = base;
    return end;
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

/** Index just past the members or items from `j` to `close`, or -1; an object's names are noted from the end of NAME_SPANS. */
function membersEnd(line: string, j: number, close: number, depth: number): number {
  const base = namesTop;
  let decoded: Set<string> | undefined;
  for (;;) {
    if (close === CLOSE_BRACE) {
      if (line.charCodeAt(j) !== QUOTE) return -1;
      const end = stringEnd(line, j);
      if (end === -1) return -1;
      const noted = noteName(line, base, decoded, j, end);
      if (noted === false) return -1;
      decoded = noted;
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

/** An object with more members than this has their names kept in a set; fewer are compared in the line. */
const FEW_MEMBERS = 8;

/**
 * The member names of the objects being read, as [start, end) pairs of their quoted text in the line:
 * each object's own after those of the objects it is inside, cut back as it ends. Most objects have a
 * few names, written plainly; they are compared where they stand, with no substring made, nothing
 * hashed and nothing allocated (a set per object was about a sixth of the scan's time). Bounded:
 * at most FEW_MEMBERS pairs per object, objects at most MAX_DEPTH deep.
 */
const NAME_SPANS: number[] = [];
/** The end of NAME_SPANS in use: the array keeps its length and is written over, never cut back. */
let namesTop = 0;

/**
 * Notes the name quoted in [start, end) of one object whose names begin at `base` in NAME_SPANS:
 * false when the object has it already, or it does not decode; else the object's set of decoded
 * names, made once a name has an escape or is past FEW_MEMBERS (a plain name is its own decoding,
 * so spans and set compare alike), or undefined while its names are spans.
 */
function noteName(
  line: string,
  base: number,
  decoded: Set<string> | undefined,
  start: number,
  end: number,
): Set<string> | undefined | false {
  const escaped = hasBackslash(line, start + 1, end - 1);
  if (decoded === undefined && !escaped && namesTop - base < 2 * FEW_MEMBERS) {
    for (let k = base; k < namesTop; k += 2) if (sameText(line, NAME_SPANS[k]!, NAME_SPANS[k + 1]!, start, end)) return false;
    NAME_SPANS[namesTop++] = start;
    NAME_SPANS[namesTop++] = end;
    return undefined;
  }
  if (decoded === undefined) {
    decoded = new Set();
    for (let k = base; k < namesTop; k += 2) decoded.add(line.slice(NAME_SPANS[k]! + 1, NAME_SPANS[k + 1]! - 1));
  }
  const name = escaped ? decodedName(line.slice(start, end)) : line.slice(start + 1, end - 1);
  if (name === undefined || decoded.has(name)) return false;
  decoded.add(name);
  return decoded;
}

function hasBackslash(line: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (line.charCodeAt(k) === BACKSLASH) return true;
  return false;
}

/** Whether the line's text in [a, aEnd) is the same as in [b, bEnd). */
function sameText(line: string, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let k = 0; k < aEnd - a; k++) if (line.charCodeAt(a + k) !== line.charCodeAt(b + k)) return false;
  return true;
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
  namesTop = 0;
  const spans = scanRequest(line);
  namesTop = 0;
  return spans;
}

/** requestSpans' scan: the top-level names are noted first in NAME_SPANS, each object's inside them after. */
function scanRequest(line: string): LineSpans | undefined {
  let idStart = -1;
  let idEnd = -1;
  let nameStart = -1;
  let nameEnd = -1;
  let sawParams = false;
  let members: Set<string> | undefined;
  let i = skipWs(line, 0);
  if (line.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipWs(line, i + 1);
  for (;;) {
    if (line.charCodeAt(i) !== QUOTE) return undefined;
    const key = keyEnd(line, i);
    if (key === -1) return undefined;
    const at = afterColon(line, key);
    if (at === -1) return undefined;
    const member = noteName(line, 0, members, i, key);
    if (member === false) return undefined;
    members = member;
    let end: number;
    if (isKey(line, i, key, 'params')) {
      if (sawParams || line.charCodeAt(at) !== OPEN_BRACE) return undefined;
      sawParams = true;
      // The members of params: `name` (a string), no `_meta`, each once, the rest skipped.
      const base = namesTop;
      let params: Set<string> | undefined;
      let j = skipWs(line, at + 1);
      if (line.charCodeAt(j) === CLOSE_BRACE) end = j + 1;
      else {
        for (;;) {
          if (line.charCodeAt(j) !== QUOTE) return undefined;
          const pkey = keyEnd(line, j);
          if (pkey === -1) return undefined;
          const pat = afterColon(line, pkey);
          if (pat === -1) return undefined;
          const param = noteName(line, base, params, j, pkey);
          if (param === false) return undefined;
          params = param;
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
      namesTop = base; // the top level's names follow on from its own
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
