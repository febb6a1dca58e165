// One server's list_changed lays out only that server (and those whose names it takes or
// gives back). The names, views, routes, encoded lists and warnings after any sequence of adds,
// changes, removals, clashes and held tools must be exactly those of laying out every server from
// scratch (`setServers`), and a name book kept one server at a time names exactly as one filled
// from scratch, whatever order its servers came in.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, type ServerNaming } from '../../../src/catalog/catalog.js';
import { nameKey, NameBook } from '../../../src/catalog/names.js';
import type { Prompt, Resource, Tool } from '../../../src/wire/protocol.js';
import type { ServerLists } from '../../../src/servers/lists.js';

/** A small deterministic generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: () => number, from: readonly T[]): T => from[Math.floor(rand() * from.length)]!;
const some = <T>(rand: () => number, from: readonly T[], max: number): T[] =>
  Array.from({ length: Math.floor(rand() * (max + 1)) }, () => pick(rand, from));

// Names chosen to collide: `a` + `b__c` and `a__b` + `c` want the same public name, `x.y` and `x_y`
// sanitize alike, a long name is cut with a hash, an empty or non-ASCII one is made client-safe.
const TOOL_NAMES = ['c', 'b__c', 'x_y', 'x.y', 'x y', 't', '', 'é', 'a__b__c', 'L'.repeat(70), `${'L'.repeat(55)}_x`];
const SERVERS: ServerNaming[] = [
  'a',
  'a__b',
  'a.b',
  'a_b',
  'b',
  { name: 'u', prefix: false },
  { name: 'v', prefix: false },
  { name: 'p', prefix: 'a' },
];
const URIS = ['file:///x', 'mcpgate://a/file:///x', 'mem://y', 'file:///z'];

function partOf(rand: () => number, generation: number): Partial<ServerLists> {
  const tool = (name: string): Tool => ({ name, description: `gen ${generation}`, inputSchema: { type: 'object' } });
  const prompt = (name: string): Prompt => ({ name, description: 'p' });
  const resource = (uri: string): Resource => ({ uri, name: uri });
  const template = (uriTemplate: string): ServerLists['resourceTemplates'][number] => ({ uriTemplate, name: 't' });
  return {
    tools: some(rand, TOOL_NAMES, 5).map(tool),
    prompts: some(rand, TOOL_NAMES, 2).map(prompt),
    resources: some(rand, URIS, 2).map(resource),
    resourceTemplates: some(rand, ['file:///{path}', 'mem://{id}'], 1).map(template),
  };
}

/** Everything an agent or a router can observe of a catalog. */
function observe(catalog: Catalog, parts: Map<string, Partial<ServerLists>>): unknown {
  const routes: unknown[] = [];
  for (const [server, part] of [...parts].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const tool of part.tools ?? []) {
      const name = catalog.publicName(server, tool.name);
      routes.push([server, tool.name, name, name === undefined ? undefined : catalog.tool(name)]);
    }
    for (const prompt of part.prompts ?? []) routes.push([server, prompt.name, catalog.nameFor(server, prompt.name)]);
  }
  for (const view of catalog.listPrompts()) routes.push(catalog.prompt((view as Prompt).name));
  for (const uri of [...URIS, 'mcpgate://a/file:///x', 'mcpgate://a_b/mem://y', 'file:///q', 'mem://{id}'])
    routes.push(catalog.resolveUri(uri));
  return {
    lists: (['tools', 'resources', 'resourceTemplates', 'prompts'] as const).map((kind) =>
      Buffer.concat(catalog.encodedList(kind)).toString(),
    ),
    views: [catalog.listTools(), catalog.listPrompts(), catalog.listResources(), catalog.listResourceTemplates()],
    routes,
    warnings: catalog.warnings,
  };
}

void describe('Catalog: incremental layout equals a full one', { timeout: 30_000 }, () => {
  void it('after every add, change, removal and pin change of one server', { timeout: 30_000 }, () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = random(seed);
      const catalog = new Catalog(SERVERS);
      const parts = new Map<string, Partial<ServerLists>>();
      const held = new Map<string, Map<string, { digest: string; changes: string[] }>>();
      const names = SERVERS.map((s) => (typeof s === 'string' ? s : s.name));
      for (let step = 0; step < 30; step++) {
        const server = pick(rand, names);
        const roll = rand();
        if (roll < 0.6) {
          const part = partOf(rand, step);
          parts.set(server, part);
          catalog.set(server, part);
        } else if (roll < 0.8) {
          parts.delete(server);
          held.delete(server);
          catalog.remove(server);
        } else if (parts.has(server)) {
          const tools = parts.get(server)!.tools ?? [];
          const hold = new Map(
            (tools.length === 0 ? [] : some(rand, tools, 2)).map((t) => [t.name, { digest: `d${step}`, changes: ['new'] }]),
          );
          held.set(server, hold);
          catalog.setHeld(server, hold);
        }
        const full = new Catalog(SERVERS);
        for (const [name, part] of parts) full.set(name, part, held.get(name));
        full.setServers(SERVERS);
        assert.deepEqual(observe(catalog, parts), observe(full, parts), `seed ${seed}, step ${step}: ${server}`);
      }
    }
  });

  void it("one server's change keeps every other server's views and encoded slices", { timeout: 5000 }, () => {
    const catalog = new Catalog(['a', 'b']);
    catalog.set('a', { tools: [{ name: 't', inputSchema: { type: 'object' } }] });
    catalog.set('b', { tools: [{ name: 't', inputSchema: { type: 'object' } }] });
    const aView = catalog.listTools()[0];
    catalog.set('b', { tools: [{ name: 'u', inputSchema: { type: 'object' } }] });
    assert.equal(catalog.listTools()[0], aView);
    assert.deepEqual(JSON.parse(Buffer.concat(catalog.encodedList('tools')).toString()), { tools: catalog.listTools() });
  });
});

void describe('NameBook: the names of every pair, kept one server at a time', { timeout: 30_000 }, () => {
  void it('gives exactly the names and warnings of a book filled from scratch after every change', { timeout: 30_000 }, () => {
    const keys = ['a', 'a__b', 'a_b', 'a.b', 'b', '', 'L'.repeat(60)];
    for (let seed = 1; seed <= 60; seed++) {
      const rand = random(seed);
      const book = new NameBook();
      const current = new Map<string, string[]>();
      for (let step = 0; step < 25; step++) {
        const key = pick(rand, keys);
        const names = rand() < 0.2 ? [] : some(rand, TOOL_NAMES, 6);
        current.set(key, names);
        book.set(key, names);
        const requests = [...current].flatMap(([server, list]) => list.map((name) => ({ server, name })));
        // From scratch, servers in the reverse order: the names must not depend on the order either.
        const fresh = new NameBook();
        for (const [server, list] of [...current].reverse()) fresh.set(server, list);
        const expected = fresh.resolve();
        const { moved, warnings } = book.resolve();
        assert.deepEqual(warnings, expected.warnings, `seed ${seed}, step ${step}`);
        for (const { server, name } of requests) {
          const got = book.nameOf(server, name, moved);
          assert.ok(got !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(got), `seed ${seed}, step ${step}: ${server} ${name} → ${got}`);
          assert.equal(got, fresh.nameOf(server, name, expected.moved), `seed ${seed}, step ${step}: ${server} ${name}`);
        }
        const published = requests.map(({ server, name }) => book.nameOf(server, name, moved));
        assert.equal(
          new Set(published).size,
          new Set(requests.map(({ server, name }) => nameKey(server, name))).size,
          'distinct pairs, distinct names',
        );
      }
    }
  });
});
