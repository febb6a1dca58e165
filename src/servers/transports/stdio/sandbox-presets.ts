// What each launcher preset of a sandbox makes visible beside the entry's own paths: the package
// caches the launcher reads (and writes, where it installs packages at start), never the rest of the
// home directory. Registry credentials (`~/.npmrc`, `~/.pypirc`) are not among them: an entry that
// needs them names them in its `read`.

import path from 'node:path';
import type { SandboxPreset } from '../../../config/types.js';

interface PresetPaths {
  readonly read: readonly string[];
  readonly write: readonly string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** A directory the environment names, else the default under home (undefined without a home). */
function dirOf(env: Env, variable: string, home: string | undefined, fallback: string): string | undefined {
  const named = env[variable];
  if (named !== undefined && path.isAbsolute(named)) return named;
  return home === undefined ? undefined : path.join(home, fallback);
}

/** The paths `preset` adds, for a server whose environment is `env` and whose home is `home`. */
export function presetPaths(preset: SandboxPreset, env: Env, home: string | undefined): PresetPaths {
  const cache = dirOf(env, 'XDG_CACHE_HOME', home, '.cache');
  const data = dirOf(env, 'XDG_DATA_HOME', home, '.local/share');
  const list = (...paths: (string | undefined)[]): string[] => paths.filter((p): p is string => p !== undefined);
  switch (preset) {
    case 'npx':
      // npx installs a package into the npm cache (`_npx`) before running it.
      return { read: [], write: list(dirOf(env, 'npm_config_cache', home, '.npm')) };
    case 'uvx':
      // uv's cache holds the tool's environment; its data directory the Pythons it manages.
      return {
        read: [],
        write: list(dirOf(env, 'UV_CACHE_DIR', undefined, '') ?? (cache && path.join(cache, 'uv')), data && path.join(data, 'uv')),
      };
    case 'python':
      // The user's site-packages (`pip install --user`).
      return { read: list(home && path.join(home, '.local/lib')), write: [] };
    case 'node':
    case 'none':
      return { read: [], write: [] };
  }
}
