// The action model of the tool index (src/search/actions.ts): a tool's action is the first verb of its
// name, a task's action the base-form verb it leads with, and the index favours the tool whose action
// the task asks for.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nameAction, taskActions } from '../../../src/search/actions.js';
import { terms } from '../../../src/search/words.js';
import { ToolIndex, type SearchDoc } from '../../../src/search/tool-index.js';

/** The classes of a verb, as a tool's name would give them. */
const actionsOf = (verb: string): number => nameAction(terms(verb));

void describe('actions', { timeout: 5000 }, () => {
  void it("reads a tool's action from the first verb of its name, past a server prefix", { timeout: 5000 }, () => {
    assert.equal(nameAction(terms('puppeteer_fill')), actionsOf('fill'));
    assert.equal(nameAction(terms('API-retrieve-a-page')), actionsOf('get'));
    assert.equal(nameAction(terms('listDirectories')), actionsOf('list'));
    assert.equal(nameAction(terms('maps_geocode')), 0);
    for (const verb of ['fill', 'get', 'list', 'delete', 'create', 'update', 'search']) assert.notEqual(actionsOf(verb), 0, verb);
    assert.equal(actionsOf('delete') & actionsOf('create'), 0);
  });
  void it('puts everyday verbs for one action in one class', { timeout: 5000 }, () => {
    for (const [a, b] of [
      ['add', 'create'],
      ['erase', 'delete'],
      ['modify', 'update'],
      ['lookup', 'search'],
      ['fetch', 'get'],
      ['type', 'fill'],
    ] as const) {
      assert.equal(taskActions(`${a} it`) & actionsOf(b), actionsOf(b), `${a} ~ ${b}`);
    }
    assert.equal(taskActions('add it') & actionsOf('delete'), 0);
  });
  void it('takes the verb a task leads with, past the phrasing of a request, in its base form only', { timeout: 5000 }, () => {
    assert.equal(taskActions('Can you please erase the old logs'), actionsOf('delete'));
    assert.equal(taskActions('I want to make a new calendar event'), actionsOf('create'));
    assert.equal(taskActions('which searches are still running'), 0);
    assert.equal(taskActions('repeat my message back to me'), 0);
    assert.equal(taskActions('please'), 0);
    assert.equal(taskActions(''), 0);
    assert.ok(taskActions('x '.repeat(1_000_000) + 'delete') === 0);
  });
});

void describe('ToolIndex action bonus', { timeout: 5000 }, () => {
  const TOOLS: SearchDoc[] = [
    { key: 'delete', name: 'delete_note', server: 'notes', description: 'Delete a note.' },
    { key: 'create', name: 'create_note', server: 'notes', description: 'Create a note.' },
  ];
  const indexOf = (actionBonus?: number): ToolIndex => {
    const index = new ToolIndex(actionBonus === undefined ? {} : { actionBonus });
    for (const doc of TOOLS) index.upsert(doc);
    return index;
  };
  void it("ranks the tool whose action the task asks for first, in the task's own words", { timeout: 5000 }, () => {
    // "erase" and "make" are not the names' words: the synonyms and the action classes meet them.
    assert.equal(indexOf().search('please erase my note', 2)[0]!.key, 'delete');
    assert.equal(indexOf().search('make a note', 2)[0]!.key, 'create');
  });
  void it('scores a matching action by the bonus and is off at 0', { timeout: 5000 }, () => {
    const on = indexOf(0.5).search('add a note', 2);
    const off = indexOf(0).search('add a note', 2);
    assert.equal(on[0]!.key, 'create');
    const create = (hits: typeof on): number => hits.find((h) => h.key === 'create')!.score;
    const del = (hits: typeof on): number => hits.find((h) => h.key === 'delete')?.score ?? 0;
    assert.ok(Math.abs(create(on) - 1.5 * create(off)) < 1e-9);
    assert.equal(del(on), del(off));
    assert.throws(() => new ToolIndex({ actionBonus: -1 }), RangeError);
  });
});
