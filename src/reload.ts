// Hot reload of `.mcp.json` and `gateway-rules.json`: both files are watched (their
// directories), debounced, loaded and validated *together*, and only then applied in one step. A file
// that fails to parse or validate keeps the running configuration, and the failure is recorded per
// file (attempts, successes, last error, last warnings) for the status tool; the next good write
// applies. Reloads are serialized, so a burst of edits never interleaves two applications.
// The rules are read here (`loadBoth`, also for `mcpgate check`; the rules file and its JWT key file)
// and compiled by rules/, which reads no files.

import { readFileSync } from 'node:fs';
import type { Env } from './config/expand.js';
import { readJsonFile } from './config/json-file.js';
import { loadServersConfig } from './config/load.js';
import type { ConfigIssue, ServersConfig } from './config/types.js';
import { watchFiles, type FileWatch } from './config/watch.js';
import { GatewayError } from './errors.js';
import { applyConfig } from './gateway/apply-config.js';
import type { Gateway } from './gateway/gateway.js';
import type { Logger } from './observability/logger.js';
import { OPEN_RULES, RULES_FILE, parseRules, type KeyFileReader, type Rules, type ServerRef } from './rules/load.js';

/** Per file, as the status reports it (null, not absent, for what has not happened). */
interface FileStatus {
  path: string | null;
  attempts: number;
  successes: number;
  lastAttempt: string | null;
  lastSuccess: string | null;
  lastError: string | null;
  lastWarnings: string[];
}

const fileStatus = (path: string | undefined): FileStatus => ({
  path: path ?? null,
  attempts: 0,
  successes: 0,
  lastAttempt: null,
  lastSuccess: null,
  lastError: null,
  lastWarnings: [],
});

const describe = (issues: readonly ConfigIssue[]): string[] => issues.map((i) => `${i.path}: ${i.message}`);

/** `auth.jwt.publicKeyFile`: a small file, read synchronously while the rules compile (at startup and reload). */
const readKeyFile: KeyFileReader = (file) => readFileSync(file, 'utf8');

/**
 * Reads `file` and compiles it against the servers `.mcp.json` defines (`servers`, their configs),
 * with `env` for `${VAR}` in the `auth.jwt` key settings; throws `MCPG_CONFIG_INVALID` naming the
 * file (missing, unreadable) or every problem in it.
 */
async function loadRules(file: string, servers: readonly ServerRef[], env: Env): Promise<Rules> {
  const { abs, text } = await readJsonFile(file, RULES_FILE);
  return parseRules(text, abs, servers, { env, readKeyFile });
}

/** Loads both files, or says what is wrong with each; never applies anything. */
export async function loadBoth(
  configFile: string,
  rulesFile: string | undefined,
  env: Env,
): Promise<{ config: ServersConfig; rules: Rules }> {
  const config = await loadServersConfig(configFile, env);
  const rules = rulesFile === undefined ? OPEN_RULES : await loadRules(rulesFile, config.servers, env);
  return { config, rules };
}

export class Reloader {
  readonly config: FileStatus;
  readonly rules: FileStatus;
  private watch: FileWatch | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Called after each reload that was applied (the composition root recomputes the config version). */
  afterReload: (() => void) | undefined;
  /** Called with a good configuration before it is applied (the composition root loads what its servers need). */
  beforeApply: ((config: ServersConfig) => Promise<void>) | undefined;

  constructor(
    private readonly gateway: Gateway,
    private readonly configFile: string,
    private readonly rulesFile: string | undefined,
    private readonly log: Logger,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.config = fileStatus(configFile);
    this.rules = fileStatus(rulesFile);
  }

  /** Records the load that started the gateway. */
  recordInitial(config: ServersConfig, rules: Rules): void {
    const now = new Date().toISOString();
    for (const [status, warnings] of [
      [this.config, config.warnings],
      [this.rules, rules.warnings],
    ] as const) {
      status.attempts = 1;
      status.successes = 1;
      status.lastAttempt = now;
      status.lastSuccess = now;
      status.lastWarnings = describe(warnings);
    }
  }

  start(): void {
    const files = [this.configFile, ...(this.rulesFile === undefined ? [] : [this.rulesFile])];
    this.watch = watchFiles(files, () => void this.reload('a configuration file changed'), this.log);
  }

  /** Loads and applies both files; resolves false (and keeps the running config) if either is bad. */
  reload(why: string): Promise<boolean> {
    const run = this.queue.then(() => this.run(why));
    this.queue = run.catch(() => {});
    return run;
  }

  close(): void {
    this.closed = true;
    this.watch?.close();
  }

  private async run(why: string): Promise<boolean> {
    if (this.closed || this.gateway.isClosing) return false;
    const now = new Date().toISOString();
    for (const status of [this.config, this.rules]) {
      status.attempts += 1;
      status.lastAttempt = now;
    }
    let config: ServersConfig;
    try {
      config = await loadServersConfig(this.configFile, this.env);
    } catch (err) {
      return this.failed(this.config, err);
    }
    let rules: Rules = OPEN_RULES;
    if (this.rulesFile !== undefined) {
      try {
        rules = await loadRules(this.rulesFile, config.servers, this.env);
      } catch (err) {
        return this.failed(this.rules, err);
      }
    }
    if (this.closed || this.gateway.isClosing) return false;
    await this.beforeApply?.(config);
    const report = await applyConfig(this.gateway, config, rules);
    for (const [status, warnings] of [
      [this.config, config.warnings],
      [this.rules, rules.warnings],
    ] as const) {
      status.successes += 1;
      status.lastSuccess = now;
      status.lastError = null;
      status.lastWarnings = describe(warnings);
    }
    for (const warning of [...config.warnings, ...rules.warnings])
      this.log.warn(`config: ${warning.path}: ${warning.message}`, { file: warning.file });
    this.log.info(`configuration reloaded (${why})`, { ...report });
    this.afterReload?.();
    return true;
  }

  private failed(status: FileStatus, err: unknown): false {
    const message = err instanceof GatewayError ? err.message : String(err);
    status.lastError = message;
    this.log.error(`reload failed; the previous configuration stays in force: ${message}`, { file: status.path });
    return false;
  }
}
