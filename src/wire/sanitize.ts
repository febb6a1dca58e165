// Neutralizes what a model or an operator's terminal should never get from a server's text: terminal
// escape sequences (removed whole, 7- and 8-bit forms), other control characters, and the invisible
// Unicode (tag characters, zero-width and bidi controls) used to hide instructions from a human
// reviewer. Clean text costs one regex test and no allocation: this runs on every relayed text result.
// It sits in wire/ because the catalog, the gateway and the pins all use it (the catalog may not import
// pins); `visible()` shows for the operator, escaped, what it would remove.

/** Longest body a sequence may have without its terminator; past it the sequence ends there. */
const MAX_SEQUENCE = 256;

// C0 except TAB, LF, CR; DEL; C1. ESC and the 8-bit introducers are in here, so every removable
// sequence starts with a character of this class or of INVISIBLE (or is a tag pair).
const CONTROL = String.raw`\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f`;
const INVISIBLE = String.raw`\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff`;
const TAG = String.raw`\udb40[\udc00-\udc7f]`; // U+E0000–U+E007F as UTF-16
// OSC, DCS, SOS, PM, APC (ESC ] P X ^ _, or 8-bit) run to BEL or ST: a terminal swallows the body.
const STRING_START = String.raw`(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])`;
const STRING_BODY = String.raw`[^\x07\x1b\x9c]{0,${MAX_SEQUENCE}}`;
const CSI_BODY = String.raw`(?:\x1b\[|\x9b)[\x20-\x3f]{0,${MAX_SEQUENCE}}`; // parameters, intermediates
const ESC_BODY = String.raw`\x1b[\x20-\x2f]{0,${MAX_SEQUENCE}}`; // e.g. ESC ( B, ESC 7, ESC \

const SEQUENCE = String.raw`${STRING_START}${STRING_BODY}(?:\x07|\x1b\\|\x9c)?|${CSI_BODY}[\x40-\x7e]?|${ESC_BODY}[\x30-\x7e]?`;
const NEEDS = new RegExp(`[${CONTROL}${INVISIBLE}]|${TAG}`);
const REMOVE = new RegExp(`${SEQUENCE}|[${CONTROL}${INVISIBLE}]|${TAG}`, 'g');
// CR is kept for agents but shown in the operator's view: in a terminal it would let later text
// overwrite earlier text on the same line.
const HIDDEN = new RegExp(`[${CONTROL}${INVISIBLE}\\r]|${TAG}`, 'g');

function sanitizeText(text: string): string {
  return NEEDS.test(text) ? text.replace(REMOVE, '') : text;
}

/** For the operator's view: each character sanitizeText would remove (and CR), as a visible escape. */
export function visible(text: string): string {
  return text.replace(HIDDEN, escape);
}

function escape(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

// Members whose text an agent reads besides title and description. `arguments` is a prompt's.
const NESTED = ['inputSchema', 'outputSchema', 'annotations', 'arguments'] as const;

/**
 * A tool (or prompt) with its title and description sanitized, and every `description`/`title` string
 * inside its schemas, annotations and arguments. Copies only along changed paths; the same object
 * when nothing changed.
 */
export function sanitizeTool<T extends Record<string, unknown>>(tool: T): T {
  let copy: Record<string, unknown> | undefined;
  for (const key of ['title', 'description'] as const) {
    const value = tool[key];
    if (typeof value !== 'string') continue;
    const clean = sanitizeText(value);
    if (clean !== value) (copy ??= { ...tool })[key] = clean;
  }
  for (const key of NESTED) {
    const value = tool[key];
    const clean = sanitizeNested(value);
    if (clean !== value) (copy ??= { ...tool })[key] = clean;
  }
  return (copy ?? tool) as T;
}

function sanitizeNested(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const items = value as unknown[];
    let copy: unknown[] | undefined;
    items.forEach((item, i) => {
      const clean = sanitizeNested(item);
      if (clean !== item) (copy ??= items.slice())[i] = clean;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const clean = typeof item === 'string' ? (key === 'description' || key === 'title' ? sanitizeText(item) : item) : sanitizeNested(item);
    // An own `__proto__` key (JSON.parse makes one) is copied by the spread as a data property, so
    // this assignment writes that property, never the prototype.
    if (clean !== item) (copy ??= { ...value } as Record<string, unknown>)[key] = clean;
  }
  return copy ?? value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** One content block: the text of a text block, or of an embedded text resource. */
function sanitizeBlock(block: unknown): boolean {
  if (!isRecord(block)) return false;
  const holder = block.type === 'text' ? block : block.type === 'resource' && isRecord(block.resource) ? block.resource : undefined;
  if (holder === undefined || typeof holder.text !== 'string') return false;
  const clean = sanitizeText(holder.text);
  if (clean === holder.text) return false;
  holder.text = clean;
  return true;
}

function sanitizeBlocks(content: unknown): boolean {
  if (!Array.isArray(content)) return sanitizeBlock(content);
  let changed = false;
  for (const block of content as unknown[]) changed = sanitizeBlock(block) || changed;
  return changed;
}

/**
 * tools/call or prompts/get result: sanitizes text blocks in `content[]` and `messages[].content` in
 * place. False means nothing changed, so the raw line can be relayed as it came.
 */
export function sanitizeContent(result: Record<string, unknown>): boolean {
  let changed = sanitizeBlocks(result.content);
  if (Array.isArray(result.messages)) {
    for (const message of result.messages as unknown[]) if (isRecord(message)) changed = sanitizeBlocks(message.content) || changed;
  }
  return changed;
}
