// Applying a reloaded configuration: the rules are swapped as one reference (in-flight calls keep the
// snapshot they were decided with), and `.mcp.json` is applied per server — added servers start,
// removed ones are shut down gracefully, changed ones restart — while untouched servers keep their
// connections and their calls in flight. Every agent whose view changed is told. A per-agent or
// per-session server's pooled connections go with its catalog connection, and an agent that lost
// access to a server under the new rules, or whose own headers for it changed, loses its pooled
// connections to it.

import type { SizeCaps } from '../catalog/size-caps.js';
import type { Catalog } from '../catalog/catalog.js';
import type { OwnCatalogs } from './routing/own-catalogs.js';
import type { ServerConfig, ServersConfig } from '../config/types.js';
import type { Rules } from '../rules/load.js';
import type { Connection } from '../servers/connection.js';
import { credentialDigest, type ConnectionPool, type PoolEntry } from '../servers/pool.js';
import { decideServer, grantMayUse } from '../rules/decide.js';
import type { ListKind } from '../servers/lists.js';

/** What a reload changes: the configuration and rules in force, the catalog's servers, the connections. */
interface Reconfigurable {
  config: ServersConfig;
  rules: Rules;
  readonly catalog: Catalog;
  /** The per-agent/per-session views of pooled servers, named like the catalog. */
  readonly own: Pick<OwnCatalogs, 'setServers'>;
  readonly connections: Map<string, Connection>;
  /** Per-agent and per-session servers' connections. */
  readonly pool: Pick<ConnectionPool, 'closeServer' | 'retain'>;
  /** The catalog limits' record of what was cut per server (a removed server's is forgotten). */
  readonly limits: Pick<SizeCaps, 'forget'>;
  /** Tells each agent whose view of these lists changed. */
  announce(kinds: readonly ListKind[]): void;
  /** Starts one configured server (or reports why not). */
  launch(config: ServerConfig): Promise<unknown>;
}

interface ApplyReport {
  added: string[];
  removed: string[];
  restarted: string[];
}

/** Field-by-field equality of two server entries (the snapshots are plain frozen JSON). */
function same(a: ServerConfig, b: ServerConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether a pooled connection was made with the headers the rules now give its agent. */
function sameCredential(rules: Rules, entry: PoolEntry): boolean {
  const headers = entry.identified ? rules.agents.get(entry.agent)?.serverHeaders.get(entry.server) : undefined;
  return (headers === undefined ? '' : credentialDigest(headers)) === entry.credential;
}

export async function applyConfig(gateway: Reconfigurable, next: ServersConfig, rules: Rules): Promise<ApplyReport> {
  const before = new Map(gateway.config.servers.map((s) => [s.name, s]));
  const after = new Map(next.servers.map((s) => [s.name, s]));
  const report: ApplyReport = { added: [], removed: [], restarted: [] };
  for (const name of before.keys()) if (!after.has(name)) report.removed.push(name);
  for (const name of report.removed) gateway.limits.forget(name);
  for (const [name, config] of after) {
    const old = before.get(name);
    if (old === undefined) report.added.push(name);
    else if (!same(old, config)) report.restarted.push(name);
  }

  gateway.config = next;
  gateway.rules = rules;
  // Prefixes and the order (which server keeps a clashing name) may change with the same servers.
  gateway.catalog.setServers(next.servers);
  gateway.own.setServers(next.servers);

  // Stop what went away or changed; the old connection finishes its calls' teardown on its own.
  const stopping = [...report.removed, ...report.restarted].map(async (name) => {
    const conn = gateway.connections.get(name);
    gateway.connections.delete(name);
    const pooled = gateway.pool.closeServer(name);
    // Closing withdraws the server from the catalog (the connection's `lost` hook) before it restarts.
    if (conn !== undefined) await conn.close();
    await pooled;
  });
  const revoked = gateway.pool.retain(
    (entry) =>
      (rules.open || decideServer(rules, entry.agent, entry.server).allowed || grantMayUse(rules, entry.server)) &&
      sameCredential(rules, entry),
  );
  // Everyone's view may differ under new rules, even with the same servers.
  gateway.announce(['tools', 'resources', 'resourceTemplates', 'prompts']);
  await Promise.all([...stopping, revoked]);
  await Promise.all([...report.added, ...report.restarted].map((name) => gateway.launch(after.get(name)!)));
  return report;
}
