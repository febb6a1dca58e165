// Node's on-disk compile cache for mcpgate's own modules (Node 22.1 and later; Node 20 has none and
// this does nothing there). V8 then reads the compiled code of mcpgate's ~230 modules from disk
// instead of compiling them on each start: a gateway spawned its first server ~20 ms sooner (130
// against 150 ms after its own start, medians of 8 alternating starts), and every `mcpgate` command
// starts that much sooner. It only helps the modules loaded after it is turned on, so the executable
// (bin.ts) turns it on before it imports the rest of mcpgate.

// Where: `NODE_COMPILE_CACHE` when the operator sets it (Node reads it), else a directory of the
// user's own cache (`$XDG_CACHE_HOME` or `~/.cache`, then `mcpgate/compile-cache`), never the shared
// temporary directory Node defaults to: code read from there runs as mcpgate, and another local user
// could have put it there first. `NODE_DISABLE_COMPILE_CACHE=1` turns it off. The cache is an
// optimization only: where it cannot be used (no home, a read-only one) Node says so in the value it
// returns, and mcpgate starts as it would without it.
//
// Code read from the cache runs as mcpgate, so the cache is used only where no one else could have
// written it: mcpgate makes the directory (0700) and then checks its real path, every directory up to
// the root: the cache's own and its parent `mcpgate` owned by this user, every ancestor owned by this
// user or root, and none writable by group or others unless it is sticky (like /tmp, where others may
// add entries but not replace ours). Anything else (a planted directory, a group-writable cache): no
// cache, and mcpgate starts without it.

import { mkdirSync, realpathSync, statSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

interface CompileCacheResult {
  status: number;
  directory?: string;
  message?: string;
}

type EnableCompileCache = (directory?: string) => CompileCacheResult;

/** The directory to ask Node for; undefined: Node's choice (NODE_COMPILE_CACHE is set); null: no cache. */
function compileCacheDirectory(env: NodeJS.ProcessEnv, home: () => string = homedir): string | null | undefined {
  if (env.NODE_COMPILE_CACHE !== undefined && env.NODE_COMPILE_CACHE !== '') return undefined;
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'mcpgate', 'compile-cache');
  let dir: string;
  try {
    dir = home();
  } catch {
    return null;
  }
  return isAbsolute(dir) ? join(dir, '.cache', 'mcpgate', 'compile-cache') : null;
}

/** What the check reads of a directory. */
interface DirStat {
  uid: number;
  mode: number;
  isDirectory(): boolean;
}

const GROUP_OR_OTHER_WRITABLE = 0o022;
const STICKY = 0o1000;

/**
 * Why the cache at `directory` (a real path) could hold code someone else wrote, or undefined when
 * only `uid` (or root, above the cache's own two levels) could have written it.
 */
function unsafeCacheReason(directory: string, uid: number, stat: (path: string) => DirStat = statSync): string | undefined {
  let path = directory;
  for (let depth = 0; ; depth++) {
    let st: DirStat;
    try {
      st = stat(path);
    } catch {
      return `${path} cannot be read`;
    }
    if (!st.isDirectory()) return `${path} is not a directory`;
    // The cache directory and its parent (`mcpgate`) are the user's own; above them root's are fine too.
    const owners = depth < 2 ? [uid] : [uid, 0];
    if (!owners.includes(st.uid)) return `${path} is owned by uid ${st.uid}`;
    if ((st.mode & GROUP_OR_OTHER_WRITABLE) !== 0 && (depth < 2 || (st.mode & STICKY) === 0))
      return `${path} is writable by others (mode ${(st.mode & 0o7777).toString(8)})`;
    const parent = dirname(path);
    if (parent === path) return undefined;
    path = parent;
  }
}

/** What the cache's choice reads of the system: Node's own unless a test gives its own. */
interface CompileCacheSystem {
  /** Node's `module.enableCompileCache` (undefined: this Node has none). */
  enable?: EnableCompileCache | undefined;
  home?: () => string;
  stat?: (path: string) => DirStat;
  /** This process's user id (undefined: no such thing here). */
  uid?: number | undefined;
}

/** Turns the cache on where this Node has one; what Node answered, or undefined where it has none, there is no directory, or it is not safe. */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env, system: CompileCacheSystem = {}): CompileCacheResult | undefined {
  const enable = 'enable' in system ? system.enable : (nodeModule as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (enable === undefined) return undefined;
  const directory = compileCacheDirectory(env, system.home);
  if (directory === undefined) return enable();
  if (directory === null) return undefined;
  let real: string;
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    real = realpathSync(directory);
  } catch {
    return undefined;
  }
  const uid = 'uid' in system ? system.uid : process.getuid?.();
  if (uid !== undefined && unsafeCacheReason(real, uid, system.stat) !== undefined) return undefined;
  return enable(real);
}
