// Per-agent and per-session catalogs (src/gateway/routing/own-catalogs.ts): a session's own view
// of a pooled server replaces the shared catalog's part of that server, in listing and in routing;
// other sessions keep the shared view; an own view equal to the shared one encodes to the same text
// (so nothing is announced); held tools in an own catalog are refused as held. Pure: in-memory
// catalogs and stand-in connections.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog } from '../../../src/catalog/catalog.js';
import { GatewayError } from '../../../src/errors.js';
import { AgentViews, ShownViews } from '../../../src/gateway/session/agent-views.js';
import { OwnCatalogs, seenEntry } from '../../../src/gateway/routing/own-catalogs.js';
import { Router } from '../../../src/gateway/routing/router.js';
import { noPool, scope, sharedConn, who } from '../../helpers/route-parts.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { OPEN_RULES, parseRules, type Rules } from '../../../src/rules/load.js';
import type { Connection } from '../../../src/servers/connection.js';
import type { ServerLists } from '../../../src/servers/lists.js';

const T = { timeout: 5000 };
const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });
const lists = (...tools: string[]): ServerLists => ({ tools: tools.map(tool), resources: [], resourceTemplates: [], prompts: [] });
const SERVERS = ['alpha', 'pooled', 'zeta'];

function setup(rules: Rules = OPEN_RULES) {
  const catalog = new Catalog(SERVERS);
  catalog.set('alpha', lists('a1'));
  catalog.set('pooled', lists('inc', 'get'));
  catalog.set('zeta', lists('z1'));
  const own = new OwnCatalogs(SERVERS, {});
  const connections = new Map<string, Connection>(SERVERS.map((name) => [name, sharedConn(name)]));
  const router = new Router({ catalog, connections, inForce: { rules }, hasSettled: () => true, pinsDir: '/state', pool: noPool() });
  const views = new AgentViews(catalog, () => rules);
  return { catalog, own, router, views };
}

const names = (bytes: readonly Buffer[]): string[] =>
  (JSON.parse(Buffer.concat(bytes).toString()) as { tools: { name: string }[] }).tools.map((t) => t.name);

describe('own catalogs', () => {
  it('a session sees its own list of a pooled server in place of the shared one, in server order', T, () => {
    const { own, views } = setup();
    const alice = { agent: 'alice', identified: true, serial: 1 };
    const bob = { agent: 'bob', identified: true, serial: 2 };
    assert.equal(own.of(alice), undefined, 'no own catalog: the shared path');
    assert.deepEqual(own.set(scope('agent:alice'), 'pooled', lists('inc', 'get', 'extra')), [
      'tools',
      'resources',
      'resourceTemplates',
      'prompts',
    ]);
    const aliceView = new ShownViews(views, 'alice', { own: () => own.of(alice) });
    const bobView = new ShownViews(views, 'bob', { own: () => own.of(bob) });
    assert.deepEqual(names(aliceView.serve('tools')), ['alpha__a1', 'pooled__inc', 'pooled__get', 'pooled__extra', 'zeta__z1']);
    assert.deepEqual(names(bobView.serve('tools')), ['alpha__a1', 'pooled__inc', 'pooled__get', 'zeta__z1']);
    // Another session of alice (per-agent scope) has her view; an unidentified agent named alice does not.
    assert.equal(own.of({ agent: 'alice', identified: true, serial: 9 })?.length, 1);
    assert.equal(own.of({ agent: 'alice', identified: false, serial: 9 }), undefined);
  });

  it('an own view equal to the shared one encodes to the same text; dropping it announces only a real change', T, () => {
    const { own, views } = setup();
    const s = { agent: 'carol', identified: true, serial: 3 };
    const shown = new ShownViews(views, 'carol', { own: () => own.of(s) });
    const shared = shown.serve('tools');
    own.set(scope('session:3'), 'pooled', lists('inc', 'get'));
    assert.equal(shown.changed('tools'), false, 'the same tools: no list_changed');
    own.set(scope('session:3'), 'pooled', lists('inc'));
    assert.equal(shown.changed('tools'), true);
    assert.deepEqual(own.remove(scope('session:3'), 'pooled').includes('tools'), true);
    assert.equal(own.of(s), undefined, 'an empty scope is forgotten');
    assert.equal(shown.changed('tools'), true, 'back to the shared view');
    assert.equal(shown.serve('tools'), shared);
  });

  it("routing: the own tool is found, the shared part of that server is not the session's, others are unchanged", T, () => {
    const { catalog, own, router } = setup();
    own.set(scope('agent:alice'), 'pooled', lists('inc', 'extra'));
    const mine = own.of({ agent: 'alice', identified: true, serial: 1 })!;
    assert.equal(seenEntry(catalog, mine, (c) => c.tool('pooled__extra'))?.original, 'extra');
    assert.equal(
      seenEntry(catalog, mine, (c) => c.tool('pooled__get')),
      undefined,
      'her own session no longer lists get',
    );
    assert.equal(seenEntry(catalog, mine, (c) => c.tool('alpha__a1'))?.server, 'alpha');
    const route = router.tool(silentLogger, who('alice', mine), 'pooled__extra');
    assert.ok(!(route instanceof GatewayError) && typeof route !== 'string');
    assert.equal(route.original, 'extra');
    const other = router.tool(silentLogger, who('bob', undefined), 'pooled__extra');
    assert.ok(other instanceof GatewayError);
    assert.equal(other.code, 'MCPG_TOOL_NOT_FOUND');
  });

  it('a held tool in an own catalog is refused as held; the rules filter own views like shared ones', T, () => {
    const rules = parseRules(
      JSON.stringify({ agents: { alice: { allow: { servers: ['pooled'], tools: { pooled: ['inc', 'extra'] } } } } }),
      '/x/rules.json',
      SERVERS,
    );
    const { own, router, views } = setup(rules);
    own.set(
      scope('agent:alice'),
      'pooled',
      lists('inc', 'extra', 'secret', 'fresh'),
      new Map([['fresh', { digest: 'd', changes: ['new tool'] }]]),
    );
    const mine = own.of({ agent: 'alice', identified: true, serial: 1 })!;
    const held = router.tool(silentLogger, who('alice', mine), 'pooled__fresh');
    assert.ok(held instanceof GatewayError);
    assert.equal(held.code, 'MCPG_POLICY_DENIED', 'the rules decide before the pins');
    const shown = new ShownViews(views, 'alice', { own: () => mine });
    assert.deepEqual(names(shown.serve('tools')), ['pooled__inc', 'pooled__extra']);
    own.set(scope('agent:alice'), 'pooled', lists('inc', 'extra'), new Map([['extra', { digest: 'd', changes: ['new tool'] }]]));
    const refused = router.tool(silentLogger, who('alice', own.of({ agent: 'alice', identified: true, serial: 1 })), 'pooled__extra');
    assert.ok(refused instanceof GatewayError);
    assert.equal(refused.code, 'MCPG_TOOL_HELD');
  });
});
