// `mcpgate add NAME[@VERSION]`: a server from an MCP Registry into `.mcp.json`. It looks the server
// up (the registries in order), refuses a name that only looks like a known one, shows what it will
// run (the package and exact version, the command, the network endpoints, the values it needs),
// asks for those values (secrets go to the env file, mode 0600, the entry holds `${KEY}`), and — once
// the user confirms, or with --yes — starts the server and lists its tools before it writes anything.
// The config is merged and checked as `mcpgate import` does it (import/run-import.ts); an entry
// already added from the same registry server is updated in place (its other fields kept).

import { access, constants } from 'node:fs/promises';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GatewayError } from '../../errors.js';
import { formatIssues } from '../../config/load.js';
import { SAFE_NAME } from '../../config/mcp-json-schema.js';
import type { CliIo } from '../io.js';
import { appendEnvFile, parseEnvFile } from '../env-file.js';
import { checkConfig, checkEntry, parseOutput, readOptional } from '../import/run-import.js';
import { RegistryError, type RegistryClient } from './client.js';
import { foreignCharacters, isLookalike } from './lookalike.js';
import {
  buildEntry,
  chooseOption,
  KINDS,
  launchOptions,
  pinnedVersion,
  questionsFor,
  type Kind,
  type Question,
} from './entry-from-server-json.js';
import { probeServer } from './probe.js';
import { registriesFor, splitSpec } from './registries.js';
import { officialOf, SERVER_NAME, type ServerResponse } from './server-json.js';
import type { Prompter } from './prompt.js';

export interface AddOptions {
  readonly spec: string;
  readonly configFile: string;
  readonly registries: readonly string[];
  readonly secretsFile: string | undefined;
  readonly values: readonly string[];
  readonly answersFile: string | undefined;
  readonly packageType: string | undefined;
  readonly entryName: string | undefined;
  readonly yes: boolean;
  readonly dryRun: boolean;
  readonly check: boolean;
  readonly force: boolean;
  readonly allowOci: boolean;
  readonly allowLookalike: boolean;
  readonly oauth: boolean;
  readonly checkTimeoutMs: number;
  readonly env: NodeJS.ProcessEnv;
  /** A terminal to ask on; undefined when stdin is not one (then flags and files answer). */
  readonly prompter: Prompter | undefined;
}

const usage = (message: string): GatewayError => new GatewayError('MCPG_USAGE', message);

