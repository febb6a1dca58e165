// The scrape-time snapshot GatewayMetrics reads (observability/metrics.ts), taken from the
// parts that already hold it: configured servers and their connections (state, breaker), the catalog's
// merged lists and held tools, and the open agent sessions. Read-only; called once per scrape.
// Also the calls in flight per server and the sessions by transport. Calls and errors are not read
// here: they are counted as they happen.

import type { Catalog } from '../catalog/catalog.js';
import type { ServersConfig } from '../config/types.js';
import type { MetricsSnapshot, MetricsSource, ServerState } from '../observability/metrics.js';
import type { Connection, ConnectionState } from '../servers/connection.js';
import type { Agents } from './open-agents.js';
import type { ConnectionPool } from '../servers/pool.js';

/** What the snapshot reads (the Gateway has each of these). */
interface MetricsParts {
  readonly config: ServersConfig;
  readonly catalog: Catalog;
  readonly connections: ReadonlyMap<string, Connection>;
  readonly agents: Agents;
  readonly pool: Pick<ConnectionPool, 'stats'>;
}

// A compile-time check that every connection state is one the metrics know.
const asServerState = (state: ConnectionState): ServerState => state;

export function metricsSource(parts: MetricsParts): MetricsSource {
  return (): MetricsSnapshot => {
    const catalog = parts.catalog;
    let heldTools = 0;
    const servers = parts.config.servers.map((config) => {
      heldTools += catalog.heldCount(config.name);
      const conn = parts.connections.get(config.name);
      return {
        name: config.name,
        state: config.disabled ? ('disabled' as const) : conn === undefined ? undefined : asServerState(conn.state),
        breaker: conn?.breaker.state ?? 'closed',
        breakerTrips: conn?.breaker.trips ?? 0,
        inflight: conn === undefined ? 0 : parts.agents.callsOn(conn),
        ...(config.start === 'on-demand' &&
          !config.disabled && { onDemand: { starts: conn?.demandStarts ?? 0, stops: conn?.demandStops ?? 0 } }),
      };
    });
    let http = 0;
    for (const session of parts.agents) if (session.transport === 'http') http += 1;
    const total = parts.agents.size;
    const pooled = parts.config.servers.filter((s) => s.sessions !== 'shared').map((s) => s.name);
    const pools = parts.pool.stats(pooled).map(({ pids, ...rest }) => ({ ...rest, processes: pids.length }));
    return {
      servers,
      pools,
      catalog: {
        tools: catalog.listTools().length,
        resources: catalog.listResources().length,
        resourceTemplates: catalog.listResourceTemplates().length,
        prompts: catalog.listPrompts().length,
        heldTools,
      },
      sessions: { stdio: total - http, http },
    };
  };
}
