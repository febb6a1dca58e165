// Words an agent uses for what a tool calls by another name: "remove" for "delete", "email" for
// "mail", "look up" for "search". A query term brings its synonyms in at a lower weight (the index's
// `synonymWeight`), so a tool that uses the agent's own word still ranks first.
// The groups join words for one action or thing (delete/remove, email/mail, calendar/event,
// hover/mouse, dialog/popup…); a query word brings in every group it is in.

import { terms } from './words.js';

/** Each group: words (or short phrases) that name the same action or thing in a tool catalog. */
const GROUPS: readonly (readonly string[])[] = [
  // Actions.
  ['delete', 'remove', 'erase', 'destroy', 'drop', 'trash', 'purge', 'forget', 'discard', 'wipe', 'uninstall'],
  ['create', 'add', 'new', 'make', 'insert', 'open', 'start'],
  ['update', 'edit', 'modify', 'change', 'patch', 'set', 'rename', 'replace', 'sync', 'refresh'],
  ['list', 'enumerate', 'show', 'browse', 'all', 'every', 'available'],
  ['search', 'find', 'lookup', 'look', 'query', 'seek', 'locate', 'discover', 'filter'],
  ['read', 'get', 'fetch', 'retrieve', 'view', 'open', 'load', 'download', 'content', 'inspect', 'see', 'inside'],
  ['write', 'save', 'store', 'put', 'overwrite'],
  ['upload', 'attach'],
  ['send', 'post', 'publish', 'reply', 'message', 'tell', 'notify', 'announce'],
  ['run', 'execute', 'exec', 'invoke', 'launch', 'start', 'trigger'],
  ['stop', 'kill', 'terminate', 'close', 'cancel', 'end', 'quit', 'abort', 'halt', 'finish'],
  ['move', 'rename', 'relocate', 'reorder', 'reparent'],
  ['copy', 'duplicate', 'clone', 'fork'],
  ['click', 'press', 'tap', 'hit', 'push'],
  ['type', 'fill', 'enter', 'input', 'keys', 'keyboard', 'write'],
  ['hover', 'mouse', 'mouseover', 'pointer'],
  ['drag', 'drop'],
  ['select', 'choose', 'pick', 'option', 'dropdown'],
  ['navigate', 'go', 'visit', 'browse', 'goto', 'url'],
  ['think', 'reason', 'reflect', 'plan', 'step', 'problem'],
  ['generate', 'draw', 'paint', 'illustrate', 'render'],
  ['scrape', 'extract', 'crawl', 'grab', 'harvest'],
  ['research', 'investigate', 'study', 'analyze', 'report'],
  ['monitor', 'watch', 'track', 'observe'],
  ['approve', 'review', 'approval'],
  ['deploy', 'apply', 'install', 'rollout', 'release'],
  ['rollback', 'undo', 'revert', 'restore'],
  ['forward', 'expose', 'tunnel'],
  ['switch', 'select', 'use', 'activate', 'focus'],
  ['wait', 'until', 'appear', 'pause'],
  ['evaluate', 'javascript', 'script', 'js'],
  ['resize', 'viewport', 'window', 'dimension', 'width', 'height'],
  ['scale', 'replica', 'instance'],
  ['describe', 'detail', 'information', 'metadata', 'explain', 'about'],
  ['allow', 'permit', 'permission', 'access', 'authorized'],
  // Things.
  ['email', 'mail', 'gmail', 'inbox'],
  ['calendar', 'event', 'meeting', 'appointment', 'schedule'],
  ['task', 'todo', 'reminder', 'item'],
  ['file', 'document', 'path', 'disk'],
  ['directory', 'folder'],
  ['repository', 'project', 'codebase'],
  ['issue', 'ticket', 'bug', 'problem'],
  ['pull request', 'merge request', 'change request'],
  ['comment', 'note', 'remark', 'feedback'],
  ['user', 'person', 'people', 'member', 'account', 'profile', 'everyone'],
  ['self', 'me', 'bot', 'whoami'],
  ['channel', 'room', 'conversation', 'group'],
  ['database', 'sql', 'table', 'rows', 'records'],
  ['image', 'picture', 'photo', 'png', 'jpeg'],
  ['screenshot', 'capture', 'snapshot'],
  ['web', 'internet', 'online', 'news'],
  ['page', 'website', 'site', 'webpage', 'article'],
  ['location', 'place', 'address', 'map'],
  ['business', 'restaurant', 'shop', 'cafe', 'hotel', 'nearby', 'local'],
  ['coordinate', 'latitude', 'longitude', 'geocode', 'gps'],
  ['direction', 'route', 'travel', 'drive', 'driving', 'car', 'commute'],
  ['distance', 'far'],
  ['elevation', 'altitude', 'height', 'high'],
  ['weather', 'forecast', 'temperature'],
  ['memory', 'remember', 'knowledge', 'recall', 'graph'],
  ['entity', 'node', 'object'],
  ['relation', 'link', 'connection', 'relationship'],
  ['observation', 'fact', 'detail'],
  ['branch', 'ref'],
  ['commit', 'change', 'revision'],
  ['tree', 'hierarchy', 'structure', 'layout', 'nested', 'recursive', 'outline'],
  ['log', 'history', 'recent', 'previous', 'past', 'output', 'print'],
  ['console', 'log', 'error', 'debug'],
  ['size', 'length', 'metadata', 'big', 'space'],
  ['key', 'secret', 'token'],
  ['configuration', 'settings', 'preferences', 'options', 'setup'],
  ['environment', 'variable', 'env'],
  ['dialog', 'popup', 'alert', 'prompt', 'confirm', 'modal'],
  ['tab', 'window'],
  ['iframe', 'frame', 'embedded', 'embed'],
  ['form', 'field', 'signup'],
  ['cookie', 'session'],
  ['device', 'mobile', 'phone', 'iphone', 'android', 'agent'],
  ['http', 'api', 'endpoint', 'request', 'rest'],
  ['html', 'markup', 'source'],
  ['text', 'visible', 'content', 'words'],
  ['pdf', 'document', 'print'],
  ['markdown', 'md'],
  ['documentation', 'manual', 'reference', 'guide', 'docs'],
  ['library', 'package', 'module', 'framework', 'sdk'],
  ['block', 'paragraph', 'section', 'content'],
  ['schema', 'structure', 'columns', 'properties', 'fields'],
  ['paper', 'article', 'publication', 'scientific', 'academic'],
  ['citation', 'cite', 'related', 'reference'],
  ['credit', 'balance', 'quota', 'usage', 'billing', 'remaining'],
  ['statistics', 'usage', 'metric', 'analytics', 'count'],
  ['status', 'state', 'progress', 'check', 'ci', 'pipeline', 'finished', 'done'],
  ['more', 'next', 'pagination', 'offset', 'continue'],
  ['active', 'running', 'ongoing', 'current', 'open'],
  ['process', 'program', 'pid', 'app', 'application'],
  ['shell', 'terminal', 'command', 'cli'],
  ['pod', 'container'],
  ['transcript', 'caption', 'subtitle'],
  ['reaction', 'emoji', 'react'],
  ['llm', 'model', 'ai', 'sampling', 'completion'],
  ['record', 'recording', 'codegen'],
  ['test', 'spec', 'testing'],
];

/** Most synonyms one query term brings in. */
const MAX_PER_TERM = 24;

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
