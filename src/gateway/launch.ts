// Starting one configured server, and its summary line: ready (its counts, and how many tools are
// held until approved), failed (why, and the next step) or disabled; each logged once.

import type { Catalog } from '../catalog/catalog.js';
import type { ServerConfig } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import type { Connection, ConnectionHooks } from '../servers/connection.js';
import type { ConnectionFactory } from './gateway-options.js';

export interface ServerSummary {
  server: string;
  state: 'ready' | 'failed' | 'disabled';
  tools: number;
  resources: number;
  prompts: number;
  error?: string;
  note?: string;
}

/** What starting a server uses (the Gateway's own). */
export interface LaunchParts {
  readonly connect: ConnectionFactory;
  readonly hooks: ConnectionHooks;
  readonly connections: Map<string, Connection>;
  readonly catalog: Catalog;
  readonly log: Logger;
}

/** Starts one configured server (or reports why not) and logs its summary line. */
export async function launchServer(parts: LaunchParts, config: ServerConfig): Promise<ServerSummary> {
  if (config.disabled) return report(parts.log, { server: config.name, state: 'disabled', tools: 0, resources: 0, prompts: 0 });
  return report(parts.log, await startServer(parts, config));
}

async function startServer(parts: LaunchParts, config: ServerConfig): Promise<ServerSummary> {
  const log = parts.log.child({ server: config.name });
  const conn = parts.connect(config, parts.hooks, log);
  parts.connections.set(config.name, conn);
  const ready = await conn.start();
  if (!ready) {
    const next = conn.nextStep;
    const error = `${conn.lastError?.message ?? `server "${config.name}" failed to start`}${next !== undefined ? `; ${next}` : ''}`;
    return { server: config.name, state: 'failed', tools: 0, resources: 0, prompts: 0, error };
  }
  const counts = parts.catalog.counts(config.name);
  const heldCount = parts.catalog.heldCount(config.name);
  const note = heldCount > 0 ? ` (${heldCount} held until approved)` : undefined;
  return { server: config.name, state: 'ready', tools: counts.tools, resources: counts.resources + counts.resourceTemplates, prompts: counts.prompts, ...(note !== undefined && { note }) };
}

function report(log: Logger, summary: ServerSummary): ServerSummary {
  if (summary.state === 'ready') {
    log.info(`server "${summary.server}" ready: ${summary.tools} tools${summary.note ?? ''}, ${summary.resources} resources, ${summary.prompts} prompts`, { server: summary.server, tools: summary.tools, resources: summary.resources, prompts: summary.prompts });
  } else if (summary.state === 'disabled') {
    log.info(`server "${summary.server}" disabled in config`, { server: summary.server });
  } else {
    log.warn(summary.error ?? `server "${summary.server}" failed`, { server: summary.server });
  }
  return summary;
}
