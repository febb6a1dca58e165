// Search mode's index upkeep and what it trusts: the lexical indexes follow the catalog one changed
// server at a time (gateway/modes/search-indexes.ts), held and filtered tools never come out of a search,
// an own catalog is searched only by whoever is given it; the embeddings client and the vector
// cache take nothing read back on trust (gateway/modes/embeddings.ts, gateway/modes/hybrid-ranking.ts).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog } from '../../../src/catalog/catalog.js';
import { SearchIndexes } from '../../../src/gateway/modes/search-indexes.js';
import { EmbeddingsClient, EmbeddingsError } from '../../../src/gateway/modes/embeddings.js';
import { HybridRanking } from '../../../src/gateway/modes/hybrid-ranking.js';
import { FoundTools, searchRequest } from '../../../src/gateway/modes/search-mode.js';
import { Logger } from '../../../src/observability/logger.js';
import type { Tool } from '../../../src/wire/protocol.js';

const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: 'object' } });
const SERVERS = [{ name: 'github' }, { name: 'files' }];
const keys = (hits: readonly { key: string }[]): string[] => hits.map((h) => h.key);

function setup(): { catalog: Catalog; indexes: SearchIndexes } {
  const catalog = new Catalog(SERVERS);
  catalog.set('github', {
    tools: [tool('create_issue', 'Create a new issue in a repository'), tool('list_pull_requests', 'List pull requests')],
  });
  catalog.set('files', { tools: [tool('read_file', 'Read a file from disk'), tool('write_file', 'Write a file to disk')] });
  return { catalog, indexes: new SearchIndexes(catalog, () => undefined) };
}

describe('search indexes', () => {
  it('index every tool once, then only the server that changed', () => {
    const { catalog, indexes } = setup();
    assert.deepEqual(keys(indexes.search('issue', 5, undefined, () => true)), ['github__create_issue']);
    assert.equal(indexes.upserts, 4);
    assert.equal(indexes.size, 4);
    catalog.set('files', { tools: [tool('read_file', 'Read a file from disk'), tool('delete_file', 'Delete a file')] });
    assert.deepEqual(keys(indexes.search('delete', 5, undefined, () => true)), ['files__delete_file']);
    assert.equal(indexes.upserts, 6, 'only the changed server was indexed again');
    assert.deepEqual(keys(indexes.search('write', 5, undefined, () => true)), [], 'a removed tool is gone');
    catalog.remove('github');
    assert.deepEqual(keys(indexes.search('issue', 5, undefined, () => true)), []);
    assert.equal(indexes.size, 2);
    assert.equal(indexes.upserts, 6);
  });

  it('filter before the limit: denied and held tools never come out, the limit is filled with others', () => {
    const { catalog, indexes } = setup();
    const found = indexes.search('file', 1, undefined, (entry) => entry.original !== 'read_file');
    assert.deepEqual(keys(found), ['files__write_file']);
    catalog.setHeld('files', new Map([['write_file', { digest: 'sha256:x', reason: 'changed' } as never]]));
    assert.deepEqual(keys(indexes.search('file', 5, undefined, () => true)), ['files__read_file']);
  });

  it('search an own catalog for its owner in place of the shared part of its server', () => {
    const { indexes } = setup();
    const own = new Catalog(SERVERS);
    own.set('github', {
      tools: [tool('create_issue', 'Create a new issue in a repository'), tool('frobnicate', 'Frobnicate the widgets')],
    });
    assert.deepEqual(keys(indexes.search('frobnicate widgets', 5, [own], () => true)), ['github__frobnicate']);
    assert.deepEqual(keys(indexes.search('frobnicate widgets', 5, undefined, () => true)), [], 'no one else finds it');
    assert.deepEqual(keys(indexes.search('pull requests', 5, [own], () => true)), [], 'the owner sees its own list of the server');
    assert.deepEqual(keys(indexes.search('pull requests', 5, undefined, () => true)), ['github__list_pull_requests']);
  });
});

describe('search_tools input and the found set', () => {
  it('take a query and a limit, with the defaults', () => {
    assert.deepEqual(searchRequest({ query: 'x' }), { query: 'x', limit: 5 });
    assert.deepEqual(searchRequest({ query: 'x', limit: 50 }), { query: 'x', limit: 50 });
    assert.throws(() => searchRequest(undefined), /needs arguments/);
    assert.throws(() => searchRequest([]), /needs arguments/);
    assert.throws(() => searchRequest({ query: 'x', limit: null }), /got object/);
  });

  it('the found set is bounded, oldest first out', () => {
    const found = new FoundTools();
    assert.equal(found.add(['a', 'b']), true);
    assert.equal(found.add(['a']), false);
    const revision = found.revision;
    // Up to 200 tools, as docs/rules-and-identity.md says.
    found.add(Array.from({ length: 200 }, (_, i) => `t${i}`));
    assert.equal(found.revision, revision + 1);
    const all = [...found];
    assert.equal(all.length, 200);
    assert.ok(!all.includes('a') && !all.includes('b'));
  });
});

