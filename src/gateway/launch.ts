// Starting one configured server, and its summary line: ready (its counts, and how many tools are
// held until approved), idle (an on-demand server listed from its last known catalog, not started),
// failed (why, and the next step) or disabled; each logged once. An on-demand server with no usable
// known catalog is started to learn it (its connection stops it again once listed).
// An on-demand server with no known catalog is started once to learn it.

import type { Catalog } from '../catalog/catalog.js';
import type { ServerConfig } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import type { Connection, ConnectionHooks } from '../servers/connection.js';
import type { KnownCatalog, KnownCatalogs } from '../servers/known-catalog.js';
import type { ConnectionFactory } from './gateway-options.js';

export interface ServerSummary {
  server: string;
  state: 'ready' | 'idle' | 'failed' | 'disabled';
  tools: number;
  resources: number;
  prompts: number;
  error?: string;
  note?: string;
}

/** What starting a server uses (the Gateway's own). */
interface LaunchParts {
  readonly connect: ConnectionFactory;
  readonly hooks: ConnectionHooks;
  readonly connections: Map<string, Connection>;
  readonly catalog: Catalog;
  readonly log: Logger;
  /** On-demand servers' last known catalogs. */
  readonly known: Pick<KnownCatalogs, 'load'>;
  /** Lists a resting on-demand server from its known catalog (catalog-listing.ts `listKnown`). */
  listKnown(conn: Connection, known: KnownCatalog): Promise<void>;
}

/** Starts one configured server (or reports why not) and logs its summary line. */
export async function launchServer(parts: LaunchParts, config: ServerConfig): Promise<ServerSummary> {
  if (config.disabled) return report(parts.log, { server: config.name, state: 'disabled', tools: 0, resources: 0, prompts: 0 });
  return report(parts.log, await startServer(parts, config));
}

async function startServer(parts: LaunchParts, config: ServerConfig): Promise<ServerSummary> {
  const log = parts.log.child({ server: config.name });
  const known = config.start === 'on-demand' ? await parts.known.load(config) : undefined;
  const conn = parts.connect(config, parts.hooks, log);
  parts.connections.set(config.name, conn);
  if (known !== undefined) {
    conn.rest();
    await parts.listKnown(conn, known);
    const counts = parts.catalog.counts(config.name);
    const heldCount = parts.catalog.heldCount(config.name);
    return {
      server: config.name,
      state: 'idle',
      tools: counts.tools,
      resources: counts.resources + counts.resourceTemplates,
      prompts: counts.prompts,
      note: ` (${heldCount > 0 ? `${heldCount} held until approved; ` : ''}on demand: listed from its last known catalog, started on its first call)`,
    };
  }
  const ready = await conn.start();
  if (!ready) {
    const next = conn.nextStep;
    const error = `${conn.lastError?.message ?? `server "${config.name}" failed to start`}${next !== undefined ? `; ${next}` : ''}`;
    return { server: config.name, state: 'failed', tools: 0, resources: 0, prompts: 0, error };
  }
  const counts = parts.catalog.counts(config.name);
  const heldCount = parts.catalog.heldCount(config.name);
  const learning =
    config.start === 'on-demand'
      ? `on demand: its catalog learned, stopped ${config.idleStop !== undefined ? `after ${config.idleStop} ms without calls` : 'until its first call'}`
      : undefined;
  const note =
    heldCount > 0 || learning !== undefined
      ? ` (${[heldCount > 0 ? `${heldCount} held until approved` : undefined, learning].filter((x) => x !== undefined).join('; ')})`
      : undefined;
  return {
    server: config.name,
    state: 'ready',
    tools: counts.tools,
    resources: counts.resources + counts.resourceTemplates,
    prompts: counts.prompts,
    ...(note !== undefined && { note }),
  };
}

function report(log: Logger, summary: ServerSummary): ServerSummary {
  if (summary.state === 'idle') {
    log.info(
      `server "${summary.server}" idle: ${summary.tools} tools${summary.note ?? ''}, ${summary.resources} resources, ${summary.prompts} prompts`,
      { server: summary.server, tools: summary.tools, resources: summary.resources, prompts: summary.prompts },
    );
  } else if (summary.state === 'ready') {
    log.info(
      `server "${summary.server}" ready: ${summary.tools} tools${summary.note ?? ''}, ${summary.resources} resources, ${summary.prompts} prompts`,
      { server: summary.server, tools: summary.tools, resources: summary.resources, prompts: summary.prompts },
    );
  } else if (summary.state === 'disabled') {
    log.info(`server "${summary.server}" disabled in config`, { server: summary.server });
  } else {
    log.warn(summary.error ?? `server "${summary.server}" failed`, { server: summary.server });
  }
  return summary;
}
