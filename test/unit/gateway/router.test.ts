// The router's decisions (src/gateway/routing/router.ts): a public tool name → its connection and
// the server's own name, under the rules and the pins — allowed, denied (before existence, so a
// made-up name under a denied server is denied too), held, unknown, waiting while servers start, and
// a server that is not connected — and the connection that carries the call: a shared server's own,
// or the caller's pooled connection of a per-agent or per-session server (in-memory servers).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, type HeldInfo } from '../../../src/catalog/catalog.js';
import { GatewayError } from '../../../src/errors.js';
import { NOT_YET, Router, isPending, whenReady, type Caller } from '../../../src/gateway/routing/router.js';
import { noPool, sharedConn, who } from '../../helpers/route-parts.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { OPEN_RULES, parseRules, type Rules } from '../../../src/rules/load.js';
import { Connection } from '../../../src/servers/connection.js';
import { ConnectionPool } from '../../../src/servers/pool.js';
import { FakeServer, stdioConfig } from '../../helpers/fake-server.js';

const T = { timeout: 5000 };
const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });

function setup(options: { rules?: Rules; settled?: boolean; connected?: string[] } = {}) {
  const catalog = new Catalog(['fs', 'db']);
  const held = new Map<string, HeldInfo>([['drop', { digest: 'x', changes: ['new tool'] }]]);
  catalog.set('fs', { tools: [tool('read'), tool('write')], resources: [], resourceTemplates: [], prompts: [] });
  catalog.set('db', { tools: [tool('query'), tool('drop')], resources: [], resourceTemplates: [], prompts: [] }, held);
  const connections = new Map<string, Connection>();
  for (const name of options.connected ?? ['fs', 'db']) connections.set(name, sharedConn(name));
  const router = new Router({
    catalog,
    connections,
    inForce: { rules: options.rules ?? OPEN_RULES },
    hasSettled: () => options.settled ?? true,
    pinsDir: '/state',
    pool: noPool(),
  });
  return { router, connections };
}

const rules = (value: unknown): Rules => parseRules(JSON.stringify(value), '/x/rules.json', ['fs', 'db']);
const code = (outcome: unknown): string | undefined => (outcome instanceof GatewayError ? outcome.code : undefined);

void describe('Router.tool', () => {
  void it("allowed: the connection and the server's own tool name", T, () => {
    const { router, connections } = setup();
    const route = router.tool(silentLogger, who('a'), 'fs__read');
    assert.ok(!(route instanceof GatewayError) && route !== NOT_YET);
    assert.equal(route.conn, connections.get('fs'));
    assert.deepEqual({ server: route.server, original: route.original }, { server: 'fs', original: 'read' });
  });

  void it('denied by the rules: MCPG_POLICY_DENIED naming agent and server, not the rule', T, () => {
    const { router } = setup({ rules: rules({ agents: { a: { allow: { servers: ['fs'] }, deny: { tools: { fs: ['write'] } } } } }) });
    const refused = router.tool(silentLogger, who('a'), 'fs__write');
    assert.equal(code(refused), 'MCPG_POLICY_DENIED');
    assert.match((refused as GatewayError).message, /agent "a" may not use tool "write" of server "fs"/);
    assert.equal(code(router.tool(silentLogger, who('a'), 'fs__read')), undefined);
  });

  void it('denied before existence: a made-up name under a denied server says denied, not unknown', T, () => {
    const { router } = setup({ rules: rules({ agents: { a: { allow: { servers: ['fs'] } } } }) });
    assert.equal(code(router.tool(silentLogger, who('a'), 'db__no_such_tool')), 'MCPG_POLICY_DENIED');
    assert.equal(code(router.tool(silentLogger, who('a'), 'fs__no_such_tool')), 'MCPG_TOOL_NOT_FOUND');
  });

  void it('held by the pins: MCPG_TOOL_HELD with the command that approves it', T, () => {
    const { router } = setup();
    const held = router.tool(silentLogger, who('a'), 'db__drop');
    assert.equal(code(held), 'MCPG_TOOL_HELD');
    assert.equal((held as GatewayError).detail?.approve, 'mcpgate approve db drop --state /state');
  });

  void it('unknown once every server has settled: MCPG_TOOL_NOT_FOUND', T, () => {
    const { router } = setup();
    assert.equal(code(router.tool(silentLogger, who('a'), 'nope')), 'MCPG_TOOL_NOT_FOUND');
  });

  void it('unknown while servers are still starting: NOT_YET (the caller waits for them)', T, () => {
    const { router } = setup({ settled: false });
    assert.equal(router.tool(silentLogger, who('a'), 'nope'), NOT_YET);
    assert.notEqual(router.tool(silentLogger, who('a'), 'fs__read'), NOT_YET);
  });

  void it('its server not connected: MCPG_SERVER_UNAVAILABLE', T, () => {
    const { router } = setup({ connected: ['fs'] });
    assert.equal(code(router.tool(silentLogger, who('a'), 'db__query')), 'MCPG_SERVER_UNAVAILABLE');
  });

  void it('reads the rules snapshot per decision (a reload swaps it)', T, () => {
    const current: { rules: Rules } = { rules: OPEN_RULES };
    const catalog = new Catalog(['fs']);
    catalog.set('fs', { tools: [tool('read')], resources: [], resourceTemplates: [], prompts: [] });
    const router = new Router({
      catalog,
      connections: new Map([['fs', sharedConn('fs')]]),
      inForce: current,
      hasSettled: () => true,
      pinsDir: '.mcpgate',
      pool: noPool(),
    });
    assert.equal(code(router.tool(silentLogger, who('a'), 'fs__read')), undefined);
    current.rules = rules({ agents: { a: { deny: { servers: ['fs'] } } } });
    assert.equal(code(router.tool(silentLogger, who('a'), 'fs__read')), 'MCPG_POLICY_DENIED');
  });
});