export async function runAdd(options: AddOptions, io: CliIo): Promise<number> {
  const { name, version: asked } = splitSpec(options.spec);
  const foreign = foreignCharacters(name);
  if (foreign.length > 0)
    throw usage(
      `"${name}" has characters a registry name never has: ${foreign.join(', ')}. Registry names are ASCII; this one only looks like one. Type the name again, or copy it from \`mcpgate search-registry\`.`,
    );
  if (!SERVER_NAME.test(name)) throw usage(`"${name}" is not a registry name: expected namespace/name, e.g. io.github.owner/server`);
  if (asked === '') throw usage(`"${options.spec}": no version after @`);
  const kind = options.packageType;
  if (kind !== undefined && !(KINDS as readonly string[]).includes(kind))
    throw usage(`--package-type must be one of ${KINDS.join(', ')} (got "${kind}")`);

  const configText = await readOptional(options.configFile);
  const existing = configText === undefined ? { mcpServers: {} } : parseOutput(configText, options.configFile);
  const servers = existing.mcpServers as Record<string, Record<string, unknown>>;
  const clients = registriesFor(options.registries, configText === undefined ? undefined : existing, options.configFile);
  const secretsFile = options.secretsFile ?? path.join(path.dirname(options.configFile), '.mcp.env');
  const secretsText = await readOptional(secretsFile);
  const known = secretsText === undefined ? new Map<string, string>() : parseEnvFile(secretsText, secretsFile);

  const { found, client } = await lookUp(clients, name, asked);
  const server = found.server;
  const official = officialOf(found);
  if (official.status === 'deleted') throw usage(`${name} ${server.version} is marked deleted by ${client.url}; it is not added`);

  // A name that only looks like a known one: another publisher's server of a name alike, first
  // published before this one, or an entry the config already has.
  const short = name.slice(name.indexOf('/') + 1);
  const inConfig = Object.values(servers)
    .map((e) => registryOf(e)?.name)
    .filter((n): n is string => n !== undefined);
  const candidates = [...new Set([...(await client.search(short, 200)).map((s) => s.server.name), ...inConfig])].filter((n) =>
    isLookalike(name, n),
  );
  if (candidates.length > 0 && !options.allowLookalike) {
    const mine = await firstPublished(client, name);
    for (const other of candidates) {
      const theirs = inConfig.includes(other) ? undefined : await firstPublished(client, other);
      if (inConfig.includes(other) || (theirs !== undefined && (mine === undefined || theirs < mine)))
        throw usage(
          `"${name}" looks like "${other}" (${inConfig.includes(other) ? 'already in your config' : `first published earlier, ${new Date(theirs!).toISOString()}`}) but is another publisher's. If you mean ${name}, pass --allow-lookalike.`,
        );
    }
  }

  const onPath = await pathLookup(options.env);
  const launch = launchOptions(server, { onPath, allowOci: options.allowOci });
  if (launch.length === 0) throw usage(`${name} ${server.version} lists no package and no remote endpoint: nothing to run`);
  const chosen = chooseOption(launch, kind as Kind | undefined);
  const reasons = launch.map((o) => `  ${o.label}: ${o.why}\n`).join('');
  if (chosen === undefined)
    throw usage(
      kind === undefined
        ? `no way to run ${name} on this machine:\n${reasons}`
        : `${name} ${server.version} has no ${kind} option; it has:\n${reasons}`,
    );
  if (chosen.kind === 'oci' && !options.allowOci)
    throw usage(`${chosen.label} is a container image: pass --allow-oci to run it with ${chosen.runtime}`);
  if (!chosen.usable && chosen.kind !== 'oci' && chosen.kind !== 'pypi') throw usage(`${chosen.label}: ${chosen.why}`);
  if (!chosen.usable) io.err(`warning: ${chosen.label}: ${chosen.why}; the entry will not start on this machine until it is\n`);

  // The key under mcpServers: the one already added from this server, --name, or the server's own name.
  const previous = Object.entries(servers).find(([, e]) => registryOf(e)?.name === name)?.[0];
  const key = options.entryName ?? previous ?? entryKey(short);
  if (!SAFE_NAME.test(key)) throw usage(`--name must be letters, digits, _ and - (got "${key}")`);
  const before = Object.hasOwn(servers, key) ? servers[key] : undefined;
  if (before !== undefined && registryOf(before)?.name !== name && !options.force)
    throw usage(
      `"${key}" is already in ${options.configFile}${registryOf(before) === undefined ? '' : ` (from ${registryOf(before)!.name})`}: pass --name OTHER, or --force to replace it`,
    );

  const questions = questionsFor(chosen);
  const given = await givenValues(options);
  const fromBefore = before === undefined ? new Map<string, string>() : valuesOf(before, questions);
  const answers = new Map<string, string>([...fromBefore, ...given]);
  const available = (q: Question): boolean => answers.has(q.key) || (q.secret && (known.has(q.key) || options.env[q.key] !== undefined));
  const missing: Question[] = [];
  for (const q of questions) {
    if (available(q)) continue;
    if (options.prompter !== undefined && !options.yes) {
      const hint = [q.secret ? 'secret' : undefined, q.required ? 'required' : 'optional, Enter to skip', q.choices?.join('|')]
        .filter(Boolean)
        .join('; ');
      const value = await options.prompter.ask(
        `${q.what}${q.description === undefined ? '' : ` — ${q.description}`} (${hint})${q.default === undefined ? '' : ` [${q.default}]`}: `,
        q.secret,
      );
      if (value !== '') answers.set(q.key, value);
      else if (q.default !== undefined && q.required) answers.set(q.key, q.default);
    }
    if (!available(q) && q.required && (q.secret || q.default === undefined)) missing.push(q);
  }
  for (const q of questions) {
    const value = answers.get(q.key);
    if (value !== undefined && q.choices !== undefined && !q.choices.includes(value))
      throw usage(`${q.key} must be one of ${q.choices.join(', ')} (got "${value}")`);
  }
  if (missing.length > 0 && !options.dryRun)
    throw usage(
      `${name} needs values for:\n${missing.map((q) => `  ${q.key}: ${q.what}${q.description === undefined ? '' : ` — ${q.description}`}${q.secret ? ' (secret)' : ''}\n`).join('')}give each with --env KEY=VALUE or in an --answers FILE (NAME=value lines)`,
    );
  const secretKeys = new Set(questions.filter((q) => q.secret).map((q) => q.key));
  // A dry run shows what is still missing as the reference it would be.
  const asReference = new Set(missing.map((q) => q.key));
  const built = buildEntry(
    chosen,
    questions.map((q) => (asReference.has(q.key) ? { ...q, secret: true } : q)),
    // A secret the env file or environment already has is referenced without asking again.
    (k) => answers.get(k) ?? (secretKeys.has(k) && (known.has(k) || options.env[k] !== undefined) ? '' : undefined),
  );
  const version = pinnedVersion(chosen, server);
  const entry: Record<string, unknown> = {
    ...(before !== undefined && registryOf(before)?.name === name ? keptFields(before) : {}),
    ...built.entry,
    ...(options.oauth && { auth: 'oauth' }),
    registry: { name, version: server.version, url: client.url },
  };
  const newSecrets = built.references.filter((k) => answers.has(k) && known.get(k) !== answers.get(k));

  // What will run, before anything does.
  showPlan(io, {
    found,
    client: client.url,
    key,
    option: chosen,
    others: launch.filter((o) => o !== chosen),
    version,
    questions,
    missing,
    entry,
  });
  const secretsEnv = { ...options.env, ...Object.fromEntries(known), ...Object.fromEntries(newSecrets.map((k) => [k, answers.get(k)!])) };
  const issues = checkEntry(key, entry, options.configFile, secretsEnv);
  if (issues.errors.length > 0) {
    io.err(
      formatIssues(issues.errors)
        .map((l) => `error: ${l}\n`)
        .join(''),
    );
    throw usage(`the entry for ${name} is not one mcpgate can load; nothing was written`);
  }
  servers[key] = entry;
  const output = `${JSON.stringify(existing, null, 2)}\n`;
  const whole = checkConfig(output, options.configFile, secretsEnv);
  if (whole.length > 0) {
    io.err(
      formatIssues(whole)
        .map((l) => `error: ${l}\n`)
        .join(''),
    );
    throw usage(`${options.configFile} would not load with this entry; nothing was written`);
  }
  if (options.dryRun) {
    io.out(`\nWould write "${key}" to ${options.configFile}:\n${JSON.stringify({ [key]: entry }, null, 2)}\n`);
    if (newSecrets.length > 0) io.out(`Would write ${newSecrets.join(', ')} to ${secretsFile} (mode 0600)\n`);
    if (missing.length > 0) io.out(`Still to set: ${missing.map((q) => q.key).join(', ')} (--env KEY=VALUE)\n`);
    return 0;
  }
  if (!options.yes) {
    if (options.prompter === undefined)
      throw usage(
        `add runs ${chosen.kind === 'remote' ? 'a remote server' : `${String(built.entry.command)} from ${chosen.kind}`}: confirm with --yes, or see the entry with --dry-run; nothing was written`,
      );
    const what = options.check ? `Start ${key} to list its tools, then write it?` : `Write ${key}?`;
    if (!(await options.prompter.confirm(`${what} [y/N] `))) {
      io.err('Nothing was written.\n');
      return 1;
    }
  }

  let tools: readonly string[] | undefined;
  if (options.check) {
    try {
      const result = await probeServer(key, output, options.configFile, secretsEnv, options.checkTimeoutMs);
      if ('needsLogin' in result) {
        if (entry.type === 'http' && entry.auth === undefined) entry.auth = 'oauth';
        io.out(`${key} wants a login: the entry has "auth": "oauth"; run \`mcpgate login ${key}\` next.\n`);
      } else tools = result.tools;
    } catch (err) {
      io.err(`mcpgate: ${key} did not start and list its tools: ${(err as Error).message}\n`);
      io.err(`Nothing was written (--no-check writes the entry without starting it).\n`);
      return 1;
    }
  }
  if (newSecrets.length > 0)
    await appendEnvFile(
      secretsFile,
      secretsText,
      newSecrets.map((k) => [k, answers.get(k)!] as const),
      'Secrets written here by `mcpgate import` and `mcpgate add`',
    );
  await writeFile(options.configFile, `${JSON.stringify(existing, null, 2)}\n`);
  const verb = before === undefined ? 'Added' : 'Updated';
  io.out(
    `${verb} "${key}" (${name} ${server.version}) in ${options.configFile}${newSecrets.length > 0 ? `; ${newSecrets.join(', ')} in ${secretsFile} (mode 0600)` : ''}.\n`,
  );
  if (tools !== undefined)
    io.out(`It started and lists ${tools.length} tool(s): ${tools.slice(0, 20).join(', ')}${tools.length > 20 ? ', …' : ''}\n`);
  const envFileArgs = newSecrets.length > 0 || known.size > 0 ? ` --env-file ${secretsFile}` : '';
  io.out(`Serve it: mcpgate serve --config ${options.configFile}${envFileArgs}\n`);
  return 0;
}

