// Names that only look like a known one. A registry name is ASCII (namespace/name, SERVER_NAME), so a
// name with any other character — a Cyrillic "а", a fullwidth "ｏ", an invisible joiner — can only be
// a lookalike, and is refused with the characters named. Among ASCII names, two are lookalikes when
// they fold to the same skeleton (case, separators, and the glyphs that pass for each other: 0/o,
// 1/l/i, rn/m, vv/w), or when their publishers' namespaces are one edit apart and their own names
// alike. The registry verifies who owns a namespace, so the risk is another namespace imitating a
// known one; the newer of such a pair, beside an older one or one already in the config, is what a
// typosquatter publishes, so `add` refuses it unless told otherwise.

import { editDistance } from '../suggest.js';

/** The characters of `name` outside printable ASCII, each as `"а" (U+0430)`; empty when there are none. */
export function foreignCharacters(name: string): string[] {
  const out: string[] = [];
  for (const char of name) {
    const code = char.codePointAt(0)!;
    if (code < 0x21 || code > 0x7e) out.push(`${JSON.stringify(char)} (U+${code.toString(16).toUpperCase().padStart(4, '0')})`);
  }
  return [...new Set(out)];
}

/** What a name looks like to a reader: lowercase, no separators, and lookalike glyphs folded together. */
function skeleton(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(/[0]/g, 'o')
    .replace(/[1|!]/g, 'l')
    .replace(/i/g, 'l')
    .replace(/5/g, 's')
    .replace(/[-_.]/g, '');
}

/**
 * Whether `other` is a different publisher's name that `wanted` only looks like: the same skeleton,
 * or namespaces one edit apart with alike own names. The same namespace is the same verified
 * publisher, never a lookalike.
 */
export function isLookalike(wanted: string, other: string): boolean {
  if (other === wanted || namespaceOf(other) === namespaceOf(wanted)) return false;
  const [ns, short] = parts(wanted);
  const [otherNs, otherShort] = parts(other);
  if (skeleton(other) === skeleton(wanted)) return true;
  const nearNs = otherNs === ns || (Math.min(ns.length, otherNs.length) >= 6 && editDistance(ns, otherNs) <= 1);
  const nearShort = otherShort === short || editDistance(short, otherShort) <= 1;
  return nearNs && nearShort;
}

/** A name's namespace and own name, each as its skeleton. */
function parts(name: string): [string, string] {
  const slash = name.indexOf('/');
  return [skeleton(name.slice(0, slash)), skeleton(name.slice(slash + 1))];
}

function namespaceOf(name: string): string {
  return name.slice(0, name.indexOf('/')).toLowerCase();
}
