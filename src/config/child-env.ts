// The environment a stdio server gets. Not mcpgate's whole environment: that
// holds mcpgate's own secrets (MCPGATE_TOKEN, the JWT secret the rules reference), and any server
// holding them could mint an agent identity. A server gets the inherited variables its entry's
// `inheritEnv` (or the file's top-level `inheritEnv`) allows — by default a short list that keeps
// `npx`/`uvx` servers working — minus mcpgate's secrets, plus its own `env` entries, which always win
// (an entry may pass a secret on purpose by naming it in its `env`).

import type { InheritEnv, StdioServerConfig } from './types.js';
import type { Env } from './expand.js';

/** Inherited when `inheritEnv` is absent: what shells, package runners and TLS need; `*` ends a prefix. */
const SAFE_INHERITED_ENV: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'XDG_*',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  // Not npm_config_*: npm passes registry tokens that way (npm_config_//host/:_authToken).
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  // Windows: what programs need to find themselves and the system.
  'SYSTEMROOT',
  'SystemRoot',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'APPDATA',
  'LOCALAPPDATA',
  'USERPROFILE',
  'PROGRAMFILES',
  'ProgramFiles',
]);

/** Variables mcpgate reads for itself; never inherited by a server. */
const OWN_PREFIX = 'MCPGATE_';

function matches(name: string, patterns: readonly string[]): boolean {
  for (const pattern of patterns) {
    if (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern) return true;
  }
  return false;
}

/** Whether `name` may be inherited from mcpgate's environment under `inherit`. */
function inherits(name: string, inherit: InheritEnv = 'safe', secrets: ReadonlySet<string>): boolean {
  if (name.startsWith(OWN_PREFIX) || secrets.has(name)) return false;
  if (inherit === 'none') return false;
  if (inherit === 'all') return true;
  return matches(name, inherit === 'safe' ? SAFE_INHERITED_ENV : inherit);
}

/** The environment to spawn `config` with. */
export function serverEnv(
  config: Pick<StdioServerConfig, 'env' | 'inheritEnv'>,
  parent: Env,
  secrets: ReadonlySet<string> = new Set(),
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && inherits(name, config.inheritEnv, secrets)) out[name] = value;
  }
  return Object.assign(out, config.env);
}

/** What `mcpgate check` shows: the names (never the values) a server will get, inherited and its own. */
export function serverEnvNames(
  config: Pick<StdioServerConfig, 'env' | 'inheritEnv'>,
  parent: Env,
  secrets: ReadonlySet<string> = new Set(),
): { inherited: string[]; own: string[] } {
  const own = Object.keys(config.env).sort();
  const inherited = Object.keys(parent)
    .filter((name) => parent[name] !== undefined && !Object.hasOwn(config.env, name) && inherits(name, config.inheritEnv, secrets))
    .sort();
  return { inherited, own };
}

/**
 * Names of the variables the rules read through `${VAR}` — the `auth` section and agents'
 * `serverHeaders` (their credentials for remote servers): mcpgate's own secrets.
 */
export function secretEnvNames(rulesRaw: unknown): Set<string> {
  const names = new Set<string>();
  const top = typeof rulesRaw === 'object' && rulesRaw !== null ? (rulesRaw as Record<string, unknown>) : undefined;
  const auth = top?.auth;
  const visit = (value: unknown, depth: number): void => {
    if (depth > 8) return;
    if (typeof value === 'string') {
      for (const match of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(match[1]!);
    } else if (typeof value === 'object' && value !== null) {
      for (const inner of Object.values(value)) visit(inner, depth + 1);
    }
  };
  visit(auth, 0);
  const agents = top?.agents;
  if (typeof agents === 'object' && agents !== null) {
    for (const entry of Object.values(agents as Record<string, unknown>)) {
      if (typeof entry === 'object' && entry !== null) visit((entry as Record<string, unknown>).serverHeaders, 0);
    }
  }
  return names;
}
