// A JSON-RPC message handed to a front as pieces: JSON text and bytes, written in order. A list
// answer is the cached bytes of the list (Buffers shared by every answer until the catalog or the
// agent's rules change) between the few bytes that differ per answer (the id), so a repeated
// `tools/list` of a big catalog costs a write of bytes already made, never a re-serialization.

/** The pieces of one message, in order; their concatenation is one line of JSON (no newline). */
export type EncodedParts = readonly (string | Buffer)[];

/** A result whose JSON is cached as bytes (in pieces), wrapped for the request `id`: head, body, tail. */
export function encodeResultParts(idJson: string, result: readonly Buffer[]): EncodedParts {
  return [`{"jsonrpc":"2.0","id":${idJson},"result":`, ...result, '}'];
}

/** Whether two cached results are the same bytes (the same pieces, or pieces that join alike). */
export function sameBytes(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  if (a === b) return true;
  // Pieces cut alike (one catalog's lists): compare piece by piece, only unshared pieces' bytes.
  if (a.length === b.length && a.every((piece, i) => piece.length === b[i]!.length))
    return a.every((piece, i) => piece === b[i] || piece.equals(b[i]!));
  let length = 0;
  for (const piece of a) length += piece.length;
  for (const piece of b) length -= piece.length;
  return length === 0 && Buffer.concat(a).equals(Buffer.concat(b));
}

/** The message as one string, for a path that must frame or keep text (an SSE event, a replay log). */
export function partsToText(parts: EncodedParts): string {
  let text = '';
  for (const part of parts) text += typeof part === 'string' ? part : part.toString('utf8');
  return text;
}
