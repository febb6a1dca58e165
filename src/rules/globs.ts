// The rules file's name lists compiled for matching: exact names in a Set, globs (`*` any run of
// characters, `?` one; everything else literal) in one RegExp per list, kept in a closure.
// A list compiles into a `Matcher`.

import { frozenSet } from './frozen.js';

/** Names matched exactly (Set lookups) and globs (compiled RegExps), for one list of the rules file. */
export interface Matcher {
  readonly exact: ReadonlySet<string>;
  /** The globs as written (`list_*`), in file order. */
  readonly patterns: readonly string[];
  /**
   * The first glob (in file order) that matches `name`, if any: one RegExp run however many globs
   * there are. The RegExp stays inside this closure rather than in the frozen snapshot: a frozen
   * RegExp leaves V8's fast path (its lastIndex is not writable; runs are 2–6× slower), and an
   * exposed one could be changed in place (`compile()`).
   */
  readonly match: (name: string) => string | undefined;
}

// What must be escaped to be literal in a `u`-mode RegExp (any other escape is a syntax error there).
const SPECIAL = /[\\^$.*+?()[\]{}|/]/;

/** True when `pattern` has a wildcard (`*` or `?`); anything else is an exact name. */
export function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** `*` any run of characters (also none), `?` exactly one; everything else literal. */
function globSource(pattern: string): string {
  let out = '';
  let star = false;
  for (const char of pattern) {
    if (char === '*') {
      if (!star) out += '.*'; // `**` is `*`, without the extra backtracking
      star = true;
      continue;
    }
    star = false;
    if (char === '?') out += '.';
    else out += SPECIAL.test(char) ? `\\${char}` : char;
  }
  return out;
}

export function globToRegExp(pattern: string): RegExp {
  return sourceToRegExp(globSource(pattern));
}

// `s`: a wildcard matches any character, line breaks included; `u`: `?` is one code point.
function sourceToRegExp(source: string): RegExp {
  return new RegExp(`^(?:${source})$`, 'su');
}

const NO_MATCH = (): undefined => undefined;

/** Splits names from globs. The caller has checked that every entry is a non-empty string. */
export function compileMatcher(entries: readonly string[]): Matcher {
  const exact = entries.filter((entry) => !isGlob(entry));
  const patterns = [...new Set(entries.filter(isGlob))];
  return Object.freeze({ exact: frozenSet(exact), patterns: Object.freeze(patterns), match: compilePatterns(patterns) });
}

function compilePatterns(patterns: readonly string[]): (name: string) => string | undefined {
  const [first] = patterns;
  if (first === undefined) return NO_MATCH;
  if (patterns.length === 1) {
    const regex = globToRegExp(first);
    return (name) => (regex.test(name) ? first : undefined);
  }
  // One group per glob (globSource escapes every parenthesis, so the groups are exactly these);
  // alternation tries them in file order, so the first defined group names the first match.
  const regex = sourceToRegExp(patterns.map((p) => `(${globSource(p)})`).join('|'));
  return (name) => {
    const found = regex.exec(name);
    if (found === null) return undefined;
    for (let i = 1; i < found.length; i++) if (found[i] !== undefined) return patterns[i - 1];
    return undefined;
  };
}
