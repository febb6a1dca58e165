// Names as the user chooses: a server's own `prefix`, or none (`"prefix": false`) so its
// tools and prompts keep their names and its resources their URIs; a clash between servers withholds
// the later server's item (by .mcp.json order) with one warning naming both servers and the fix; the
// router routes unprefixed names and URIs from the catalog's own maps, and a denial on an unprefixed
// server answers "unknown", exactly as for a made-up name, so it reveals nothing.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog } from '../../../src/catalog/catalog.js';
import { GatewayError } from '../../../src/errors.js';
import { NOT_YET, Router } from '../../../src/gateway/routing/router.js';
import { noPool, sharedConn, who } from '../../helpers/route-parts.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { OPEN_RULES, parseRules, type Rules } from '../../../src/rules/load.js';
import type { Connection } from '../../../src/servers/connection.js';
import type { Prompt, Resource, Tool } from '../../../src/wire/protocol.js';

const T = { timeout: 5000 };
const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });
const prompt = (name: string): Prompt => ({ name });
const resource = (uri: string): Resource => ({ uri, name: uri });
const names = (items: readonly unknown[]): string[] => items.map((i) => (i as { name: string }).name);
const code = (outcome: unknown): string | undefined => (outcome instanceof GatewayError ? outcome.code : undefined);

void describe('Catalog: prefixes', () => {
  void it('a prefix of its own, none, or the server name', T, () => {
    const catalog = new Catalog([{ name: 'github', prefix: 'gh' }, { name: 'everything', prefix: false }, 'fs']);
    catalog.set('github', { tools: [tool('issues')], resources: [resource('repo://x')] });
    catalog.set('everything', {
      tools: [tool('echo')],
      prompts: [prompt('simple')],
      resources: [resource('test://static')],
      resourceTemplates: [{ uriTemplate: 'test://t/{id}/data', name: 't' }],
    });
    catalog.set('fs', { tools: [tool('read')] });
    assert.deepEqual(names(catalog.listTools()).sort(), ['echo', 'fs__read', 'gh__issues']);
    assert.deepEqual(names(catalog.listPrompts()), ['simple']);
    assert.deepEqual(
      catalog
        .listResources()
        .map((r) => (r as Resource).uri)
        .sort(),
      ['mcpgate://gh/repo://x', 'test://static'],
    );
    assert.deepEqual(
      catalog.listResourceTemplates().map((r) => (r as { uriTemplate: string }).uriTemplate),
      ['test://t/{id}/data'],
    );
    assert.deepEqual(catalog.tool('echo'), { server: 'everything', original: 'echo', tool: tool('echo') });
    assert.equal(catalog.tool('gh__issues')?.server, 'github');
    assert.equal(catalog.tool('github__issues'), undefined);
    assert.equal(catalog.publicUri('everything', 'test://static'), 'test://static');
    assert.equal(catalog.publicUri('github', 'repo://x'), 'mcpgate://gh/repo://x');
    assert.deepEqual(catalog.resolveUri('mcpgate://gh/repo://x'), { server: 'github', uri: 'repo://x' });
    assert.deepEqual(catalog.resolveUri('test://t/42/data'), { server: 'everything', uri: 'test://t/42/data' });
    // The only unprefixed server serves URIs it does not list, too.
    assert.deepEqual(catalog.resolveUri('test://unlisted'), { server: 'everything', uri: 'test://unlisted' });
    assert.deepEqual(catalog.serverOfName('gh__nope'), { server: 'github', rest: 'nope' });
    assert.equal(catalog.serverOfName('nope'), undefined);
    assert.equal(catalog.nameFor('everything', 'nope'), 'nope');
    assert.equal(catalog.nameFor('github', 'nope'), 'gh__nope');
    assert.deepEqual(catalog.serverNames, ['github', 'everything', 'fs']);
  });

  void it("a clash withholds the later server's item with one warning naming both servers and the fix", T, () => {
    const told: string[] = [];
    const catalog = new Catalog(
      [
        { name: 'b', prefix: false },
        { name: 'a', prefix: false },
      ],
      { onWarning: (w) => told.push(w) },
    );
    catalog.set('a', { tools: [tool('echo'), tool('only_a')], prompts: [prompt('p')], resources: [resource('test://r')] });
    assert.equal(told.length, 0);
    // b is earlier in .mcp.json: it keeps the names even though it answered later.
    catalog.set('b', { tools: [tool('echo')], prompts: [prompt('p')], resources: [resource('test://r')] });
    assert.equal(catalog.tool('echo')?.server, 'b');
    assert.equal(catalog.tool('only_a')?.server, 'a');
    assert.equal(catalog.prompt('p')?.server, 'b');
    assert.deepEqual(catalog.resolveUri('test://r'), { server: 'b', uri: 'test://r' });
    assert.deepEqual(names(catalog.listTools()).sort(), ['echo', 'only_a']);
    assert.equal(catalog.listResources().length, 1);
    assert.equal(told.length, 3);
    assert.match(
      told[0]!,
      /^tool "echo" of server "a" is withheld: server "b" \(earlier in \.mcp\.json\) already exposes tool "echo"; give server "a" a prefix in \.mcp\.json \(for example "prefix": "a"\)$/,
    );
    assert.ok(
      told.some((w) => w.startsWith('prompt "p" of server "a"')) && told.some((w) => w.startsWith('resource "test://r" of server "a"')),
    );
    // A list change that keeps the clash does not repeat the warning; one that adds a clash tells it once.
    catalog.set('a', { tools: [tool('echo'), tool('only_a'), tool('x')] });
    assert.equal(told.length, 3);
    catalog.set('b', { tools: [tool('echo'), tool('x')] });
    assert.equal(told.length, 4);
    assert.match(told[3]!, /^tool "x" of server "a" is withheld/);
    // The clash ends when the earlier server drops the name: the later one's item appears.
    catalog.set('b', { tools: [] });
    assert.equal(catalog.tool('echo')?.server, 'a');
    assert.deepEqual(
      catalog.warnings.filter((w) => w.startsWith('tool')),
      [],
    );
  });

  void it('an unprefixed name that looks like a prefixed one clashes too (never shadowed)', T, () => {
    const catalog = new Catalog(['gh', { name: 'raw', prefix: false }]);
    catalog.set('raw', { tools: [tool('gh__issues')] });
    catalog.set('gh', { tools: [tool('issues')] });
    assert.equal(catalog.tool('gh__issues')?.server, 'gh');
    assert.equal(catalog.listTools().length, 1);
    assert.match(catalog.warnings.join('\n'), /tool "gh__issues" of server "raw" is withheld: server "gh"/);
  });

  void it('two unprefixed servers: a URI neither lists nor matches routes nowhere', T, () => {
    const catalog = new Catalog([
      { name: 'a', prefix: false },
      { name: 'b', prefix: false },
    ]);
    catalog.set('a', { resources: [resource('a://1')] });
    catalog.set('b', { resourceTemplates: [{ uriTemplate: 'b://{+path}', name: 't' }] });
    assert.equal(catalog.resolveUri('a://1')?.server, 'a');
    assert.equal(catalog.resolveUri('b://x/y/z')?.server, 'b');
    assert.equal(catalog.resolveUri('c://1'), undefined);
  });
});

