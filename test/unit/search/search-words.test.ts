// Words of the tool index (src/search/words.ts, stem.ts, synonyms.ts): names split as they are
// written, abbreviations spelled out on both sides, a light stemmer that meets verb forms and plurals
// without conflating unrelated words, and synonym groups.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitWords, terms } from '../../../src/search/words.js';
import { stem } from '../../../src/search/stem.js';
import { synonymsOf } from '../../../src/search/synonyms.js';

/** Most terms read from one text. */
const MAX_TERMS = 2_048;

void describe('splitWords', { timeout: 5000 }, () => {
  void it('splits snake, kebab, camel case, acronyms and digits', { timeout: 5000 }, () => {
    assert.deepEqual(splitWords('get_file_contents'), ['get', 'file', 'contents']);
    assert.deepEqual(splitWords('read-multiple-files'), ['read', 'multiple', 'files']);
    assert.deepEqual(splitWords('getFileContents'), ['get', 'file', 'contents']);
    assert.deepEqual(splitWords('HTTPServer parseJSONBody'), ['http', 'server', 'parse', 'json', 'body']);
    assert.deepEqual(splitWords('s3Bucket v2beta'), ['s', '3', 'bucket', 'v', '2', 'beta']);
    assert.deepEqual(splitWords('browser.navigate/back'), ['browser', 'navigate', 'back']);
  });
  void it('keeps letters of other scripts as words', { timeout: 5000 }, () => {
    assert.deepEqual(splitWords('créer_fichier Ärger'), ['créer', 'fichier', 'ärger']);
  });
  void it('reads a bounded amount of a huge text', { timeout: 5000 }, () => {
    const words = splitWords('word '.repeat(1_000_000));
    assert.ok(words.length <= MAX_TERMS);
    assert.ok(terms('x'.repeat(5_000_000)).length <= 1);
  });
});

void describe('terms', { timeout: 5000 }, () => {
  void it('spells out abbreviations, drops stop words, stems', { timeout: 5000 }, () => {
    assert.deepEqual(terms('open a PR in my repo'), ['open', 'pull', 'request', 'repository']);
    assert.deepEqual(terms('list_repos'), terms('list repositories'));
    assert.deepEqual(terms('rm the tmp dir'), terms('remove temporary directory'));
    assert.deepEqual(terms('send msg to the db'), terms('send message database'));
    assert.deepEqual(terms("what's on my to-do list"), ['task', 'list']);
    assert.deepEqual(terms('todos for today'), ['task', 'today']);
  });
  void it('drops the phrasing of a request around the task', { timeout: 5000 }, () => {
    assert.deepEqual(terms('hey, could you maybe help me find a way to delete their old files'), terms('help find delete old files'));
  });
});

void describe('stem', { timeout: 5000 }, () => {
  void it('meets verb forms and plurals on one stem', { timeout: 5000 }, () => {
    for (const group of [
      ['create', 'creates', 'created', 'creating', 'creation'],
      ['delete', 'deletes', 'deleted', 'deleting', 'deletion'],
      ['file', 'files'],
      ['directory', 'directories'],
      ['search', 'searches', 'searching', 'searched'],
      ['run', 'running', 'runs'],
      ['match', 'matches'],
      ['manage', 'management'],
      ['navigate', 'navigation', 'navigated'],
      ['configure', 'configuration'],
    ]) {
      const stems = new Set(group.map(stem));
      assert.equal(stems.size, 1, `${group.join(', ')} → ${[...stems].join(', ')}`);
    }
  });
  void it('leaves short words, digits and words it should not touch alone', { timeout: 5000 }, () => {
    for (const word of ['ls', 'rm', 'pr', 'ids', 'bus', 'status', 'access', 'analysis', '2024', 'the']) assert.equal(stem(word), word);
    assert.notEqual(stem('general'), stem('generate'));
    assert.notEqual(stem('user'), stem('use'));
  });
});

void describe('synonymsOf', { timeout: 5000 }, () => {
  void it("gives the other members of a term's groups as terms", { timeout: 5000 }, () => {
    const flat = (term: string): string[] => synonymsOf(term).map((s) => s.join(' '));
    assert.ok(flat(stem('delete')).includes(stem('remove')));
    assert.ok(flat(stem('remove')).includes(stem('delete')));
    assert.ok(flat('email').includes('mail'));
    assert.ok(flat('calendar').includes('event'));
    assert.ok(!flat(stem('delete')).includes(stem('delete')));
    assert.deepEqual(synonymsOf('zzzunknown'), []);
  });
});
