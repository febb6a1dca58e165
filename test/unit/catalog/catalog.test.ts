// The catalog (src/catalog/catalog.ts): per-server parts replaced whole, change detection for
// list_changed (seed behaviour: only changed kinds are announced), routing by public name and URI,
// and merged views where only names and URIs are rewritten.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog } from '../../../src/catalog/catalog.js';
import type { Prompt, Resource, Tool } from '../../../src/wire/protocol.js';
import type { ServerLists } from '../../../src/servers/lists.js';

const tool = (name: string, extra: Record<string, unknown> = {}): Tool => ({
  name,
  description: `the ${name} tool`,
  inputSchema: { type: 'object', properties: { p: { type: 'string' } } },
  ...extra,
});
const prompt = (name: string): Prompt => ({ name, description: `the ${name} prompt`, arguments: [{ name: 'a', required: true }] });
const resource = (uri: string): Resource => ({ uri, name: uri, mimeType: 'text/plain', _meta: { k: 1 } });
const template = (uriTemplate: string): ServerLists['resourceTemplates'][number] => ({ uriTemplate, name: 't', description: 'd' });

void describe('Catalog.set / remove', { timeout: 5000 }, () => {
  void it('returns the kinds whose content changed, and [] for unchanged lists', { timeout: 5000 }, () => {
    const catalog = new Catalog(['fs']);
    assert.deepEqual(catalog.set('fs', { tools: [tool('read')], prompts: [] }), ['tools', 'prompts']);
    assert.deepEqual(catalog.set('fs', { tools: [tool('read')], prompts: [] }), []);
    assert.deepEqual(catalog.set('fs', { tools: [tool('read')], prompts: [prompt('p')] }), ['prompts']);
    assert.deepEqual(catalog.set('fs', { tools: [tool('read', { description: 'changed' })] }), ['tools']);
    assert.deepEqual(catalog.counts('fs'), { tools: 1, resources: 0, resourceTemplates: 0, prompts: 1 });
  });

  void it('keeps kinds not mentioned in a later set', { timeout: 5000 }, () => {
    const catalog = new Catalog(['fs']);
    catalog.set('fs', { tools: [tool('read')], resources: [resource('file:///a')] });
    catalog.set('fs', { tools: [tool('write')] });
    assert.deepEqual(
      catalog.listTools().map((t) => (t as Tool).name),
      ['fs__write'],
    );
    assert.deepEqual(
      catalog.listResources().map((r) => (r as Resource).uri),
      ['mcpgate://fs/file:///a'],
    );
  });

  void it('remove withdraws a server and returns the kinds that had content', { timeout: 5000 }, () => {
    const catalog = new Catalog(['fs', 'git']);
    catalog.set('fs', { tools: [tool('read')], resources: [], prompts: [prompt('p')] });
    catalog.set('git', { tools: [tool('log')] });
    assert.deepEqual(catalog.remove('fs'), ['tools', 'prompts']);
    assert.equal(catalog.tool('fs__read'), undefined);
    assert.equal(catalog.prompt('fs__p'), undefined);
    assert.deepEqual(
      catalog.listTools().map((t) => (t as Tool).name),
      ['git__log'],
    );
    assert.deepEqual(catalog.remove('fs'), []);
    assert.deepEqual(catalog.remove('never-set'), []);
    // Fingerprints went with the part: the same lists count as a change again.
    assert.deepEqual(catalog.set('fs', { tools: [tool('read')] }), ['tools']);
  });
});

