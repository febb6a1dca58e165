// The registry commands' command lines (`add`, `search-registry`, `outdated`) turned into their
// options; main.ts parses argv and hands the values here, so it stays free of registry details.

import path from 'node:path';
import { GatewayError } from '../../errors.js';
import type { CliIo } from '../io.js';
import { RegistryError } from './client.js';

type Values = Record<string, string | boolean | string[] | undefined>;

const DEFAULT_CHECK_TIMEOUT_MS = 120_000;
const DEFAULT_SEARCH_LIMIT = 30;

export async function runRegistryCommand(
  command: 'add' | 'search-registry' | 'outdated',
  positionals: readonly string[],
  values: Values,
  context: { configFile: string; env: NodeJS.ProcessEnv },
  io: CliIo,
): Promise<number> {
  const str = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
  const list = (name: string): string[] => (Array.isArray(values[name]) ? values[name] : []);
  const flag = (name: string): boolean => values[name] === true;
  const usage = (message: string): GatewayError => new GatewayError('MCPG_USAGE', message);
  const positive = (name: string, fallback: number): number => {
    const text = str(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value <= 0) throw usage(`--${name} must be a positive whole number (got "${text}")`);
    return value;
  };
  try {
    switch (command) {
      case 'add': {
        if (positionals.length !== 1) throw usage('add needs exactly one NAME (namespace/name, optionally @VERSION)');
        const { runAdd } = await import('./add.js');
        const interactive = process.stdin.isTTY && !flag('yes') && !flag('dry-run');
        const prompter = interactive ? (await import('./prompt.js')).terminalPrompter() : undefined;
        try {
          return await runAdd(
            {
              spec: positionals[0]!,
              configFile: context.configFile,
              registries: list('registry'),
              secretsFile: str('secrets') === undefined ? undefined : path.resolve(str('secrets')!),
              values: list('env'),
              answersFile: str('answers'),
              packageType: str('package-type'),
              entryName: str('name'),
              yes: flag('yes'),
              dryRun: flag('dry-run'),
              check: !flag('no-check'),
              force: flag('force'),
              allowOci: flag('allow-oci'),
              allowLookalike: flag('allow-lookalike'),
              oauth: flag('oauth'),
              checkTimeoutMs: positive('check-timeout', DEFAULT_CHECK_TIMEOUT_MS),
              env: context.env,
              prompter,
            },
            io,
          );
        } finally {
          prompter?.close();
        }
      }
      case 'search-registry': {
        if (positionals.length !== 1) throw usage('search-registry needs exactly one QUERY');
        return await (
          await import('./search.js')
        ).runSearchRegistry(
          {
            query: positionals[0]!,
            configFile: context.configFile,
            registries: list('registry'),
            limit: positive('limit', DEFAULT_SEARCH_LIMIT),
            json: flag('json'),
          },
          io,
        );
      }
      case 'outdated':
        return await (
          await import('./outdated.js')
        ).runOutdated({ configFile: context.configFile, registries: list('registry'), json: flag('json') }, io);
    }
  } catch (err) {
    // The registry is down or answered something else: a runtime failure (exit 1), and nothing was written.
    if (err instanceof RegistryError) {
      io.err(`mcpgate: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
