// The scrape-time snapshot GatewayMetrics reads (observability/gateway-metrics.ts), taken from what the
// gateway already exposes: configured servers and their connections (state, breaker), the catalog's
// merged lists and held tools, and the open agent sessions. Read-only; called once per scrape.

import type { MetricsSnapshot, MetricsSource, ServerState } from '../observability/gateway-metrics.js';
import type { Connection, ConnectionState } from '../servers/connection.js';
import type { Gateway } from './gateway.js';

// A compile-time check that every connection state is one the metrics know.
const asServerState = (state: ConnectionState): ServerState => state;

export function metricsSource(gateway: Gateway): MetricsSource {
  return (): MetricsSnapshot => {
    const catalog = gateway.catalog;
    let heldTools = 0;
    const servers = gateway.config.servers.map((config) => {
      heldTools += catalog.heldCount(config.name);
      const conn = gateway.connections.get(config.name);
      return {
        name: config.name,
        state: config.disabled ? ('disabled' as const) : conn === undefined ? undefined : asServerState(conn.state),
        breaker: conn?.breaker.state ?? 'closed',
        breakerTrips: conn?.breaker.trips ?? 0,
        inflight: conn === undefined ? 0 : inflightOn(gateway, conn),
      };
    });
    let http = 0;
    for (const session of gateway.sessions) if (session.transport === 'http') http += 1;
    const total = gateway.sessions.size;
    return {
      servers,
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

function inflightOn(gateway: Gateway, conn: Connection): number {
  let n = 0;
  for (const session of gateway.sessions) n += session.callsOn(conn);
  return n;
}
