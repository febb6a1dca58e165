// `mcpgate search-registry QUERY`: the servers whose name contains QUERY in each registry, newest
// version of each, with what `add` needs to know to choose: description, version, package types,
// and the registry's status.

import type { CliIo } from '../io.js';
import { readOptional, parseOutput } from '../import/run-import.js';
import { registriesFor } from './registries.js';
import { officialOf } from './server-json.js';

export interface SearchOptions {
  readonly query: string;
  readonly configFile: string;
  readonly registries: readonly string[];
  readonly limit: number;
  readonly json: boolean;
}

interface Row {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly types: readonly string[];
  readonly status: string | null;
  readonly registry: string;
}

export async function runSearchRegistry(options: SearchOptions, io: CliIo): Promise<number> {
  const configText = await readOptional(options.configFile);
  const config = configText === undefined ? undefined : parseOutput(configText, options.configFile);
  const rows: Row[] = [];
  for (const client of registriesFor(options.registries, config, options.configFile)) {
    for (const found of await client.search(options.query, options.limit)) {
      const server = found.server;
      const official = officialOf(found);
      const kinds = [
        ...new Set([...(server.packages ?? []).map((p) => p.registryType), ...(server.remotes ?? []).map((r) => `remote:${r.type}`)]),
      ];
      rows.push({
        name: server.name,
        version: server.version,
        description: server.description,
        types: kinds,
        status: official.status ?? null,
        registry: client.url,
      });
    }
  }
  if (options.json) {
    io.out(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    io.out(`No server's name contains "${options.query}".\n`);
    return 0;
  }
  for (const row of rows) {
    const status = row.status === null || row.status === 'active' ? '' : ` [${row.status}]`;
    io.out(`${row.name}  ${row.version}  (${row.types.join(', ') || 'nothing to run'})${status}\n    ${row.description}\n`);
  }
  io.out(`\nAdd one with: mcpgate add NAME  (or NAME@VERSION)\n`);
  return 0;
}
