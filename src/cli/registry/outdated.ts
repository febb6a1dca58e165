// `mcpgate outdated`: the entries `mcpgate add` wrote (their "registry" record) whose registry has a
// newer version. Each is asked of the registry it came from; `mcpgate add NAME@VERSION` updates one.

import type { CliIo } from '../io.js';
import { GatewayError } from '../../errors.js';
import { readOptional, parseOutput } from '../import/run-import.js';
import { RegistryClient, RegistryError } from './client.js';
import { registryOf } from './add.js';
import { registriesFor } from './registries.js';

export interface OutdatedOptions {
  readonly configFile: string;
  readonly registries: readonly string[];
  readonly json: boolean;
}

export async function runOutdated(options: OutdatedOptions, io: CliIo): Promise<number> {
  const configText = await readOptional(options.configFile);
  if (configText === undefined) throw new GatewayError('MCPG_USAGE', `${options.configFile}: file not found`);
  const config = parseOutput(configText, options.configFile);
  const fallback = registriesFor(options.registries, config, options.configFile);
  const rows: { entry: string; name: string; current: string; latest: string; registry: string }[] = [];
  const failures: string[] = [];
  let added = 0;
  for (const [entry, raw] of Object.entries(config.mcpServers as Record<string, unknown>)) {
    const record = registryOf(raw);
    if (record === undefined) continue;
    added++;
    const clients = options.registries.length === 0 && record.url !== undefined ? [new RegistryClient(record.url)] : fallback;
    let latest: string | undefined;
    let where = '';
    for (const client of clients) {
      try {
        const found = await client.version(record.name, 'latest');
        if (found === undefined) continue;
        latest = found.server.version;
        where = client.url;
        break;
      } catch (err) {
        if (!(err instanceof RegistryError)) throw err;
        failures.push(`${entry}: ${err.message}`);
      }
    }
    if (latest !== undefined && compareVersions(latest, record.version) > 0)
      rows.push({ entry, name: record.name, current: record.version, latest, registry: where });
  }
  for (const failure of failures) io.err(`warning: ${failure}\n`);
  if (options.json) io.out(`${JSON.stringify(rows, null, 2)}\n`);
  else if (rows.length === 0)
    io.out(`${added === 0 ? 'No entry was added from a registry' : `All ${added} entries added from a registry are up to date`}.\n`);
  else {
    for (const row of rows)
      io.out(`${row.entry}  ${row.name}  ${row.current} -> ${row.latest}\n    update: mcpgate add ${row.name}@${row.latest}\n`);
  }
  return failures.length > 0 ? 1 : 0;
}

/** Semantic-version order (numeric parts, then a pre-release below its release); other strings compare as text. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number[], string] | undefined => {
    const m = /^v?(\d+(?:\.\d+)*)(?:-([^+]*))?(?:\+.*)?$/.exec(v);
    return m === null ? undefined : [m[1]!.split('.').map(Number), m[2] ?? ''];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa === undefined || pb === undefined) return a === b ? 0 : a < b ? -1 : 1;
  for (let i = 0; i < Math.max(pa[0].length, pb[0].length); i++) {
    const d = (pa[0][i] ?? 0) - (pb[0][i] ?? 0);
    if (d !== 0) return d;
  }
  if (pa[1] === pb[1]) return 0;
  if (pa[1] === '') return 1;
  if (pb[1] === '') return -1;
  return pa[1] < pb[1] ? -1 : 1;
}
