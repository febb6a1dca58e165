// `mcpgate import`: the servers a client already has (clients.ts), translated (translate.ts), merged
// into mcpgate's `.mcp.json` — a server the file already has is never replaced without --force, and
// a clash is reported — with literal secrets moved to an env file (mode 0600) the entries refer to.
// Each server is checked by the config loader first: one it would refuse is not written, and the keys
// it ignores are reported. Then, per client, the one line that points that client at mcpgate.
// Without --config (or MCPGATE_CONFIG) it writes the user's own file (`~/.config/mcpgate/.mcp.json`),
// never the project's shared `.mcp.json`, which teams commit: the servers and secrets a person runs
// are theirs. Both files are written 0600 and never through a link (private-file.ts).

import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import { GatewayError } from '../../errors.js';
import { formatIssues, parseServersConfig } from '../../config/load.js';
import type { ConfigIssue } from '../../config/types.js';
import type { CliIo } from '../io.js';
import { appendEnvFile, parseEnvFile } from '../env-file.js';
import { CLIENT_NAMES, CLIENTS, places, readFrom, readPlaces, type ClientId, type Source } from './clients.js';
import { translateEntry } from './translate.js';
import { proposeSandbox } from './sandbox-proposal.js';
import { refuseLink, writePrivateFile } from './private-file.js';

export interface ImportOptions {
  readonly configFile: string;
  readonly clients: readonly string[];
  readonly from: readonly string[];
  readonly project: string;
  readonly secretsFile: string | undefined;
  readonly force: boolean;
  readonly dryRun: boolean;
  readonly env: NodeJS.ProcessEnv;
}

interface Imported {
  readonly name: string;
  readonly entry: Record<string, unknown>;
  readonly source: Source;
  readonly moved: readonly string[];
}

/**
 * The `.mcp.json` import writes when none is named: the user's own (`$XDG_CONFIG_HOME/mcpgate`, else
 * `~/.config/mcpgate`), undefined without a home.
 */
export function defaultImportConfig(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'mcpgate', '.mcp.json');
  const home = env.HOME ?? env.USERPROFILE;
  return home !== undefined && path.isAbsolute(home) ? path.join(home, '.config', 'mcpgate', '.mcp.json') : undefined;
}

