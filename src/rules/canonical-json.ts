// Canonical JSON: object keys sorted (by UTF-16 code units), no whitespace, numbers and strings as
// JSON.stringify writes them. Two values that are the same JSON give the same text whatever order
// their keys came in, so an approval can be bound to the digest of exactly these arguments.

/** The canonical text of a JSON value; `undefined` (and functions) inside objects are left out, as JSON does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${parts.join(',')}}`;
}
