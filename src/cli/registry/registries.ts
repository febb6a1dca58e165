// Which registries the registry commands ask, in order: each `--registry URL`, else the config's
// top-level "registries" (an array of URLs), else the official MCP Registry. The first registry that
// knows a server answers for it.

import { GatewayError } from '../../errors.js';
import { OFFICIAL_REGISTRY, RegistryClient } from './client.js';

export function registriesFor(flags: readonly string[], config: Record<string, unknown> | undefined, configFile: string): RegistryClient[] {
  let urls: readonly string[] = flags;
  if (urls.length === 0 && config?.registries !== undefined) {
    const listed = config.registries;
    if (!Array.isArray(listed) || listed.length === 0 || !listed.every((u) => typeof u === 'string'))
      throw new GatewayError('MCPG_USAGE', `${configFile}: "registries" must be a non-empty array of registry URLs`);
    urls = listed;
  }
  if (urls.length === 0) urls = [OFFICIAL_REGISTRY];
  try {
    return urls.map((url) => new RegistryClient(url));
  } catch (err) {
    throw new GatewayError('MCPG_USAGE', (err as Error).message);
  }
}

/** `NAME[@VERSION]` split; the name is namespace/name, so an `@` after the slash starts the version. */
export function splitSpec(spec: string): { name: string; version: string | undefined } {
  const slash = spec.indexOf('/');
  const at = spec.indexOf('@', slash < 0 ? 0 : slash);
  if (at < 0) return { name: spec, version: undefined };
  return { name: spec.slice(0, at), version: spec.slice(at + 1) };
}