void describe('Catalog routing', { timeout: 5000 }, () => {
  void it('routes a public tool or prompt name to its server and original name', { timeout: 5000 }, () => {
    const catalog = new Catalog(['fs', 'my.srv']);
    const read = tool('read');
    catalog.set('fs', { tools: [read] });
    catalog.set('my.srv', { tools: [tool('do it')], prompts: [prompt('greet')] });
    const entry = catalog.tool('fs__read');
    assert.deepEqual(entry, { server: 'fs', original: 'read', tool: read });
    assert.equal(entry?.tool, read);
    assert.equal(catalog.tool('my_srv__do_it')?.original, 'do it');
    assert.equal(catalog.tool('my_srv__do_it')?.server, 'my.srv');
    assert.deepEqual(catalog.prompt('my_srv__greet'), { server: 'my.srv', original: 'greet' });
    assert.equal(catalog.tool('read'), undefined);
    assert.equal(catalog.prompt('fs__read'), undefined);
    assert.deepEqual(catalog.warnings, ['"do it" of server "my_srv" is published as "my_srv__do_it" (client-safe name)']);
  });

  void it('resolves namespaced URIs and builds public ones', { timeout: 5000 }, () => {
    const catalog = new Catalog(['fs', 'my.srv']);
    assert.equal(catalog.publicUri('my.srv', 'file:///a/b'), 'mcpgate://my_srv/file:///a/b');
    assert.deepEqual(catalog.resolveUri('mcpgate://my_srv/file:///a/b'), { server: 'my.srv', uri: 'file:///a/b' });
    assert.deepEqual(catalog.resolveUri('mcpgate://fs/x/y'), { server: 'fs', uri: 'x/y' });
    assert.equal(catalog.resolveUri('mcpgate://nobody/x'), undefined);
    assert.equal(catalog.resolveUri('file:///a/b'), undefined);
  });

  void it('gives distinct keys to server names that sanitize alike (a.b vs a_b)', { timeout: 5000 }, () => {
    const catalog = new Catalog(['a_b', 'a.b']);
    catalog.set('a.b', { tools: [tool('t')] });
    catalog.set('a_b', { tools: [tool('t')] });
    const dot = catalog.publicUri('a.b', 'x');
    const under = catalog.publicUri('a_b', 'x');
    assert.notEqual(dot, under);
    assert.deepEqual(catalog.resolveUri(dot), { server: 'a.b', uri: 'x' });
    assert.deepEqual(catalog.resolveUri(under), { server: 'a_b', uri: 'x' });
    const names = catalog.listTools().map((t) => (t as Tool).name);
    assert.equal(new Set(names).size, 2);
    assert.deepEqual(names.map((n) => catalog.tool(n)?.server).sort(), ['a.b', 'a_b']);
  });

  void it("keeps keys unique when a suffixed key is another server's name", { timeout: 5000 }, () => {
    // Sorted: "a." (key a_), "a._2" (key a__2), "a_" (a_ is taken, so a suffixed key that must not be a__2).
    const servers = ['a.', 'a._2', 'a_'];
    const catalog = new Catalog(servers);
    for (const server of servers) {
      assert.deepEqual(catalog.resolveUri(catalog.publicUri(server, 'u')), { server, uri: 'u' });
    }
    assert.equal(new Set(servers.map((s) => catalog.publicUri(s, 'u'))).size, 3);
  });
});

void describe('Catalog views', { timeout: 5000 }, () => {
  void it('rewrites only names and URIs, leaving every other field and the originals untouched', { timeout: 5000 }, () => {
    const catalog = new Catalog(['fs']);
    const read = tool('read', { annotations: { readOnlyHint: true }, _meta: { x: [1, 2] }, unknownField: 'kept' });
    const res = resource('file:///a');
    const tpl = template('file:///{path}');
    const p = prompt('p');
    catalog.set('fs', { tools: [read], resources: [res], resourceTemplates: [tpl], prompts: [p] });
    assert.deepEqual(catalog.listTools(), [{ ...read, name: 'fs__read' }]);
    assert.deepEqual(catalog.listResources(), [{ ...res, uri: 'mcpgate://fs/file:///a' }]);
    assert.deepEqual(catalog.listResourceTemplates(), [{ ...tpl, uriTemplate: 'mcpgate://fs/file:///{path}' }]);
    assert.deepEqual(catalog.listPrompts(), [{ ...p, name: 'fs__p' }]);
    assert.equal(read.name, 'read');
    assert.equal(res.uri, 'file:///a');
    assert.equal(tpl.uriTemplate, 'file:///{path}');
    assert.equal(p.name, 'p');
  });

  void it('lists servers in sorted order whatever order they were set in', { timeout: 5000 }, () => {
    const a = new Catalog(['b', 'a']);
    a.set('b', { tools: [tool('t')] });
    a.set('a', { tools: [tool('t')] });
    const b = new Catalog(['a', 'b']);
    b.set('a', { tools: [tool('t')] });
    b.set('b', { tools: [tool('t')] });
    assert.deepEqual(a.listTools(), b.listTools());
    assert.deepEqual(
      a.listTools().map((t) => (t as Tool).name),
      ['a__t', 'b__t'],
    );
  });

  void it('applies a custom separator', { timeout: 5000 }, () => {
    const catalog = new Catalog(['fs'], '-');
    catalog.set('fs', { tools: [tool('read')] });
    assert.equal(catalog.tool('fs-read')?.original, 'read');
  });
  void it('encodes each list once per change and re-encodes after a change', { timeout: 5000 }, () => {
    const catalog = new Catalog(['s']);
    catalog.set('s', { tools: [tool('a')] });
    const first = catalog.encodedList('tools');
    assert.deepEqual(JSON.parse(Buffer.concat(first).toString()), { tools: catalog.listTools() });
    assert.equal(catalog.encodedList('tools'), first, 'the same bytes until the catalog changes');
    catalog.set('s', { tools: [tool('a'), tool('b')] });
    assert.deepEqual(
      (JSON.parse(Buffer.concat(catalog.encodedList('tools')).toString()) as { tools: { name: string }[] }).tools.map((t) => t.name),
      ['s__a', 's__b'],
    );
    assert.deepEqual(JSON.parse(Buffer.concat(catalog.encodedList('prompts')).toString()), { prompts: [] });
  });
  void it('publishes a tool a server lists twice once (the first definition) and warns', { timeout: 5000 }, () => {
    const catalog = new Catalog(['s']);
    catalog.set('s', { tools: [tool('a', { description: 'first' }), tool('a', { description: 'second' })] });
    assert.deepEqual(
      catalog.listTools().map((t) => (t as Tool).description),
      ['first'],
    );
    assert.equal(catalog.tool('s__a')?.tool.description, 'first');
    assert.match(catalog.warnings.join('\n'), /lists tool "a" more than once/);
  });
});