/** The server version from the first registry that has the name; a clear error when none has it. */
async function lookUp(
  clients: readonly RegistryClient[],
  name: string,
  version: string | undefined,
): Promise<{ found: ServerResponse; client: RegistryClient }> {
  const failures: string[] = [];
  const versionsSeen: string[] = [];
  for (const client of clients) {
    try {
      const found = await client.version(name, version ?? 'latest');
      if (found !== undefined) return { found, client };
      if (version !== undefined) {
        const all = await client.versions(name);
        if (all !== undefined && all.length > 0) versionsSeen.push(...all.map((s) => s.server.version));
      }
    } catch (err) {
      if (!(err instanceof RegistryError)) throw err;
      failures.push(err.message);
    }
  }
  if (versionsSeen.length > 0)
    throw usage(`${name} has no version ${version}; the registry has: ${[...new Set(versionsSeen)].slice(0, 20).join(', ')}`);
  if (failures.length > 0) throw new RegistryError(`${failures.join('\n')}\nnothing was written`);
  let near: string[] = [];
  try {
    near = (await clients[0]!.search(name.slice(name.indexOf('/') + 1), 5)).map((s) => s.server.name);
  } catch {
    // The suggestion is a courtesy; the answer is still "not found".
  }
  throw usage(
    `no server ${name} in ${clients.map((c) => c.url).join(', ')}${near.length > 0 ? ` (servers with a similar name: ${near.join(', ')})` : ''}; try \`mcpgate search-registry\``,
  );
}

