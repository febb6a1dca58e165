// The entropy check: a value assigned to a secret-like name (`api_key = "…"`, `"password": "…"`) is
// a secret when it looks random. Looking random is measured, not guessed: Shannon entropy per
// character, and a mix of character classes. A value alone, with no such name before it, is never
// judged by entropy: hashes, UUIDs and base64 images are random too, and would all be flagged.

/** Bits per character of `text` (its own symbol frequencies). */
function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

// Values people write in place of a secret: not a secret, whatever their entropy. A value starting
// with `$` is a variable or a crypt(3) hash (`$2b$…`, `$argon2id$…`), which stores no secret itself.
const PLACEHOLDER =
  /^\$|^(?:\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|<[^>]*>|\{\{[^}]*\}\}|%[A-Za-z_]+%)$|x{6,}|\*{4,}|your[_-]?|example|changeme|redacted|placeholder|dummy|sample/i;
// Names in code (process.env.API_KEY, getToken, self.secret_key) are not values.
const IDENTIFIER_PATH = /^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+$/;

/** Minimum length of a value the entropy check judges. */
const MIN_SECRET_VALUE = 16;

/**
 * True when `value` looks like a random secret: long enough, of at least two character classes
 * with a digit among them, no placeholder, and entropy high enough for its length.
 */
export function looksRandom(value: string): boolean {
  if (value.length < MIN_SECRET_VALUE) return false;
  if (PLACEHOLDER.test(value) || IDENTIFIER_PATH.test(value)) return false;
  const digit = /[0-9]/.test(value);
  const lower = /[a-z]/.test(value);
  const upper = /[A-Z]/.test(value);
  if (!digit || (!lower && !upper)) return false;
  // Hex (a digest assigned to a `token`) has 4 bits at most per character; mixed alphabets more.
  const hexOnly = /^[0-9a-fA-F]+$/.test(value);
  const needed = hexOnly ? 3.0 : value.length < 24 ? 3.3 : 3.6;
  return shannonEntropy(value) >= needed;
}
