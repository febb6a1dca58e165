// Canonical JSON: object keys sorted (by UTF-16 code units), no whitespace, numbers and strings as
// JSON.stringify writes them. Two values that are the same JSON give the same text whatever order
// their keys came in: what a pin's digest (pins/digest.ts) and a call approval's digest
// (rules/approvals.ts, policy/approval-desk.ts) are taken over.

/**
 * A value that is not an object or array, as JSON (`null` too); undefined for an object or array.
 * Non-finite numbers and what JSON cannot hold (functions, symbols, bigints, undefined) throw.
 */
export function scalarJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON encoding`);
      return JSON.stringify(value);
    case 'object':
      return value === null ? 'null' : undefined;
    default:
      throw new TypeError(`a ${typeof value} has no JSON encoding`);
  }
}

/** Sorted keys (UTF-16 order), no whitespace, `undefined` members omitted; non-finite numbers throw. */
export function canonicalJson(value: unknown): string {
  const scalar = scalarJson(value);
  if (scalar !== undefined) return scalar;
  // The pins' hot path (every tool of every server at start-up): one string appended to, no arrays
  // of parts, and keys sorted only when they are not in order already (pins/digest.ts `encode` is the
  // long way to the same text, its reference in the tests).
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      out += (i > 0 ? ',' : '') + (item === undefined ? 'null' : canonicalJson(item));
    }
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(item);
    first = false;
  }
  return out + '}';
}