/** When the registry first published `name` (its oldest version), in ms; undefined when it does not say. */
async function firstPublished(client: RegistryClient, name: string): Promise<number | undefined> {
  const times = ((await client.versions(name)) ?? [])
    .map((s) => Date.parse(officialOf(s).publishedAt ?? ''))
    .filter((t) => Number.isFinite(t));
  return times.length === 0 ? undefined : Math.min(...times);
}

/** The entry's "registry" record, when `mcpgate add` wrote it. */
export function registryOf(entry: unknown): { name: string; version: string; url?: string } | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const record = (entry as Record<string, unknown>).registry;
  if (typeof record !== 'object' || record === null) return undefined;
  const { name, version, url } = record as Record<string, unknown>;
  if (typeof name !== 'string' || typeof version !== 'string') return undefined;
  return { name, version, ...(typeof url === 'string' && { url }) };
}

/** The server's own name as an entry key: lowercase letters, digits, _ and -. */
function entryKey(short: string): string {
  const key = short
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return key === '' ? 'server' : key.slice(0, 64);
}

/** An update keeps what the user set on the entry (prefix, timeout, sessions…), not what add builds. */
function keptFields(entry: Record<string, unknown>): Record<string, unknown> {
  const kept = { ...entry };
  for (const field of ['type', 'command', 'args', 'env', 'url', 'headers', 'registry']) delete kept[field];
  return kept;
}

/** On an update, the values the old entry already had for the same questions (literal env values and headers). */
function valuesOf(entry: Record<string, unknown>, questions: readonly Question[]): Map<string, string> {
  const out = new Map<string, string>();
  const env = (entry.env ?? {}) as Record<string, unknown>;
  const headers = (entry.headers ?? {}) as Record<string, unknown>;
  for (const q of questions) {
    const [, what] = /^(?:environment variable|header) (.+)$/.exec(q.what) ?? [];
    if (what === undefined) continue;
    const value = q.what.startsWith('header') ? headers[what] : env[what];
    if (typeof value === 'string' && !value.includes('${')) out.set(q.key, value);
  }
  return out;
}

