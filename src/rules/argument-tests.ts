// The argument tests of an approval rule: `when.args` (the call waits if every test holds) and
// `unless.args` (the call runs at once only if every test holds). Servers are lenient about what
// they accept — an SDK that coerces `"true"`, `1` or `"yes"` to `true`, `"1000"` to 1000, or trims
// `"main "` — so a `when` test matches every value a lenient server could read as the one written:
// the same value in another JSON type, any case and surrounding spaces, or wrapped in a one-element
// array. A `when` test that errs asks a person once too often; one that errred the other way let a
// force-push through. An `unless` test is the opposite promise and matches only the exact value.

import { canonicalJson } from '../wire/canonical-json.js';
import { globToRegExp, isGlob } from './globs.js';

/** One test of one top-level argument. */
export interface ArgumentTest {
  readonly name: string;
  /** Does the argument (absent: undefined) meet the test? */
  readonly holds: (value: unknown, present: boolean) => boolean;
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'y', 'on', 't']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n', 'off', 'f']);

/** `when.args`: a test that holds for the value written and every value a lenient server reads as it. */
export function lenientTest(name: string, expected: unknown): ArgumentTest {
  if (typeof expected === 'string' && isGlob(expected)) {
    const glob = globToRegExp(expected);
    const folded = new RegExp(glob.source, glob.flags.includes('i') ? glob.flags : `${glob.flags}i`);
    return { name, holds: (value, present) => present && anyReading(value, (v) => scalarText(v, (text) => folded.test(text))) };
  }
  const json = canonicalJson(expected);
  return { name, holds: (value, present) => present && anyReading(value, (v) => readsAs(v, expected, json)) };
}

/** `unless.args`: a test that holds only for exactly the value written (compared as canonical JSON). */
export function exactTest(name: string, expected: unknown): ArgumentTest {
  if (typeof expected === 'string' && isGlob(expected)) {
    const glob = globToRegExp(expected);
    return { name, holds: (value, present) => present && typeof value === 'string' && glob.test(value) };
  }
  const json = canonicalJson(expected);
  return { name, holds: (value, present) => present && canonicalJson(value) === json };
}

/** The value itself, and the one element of a one-element array (a server may unwrap it). */
function anyReading(value: unknown, test: (value: unknown) => boolean): boolean {
  if (test(value)) return true;
  return Array.isArray(value) && value.length === 1 && test(value[0]);
}

/** A string, number or boolean as the text a lenient server would read, trimmed. */
function scalarText(value: unknown, test: (text: string) => boolean): boolean {
  if (typeof value === 'string') return test(value.trim());
  if (typeof value === 'number' || typeof value === 'boolean') return test(String(value));
  return false;
}

function readsAs(value: unknown, expected: unknown, json: string): boolean {
  switch (typeof expected) {
    case 'boolean':
      return asBoolean(value) === expected;
    case 'number':
      return asNumber(value) === expected;
    case 'string': {
      const want = expected.trim().normalize('NFKC').toLowerCase();
      return scalarText(value, (text) => text.normalize('NFKC').toLowerCase() === want);
    }
    default:
      if (expected === null) return value === null || (typeof value === 'string' && ['', 'null'].includes(value.trim().toLowerCase()));
      return canonicalJson(value) === json;
  }
}

function asBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : undefined;
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : undefined;
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) ? n : undefined;
}
