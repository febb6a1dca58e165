// Whether this system can make the sandboxes `.mcp.json` asks for: Linux with bubblewrap (`bwrap`).
// Read by the stdio transport before it starts a sandboxed server (it never starts one unsandboxed)
// and by `mcpgate check`, which reports it before anything starts.

import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

let bwrapPath: string | null | undefined;

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The bwrap executable: /usr/bin/bwrap, else the first on mcpgate's PATH (found once). */
export function findBwrap(env: Env = process.env): string | undefined {
  if (bwrapPath === undefined) {
    bwrapPath = null;
    if (executable('/usr/bin/bwrap')) bwrapPath = '/usr/bin/bwrap';
    else {
      for (const dir of (env.PATH ?? '').split(':')) {
        if (path.isAbsolute(dir) && executable(path.join(dir, 'bwrap'))) {
          bwrapPath = path.join(dir, 'bwrap');
          break;
        }
      }
    }
  }
  return bwrapPath ?? undefined;
}

/** Why a sandbox cannot be made here; undefined when bubblewrap is at hand. */
export function sandboxUnavailable(env: Env = process.env): string | undefined {
  if (process.platform !== 'linux')
    return `sandboxes need Linux with bubblewrap; this is ${process.platform} (remove the "sandbox" setting to run the server unsandboxed)`;
  if (findBwrap(env) === undefined)
    return 'bubblewrap (bwrap) was not found on PATH or in /usr/bin; install it (Debian and Ubuntu: apt-get install bubblewrap)';
  return undefined;
}