/** --env KEY=VALUE flags over the --answers file (NAME=value lines). */
async function givenValues(options: AddOptions): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (options.answersFile !== undefined) {
    const text = await readOptional(options.answersFile);
    if (text === undefined) throw usage(`--answers ${options.answersFile}: file not found`);
    for (const [k, v] of parseEnvFile(text, options.answersFile)) out.set(k, v);
  }
  for (const pair of options.values) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usage(`--env takes KEY=VALUE (got "${pair.slice(0, 40)}")`);
    out.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return out;
}

/** Whether a program is an executable file in one of PATH's directories. */
async function pathLookup(env: NodeJS.ProcessEnv): Promise<(program: string) => boolean> {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter((d) => d !== '');
  const programs = ['npx', 'uvx', 'pipx', 'python3', 'python', 'docker', 'podman'];
  const found = new Set<string>();
  await Promise.all(
    programs.flatMap((program) =>
      dirs.map(async (dir) => {
        try {
          await access(path.join(dir, program), constants.X_OK);
          found.add(program);
        } catch {
          // not there
        }
      }),
    ),
  );
  return (program) => found.has(program);
}

interface Plan {
  readonly found: ServerResponse;
  readonly client: string;
  readonly key: string;
  readonly option: ReturnType<typeof launchOptions>[number];
  readonly others: ReturnType<typeof launchOptions>;
  readonly version: string;
  readonly questions: readonly Question[];
  readonly missing: readonly Question[];
  readonly entry: Record<string, unknown>;
}

function showPlan(io: CliIo, plan: Plan): void {
  const server = plan.found.server;
  const official = officialOf(plan.found);
  const namespace = server.name.slice(0, server.name.indexOf('/'));
  const marks = [
    official.status ?? 'status not given',
    official.isLatest === true ? 'latest' : official.isLatest === false ? 'not the latest version' : undefined,
    official.publishedAt === undefined ? undefined : `published ${official.publishedAt}`,
  ].filter(Boolean);
  const lines = [
    `${server.name} ${server.version}${server.title === undefined ? '' : ` (${server.title})`}: ${server.description}`,
    `  publisher: ${namespace} (the registry checks who owns this namespace); registry: ${plan.client} — ${marks.join(', ')}`,
  ];
  if (official.status === 'deprecated')
    lines.push(`  DEPRECATED${official.statusMessage === undefined ? '' : `: ${official.statusMessage}`}`);
  if (server.repository !== undefined) lines.push(`  source: ${server.repository.url}`);
  const entry = plan.entry;
  if (plan.option.kind === 'remote') {
    lines.push(`  runs: nothing on this machine; connects to ${String(entry.url)} (${String(entry.type)})`);
    const url = URL.canParse(String(entry.url)) ? new URL(String(entry.url)) : undefined;
    lines.push(`  network: ${url === undefined ? String(entry.url) : url.host}`);
  } else {
    const argv = [String(entry.command), ...((entry.args as string[] | undefined) ?? [])];
    lines.push(`  runs: ${argv.join(' ')}`);
    lines.push(`  package: ${plan.option.label} (pinned to ${plan.version}; ${plan.option.why})`);
    const base = plan.option.package?.registryBaseUrl;
    lines.push(
      `  network: ${plan.option.kind === 'oci' ? 'pulls the image from its registry' : `downloads the package from ${base ?? (plan.option.kind === 'npm' ? 'the npm registry' : 'PyPI')} on first start`}; the server itself may reach other hosts`,
    );
  }
  for (const other of plan.others)
    lines.push(`  also offered: ${other.label} — ${other.why}${other.kind === 'unsupported' ? '' : ` (--package-type ${other.kind})`}`);
  if (plan.questions.length > 0) {
    lines.push('  needs:');
    for (const q of plan.questions)
      lines.push(
        `    ${q.key}: ${q.what}${q.secret ? ', secret (env file, never the config)' : ''}${q.required ? ', required' : ''}${q.description === undefined ? '' : ` — ${q.description}`}`,
      );
  }
  io.out(`${lines.join('\n')}\n`);
}
