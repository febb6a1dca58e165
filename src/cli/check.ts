// `mcpgate check`: validate `.mcp.json` and (when there is one) `gateway-rules.json` together without
// starting anything; print every error and warning as `file: path: message`; exit 2 on errors. For
// each stdio server, print the names (never the values) of the environment variables it will get and
// its sandbox, and whether this system can make sandboxes (bubblewrap) when any server has one.

import { formatIssues } from '../config/load.js';
import type { ConfigIssue } from '../config/types.js';
import type { Env } from '../config/expand.js';
import { GatewayError } from '../errors.js';
import { loadBoth } from '../reload.js';
import { secretEnvNames, serverEnvNames } from '../config/child-env.js';
import { findBwrap, sandboxUnavailable } from '../config/sandbox-mechanism.js';
import type { CliIo } from './io.js';

export async function runCheck(configFile: string, io: CliIo, env: Env = process.env, rulesFile?: string): Promise<number> {
  try {
    // What `serve` loads, read the same way (loadBoth); OPEN_RULES when there is no rules file.
    const both = await loadBoth(configFile, rulesFile, env);
    const config = both.config;
    const rules = rulesFile === undefined ? undefined : both.rules;
    const warnings = [...config.warnings, ...(rules?.warnings ?? [])];
    if (warnings.length > 0)
      io.err(
        formatIssues(warnings)
          .map((l) => `warning: ${l}\n`)
          .join(''),
      );
    if (rules === undefined)
      io.err('warning: no rules file (gateway-rules.json): every agent may use every server; nothing is restricted\n');
    const enabled = config.servers.filter((s) => !s.disabled).map((s) => s.name);
    io.out(
      `${config.file}: OK, ${config.servers.length} server(s)${enabled.length > 0 ? `: ${enabled.join(', ')}` : ''}` +
        `${config.warnings.length > 0 ? `, ${config.warnings.length} warning(s)` : ''}\n`,
    );
    if (rules !== undefined) {
      const grants = rules.grants.length > 0 ? `, ${rules.grants.length} grant(s) by claim` : '';
      io.out(
        `${rules.file ?? rulesFile}: OK, ${rules.agents.size} agent(s)${grants}${rules.warnings.length > 0 ? `, ${rules.warnings.length} warning(s)` : ''}\n`,
      );
      // Who each grant applies to: every condition must hold, any listed value of one matches.
      for (const grant of rules.grants) {
        const when = grant.when.map((t) => `${t.claim} has ${t.values.map((v) => JSON.stringify(v)).join(' or ')}`).join(' and ');
        io.out(`  grant ${JSON.stringify(grant.id)}: agents whose token's ${when}\n`);
      }
    }
    // What each stdio server will get from the environment: names only, never values.
    const secrets = secretEnvNames(rules?.raw);
    for (const server of config.servers) {
      if (server.type !== 'stdio' || server.disabled) continue;
      const { inherited, own } = serverEnvNames(server, env, secrets);
      const mode = Array.isArray(server.inheritEnv) ? 'listed' : ((server.inheritEnv as string | undefined) ?? 'safe');
      io.out(
        `  ${server.name}: environment (inheritEnv ${mode}): inherited ${inherited.length > 0 ? inherited.join(' ') : '(none)'}; own ${own.length > 0 ? own.join(' ') : '(none)'}\n`,
      );
      const box = server.sandbox;
      if (box !== undefined) {
        const network =
          typeof box.network === 'string'
            ? box.network
            : box.network.map((h) => (h.port === undefined ? h.host : `${h.host}:${h.port}`)).join(' ');
        const limits = [
          box.processes !== undefined && `processes ${box.processes}`,
          box.memoryMb !== undefined && `memory ${box.memoryMb} MiB`,
        ].filter(Boolean);
        io.out(
          `  ${server.name}: sandbox (preset ${box.preset}): network ${network}; write ${[server.cwd, ...box.write].join(' ')}; read ${box.read.length > 0 ? box.read.join(' ') : '(system only)'}${limits.length > 0 ? `; ${limits.join(', ')}` : ''}\n`,
        );
      }
    }
    const sandboxed = config.servers.filter((s) => s.type === 'stdio' && !s.disabled && s.sandbox !== undefined);
    if (sandboxed.length > 0) {
      const missing = sandboxUnavailable(env);
      if (missing === undefined) io.out(`sandbox: bubblewrap at ${findBwrap(env) ?? 'bwrap'}, ${sandboxed.length} sandboxed server(s)\n`);
      else io.err(`warning: sandbox unavailable: ${missing}; ${sandboxed.map((s) => s.name).join(', ')} will not start\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'MCPG_CONFIG_INVALID') {
      const issues = (err.detail?.issues as ConfigIssue[] | undefined) ?? [];
      io.err(
        issues.length > 0
          ? formatIssues(issues)
              .map((l) => `error: ${l}\n`)
              .join('')
          : `${err.message}\n`,
      );
      return 2;
    }
    throw err;
  }
}