void describe('Router: unprefixed servers', () => {
  function setup(rules: Rules = OPEN_RULES) {
    const catalog = new Catalog([{ name: 'everything', prefix: false }, 'fs']);
    catalog.set('everything', { tools: [tool('echo')], prompts: [prompt('simple')], resources: [resource('test://static')] });
    catalog.set('fs', { tools: [tool('read')] });
    const connections = new Map<string, Connection>(['everything', 'fs'].map((name) => [name, sharedConn(name)]));
    return new Router({ catalog, connections, inForce: { rules }, hasSettled: () => true, pinsDir: '/state', pool: noPool() });
  }
  const rules = (value: unknown): Rules => parseRules(JSON.stringify(value), '/x/rules.json', ['everything', 'fs']);

  void it("routes own names and URIs to the server, with the server's own name", T, () => {
    const router = setup();
    const route = router.tool(silentLogger, who('a'), 'echo');
    assert.ok(!(route instanceof GatewayError) && route !== NOT_YET);
    assert.deepEqual({ server: route.server, original: route.original }, { server: 'everything', original: 'echo' });
    const uri = router.uri(silentLogger, who('a'), 'resources/read', 'test://static');
    assert.ok(!(uri instanceof GatewayError));
    assert.equal(uri.uri, 'test://static');
    assert.equal(code(router.tool(silentLogger, who('a'), 'nope')), 'MCPG_TOOL_NOT_FOUND');
  });

  void it('a denial reveals nothing: a denied item of an unprefixed server is answered as unknown, like a made-up name', T, () => {
    const router = setup(rules({ agents: { a: { allow: { servers: ['fs'] } } } }));
    const deniedTool = router.tool(silentLogger, who('a'), 'echo');
    const madeUp = router.tool(silentLogger, who('a'), 'no_such_tool');
    assert.equal(code(deniedTool), 'MCPG_TOOL_NOT_FOUND');
    assert.equal((deniedTool as GatewayError).message, 'unknown tool: echo');
    assert.equal((madeUp as GatewayError).message, 'unknown tool: no_such_tool');
    assert.equal(code(router.prompt(silentLogger, who('a'), 'simple')), 'MCPG_PROMPT_NOT_FOUND');
    assert.equal(code(router.uri(silentLogger, who('a'), 'resources/read', 'test://static')), 'MCPG_RESOURCE_NOT_FOUND');
    // A prefixed server keeps its explicit denial (its prefix names it whether or not the tool exists).
    assert.equal(
      code(setup(rules({ agents: { a: { allow: { servers: ['everything'] } } } })).tool(silentLogger, who('a'), 'fs__nope')),
      'MCPG_POLICY_DENIED',
    );
  });
});
