// Composition root: builds mcpgate's parts in order (config → gateway and its connections → front)
// and closes them in reverse. Only src/cli/ reads argv, installs signal handlers or exits.

import { loadServersConfig } from './config/load.js';
import type { ServersConfig } from './config/types.js';
import { Gateway, type ServerSummary } from './gateway/gateway.js';
import { serveStdio, type StdioFront } from './front/stdio.js';
import type { Logger } from './observability/logger.js';
import type { StopTimings } from './servers/stdio-process.js';
import type { PinMode } from './pins/review.js';
import type { SupervisionSettings } from './servers/connection.js';

export interface McpgateOptions {
  configFile: string;
  /** The agent identity on stdio (`--agent`). */
  agent: string;
  log: Logger;
  /** Where `${VAR}` in the config is expanded from (default: the process environment). */
  env?: NodeJS.ProcessEnv;
  separator?: string;
  startupTimeoutMs?: number;
  stopTimings?: StopTimings;
  maxInflight?: number;
  pins?: { mode: PinMode; dir: string };
  sanitize?: boolean;
  supervision?: SupervisionSettings;
}

export class Mcpgate {
  readonly gateway: Gateway;
  private front: StdioFront | undefined;
  private closing: Promise<void> | undefined;

  private constructor(readonly config: ServersConfig, private readonly options: McpgateOptions) {
    this.gateway = new Gateway({
      config,
      log: options.log,
      separator: options.separator,
      startupTimeoutMs: options.startupTimeoutMs,
      maxInflight: options.maxInflight,
      pins: options.pins,
      sanitize: options.sanitize,
      supervision: options.supervision,
      stopTimings: options.stopTimings,
    });
  }

  /** Loads and validates the config; throws MCPG_CONFIG_INVALID before anything is started. */
  static async create(options: McpgateOptions): Promise<Mcpgate> {
    const config = await loadServersConfig(options.configFile, options.env);
    for (const warning of config.warnings) options.log.warn(`config: ${warning.path}: ${warning.message}`, { file: warning.file });
    return new Mcpgate(config, options);
  }

  /**
   * Serves one agent on stdio and starts the servers in parallel. The agent is answered at once;
   * its first lists wait until every server is ready or has failed.
   */
  serveStdio(): { ended: Promise<void>; started: Promise<ServerSummary[]> } {
    this.front = serveStdio(this.gateway, this.options.agent);
    const started = this.gateway.start();
    started.then((summaries) => {
      for (const warning of this.gateway.catalog.warnings) this.options.log.warn(`catalog: ${warning}`);
      const ready = summaries.filter((s) => s.state === 'ready').length;
      this.options.log.info(`mcpgate ready on stdio: ${ready} of ${summaries.length} servers, ${this.gateway.catalog.listTools().length} tools`, { agent: this.options.agent });
    }, (err: unknown) => this.options.log.error('starting servers failed', { error: err }));
    return { ended: this.front.ended, started };
  }

  /** Graceful shutdown in reverse order of start. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.front?.close();
      await this.gateway.close();
    })();
    return this.closing;
  }

  /** Second signal: kill every server's process group now. */
  destroy(): void {
    this.gateway.destroy();
  }
}
