// The cap on one tool result an agent gets (the rules' `guards.maxResultBytes`, for every call or
// per agent, server and tool): a result whose JSON passes it reaches the agent cut — its first
// contents, up to the cap, and a note saying how big it was and where the whole of it is — and the
// whole is kept (kept-results.ts) for the same agent to read page by page. Binary contents (an
// image, audio, a resource's blob) count by their encoded size and are never inlined past the cap:
// one that does not fit whole is left out and named in the note.

import type { KeptReceipt } from './kept-results.js';

/** What is set aside in the cap for the note (its text is shorter). */
const NOTE_RESERVE = 640;

/**
 * The cut result for `json` (the whole result's JSON, over `maxBytes`), given where the whole is
 * kept (`receipt`, undefined: it could not be kept).
 */
export function cutResult(
  result: Record<string, unknown>,
  json: string,
  maxBytes: number,
  receipt: KeptReceipt | undefined,
): Record<string, unknown> {
  const total = Buffer.byteLength(json, 'utf8');
  let budget = Math.max(0, maxBytes - NOTE_RESERVE);
  const head: unknown[] = [];
  const left: string[] = [];
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  for (const item of content) {
    if (budget <= 0) {
      left.push(kindOf(item));
      continue;
    }
    const size = Buffer.byteLength(JSON.stringify(item), 'utf8');
    if (size <= budget) {
      head.push(item);
      budget -= size;
      continue;
    }
    // A text is cut to what is left, and fills the cap; anything else (binary) is left out whole and
    // what follows may still fit.
    const cut = cutText(item, budget);
    if (cut === undefined) {
      left.push(kindOf(item));
      continue;
    }
    head.push(cut);
    budget = 0;
  }
  const where =
    receipt === undefined
      ? 'it could not be kept (larger than what mcpgate keeps in all)'
      : `the whole result is kept as ${receipt.uri} for ${receipt.seconds} s: read it with resources/read, page by page (${receipt.pages} page${receipt.pages === 1 ? '' : 's'}: ${receipt.uri}?page=1 to ?page=${receipt.pages}); the pages' texts joined are the result's JSON`;
  const omitted = left.length > 0 ? `; left out here: ${summary(left)}` : '';
  const structured = result.structuredContent !== undefined ? '; its structuredContent is only in the kept result' : '';
  head.push({
    type: 'text',
    text: `[mcpgate: this result is ${total} bytes, over the cap of ${maxBytes} bytes; you got its beginning${omitted}${structured}. ${where}.]`,
  });
  const cut: Record<string, unknown> = { content: head };
  if (result.isError !== undefined) cut.isError = result.isError;
  if (result._meta !== undefined) cut._meta = result._meta;
  return cut;
}

/** A text content (or a resource's text) cut to `budget` bytes of JSON at most, at a character boundary; undefined for anything else. */
function cutText(item: unknown, budget: number): unknown {
  if (typeof item !== 'object' || item === null) return undefined;
  const record = item as Record<string, unknown>;
  if (record.type === 'text' && typeof record.text === 'string') return { ...record, text: headOf(record.text, budget) };
  const resource = record.resource as Record<string, unknown> | undefined;
  if (record.type === 'resource' && typeof resource?.text === 'string')
    return { ...record, resource: { ...resource, text: headOf(resource.text, budget) } };
  return undefined;
}

/** The longest start of `text` whose JSON string fits `budget` bytes (JSON escapes counted). */
function headOf(text: string, budget: number): string {
  let low = 0;
  let high = Math.min(text.length, budget);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (Buffer.byteLength(JSON.stringify(text.slice(0, mid)), 'utf8') + 32 <= budget) low = mid;
    else high = mid - 1;
  }
  // Not in the middle of a surrogate pair.
  const last = text.charCodeAt(low - 1);
  if (low > 0 && last >= 0xd800 && last <= 0xdbff) low--;
  return text.slice(0, low);
}

function kindOf(item: unknown): string {
  const record = item as { type?: unknown; data?: unknown; resource?: { blob?: unknown } } | null;
  const type = typeof record?.type === 'string' ? record.type : 'content';
  const data =
    typeof record?.data === 'string' ? record.data : typeof record?.resource?.blob === 'string' ? record.resource.blob : undefined;
  return data === undefined ? type : `${type} (${data.length} bytes encoded)`;
}

function summary(kinds: readonly string[]): string {
  const shown = kinds.slice(0, 8).join(', ');
  return kinds.length > 8 ? `${shown} and ${kinds.length - 8} more` : shown;
}