describe('embeddings: nothing read back is trusted', () => {
  /** An embeddings endpoint on 127.0.0.1 that answers `answer(inputs)` as the body's text. */
  let answer: (inputs: number) => string = () => '{}';
  let endpoint: Server;
  let client: EmbeddingsClient;
  let dir: string;

  before(async () => {
    endpoint = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { input } = JSON.parse(Buffer.concat(chunks).toString()) as { input: string[] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answer(input.length));
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    client = new EmbeddingsClient({ url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`, model: 'm' });
    dir = await mkdtemp(join(tmpdir(), 'mcpgate-vectors-'));
  });

  after(async () => {
    await new Promise((resolve) => endpoint.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it("an endpoint's answer must hold one vector of finite numbers per input, all of one length", async () => {
    answer = () =>
      JSON.stringify({
        data: [
          { index: 1, embedding: [0, 1] },
          { index: 0, embedding: [1, 0] },
        ],
      });
    assert.deepEqual(
      (await client.embed(['a', 'b'])).map((v) => [...v]),
      [
        [1, 0],
        [0, 1],
      ],
    );
    for (const body of [
      null,
      {},
      { data: 'x' },
      { data: [{ embedding: [1] }] },
      { data: [{ embedding: [1, 'x'] }, { embedding: [1, 2] }] },
      { data: [{ embedding: [1, 2] }, { embedding: [1] }] },
      { data: [{ embedding: [] }, { embedding: [1] }] },
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 0, embedding: [1] },
        ],
      },
    ]) {
      answer = () => JSON.stringify(body);
      await assert.rejects(client.embed(['a', 'b']), EmbeddingsError, JSON.stringify(body));
    }
    // JSON has no NaN; a number too large for a double reads back as Infinity, which is not finite either.
    answer = () => '{"data":[{"embedding":[1e999]}]}';
    await assert.rejects(client.embed(['a']), EmbeddingsError);
    answer = () => '{"data":[{"embedding":[null]}]}';
    await assert.rejects(client.embed(['a']), EmbeddingsError);
  });

  it('the vector cache keeps only valid vectors of the model in use', async () => {
    const vec = (xs: number[]): string => Buffer.from(new Float32Array(xs).buffer).toString('base64');
    const digest = (c: string): string => c.repeat(43);
    const file = join(dir, 'vectors.json');
    const log = new Logger('error', () => undefined);
    await writeFile(
      file,
      JSON.stringify({
        version: 1,
        model: 'm',
        vectors: {
          [digest('a')]: vec([3, 4]),
          [digest('b')]: vec([1, Number.POSITIVE_INFINITY]),
          [digest('c')]: vec([1, 2, 3]), // another length than the first
          [digest('d')]: 'not base64 of floats!',
          short: vec([1, 0]),
          [digest('e')]: 7,
        },
      }),
    );
    const ranking = new HybridRanking(client, file, log);
    await ranking.load();
    assert.equal(ranking.status().vectors, 1);
    // A search embeds the tools and writes the cache back: the vector read is kept as a unit vector.
    answer = (inputs) => JSON.stringify({ data: Array.from({ length: inputs }, () => ({ embedding: [1, 0] })) });
    const { indexes } = setup();
    await ranking.rank({ query: 'issue', limit: 5 }, [], { indexes, own: undefined, allow: () => true });
    assert.equal(ranking.status().hybridSearches, 1);
    await ranking.close();
    const saved = JSON.parse(await readFile(file, 'utf8')) as { vectors: Record<string, string> };
    const a = Buffer.from(saved.vectors[digest('a')]!, 'base64');
    assert.deepEqual(
      [...new Float32Array(a.buffer, a.byteOffset, a.length / 4)].map((x) => Math.round(x * 10) / 10),
      [0.6, 0.8],
      'kept as a unit vector',
    );
    assert.equal(Object.keys(saved.vectors).length, 5, 'the vector read and one per tool');

    for (const body of [{ version: 1, model: 'other', vectors: { [digest('a')]: vec([1, 0]) } }, 'garbage']) {
      await writeFile(file, JSON.stringify(body));
      const other = new HybridRanking(client, file, log);
      await other.load();
      assert.equal(other.status().vectors, 0, JSON.stringify(body));
      await other.close();
    }
  });
});
