// Words an agent uses for what a tool calls by another name: "remove" for "delete", "email" for
// "mail", "look up" for "search". A query term brings its synonyms in at a lower weight (the index's
// `synonymWeight`), so a tool that uses the agent's own word still ranks first.

import { terms } from './words.js';

/** Each group: words (or short phrases) that name the same action or thing in a tool catalog. */
const GROUPS: readonly (readonly string[])[] = [
  ['delete', 'remove', 'erase', 'destroy', 'drop', 'trash', 'purge'],
  ['create', 'add', 'new', 'make', 'insert', 'open'],
  ['update', 'edit', 'modify', 'change', 'patch', 'set', 'rename'],
  ['list', 'enumerate', 'show', 'browse', 'all'],
  ['search', 'find', 'lookup', 'look', 'query', 'seek', 'locate', 'discover'],
  ['read', 'get', 'fetch', 'retrieve', 'view', 'open', 'load', 'download', 'content'],
  ['write', 'save', 'store', 'put', 'upload'],
  ['send', 'post', 'publish', 'reply', 'message'],
  ['run', 'execute', 'exec', 'invoke', 'launch', 'start', 'trigger'],
  ['stop', 'kill', 'terminate', 'close', 'cancel', 'end'],
  ['email', 'mail', 'gmail', 'inbox'],
  ['calendar', 'event', 'meeting', 'appointment', 'schedule'],
  ['file', 'document', 'path'],
  ['directory', 'folder'],
  ['repository', 'project', 'codebase'],
  ['issue', 'ticket', 'bug'],
  ['pull request', 'merge request', 'change request'],
  ['comment', 'note', 'remark'],
  ['user', 'person', 'people', 'member', 'account', 'profile'],
  ['channel', 'room', 'conversation'],
  ['database', 'sql', 'table'],
  ['image', 'picture', 'photo'],
  ['screenshot', 'capture', 'snapshot'],
  ['web', 'internet', 'online'],
  ['page', 'website', 'site', 'webpage'],
  ['click', 'press', 'tap'],
  ['type', 'fill', 'enter', 'input'],
  ['navigate', 'go', 'visit', 'browse', 'goto'],
  ['location', 'place', 'address', 'map'],
  ['direction', 'route', 'travel'],
  ['distance', 'far'],
  ['weather', 'forecast', 'temperature'],
  ['memory', 'remember', 'knowledge', 'recall'],
  ['entity', 'node', 'object'],
  ['relation', 'link', 'connection', 'relationship'],
  ['branch', 'ref'],
  ['commit', 'change', 'revision'],
  ['move', 'rename', 'relocate'],
  ['copy', 'duplicate', 'clone'],
  ['tree', 'hierarchy', 'structure'],
  ['think', 'reason', 'reflect', 'plan'],
  ['log', 'history'],
  ['size', 'length', 'metadata'],
  ['key', 'secret', 'token'],
  ['download', 'pdf', 'export'],
];

/** Most synonyms one query term brings in. */
const MAX_PER_TERM = 12;

/** term → the other terms of its groups (each a list of terms: a phrase gives several). */
function build(): ReadonlyMap<string, readonly (readonly string[])[]> {
  const map = new Map<string, (readonly string[])[]>();
  for (const group of GROUPS) {
    const members = group.map((phrase) => terms(phrase));
    for (const member of members) {
      // A phrase ("pull request") is found by its last word's term; one-word members by their own.
      if (member.length !== 1) continue;
      const key = member[0]!;
      const list = map.get(key) ?? [];
      for (const other of members) {
        if (other.join(' ') === key) continue;
        if (list.length < MAX_PER_TERM && !list.some((l) => l.join(' ') === other.join(' '))) list.push(other);
      }
      map.set(key, list);
    }
  }
  return map;
}

const SYNONYMS = build();

/** The synonyms of one (stemmed) term, each as the terms it stands for. */
export function synonymsOf(term: string): readonly (readonly string[])[] {
  return SYNONYMS.get(term) ?? [];
}
