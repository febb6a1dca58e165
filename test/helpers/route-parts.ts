// What the router tests give the router: a caller (an agent session's routing identity), shared
// connections that name their server, and a pool for the per-agent and per-session servers they
// route (none of these tests makes a pooled connection unless it says so).

import type { Catalog } from '../../src/catalog/catalog.js';
import type { Caller } from '../../src/gateway/routing/router.js';
import type { Connection } from '../../src/servers/connection.js';
import { ConnectionPool, scopeOf, type PoolScope } from '../../src/servers/pool.js';
import { silentLogger } from '../../src/observability/logger.js';

/** An identified agent's session routing its own request. */
export function who(agent: string, ownCatalogs?: readonly Catalog[], serial = 1): Caller {
  return { agent, identified: true, serial, claims: undefined, ownCatalogs };
}

/** A ready shared server's connection, as far as routing reads it. */
export function sharedConn(name: string): Connection {
  return { name, config: { name, sessions: 'shared' }, onDemand: false, state: 'ready' } as unknown as Connection;
}

/** A pool that refuses to make connections: these routes are to shared servers. */
export function noPool(): ConnectionPool {
  return new ConnectionPool({
    create: () => {
      throw new Error('this test routes no pooled server');
    },
    busy: () => false,
    log: silentLogger,
  });
}

/** A pool scope from its text (`agent:ID`, `session:N`), made the one way src makes them. */
export function scope(text: string): PoolScope {
  return text.startsWith('agent:')
    ? scopeOf({ agent: text.slice('agent:'.length), identified: true, serial: 0 }, 'per-agent')
    : scopeOf({ agent: '', identified: false, serial: Number(text.slice('session:'.length)) }, 'per-session');
}
