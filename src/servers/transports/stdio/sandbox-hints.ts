// Which rule of its sandbox likely stopped a server, and how to allow it, read from what the server
// said last on stderr and from the hosts the network allow-list refused it. A guess worded as one:
// the operator reads it in the log and in status beside the stderr lines it came from.

import type { SandboxSettings } from '../../../config/types.js';

/** The hint for a server that failed under `settings`; undefined when nothing points at the sandbox. */
export function sandboxHint(
  settings: SandboxSettings,
  stderr: readonly string[],
  denials: readonly string[],
  visible: { readonly read: readonly string[]; readonly write: readonly string[] },
): string | undefined {
  const lastDenial = denials.at(-1);
  if (lastDenial !== undefined)
    return `the sandbox's network allow-list refused ${lastDenial}; to allow it, add "${lastDenial}" to the entry's "sandbox": {"network": [...]}`;
  // Newest first: the last words are usually the fatal ones.
  for (const line of [...stderr].reverse()) {
    if (/^bwrap: /.test(line))
      return `bubblewrap could not make the sandbox (${line.slice(7, 200)}); check the sandbox's paths exist and that this system allows user namespaces (kernel.unprivileged_userns_clone, AppArmor's restrict_unprivileged_userns)`;
    const denied = /\b(EACCES|EPERM|EROFS|[Pp]ermission denied|[Rr]ead-only file system)\b/.test(line);
    const missing = /\b(ENOENT|[Nn]o such file or directory)\b/.test(line);
    if (denied || missing) {
      const at = pathIn(line);
      if (at === undefined) continue;
      if (denied && under(at, visible.read))
        return `the sandbox shows ${at} read-only; to let the server write there, add it to the entry's "sandbox": {"write": [...]}`;
      if (missing && !under(at, visible.read) && !under(at, visible.write) && !at.startsWith('/usr/') && !at.startsWith('/etc/'))
        return `${at} is outside the sandbox; to show it, add it (or its folder) to the entry's "sandbox": {"read": [...]} (or "write")`;
      if (denied)
        return `the sandbox may have denied ${at}; to allow it, add it to the entry's "sandbox": {"read": [...]} or {"write": [...]}`;
    }
    if (/\b(ENOTFOUND|EAI_AGAIN|ENETUNREACH|[Nn]etwork is unreachable|[Tt]emporary failure in name resolution|getaddrinfo)\b/.test(line)) {
      if (settings.network === 'none')
        return `the sandbox's network is "none"; to let the server reach a host, list it in the entry's "sandbox": {"network": ["host:port"]}`;
      if (Array.isArray(settings.network))
        return `the sandbox reaches only the listed hosts, through mcpgate's proxy (HTTP_PROXY); a client that ignores the proxy variables cannot connect: list the host, or use "network": "full"`;
    }
  }
  return undefined;
}

/** The first absolute path in a line, quotes and a trailing colon or comma taken off. */
function pathIn(line: string): string | undefined {
  const match = /(?:^|[\s'"`(])(\/[^\s'"`),]+)/.exec(line);
  return match?.[1]?.replace(/[:.]+$/, '');
}

function under(p: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => p === dir || p.startsWith(dir + '/'));
}