export async function runImport(options: ImportOptions, io: CliIo): Promise<number> {
  const warn = (text: string): void => io.err(`warning: ${text}\n`);
  for (const client of options.clients) {
    if (!(CLIENTS as readonly string[]).includes(client))
      throw new GatewayError('MCPG_USAGE', `--client must be one of ${CLIENTS.join(', ')} (got "${client}")`);
  }
  const home = options.env.HOME ?? options.env.USERPROFILE ?? '';
  const wanted = options.clients.length > 0 || options.from.length > 0 ? (options.clients as ClientId[]) : [...CLIENTS];
  const looked = places(wanted, options.project, options.env);
  const sources = [...(await readPlaces(looked))];
  for (const file of options.from) sources.push(...(await readFrom(file, options.project)));
  // The output is mcpgate's config already: reading it back as a client's would import nothing new.
  const inputs = sources.filter((s) => path.resolve(s.file) !== options.configFile);
  if (inputs.length === 0) {
    const where = [...new Set(looked.map((p) => p.file))].filter((f) => f !== options.configFile);
    io.err(
      `mcpgate: no MCP servers found${where.length > 0 ? ` in:\n${where.map((f) => `  ${f}\n`).join('')}` : '\n'}Use --from FILE to read another file.\n`,
    );
    return 2;
  }

  const secretsFile = options.secretsFile ?? path.join(path.dirname(options.configFile), '.mcp.env');
  await refuseLink(options.configFile);
  await refuseLink(secretsFile);
  const configText = await readOptional(options.configFile);
  const existing = configText === undefined ? { mcpServers: {} } : parseOutput(configText, options.configFile);
  const servers = existing.mcpServers as Record<string, unknown>;
  const secretsText = await readOptional(secretsFile);
  const known = secretsText === undefined ? new Map<string, string>() : parseEnvFile(secretsText, secretsFile);
  const secrets = new Map(known);

  const imported: Imported[] = [];
  const replaced: string[] = [];
  const unchanged: string[] = [];
  const inputVars = new Set<string>();
  for (const source of inputs) {
    io.out(
      `Read ${CLIENT_NAMES[source.client]} (${source.label}): ${source.servers.length} server(s): ${source.servers.map(([n]) => n).join(', ')}\n`,
    );
    for (const [name, raw] of source.servers) {
      const result = translateEntry(name, raw, {
        home,
        project: options.project,
        secrets,
        editorVariables: source.client !== 'claude-code' && source.client !== 'claude-desktop',
      });
      for (const note of result.notes) warn(`${source.label}: ${note}`);
      if (result.entry === undefined) continue;
      const proposal = proposeSandbox(result.entry);
      if (proposal !== undefined) {
        result.entry.sandbox = proposal.sandbox;
        io.out(`  ${name}: sandboxed: ${proposal.summary}; its working directory writable, the rest of home hidden\n`);
      }
      const issues = checkEntry(name, result.entry, options.configFile, { ...options.env, ...Object.fromEntries(secrets) });
      if (issues.errors.length > 0) {
        for (const line of formatIssues(issues.errors)) warn(`${source.label}: "${name}" not imported: ${line}`);
        continue;
      }
      for (const issue of issues.warnings) warn(`${source.label}: ${issue.message} (kept as written)`);
      const earlier = imported.find((i) => i.name === name);
      if (earlier !== undefined) {
        if (!isDeepStrictEqual(earlier.entry, result.entry))
          warn(`"${name}" of ${source.label} differs from the one of ${earlier.source.label}: the first is imported`);
        continue;
      }
      if (Object.hasOwn(servers, name)) {
        if (isDeepStrictEqual(servers[name], result.entry)) {
          unchanged.push(name);
          continue;
        }
        if (!options.force) {
          warn(`"${name}" is already in ${options.configFile} with another definition: kept; --force replaces it`);
          continue;
        }
        replaced.push(name);
      }
      for (const variable of result.inputs) inputVars.add(variable);
      imported.push({ name, entry: result.entry, source, moved: result.moved });
    }
  }

  for (const { name, entry } of imported) servers[name] = entry;
  const output = `${JSON.stringify(existing, null, 2)}\n`;
  // The whole file as mcpgate will read it (prefixes of old and new servers must not clash).
  const whole = checkConfig(output, options.configFile, { ...options.env, ...Object.fromEntries(secrets) });
  if (whole.length > 0) {
    io.err(
      formatIssues(whole)
        .map((l) => `error: ${l}\n`)
        .join(''),
    );
    io.err(`mcpgate: ${options.configFile} was not written\n`);
    return 2;
  }
  const newSecrets = [...new Set(imported.flatMap((i) => i.moved))].filter((v) => !known.has(v));
  const added = imported.map((i) => i.name).filter((n) => !replaced.includes(n));
  if (options.dryRun) {
    io.out(`Would write ${options.configFile}:\n${output}`);
    if (newSecrets.length > 0) io.out(`Would move ${newSecrets.length} secret(s) to ${secretsFile}: ${newSecrets.join(', ')}\n`);
    return 0;
  }
  // The secrets first: a config whose references have nowhere to come from is worse than an unused secret.
  if (newSecrets.length > 0) {
    await appendEnvFile(
      secretsFile,
      secretsText,
      newSecrets.map((v) => [v, secrets.get(v)!] as const),
      'Secrets moved here by `mcpgate import`',
    );
    warn(
      `${newSecrets.length} literal secret(s) moved to ${secretsFile} (mode 0600): ${newSecrets.join(', ')}; the servers refer to them as \${NAME}. Keep that file out of version control.`,
    );
  }
  if (imported.length > 0) await writePrivateFile(options.configFile, output, { private: false });
  for (const variable of inputVars) {
    if (!secrets.has(variable) && options.env[variable] === undefined)
      warn(
        `VS Code prompted for this value; mcpgate reads it from \${${variable}}: set ${variable} in the environment or in ${secretsFile}`,
      );
  }
  io.out(
    `${imported.length > 0 ? 'Wrote' : 'Left'} ${options.configFile}: ${added.length} added${added.length > 0 ? ` (${added.join(', ')})` : ''}, ${replaced.length} replaced${replaced.length > 0 ? ` (${replaced.join(', ')})` : ''}, ${unchanged.length} already there\n`,
  );

  const envFileArgs = newSecrets.length > 0 || known.size > 0 ? ['--env-file', secretsFile] : [];
  const serveArgs = ['serve', '--config', options.configFile, ...envFileArgs];
  const bySource = new Map<Source, string[]>();
  for (const i of imported) bySource.set(i.source, [...(bySource.get(i.source) ?? []), i.name]);
  for (const [source, names] of bySource) {
    io.out(
      `\nPoint ${CLIENT_NAMES[source.client]} at mcpgate instead (and remove ${names.join(', ')} from ${source.label}):\n  ${pointer(source.client, serveArgs)}\n`,
    );
  }
  return 0;
}

