// The command line that runs a stdio server inside its sandbox: bubblewrap (`bwrap`), with the
// resource limits (`prlimit`) in front where the entry asks for them. The sandbox is built from
// nothing: the system's programs and libraries (`/usr`, `/etc`) read-only, a fresh `/proc` and
// `/dev`, an empty private `/tmp` and home, then the server's working directory and `write` paths
// read-write, its `read` paths, its preset's caches and the command's own installation read-only.
// Everything else of the machine's files is absent, not merely unreadable. How supervision sees the
// sandbox, and the terminal and capabilities kept from the server: src/servers/README.md, "Sandboxes".

import { existsSync, realpathSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { SandboxSettings } from '../../../config/types.js';
import { resolveCommand } from './group-launch.js';
import { presetPaths } from './sandbox-presets.js';
import { findBwrap } from '../../../config/sandbox-mechanism.js';

export { sandboxUnavailable } from '../../../config/sandbox-mechanism.js';

/** System folders every sandbox sees read-only (a symlink among them stays a symlink, as on merged-/usr systems). */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

type Env = Readonly<Record<string, string | undefined>>;

let prlimitPath: string | null | undefined;

function findPrlimit(env: Env): string | undefined {
  if (prlimitPath === undefined)
    prlimitPath = existsSync('/usr/bin/prlimit') ? '/usr/bin/prlimit' : (resolveCommand('prlimit', env, '/') ?? null);
  return prlimitPath ?? undefined;
}

/** The allow-list's way out of a sandbox whose network is a list of hosts (transports/stdio/network-proxy.ts). */
interface ProxyWay {
  /** The folder of mcpgate's filtering proxy's unix socket (`proxy.sock`), on this side. */
  readonly folder: string;
  /** The bridge the sandbox runs first (transports/stdio/proxy-bridge-main.ts), a single file. */
  readonly bridge: string;
}

/** Where the proxy's socket appears inside the sandbox. */
const SANDBOX_PROXY_SOCKET = '/run/mcpgate/net/proxy.sock';
/** The bridge inside (`.mjs`: no package.json beside it says it is a module). */
const SANDBOX_BRIDGE = '/run/mcpgate/bridge.mjs';

export interface SandboxLaunch {
  readonly command: string;
  readonly args: string[];
  /** Every path the sandbox shows, for `mcpgate check` and status: read-only and read-write. */
  readonly visible: { readonly read: readonly string[]; readonly write: readonly string[] };
}

interface Mount {
  readonly path: string;
  readonly write: boolean;
  /** Skipped when it does not exist (a preset's cache not made yet), rather than failing the start. */
  readonly optional: boolean;
  /** Where it appears inside; absent: at its own path. */
  readonly at?: string;
}

/** Every mount of the sandbox beyond the system's, in the order bwrap must make them (parents first). */
function sandboxMounts(settings: SandboxSettings, command: string, env: Env, cwd: string): { mounts: Mount[]; home: string | undefined } {
  const home = env.HOME !== undefined && path.isAbsolute(env.HOME) && env.HOME !== '/' ? env.HOME : undefined;
  const mounts: Mount[] = [];
  const add = (p: string, write: boolean, optional: boolean): void => {
    const real = realOrSelf(p);
    mounts.push({ path: real, write, optional });
  };
  add(cwd, true, false);
  for (const p of settings.write) add(p, true, false);
  for (const p of settings.read) add(p, false, false);
  const preset = presetPaths(settings.preset, env, home);
  for (const p of preset.write) add(p, true, true);
  for (const p of preset.read) add(p, false, true);
  // The command's own installation (a virtual environment, a Node version manager's prefix): its
  // folder's parent, unless the system's folders hold it already.
  const resolved = resolveCommand(command, env, cwd);
  if (resolved !== undefined) {
    for (const file of new Set([resolved, realOrSelf(resolved)])) {
      const prefix = path.dirname(path.dirname(file));
      if (!underAny(prefix, SYSTEM) && prefix !== '/') {
        const real = realOrSelf(prefix);
        mounts.push({ path: real, write: false, optional: true });
        // Reached through a symlink (a venv linked into the project): shown where the command names it too.
        if (
          real !== prefix &&
          !underAny(
            prefix,
            mounts.map((m) => m.at ?? m.path),
          )
        )
          mounts.push({ path: real, write: false, optional: true, at: prefix });
      }
    }
  }
  // A path granted twice keeps its strongest grant; parents are mounted before their children.
  const byPlace = new Map<string, Mount>();
  for (const m of mounts) {
    const place = m.at ?? m.path;
    const had = byPlace.get(place);
    if (had === undefined || (m.write && !had.write) || (had.optional && !m.optional))
      byPlace.set(place, { ...m, write: m.write || (had?.write ?? false), optional: m.optional && (had?.optional ?? true) });
  }
  const ordered = [...byPlace.values()].sort((a, b) => depth(a.at ?? a.path) - depth(b.at ?? b.path));
  return { mounts: ordered, home };
}

/** The bwrap (and prlimit) command line that runs `command args` in `settings`' sandbox. */
export function sandboxLaunch(
  settings: SandboxSettings,
  command: string,
  args: readonly string[],
  env: Env,
  cwd: string,
  proxy?: ProxyWay,
): SandboxLaunch {
  const bwrap = findBwrap() ?? 'bwrap';
  const { mounts, home } = sandboxMounts(settings, command, env, cwd);
  const out: string[] = [
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL',
  ];
  if (settings.network !== 'full') out.push('--unshare-net');
  for (const dir of SYSTEM) {
    const link = symlinkTarget(dir);
    if (link !== undefined) out.push('--symlink', link, dir);
    else out.push('--ro-bind-try', dir, dir);
  }
  // A resolver configuration linked out of /etc (systemd-resolved) is followed where it lives.
  const resolv = realOrSelf('/etc/resolv.conf');
  if (settings.network === 'full' && !resolv.startsWith('/etc/')) out.push('--ro-bind-try', resolv, resolv);
  out.push('--proc', '/proc', '--dev', '/dev', '--ro-bind', '/dev/null', '/dev/tty', '--tmpfs', '/tmp');
  if (home !== undefined) out.push('--tmpfs', home);
  for (const m of mounts) {
    const flag = m.write ? (m.optional ? '--bind-try' : '--bind') : m.optional ? '--ro-bind-try' : '--ro-bind';
    out.push(flag, m.path, m.at ?? m.path);
  }
  out.push('--chdir', cwd, '--setenv', 'TMPDIR', '/tmp');
  let inner: string[] = [command, ...args];
  if (proxy !== undefined && Array.isArray(settings.network)) {
    const node = realOrSelf(process.execPath);
    const nodePrefix = path.dirname(path.dirname(node));
    if (!underAny(node, SYSTEM)) out.push('--ro-bind', nodePrefix, nodePrefix);
    out.push('--ro-bind', proxy.bridge, SANDBOX_BRIDGE, '--ro-bind', proxy.folder, path.dirname(SANDBOX_PROXY_SOCKET));
    inner = [node, SANDBOX_BRIDGE, SANDBOX_PROXY_SOCKET, ...inner];
  }
  let launch: { command: string; args: string[] } = { command: bwrap, args: [...out, '--', ...inner] };
  const limits: string[] = [];
  if (settings.processes !== undefined) limits.push(`--nproc=${settings.processes}`);
  // RLIMIT_DATA (private writable memory), not RLIMIT_AS: V8 reserves far more address space than it uses.
  if (settings.memoryMb !== undefined) limits.push(`--data=${settings.memoryMb * 1024 * 1024}`);
  const prlimit = limits.length > 0 ? findPrlimit(env) : undefined;
  if (prlimit !== undefined) launch = { command: prlimit, args: [...limits, '--', launch.command, ...launch.args] };
  return {
    ...launch,
    visible: {
      read: mounts.filter((m) => !m.write).map((m) => m.at ?? m.path),
      write: mounts.filter((m) => m.write).map((m) => m.at ?? m.path),
    },
  };
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function symlinkTarget(p: string): string | undefined {
  try {
    return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : undefined;
  } catch {
    return undefined;
  }
}

function underAny(p: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/'));
}

function depth(p: string): number {
  return p.split('/').length;
}
