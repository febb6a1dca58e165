// A light suffix stemmer for English tool text. Tool descriptions are short and full of verbs in
// several forms ("creates", "creating", "created") and plurals ("files", "directories"); mapping those
// onto one stem is most of what stemming buys a ranker here. Porter's full rule set also conflates
// words a tool catalog keeps apart ("general"/"generate", "user"/"use"), so only inflections and a few
// noun-forming endings are removed, and both sides (tools and queries) go through the same function.
// The endings: plurals, -ing/-ed, -ation/-ion/-ment, a final e, -ate.

/** Words this short are left alone: "ls", "rm", "pr", "ids", "bus" are names, not inflections. */
const MIN_LENGTH = 4;

function isVowel(c: string): boolean {
  return c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u';
}

/** "running" → "runn" → "run": an ending removed after a doubled consonant leaves one of it. */
function undouble(stem: string): string {
  const n = stem.length;
  if (n >= 3 && stem[n - 1] === stem[n - 2] && !isVowel(stem[n - 1]!) && !'lsz'.includes(stem[n - 1]!)) {
    return stem.slice(0, -1);
  }
  return stem;
}

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (isVowel(stem[i]!) || (i > 0 && stem[i] === 'y')) return true;
  return false;
}

/** The stem of one lower-case word; anything but letters a–z passes through unchanged. */
export function stem(word: string): string {
  if (word.length < MIN_LENGTH || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  // Plurals and third person: "directories" → "directory", "matches" → "match", "files" → "file".
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(?:x|ch|sh|zz)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  // Verb inflections: "creating", "created" → "creat" (as "create" below), "running" → "run".
  if (w.endsWith('ing') && w.length > 5 && hasVowel(w.slice(0, -3))) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 4 && hasVowel(w.slice(0, -2))) w = undouble(w.slice(0, -2));
  // Nouns made from verbs: "creation" → "create", "deletion" → "delet", "management" → "manage".
  else if (w.endsWith('ation') && w.length > 7) w = w.slice(0, -5) + 'ate';
  else if (w.endsWith('ion') && w.length > 6 && /[st]ion$/.test(w)) w = w.slice(0, -3);
  else if (w.endsWith('ment') && w.length > 7) w = w.slice(0, -4);
  // A final silent e: "create" and "creat(ing)" meet; "delete" and "delet(ion)".
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  // "-ate" verbs of more than a short root lose it, so "navigate" meets "navigation" and "configure"
  // meets "configuration"; "create" (root "cre") keeps it.
  if (w.endsWith('at') && w.length > 5) w = w.slice(0, -2);
  return w;
}
