// Task-shaped search (src/search/task-search.ts): a task of several steps gets a tool for each step,
// a task of one step is one plain search, `allow` holds, and a long task is read to a bound at a
// bounded cost, keeping its most informative words.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ToolIndex, type SearchDoc } from '../../../src/search/tool-index.js';
import { MAX_TASK_CHARS, searchTask } from '../../../src/search/task-search.js';

/** Most steps of a task searched on their own. */
const MAX_STEPS = 8;

const web = (i: number): SearchDoc => ({
  key: `web${i}__search_papers`,
  name: 'search_papers',
  server: `web${i}`,
  description: `Find the latest research papers on a topic such as retrieval augmented generation and list the papers with their summary (index ${i}).`,
});
const TOOLS: SearchDoc[] = [
  ...[1, 2, 3, 4, 5, 6].map(web),
  { key: 'text__summarize', name: 'summarize_text', server: 'text', description: 'Summarize a long text into a short summary.' },
  { key: 'slack__post_message', name: 'post_message', server: 'slack', description: 'Post a message to a Slack channel.' },
  { key: 'fs__read_file', name: 'read_file', server: 'fs', description: 'Read the complete contents of a file.' },
  { key: 'maps__directions', name: 'maps_directions', server: 'maps', description: 'Get directions between two points.' },
];
const index = (): ToolIndex => {
  const built = new ToolIndex();
  for (const doc of TOOLS) built.upsert(doc);
  return built;
};
const keys = (hits: readonly { key: string }[]): string[] => hits.map((hit) => hit.key);

/** An index that records the queries it is asked: a task's whole text first, then each of its steps. */
class RecordingIndex extends ToolIndex {
  readonly queries: string[] = [];

  override search(query: string, limit: number, allow?: (key: string) => boolean): ReturnType<ToolIndex['search']> {
    this.queries.push(query);
    return super.search(query, limit, allow);
  }
}

/** The steps searchTask searched `text` by (none besides the whole text: a task of one step). */
function stepsOf(text: string): string[] {
  const recording = new RecordingIndex();
  for (const doc of TOOLS) recording.upsert(doc);
  searchTask(recording, text, 5);
  return recording.queries.slice(1);
}
const TASK =
  'Find the latest papers on retrieval augmented generation, summarize them and post the summary papers list to the team channel.';

void describe('searchTask', { timeout: 10_000 }, () => {
  void it('returns a tool for each step where one search lets the rarest step crowd out the others', { timeout: 5000 }, () => {
    const tools = index();
    const plain = keys(tools.search(TASK, 5));
    // The fixture's point: six paper searches fill one ranking of the whole text.
    assert.ok(!plain.includes('slack__post_message') || !plain.includes('text__summarize'), plain.join(', '));
    const task = keys(searchTask(tools, TASK, 5));
    assert.ok(
      task.some((key) => key.endsWith('__search_papers')),
      task.join(', '),
    );
    assert.ok(task.includes('text__summarize'), task.join(', '));
    assert.ok(task.includes('slack__post_message'), task.join(', '));
    assert.equal(task.length, 5);
  });

  void it('cuts a task at sentences, clauses and "and then"; a piece with no indexed word is no step', { timeout: 5000 }, () => {
    assert.deepEqual(stepsOf('Read the file /tmp/a.txt. Then summarize it, and then post it to Slack; please.'), [
      'Read the file /tmp/a.txt',
      'summarize it',
      'post it to Slack',
    ]);
    assert.deepEqual(stepsOf('1. read the file\n2. get directions'), ['read the file', 'get directions']);
    assert.deepEqual(stepsOf('read the file'), [], 'a task of one step is one search');
  });

  void it('searches a task of one step exactly as ToolIndex.search does', { timeout: 5000 }, () => {
    const tools = index();
    for (const query of ['read a file', 'directions between two points', 'zzz unknown words']) {
      assert.deepEqual(searchTask(tools, query, 5), tools.search(query, 5));
    }
  });

  void it('asks allow before a tool takes a place, in every step', { timeout: 5000 }, () => {
    const tools = index();
    const hits = keys(searchTask(tools, TASK, 10, (key) => key !== 'slack__post_message' && !key.startsWith('web1')));
    assert.ok(!hits.includes('slack__post_message'));
    assert.ok(!hits.some((key) => key.startsWith('web1_')));
    assert.ok(hits.includes('text__summarize'));
  });

  void it('reads a long task to MAX_TASK_CHARS at a bounded cost and searches at most MAX_STEPS steps', { timeout: 10_000 }, () => {
    const tools = index();
    assert.ok(MAX_TASK_CHARS >= 20_000);
    const sentences = Array.from({ length: 4000 }, (_, i) => `Sentence ${i} reads a file and gets directions.`).join(' ');
    assert.ok(stepsOf(sentences).length <= MAX_STEPS);
    assert.ok(stepsOf(sentences).length > 1);
    const started = performance.now();
    const hits = searchTask(tools, `${sentences} Post the message to Slack.`, 5);
    assert.ok(performance.now() - started < 1000);
    assert.equal(hits.length, 5);
    // Beyond the bound nothing is read: the Slack step sits after 100,000 characters.
    assert.ok(!keys(hits).includes('slack__post_message'));
  });

  void it('keeps the informative words of a long query, not its first ones', { timeout: 5000 }, () => {
    const tools = index();
    // Forty words no tool has, then the words that name the tool meant: a search of the first words
    // alone would find nothing.
    const query = `${Array.from({ length: 40 }, (_, i) => `qq${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}`).join(' ')} directions between two points`;
    assert.equal(tools.search(query, 1)[0]!.key, 'maps__directions');
  });
});
