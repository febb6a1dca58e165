// Text to the terms the index counts: split into words the way tool names are written (snake_case,
// kebab-case, camelCase, letters against digits), lower-cased, abbreviations spelled out, stemmed.
// Tools and queries pass through the same functions, so what a tool says and what an agent asks
// meet as the same terms.
// Dropped: stop words (function words and the phrasing of a request: "can you please", "a way to") and
// single letters. Spelled out on both sides: unambiguous abbreviations (repo, msg, db, pr, ls, rm,
// to-do…). Bounds: every text is read to 16 KB and 2,048 terms; a query is searched by its 31 most
// informative words (tool-index.ts) and 128 terms with synonyms.

import { stem } from './stem.js';

/**
 * Abbreviations written into their full word before stemming, on both sides: a tool that says "repo"
 * and a query that says "repository" share a term at full weight. Only unambiguous shortenings belong
 * here; words that are related but not the same are synonyms (synonyms.ts), which weigh less.
 */
const SPELLED_OUT: ReadonlyMap<string, string> = new Map([
  ['repo', 'repository'],
  ['repos', 'repositories'],
  ['msg', 'message'],
  ['msgs', 'messages'],
  ['db', 'database'],
  ['dbs', 'databases'],
  ['dir', 'directory'],
  ['dirs', 'directories'],
  ['doc', 'document'],
  ['docs', 'documentation'],
  ['md', 'markdown'],
  ['todo', 'task'],
  ['todos', 'tasks'],
  ['img', 'image'],
  ['imgs', 'images'],
  ['pic', 'picture'],
  ['pics', 'pictures'],
  ['config', 'configuration'],
  ['cfg', 'configuration'],
  ['env', 'environment'],
  ['info', 'information'],
  ['param', 'parameter'],
  ['params', 'parameters'],
  ['arg', 'argument'],
  ['args', 'arguments'],
  ['auth', 'authentication'],
  ['temp', 'temporary'],
  ['tmp', 'temporary'],
  ['del', 'delete'],
  ['rm', 'remove'],
  ['mv', 'move'],
  ['cp', 'copy'],
  ['ls', 'list'],
  ['mkdir', 'make directory'],
  ['cwd', 'current directory'],
  ['pwd', 'current directory'],
  ['pr', 'pull request'],
  ['prs', 'pull requests'],
  ['mr', 'merge request'],
  ['mrs', 'merge requests'],
  ['calc', 'calculate'],
  ['stats', 'statistics'],
  ['nav', 'navigate'],
  ['btn', 'button'],
  ['url', 'url'],
  ['urls', 'urls'],
  ['addr', 'address'],
  ['desc', 'description'],
  ['num', 'number'],
  ['org', 'organization'],
  ['orgs', 'organizations'],
  ['txt', 'text'],
  ['kv', 'key value'],
  ['dm', 'direct message'],
  ['dms', 'direct messages'],
  ['ss', 'screenshot'],
  ['wiki', 'wiki'],
]);

/** Longest run of characters read from one text: a huge description costs a bounded amount. */
export const MAX_TEXT = 16_384;
/** Most terms one text yields. */
const MAX_TERMS = 2_048;

// Words: runs of letters or digits; camelCase and "HTTPServer" are split below.
const WORD = /[\p{L}\p{M}]+|\p{N}+/gu;
const CAMEL = /(?<=[\p{Ll}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

/** Raw lower-case words of a text, split as names are written; no stemming, no spelling out. */
export function splitWords(text: string, max = MAX_TERMS): string[] {
  const out: string[] = [];
  const input = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
  for (const match of input.matchAll(WORD)) {
    for (const part of match[0].split(CAMEL)) {
      if (part.length === 0) continue;
      out.push(part.toLowerCase());
      if (out.length >= max) return out;
    }
  }
  return out;
}

/** Words that carry no meaning for choosing a tool; they would only add noise to the scores. */
const STOP = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'of',
  'to',
  'in',
  'on',
  'for',
  'with',
  'by',
  'at',
  'from',
  'into',
  'is',
  'are',
  'be',
  'was',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'as',
  'if',
  'can',
  'will',
  'i',
  'me',
  'my',
  'we',
  'our',
  'you',
  'your',
  'some',
  'any',
  'all',
  'so',
  'do',
  'does',
  'please',
  'want',
  'need',
  'would',
  'like',
  'should',
  'could',
  'about',
  'there',
  'what',
  'which',
  'how',
  'when',
  'where',
  'who',
  'than',
  'then',
  'also',
  'just',
  'use',
  'using',
  'used',
  'e',
  'g',
  'eg',
  'etc',
  'not',
  'no',
  'yes',
  'only',
  'one',
  'up',
  'out',
  'over',
  'via',
  'per',
  'but',
  'has',
  'have',
  'been',
  'being',
  'let',
  'lets',
  'tool',
  'tools',
  'optional',
  'default',
  // General English function words (pronouns, auxiliaries, intensifiers) and the phrasing of a request
  // ("can you please help me…", "I'd like a way to…"): what an agent says around a task, not the task.
  'he',
  'she',
  'they',
  'them',
  'their',
  'his',
  'her',
  'him',
  'us',
  'am',
  'were',
  'had',
  'did',
  'doing',
  'having',
  'very',
  'too',
  'really',
  'actually',
  'maybe',
  'perhaps',
  'kindly',
  'hey',
  'hi',
  'hello',
  'thanks',
  'thank',
  'somehow',
  'something',
  'anything',
  'way',
  'able',
  'possible',
  'try',
  'trying',
  'wanna',
  'gonna',
  'quickly',
  'basically',
  'here',
  'whether',
  'might',
  'may',
  'must',
  'shall',
  'own',
  'such',
  'same',
]);

/** Whether a word (lower-case, as splitWords gives it) is a stop word. */
export function isStop(word: string): boolean {
  return STOP.has(word);
}

// "to-do" splits into two stop words; it means a task.
const TO_DO = /\bto[- ]?do/i;
const TO_DO_ALL = /\bto[- ]?do(?=s?\b)/gi;

/** The index's terms of a text: words, spelled out, without stop words and single letters (the "s" of "what's"), stemmed. */
export function terms(text: string, max = MAX_TERMS): string[] {
  const out: string[] = [];
  const input = TO_DO.test(text) ? text.slice(0, MAX_TEXT).replace(TO_DO_ALL, 'task') : text;
  for (const word of splitWords(input, max)) {
    const full = SPELLED_OUT.get(word);
    if (full !== undefined) {
      for (const part of full.split(' ')) out.push(stem(part));
    } else if (!STOP.has(word) && !(word.length === 1 && word >= 'a' && word <= 'z')) {
      out.push(stem(word));
    }
    if (out.length >= max) break;
  }
  return out;
}