void describe('Catalog: one server changed, the rest reused', { timeout: 5000 }, () => {
  void it("keeps the other servers' views (same objects) and encodes the same JSON as the views", { timeout: 5000 }, () => {
    const catalog = new Catalog(['a', 'b', 'c']);
    catalog.set('a', { tools: [tool('x'), tool('y')], resources: [resource('file:///r')] });
    catalog.set('b', { tools: [tool('x')], prompts: [prompt('p')], resourceTemplates: [template('file:///{path}')] });
    catalog.set('c', { tools: [] });
    const before = new Map(catalog.listTools().map((view) => [(view as Tool).name, view]));
    assert.equal(Buffer.concat(catalog.encodedList('tools')).toString(), JSON.stringify({ tools: catalog.listTools() }));

    catalog.set('b', { tools: [tool('x', { description: 'changed' }), tool('z')] });
    const after = new Map(catalog.listTools().map((view) => [(view as Tool).name, view]));
    assert.equal(after.get('a__x'), before.get('a__x'), "server a's views are reused, not rebuilt");
    assert.equal(after.get('a__y'), before.get('a__y'));
    assert.notEqual(after.get('b__x'), before.get('b__x'), "server b's changed tool has a new view");
    assert.equal((after.get('b__x') as Tool).description, 'changed');
    for (const kind of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) {
      const views = {
        tools: catalog.listTools(),
        resources: catalog.listResources(),
        resourceTemplates: catalog.listResourceTemplates(),
        prompts: catalog.listPrompts(),
      }[kind];
      assert.equal(Buffer.concat(catalog.encodedList(kind)).toString(), JSON.stringify({ [kind]: views }), `${kind} encodes as its views`);
    }

    catalog.remove('a');
    assert.equal(Buffer.concat(catalog.encodedList('tools')).toString(), JSON.stringify({ tools: catalog.listTools() }));
    assert.equal(Buffer.concat(catalog.encodedList('resources')).toString(), '{"resources":[]}');
  });

  void it('a renamed item (new prefix) gets a new view even though the server listed the same object', { timeout: 5000 }, () => {
    const read = tool('read');
    const catalog = new Catalog(['fs']);
    catalog.set('fs', { tools: [read] });
    assert.equal((catalog.listTools()[0] as Tool).name, 'fs__read');
    catalog.setServers([{ name: 'fs', prefix: 'files' }]);
    assert.equal((catalog.listTools()[0] as Tool).name, 'files__read');
    assert.equal(Buffer.concat(catalog.encodedList('tools')).toString(), JSON.stringify({ tools: catalog.listTools() }));
  });
});
