// The tool index (src/search/tool-index.ts): BM25F ranking over a tool's fields, field weights,
// upsert replacing by key, remove, `allow` applied before the limit, bounded input, and fusion.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ToolIndex, type SearchDoc } from '../../../src/search/tool-index.js';
import { schemaParameters } from '../../../src/search/tool-fields.js';
import { fuse } from '../../../src/search/fuse.js';

/** Most parameters read from one tool's schema. */
const MAX_PARAMETERS = 128;

const TOOLS: SearchDoc[] = [
  {
    key: 'fs__read_file',
    name: 'read_file',
    server: 'fs',
    description: 'Read the complete contents of a file from the file system.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  {
    key: 'fs__list_directory',
    name: 'list_directory',
    server: 'fs',
    description: 'Get a detailed listing of all files and directories in a specified path.',
  },
  { key: 'fs__move_file', name: 'move_file', server: 'fs', description: 'Move or rename files and directories.' },
  {
    key: 'gh__create_issue',
    name: 'create_issue',
    server: 'github',
    description: 'Create a new issue in a GitHub repository',
    inputSchema: { type: 'object', properties: { owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' } } },
  },
  {
    key: 'gh__create_pull_request',
    name: 'create_pull_request',
    server: 'github',
    description: 'Create a new pull request in a GitHub repository',
  },
  { key: 'slack__post_message', name: 'slack_post_message', server: 'slack', description: 'Post a new message to a Slack channel' },
  { key: 'maps__directions', name: 'maps_directions', server: 'maps', description: 'Get directions between two points' },
];

function indexOf(docs: readonly SearchDoc[], options?: ConstructorParameters<typeof ToolIndex>[0]): ToolIndex {
  const index = new ToolIndex(options);
  for (const doc of docs) index.upsert(doc);
  return index;
}

const keys = (hits: readonly { key: string }[]): string[] => hits.map((h) => h.key);

void describe('ToolIndex ranking', { timeout: 5000 }, () => {
  void it('finds a tool by the words of its name, camel or snake, and by its description', { timeout: 5000 }, () => {
    const index = indexOf(TOOLS);
    assert.equal(index.search('readFile', 3)[0]!.key, 'fs__read_file');
    assert.equal(index.search('open a PR', 3)[0]!.key, 'gh__create_pull_request');
    assert.equal(index.search('send a message to the team channel', 3)[0]!.key, 'slack__post_message');
    assert.equal(index.search('how do I drive from Paris to Lyon (directions)', 3)[0]!.key, 'maps__directions');
  });
  void it('meets a synonym and a stem: "remove folder contents" still finds listing by "folder"', { timeout: 5000 }, () => {
    const index = indexOf(TOOLS);
    assert.equal(index.search('show folders', 3)[0]!.key, 'fs__list_directory');
    assert.equal(index.search('renaming files', 3)[0]!.key, 'fs__move_file');
  });
  void it('returns hits best first with positive scores, at most limit, and none for no match', { timeout: 5000 }, () => {
    const index = indexOf(TOOLS);
    const hits = index.search('create', 10);
    assert.deepEqual(keys(hits).slice(0, 2).sort(), ['gh__create_issue', 'gh__create_pull_request']);
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score >= hits[i]!.score);
    assert.ok(hits.every((h) => h.score > 0));
    assert.equal(index.search('create', 1).length, 1);
    assert.deepEqual(index.search('zzzz qqqq', 5), []);
    assert.deepEqual(index.search('', 5), []);
    assert.deepEqual(index.search('file', 0), []);
    assert.deepEqual(index.search('file', -3), []);
    assert.deepEqual(index.search('file', Number.NaN), []);
  });
  void it('weights fields: the name outweighs the description unless told otherwise', { timeout: 5000 }, () => {
    const docs: SearchDoc[] = [
      {
        key: 'a',
        name: 'archive_thing',
        server: 's',
        description: 'Stores a copy of the thing for later. See also backups of backups of backups.',
      },
      { key: 'b', name: 'backup', server: 's', description: 'Stores a copy of the thing.' },
    ];
    assert.equal(indexOf(docs).search('backup', 2)[0]!.key, 'b');
    assert.equal(indexOf(docs, { weights: { name: 0 } }).search('backup', 2)[0]!.key, 'a');
    // A field at weight 0 is not searched at all.
    assert.deepEqual(indexOf(docs, { weights: { name: 0, summary: 0, description: 0 } }).search('backup', 2), []);
  });
  void it('searches parameter names and descriptions, server name and instructions where weighted', { timeout: 5000 }, () => {
    const docs: SearchDoc[] = [
      {
        key: 'x',
        name: 'run',
        server: 'alpha',
        inputSchema: { type: 'object', properties: { spreadsheetId: { type: 'string', description: 'the workbook to open' } } },
      },
      { key: 'y', name: 'run', server: 'weatherly', serverInstructions: 'Forecasts for any city.' },
    ];
    const index = indexOf(docs, { weights: { paramNames: 1, instructions: 1 } });
    assert.equal(index.search('spreadsheet', 2)[0]!.key, 'x');
    assert.equal(index.search('workbook', 2)[0]!.key, 'x');
    assert.equal(index.search('weatherly', 2)[0]!.key, 'y');
    assert.equal(index.search('forecasts', 2)[0]!.key, 'y');
    // At weight 0 (the defaults of both, by measurement) those fields are not searched.
    assert.deepEqual(indexOf(docs, { weights: { paramNames: 0, instructions: 0 } }).search('spreadsheet forecasts', 2), []);
  });
  void it('refuses weights and parameters out of range', { timeout: 5000 }, () => {
    assert.throws(() => new ToolIndex({ weights: { name: -1 } }), /weight name/);
    assert.throws(() => new ToolIndex({ weights: { title: Number.NaN } }), /weight title/);
    assert.throws(() => new ToolIndex({ b: 2 }), /b must be/);
  });
});

void describe('ToolIndex query words', { timeout: 5000 }, () => {
  void it("coordination favours a tool that matches more of the query's words", { timeout: 5000 }, () => {
    const docs: SearchDoc[] = [
      { key: 'many', name: 'channel_channel', server: 's', description: 'Channel channel channel channel.' },
      { key: 'both', name: 'post_message', server: 's', description: 'Post a message to a channel.' },
    ];
    const score = (coord: number, key: string): number =>
      indexOf(docs, { coord, weights: { name: 5 } })
        .search('post to channel', 2)
        .find((h) => h.key === key)!.score;
    // Two query words (post, channel): the tool with one of them keeps (1/2)^coord of its score, the one with both all of it.
    assert.ok(Math.abs(score(2, 'many') / score(0, 'many') - 0.25) < 1e-9);
    assert.ok(Math.abs(score(2, 'both') / score(0, 'both') - 1) < 1e-9);
    assert.throws(() => new ToolIndex({ coord: -1 }), /coord must be/);
  });
  void it('reads a file name in the query as the word "file", a domain as not', { timeout: 5000 }, () => {
    const docs: SearchDoc[] = [
      { key: 'files', name: 'get_file_contents', server: 'git', description: 'Contents of a path in a repository.' },
      { key: 'repos', name: 'search_repositories', server: 'git', description: 'Search repositories.' },
    ];
    const index = indexOf(docs);
    assert.equal(index.search('show me package.json of the repository', 2)[0]!.key, 'files');
    assert.equal(index.search('show me example.com repository', 2)[0]!.key, 'repos');
  });
});

void describe('ToolIndex upsert and remove', { timeout: 5000 }, () => {
  void it('replaces a tool with the same key, and forgets a removed one', { timeout: 5000 }, () => {
    const index = indexOf(TOOLS);
    assert.equal(index.size, TOOLS.length);
    index.upsert({ key: 'fs__read_file', name: 'read_file', server: 'fs', description: 'Fetch a zebra.' });
    assert.equal(index.size, TOOLS.length);
    assert.equal(index.search('zebra', 5)[0]!.key, 'fs__read_file');
    assert.ok(!keys(index.search('complete', 5)).includes('fs__read_file'));
    index.remove('fs__read_file');
    index.remove('fs__read_file');
    index.remove('never-there');
    assert.equal(index.size, TOOLS.length - 1);
    assert.ok(!index.has('fs__read_file'));
    assert.deepEqual(index.search('zebra', 5), []);
  });
  void it('ranks the same after removals and re-adds as a fresh index of the same tools', { timeout: 5000 }, () => {
    const churned = indexOf(TOOLS);
    // Searched between changes, so cached frequencies of an older state must not survive them.
    churned.search('file create issue message directions', 10);
    for (const doc of TOOLS.slice(0, 4)) {
      churned.remove(doc.key);
      churned.search('file create', 10);
    }
    for (const doc of TOOLS.slice(0, 4).reverse()) churned.upsert(doc);
    churned.upsert({ key: 'temp', name: 'temp', server: 'x', description: 'file file file '.repeat(50) });
    churned.search('file message', 10);
    churned.remove('temp');
    const fresh = indexOf(TOOLS);
    for (const query of ['file', 'create issue', 'message channel', 'directions', 'rename directories']) {
      const a = churned.search(query, 10);
      const b = fresh.search(query, 10);
      assert.deepEqual(keys(a), keys(b), query);
      a.forEach((hit, i) => assert.ok(Math.abs(hit.score - b[i]!.score) < 1e-9, query));
    }
  });
});

void describe('ToolIndex allow', { timeout: 5000 }, () => {
  void it('filters before the limit: refused tools do not take places', { timeout: 5000 }, () => {
    const docs: SearchDoc[] = Array.from({ length: 20 }, (_, i) => ({
      key: `t${i}`,
      name: `file_tool_${i}`,
      server: 's',
      description: 'file '.repeat(20 - i),
    }));
    const index = indexOf(docs);
    const asked: string[] = [];
    const hits = index.search('file', 3, (key) => {
      asked.push(key);
      return Number(key.slice(1)) % 2 === 1;
    });
    assert.equal(hits.length, 3);
    assert.ok(hits.every((h) => Number(h.key.slice(1)) % 2 === 1));
    assert.deepEqual(keys(hits), keys(index.search('file', 20).filter((h) => Number(h.key.slice(1)) % 2 === 1)).slice(0, 3));
    assert.deepEqual(
      index.search('file', 5, () => false),
      [],
    );
  });
});

void describe('ToolIndex bounded input', { timeout: 10000 }, () => {
  void it('takes a huge description, a deep and wide schema, and a 10 KB query', { timeout: 10000 }, () => {
    let deep: Record<string, unknown> = { type: 'string', description: 'bottom' };
    for (let i = 0; i < 10_000; i++) deep = { type: 'object', properties: { [`level${i}`]: deep } };
    const wide = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 100_000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(100) }]),
      ),
    };
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.properties = { self: cyclic };
    const index = new ToolIndex();
    index.upsert({ key: 'huge', name: 'huge', server: 's', description: 'needle '.repeat(2_000_000) });
    index.upsert({ key: 'deep', name: 'deep', server: 's', inputSchema: deep });
    index.upsert({ key: 'wide', name: 'wide', server: 's', inputSchema: wide });
    index.upsert({ key: 'cyclic', name: 'cyclic', server: 's', inputSchema: cyclic });
    index.upsert({ key: 'odd', name: '', server: '', inputSchema: { properties: 'not an object', items: [1, 2] } });
    assert.equal(index.size, 5);
    assert.equal(index.search('needle', 1)[0]!.key, 'huge');
    assert.ok(schemaParameters(wide).names.length <= MAX_PARAMETERS);
    assert.ok(schemaParameters(deep).names.length <= 4);
    const query =
      Array.from({ length: 2_000 }, (_, i) => `q${String.fromCharCode(97 + (i % 26), 97 + (Math.floor(i / 26) % 26))}z`)
        .join(' ')
        .slice(0, 10_240) + ' needle';
    const started = performance.now();
    // 2,000 words no tool has and one it has, last: the long query costs a bounded amount and its one
    // informative word is still searched, not cut off with the text's tail.
    assert.deepEqual(
      index.search(query, 5).map((hit) => hit.key),
      ['huge'],
    );
    assert.ok(performance.now() - started < 1000);
  });

  void it("searches a long query's 31 most informative words, each of them", { timeout: 5000 }, () => {
    // Forty tools, each the only one with its word: a query of all forty words finds the 31 whose
    // words it searched (src/search/README.md), each scored by the one word it matched.
    const word = (i: number): string => `q${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}z`;
    const index = new ToolIndex();
    for (let i = 0; i < 40; i++) index.upsert({ key: `s__t${i}`, name: `t${i}`, server: 's', description: `The ${word(i)} tool.` });
    const hits = index.search(Array.from({ length: 40 }, (_, i) => word(i)).join(' '), 100);
    assert.equal(hits.length, 31);
    assert.equal(new Set(hits.map((hit) => hit.score)).size, 1, 'every word searched counts alike');
  });
});

void describe('fuse', { timeout: 5000 }, () => {
  void it('merges two rankings by reciprocal rank; a tool in both beats one in either', { timeout: 5000 }, () => {
    const lexical = [
      { key: 'a', score: 9 },
      { key: 'b', score: 5 },
      { key: 'c', score: 1 },
    ];
    const vector = [
      { key: 'c', score: 0.9 },
      { key: 'd', score: 0.8 },
      { key: 'b', score: 0.1 },
    ];
    const fused = fuse(lexical, vector);
    assert.deepEqual(keys(fused).slice(0, 2).sort(), ['b', 'c']);
    assert.deepEqual(keys(fused).sort(), ['a', 'b', 'c', 'd']);
    assert.ok(Math.abs(fused.find((h) => h.key === 'a')!.score - 1 / 61) < 1e-12);
    assert.deepEqual(keys(fuse(lexical, [], { limit: 2 })), ['a', 'b']);
    assert.deepEqual(keys(fuse(lexical, vector, { vectorWeight: 0 })), ['a', 'b', 'c', 'd']);
    assert.throws(() => fuse(lexical, vector, { k: -1 }), /fusion k/);
  });
});
