// How a stdio server gets a process group of its own, so that a stop reaches what a wrapper (`npx`,
// `uvx`) started (signals go to -pgid). On Linux, where the system Perl is at hand, the server is
// started as `perl -e 'setpgrp; exec'` (its own group, mcpgate's session, the same pid); anywhere
// else, and whenever the two ways could differ (a command not found, a relative PATH entry, PERL*
// variables in the server's environment), it is `detached`: same group semantics, same errors. Why
// not `detached` everywhere: src/servers/README.md, "Process groups".

import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

const PERL = '/usr/bin/perl';

/**
 * The launcher: the first argument is the resolved path, the rest the server's argv (argv[0] as
 * configured). setpgrp cannot fail for a freshly forked child (it is no session leader); should
 * exec fail anyway (the file went away since it was resolved), the message lands in the server's
 * stderr log and the exit code (the errno) ends the session like any other exit.
 */
const LAUNCHER =
  'setpgrp(0, 0) or die "mcpgate: setpgrp: $!\\n"; my $path = shift; exec { $path } @ARGV or die "mcpgate: cannot run $ARGV[0]: $!\\n";';

interface Launch {
  command: string;
  args: string[];
  /** true: spawn with setsid (Node's `detached`); false: the launcher makes the group. */
  detached: boolean;
}

let perl: boolean | undefined;

function perlAvailable(): boolean {
  perl ??= process.platform === 'linux' && isExecutableFile(PERL);
  return perl;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The file `command` runs, found the way the spawn would find it (a name with a slash relative to
 * `cwd`, else the first executable in `env.PATH`); undefined when it is not found or when the
 * search would depend on something this does not model (no PATH, a relative PATH entry).
 */
export function resolveCommand(command: string, env: Readonly<Record<string, string | undefined>>, cwd: string): string | undefined {
  if (command === '') return undefined;
  if (command.includes('/')) {
    const path = resolve(cwd, command);
    return isExecutableFile(path) ? path : undefined;
  }
  const path = env.PATH;
  if (path === undefined || path === '') return undefined;
  for (const dir of path.split(':')) {
    if (!isAbsolute(dir)) return undefined;
    const candidate = join(dir, command);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** How to spawn `command args` (with `env`, in `cwd`) as the leader of a new process group. */
export function ownGroupLaunch(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Launch {
  const plain: Launch = { command, args: [...args], detached: true };
  if (!perlAvailable()) return plain;
  // PERL5OPT, PERL5LIB, PERLIO… would change the launcher itself, not only the server.
  for (const key in env) if (key.startsWith('PERL')) return plain;
  const path = resolveCommand(command, env, cwd);
  if (path === undefined) return plain;
  return { command: PERL, args: ['-e', LAUNCHER, '--', path, command, ...args], detached: false };
}
