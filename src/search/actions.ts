// The action a tool performs, read from its name: most tool names lead with a verb ("create_issue",
// "browser_click", "API-retrieve-a-page"), and an agent's task usually says the action it wants in
// other words ("add a task", "erase the file", "show me the page"). Each class gathers the everyday
// English verbs for one action; a tool's action is the class of the first word of its name that has
// one (a server prefix such as "puppeteer_" or "kubectl_" has none), and a task's action is the class
// of the verb it leads with. The index favours a tool whose action the task asks for.
// The classes, e.g. add/make/new → create, fetch/show/read → get, erase/remove → delete, edit/modify →
// update, find/lookup → search, type/fill… A task's action is that of its first word that is not a
// stop word, when that word is a verb's base form: an imperative leads with its verb, while "running",
// "searches" or a later noun like "message" ask for no action.

import { isStop, splitWords, terms } from './words.js';

/** Action classes, each a few everyday verbs for one action (at most 31 classes: a bit mask). */
const CLASSES: readonly (readonly string[])[] = [
  ['create', 'add', 'new', 'make', 'insert', 'register', 'generate', 'compose', 'draft'],
  ['get', 'fetch', 'show', 'read', 'retrieve', 'view', 'load', 'display', 'open', 'see', 'obtain'],
  ['list', 'enumerate', 'browse'],
  ['delete', 'remove', 'erase', 'destroy', 'drop', 'trash', 'purge', 'discard', 'wipe'],
  ['update', 'edit', 'modify', 'change', 'patch', 'set', 'alter', 'adjust', 'amend'],
  ['search', 'find', 'lookup', 'look', 'query', 'locate', 'seek', 'discover'],
  ['send', 'post', 'publish', 'reply', 'message', 'notify', 'share'],
  ['run', 'execute', 'exec', 'invoke', 'launch', 'start', 'trigger'],
  ['stop', 'kill', 'terminate', 'cancel', 'abort', 'halt', 'end', 'close'],
  ['move', 'relocate', 'rename'],
  ['copy', 'duplicate', 'clone', 'fork'],
  ['write', 'save', 'store', 'put', 'overwrite'],
  ['type', 'fill', 'enter', 'input'],
  ['click', 'press', 'tap'],
  ['navigate', 'go', 'visit', 'goto', 'open'],
  ['hover', 'mouseover'],
  ['upload', 'attach'],
  ['download', 'export'],
  ['describe', 'explain', 'inspect', 'detail'],
  ['scrape', 'extract', 'crawl', 'grab'],
  ['select', 'choose', 'pick'],
  ['wait', 'pause'],
  ['check', 'verify', 'validate'],
];

/** word → the classes it belongs to (a word may name two actions: "open" a page, "open" a file). */
function build(key: (verb: string) => readonly string[]): ReadonlyMap<string, number> {
  const map = new Map<string, number>();
  CLASSES.forEach((verbs, c) => {
    for (const verb of verbs) {
      for (const word of key(verb)) map.set(word, (map.get(word) ?? 0) | (1 << c));
    }
  });
  return map;
}

/** The verbs as the index's terms (stemmed), for a tool's name: "list_files", "listing" alike. */
const ACTIONS = build((verb) => terms(verb));

/**
 * The verbs as written, for a task: a task asks for an action in the imperative, the verb's base form
 * ("run the tests"); "running", "searches", "edited" describe a state or a thing ("which searches are
 * still running") and ask for no action.
 */
const BASE_FORMS = build((verb) => [verb]);

/** The action classes (a bit mask) of one term of a name; 0 when it names no action. */
function actionsOf(term: string): number {
  return ACTIONS.get(term) ?? 0;
}

/**
 * The action classes a task asks for: those of its first word that is not a stop word, when that word
 * is a verb in its base form. An imperative leads with its verb ("please add a reminder", "can you
 * find…"); a verb further on, or a noun that is spelled like one ("repeat my message"), often is not
 * the action asked for.
 */
export function taskActions(text: string): number {
  for (const word of splitWords(text, MAX_TASK_WORDS)) {
    if (!isStop(word)) return BASE_FORMS.get(word) ?? 0;
  }
  return 0;
}

/** Words of a task read for its first meaningful one: a task of only stop words asks for nothing. */
const MAX_TASK_WORDS = 64;

/** A tool's action: the classes of the first of its name's terms that names one; 0 when none does. */
export function nameAction(nameTerms: readonly string[]): number {
  for (const term of nameTerms) {
    const mask = actionsOf(term);
    if (mask !== 0) return mask;
  }
  return 0;
}
