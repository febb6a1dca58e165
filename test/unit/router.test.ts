// The router's decisions (src/gateway/router.ts; issue 16): a public tool name → its connection and
// the server's own name, under the rules and the pins — allowed, denied (before existence, so a
// made-up name under a denied server is denied too), held, unknown, waiting while servers start, and
// a server that is not connected. Pure: an in-memory catalog and a map of stand-in connections.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog } from '../../src/catalog/catalog.js';
import { GatewayError } from '../../src/errors.js';
import { NOT_YET, Router } from '../../src/gateway/router.js';
import { silentLogger } from '../../src/observability/logger.js';
import { OPEN_RULES, parseRules, type Rules } from '../../src/rules/load.js';
import type { Connection } from '../../src/servers/connection.js';
import type { HeldInfo } from '../../src/pins/review.js';

const T = { timeout: 5000 };
const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });

function setup(options: { rules?: Rules; settled?: boolean; connected?: string[] } = {}) {
  const catalog = new Catalog(['fs', 'db']);
  const held = new Map<string, HeldInfo>([['drop', { digest: 'x', definition: {} as HeldInfo['definition'], changes: ['new tool'] }]]);
  catalog.set('fs', { tools: [tool('read'), tool('write')], resources: [], resourceTemplates: [], prompts: [] });
  catalog.set('db', { tools: [tool('query'), tool('drop')], resources: [], resourceTemplates: [], prompts: [] }, held);
  const connections = new Map<string, Connection>();
  for (const name of options.connected ?? ['fs', 'db']) connections.set(name, { name } as unknown as Connection);
  const router = new Router({ catalog, connections, rules: () => options.rules ?? OPEN_RULES, hasSettled: () => options.settled ?? true, pinsDir: '/state' });
  return { router, connections };
}

const rules = (value: unknown): Rules => parseRules(JSON.stringify(value), '/x/rules.json', ['fs', 'db']);
const code = (outcome: unknown): string | undefined => (outcome instanceof GatewayError ? outcome.code : undefined);

void describe('Router.tool', () => {
  void it('allowed: the connection and the server\'s own tool name', T, () => {
    const { router, connections } = setup();
    const route = router.tool(silentLogger, 'a', 'fs__read');
    assert.ok(!(route instanceof GatewayError) && route !== NOT_YET);
    assert.equal(route.conn, connections.get('fs'));
    assert.deepEqual({ server: route.server, original: route.original }, { server: 'fs', original: 'read' });
  });

  void it('denied by the rules: MCPG_POLICY_DENIED naming agent and server, not the rule', T, () => {
    const { router } = setup({ rules: rules({ agents: { a: { allow: { servers: ['fs'] }, deny: { tools: { fs: ['write'] } } } } }) });
    const refused = router.tool(silentLogger, 'a', 'fs__write');
    assert.equal(code(refused), 'MCPG_POLICY_DENIED');
    assert.match((refused as GatewayError).message, /agent "a" may not use tool "write" of server "fs"/);
    assert.equal(code(router.tool(silentLogger, 'a', 'fs__read')), undefined);
  });

  void it('denied before existence: a made-up name under a denied server says denied, not unknown', T, () => {
    const { router } = setup({ rules: rules({ agents: { a: { allow: { servers: ['fs'] } } } }) });
    assert.equal(code(router.tool(silentLogger, 'a', 'db__no_such_tool')), 'MCPG_POLICY_DENIED');
    assert.equal(code(router.tool(silentLogger, 'a', 'fs__no_such_tool')), 'MCPG_TOOL_NOT_FOUND');
  });

  void it('held by the pins: MCPG_TOOL_HELD with the command that approves it', T, () => {
    const { router } = setup();
    const held = router.tool(silentLogger, 'a', 'db__drop');
    assert.equal(code(held), 'MCPG_TOOL_HELD');
    assert.equal((held as GatewayError).detail?.approve, 'mcpgate approve db drop --state /state');
  });

  void it('unknown once every server has settled: MCPG_TOOL_NOT_FOUND', T, () => {
    const { router } = setup();
    assert.equal(code(router.tool(silentLogger, 'a', 'nope')), 'MCPG_TOOL_NOT_FOUND');
  });

  void it('unknown while servers are still starting: NOT_YET (the caller waits for them)', T, () => {
    const { router } = setup({ settled: false });
    assert.equal(router.tool(silentLogger, 'a', 'nope'), NOT_YET);
    assert.notEqual(router.tool(silentLogger, 'a', 'fs__read'), NOT_YET);
  });

  void it('its server not connected: MCPG_SERVER_UNAVAILABLE', T, () => {
    const { router } = setup({ connected: ['fs'] });
    assert.equal(code(router.tool(silentLogger, 'a', 'db__query')), 'MCPG_SERVER_UNAVAILABLE');
  });

  void it('reads the rules snapshot per decision (a reload swaps it)', T, () => {
    let current: Rules = OPEN_RULES;
    const catalog = new Catalog(['fs']);
    catalog.set('fs', { tools: [tool('read')], resources: [], resourceTemplates: [], prompts: [] });
    const router = new Router({ catalog, connections: new Map([['fs', {} as Connection]]), rules: () => current, hasSettled: () => true, pinsDir: '.mcpgate' });
    assert.equal(code(router.tool(silentLogger, 'a', 'fs__read')), undefined);
    current = rules({ agents: { a: { deny: { servers: ['fs'] } } } });
    assert.equal(code(router.tool(silentLogger, 'a', 'fs__read')), 'MCPG_POLICY_DENIED');
  });
});

void describe('Router: resources, prompts, completion', () => {
  void it('a URI of a denied server is denied; an unknown URI is not found', T, () => {
    const { router } = setup({ rules: rules({ agents: { a: { allow: { servers: ['fs'] } } } }) });
    assert.equal(code(router.uri(silentLogger, 'a', 'resources/read', 'mcpgate://db/x')), 'MCPG_POLICY_DENIED');
    assert.equal(code(router.uri(silentLogger, 'a', 'resources/read', 'file:///x')), 'MCPG_RESOURCE_NOT_FOUND');
    assert.equal(code(router.uri(silentLogger, 'a', 'resources/read', 42)), 'MCPG_INVALID_PARAMS');
  });

  void it('an unknown prompt is not found; a completion ref of another type is invalid', T, () => {
    const { router } = setup();
    assert.equal(code(router.prompt(silentLogger, 'a', 'fs__nope')), 'MCPG_PROMPT_NOT_FOUND');
    assert.equal(code(router.completion(silentLogger, 'a', { type: 'ref/other' })), 'MCPG_INVALID_PARAMS');
  });
});