void describe('Router: resources, prompts, completion', () => {
  void it('a URI of a denied server is denied; an unknown URI is not found', T, () => {
    const { router } = setup({ rules: rules({ agents: { a: { allow: { servers: ['fs'] } } } }) });
    assert.equal(code(router.uri(silentLogger, who('a'), 'resources/read', 'mcpgate://db/x')), 'MCPG_POLICY_DENIED');
    assert.equal(code(router.uri(silentLogger, who('a'), 'resources/read', 'file:///x')), 'MCPG_RESOURCE_NOT_FOUND');
    assert.equal(code(router.uri(silentLogger, who('a'), 'resources/read', 42)), 'MCPG_INVALID_PARAMS');
  });

  void it('an unknown prompt is not found; a completion ref of another type is invalid', T, () => {
    const { router } = setup();
    assert.equal(code(router.prompt(silentLogger, who('a'), 'fs__nope')), 'MCPG_PROMPT_NOT_FOUND');
    assert.equal(code(router.completion(silentLogger, who('a'), { type: 'ref/other' })), 'MCPG_INVALID_PARAMS');
  });
});

void describe('Router: the connection that carries the call', () => {
  /** A per-session server `kv` and a per-agent server `notes`, their pooled connections over in-memory servers. */
  function pooledSetup() {
    const catalog = new Catalog(['kv', 'notes']);
    catalog.set('kv', { tools: [tool('get')], resources: [], resourceTemplates: [], prompts: [] });
    catalog.set('notes', { tools: [tool('add')], resources: [], resourceTemplates: [], prompts: [] });
    const configs = {
      kv: { ...stdioConfig('kv'), sessions: 'per-session' as const },
      notes: { ...stdioConfig('notes'), sessions: 'per-agent' as const },
    };
    const catalogConns = new Map<string, Connection>(
      Object.entries(configs).map(([name, config]) => [name, { name, config, onDemand: false, state: 'ready' } as unknown as Connection]),
    );
    const made: { server: string; scope: string; conn: Connection }[] = [];
    const pool = new ConnectionPool({
      create: (config, scope) => {
        const server = new FakeServer(config.name, { tools: [{ name: 'get' }, { name: 'add' }] });
        const conn = new Connection(
          config,
          {
            notification: () => undefined,
            serverRequest: () => undefined,
            ready: () => Promise.resolve(),
            interrupted: () => undefined,
            lost: () => undefined,
          },
          silentLogger,
          {
            startupTimeoutMs: 5000,
            supervision: { retries: 0 },
            transport: (_cfg, _log, events) => server.open(events),
          },
        );
        made.push({ server: config.name, scope: scope.key, conn });
        return conn;
      },
      busy: () => false,
      log: silentLogger,
    });
    const router = new Router({
      catalog,
      connections: catalogConns,
      inForce: { rules: OPEN_RULES },
      hasSettled: () => true,
      pinsDir: '/state',
      pool,
    });
    return { router, pool, made, catalogConns };
  }

  async function carried(router: Router, caller: Caller, name: string): Promise<Connection> {
    const route = router.tool(silentLogger, caller, name);
    assert.ok(!(route instanceof GatewayError) && route !== NOT_YET);
    return whenReady(route.carrier);
  }

  void it('a shared server: its connection, at once', T, () => {
    const { router, connections } = setup();
    const route = router.tool(silentLogger, who('a'), 'fs__read');
    assert.ok(!(route instanceof GatewayError) && route !== NOT_YET);
    assert.equal(route.carrier, connections.get('fs'));
    assert.ok(!isPending(route.carrier));
  });

  void it('a per-session server: each session its own pooled connection, never the catalog connection', T, async () => {
    const { router, pool, made, catalogConns } = pooledSetup();
    try {
      const first = router.tool(silentLogger, who('alice', undefined, 1), 'kv__get');
      assert.ok(!(first instanceof GatewayError) && first !== NOT_YET);
      assert.ok(isPending(first.carrier), 'a miss: the call waits while the connection is made');
      assert.equal(first.conn, catalogConns.get('kv'), 'the route names the server by its connection');
      const one = await whenReady(first.carrier);
      const again = await carried(router, who('alice', undefined, 1), 'kv__get');
      const other = await carried(router, who('alice', undefined, 2), 'kv__get');
      assert.equal(again, one, 'the same session: the same connection (a hit)');
      assert.notEqual(other, one, 'another session of the same agent: a connection of its own');
      assert.ok(one !== catalogConns.get('kv') && other !== catalogConns.get('kv'));
      assert.deepEqual(
        made.map((m) => m.scope),
        ['session:1', 'session:2'],
      );
    } finally {
      await pool.close();
    }
  });

  void it('a per-agent server: one connection per identified agent, per session for an unnamed one', T, async () => {
    const { router, pool, made } = pooledSetup();
    try {
      const a1 = await carried(router, who('alice', undefined, 1), 'notes__add');
      const a2 = await carried(router, who('alice', undefined, 2), 'notes__add');
      const b = await carried(router, who('bob', undefined, 3), 'notes__add');
      const unnamed = await carried(router, { ...who('alice', undefined, 4), identified: false }, 'notes__add');
      assert.equal(a1, a2, 'every session of alice shares her connection');
      assert.notEqual(a1, b);
      assert.notEqual(a1, unnamed, 'an agent with no identity of its own never shares one by its name');
      assert.deepEqual(
        made.map((m) => m.scope),
        ['agent:alice', 'agent:bob', 'session:4'],
      );
    } finally {
      await pool.close();
    }
  });
});