/** The one line that makes `client` start mcpgate. */
function pointer(client: ClientId | 'file', serveArgs: readonly string[]): string {
  const quoted = serveArgs.map((a) => (/^[A-Za-z0-9_./:=-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ');
  switch (client) {
    case 'claude-code':
      return `claude mcp add --scope user mcpgate -- mcpgate ${quoted}`;
    case 'vscode':
      return `code --add-mcp '${JSON.stringify({ name: 'mcpgate', type: 'stdio', command: 'mcpgate', args: serveArgs }).replace(/'/g, "'\\''")}'`;
    default:
      return JSON.stringify({ mcpServers: { mcpgate: { command: 'mcpgate', args: serveArgs } } });
  }
}

export async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new GatewayError('MCPG_USAGE', `cannot read ${file}: ${(err as Error).message}`);
  }
}

/** The existing config as an object whose `mcpServers` is an object (a file mcpgate can read). */
export function parseOutput(text: string, file: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new GatewayError('MCPG_USAGE', `${file} is not valid JSON (${(err as Error).message}); fix it or choose another --config`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new GatewayError('MCPG_USAGE', `${file} is not a JSON object; fix it or choose another --config`);
  const object = json as Record<string, unknown>;
  object.mcpServers ??= {};
  if (typeof object.mcpServers !== 'object' || object.mcpServers === null || Array.isArray(object.mcpServers))
    throw new GatewayError('MCPG_USAGE', `${file}: "mcpServers" is not an object`);
  return object;
}

/**
 * The loader's errors and warnings for one entry alone. A variable the environment lacks (the user
 * sets it later) reads as a placeholder, and a URL made of variables is not judged by it.
 */
export function checkEntry(
  name: string,
  entry: Record<string, unknown>,
  file: string,
  env: NodeJS.ProcessEnv,
): { errors: ConfigIssue[]; warnings: ConfigIssue[] } {
  const placeholders = new Proxy(env, { get: (target, key) => (typeof key === 'string' ? (target[key] ?? 'placeholder') : undefined) });
  try {
    const config = parseServersConfig(JSON.stringify({ mcpServers: { [name]: entry } }), file, placeholders);
    return { errors: [], warnings: [...config.warnings] };
  } catch (err) {
    if (!(err instanceof GatewayError) || err.code !== 'MCPG_CONFIG_INVALID') throw err;
    const urlOfVariables = typeof entry.url === 'string' && entry.url.includes('${');
    const errors = ((err.detail?.issues as ConfigIssue[] | undefined) ?? []).filter((i) => !(urlOfVariables && i.path.endsWith('.url')));
    return { errors, warnings: (err.detail?.warnings as ConfigIssue[] | undefined) ?? [] };
  }
}

/** The loader's errors for the whole merged file (none is the success case). */
export function checkConfig(text: string, file: string, env: NodeJS.ProcessEnv): ConfigIssue[] {
  const placeholders = new Proxy(env, { get: (target, key) => (typeof key === 'string' ? (target[key] ?? 'placeholder') : undefined) });
  try {
    parseServersConfig(text, file, placeholders);
    return [];
  } catch (err) {
    if (!(err instanceof GatewayError) || err.code !== 'MCPG_CONFIG_INVALID') throw err;
    return ((err.detail?.issues as ConfigIssue[] | undefined) ?? []).filter((i) => !i.path.endsWith('.url'));
  }
}
