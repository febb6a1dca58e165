// The watchdog process (no server outlives mcpgate): one per mcpgate, detached into its own session so a kill
// of mcpgate's process group does not take it along. It reads lines from a pipe whose other end only
// mcpgate holds: `+PGID` registers a server's process group, `-PGID` says the group is gone. When the pipe closes — mcpgate exited, was SIGKILLed or
// OOM-killed — it SIGTERMs every group still registered, SIGKILLs them shortly after, and exits. It
// only ever signals groups mcpgate registered and has not reported gone: a pgid cannot be reused while
// any member of the group lives, so the window for a wrong kill is the time a `-PGID` line is in flight.
//
// A server started through the setpgrp launcher (transports/stdio/group-launch.ts) makes its group a moment after it is
// registered; until then it is a process of mcpgate's own group, with no group of its own to signal.
// Such a launcher (the registered pid, still in the group mcpgate had) is signalled by its pid, and
// kept for the SIGKILL pass, by which time it has its group or is gone.

import { readFileSync } from 'node:fs';

const groups = new Set<number>();
const TERM_GRACE_MS = 500;
let buffered = '';

/** The process group of `pid`, from /proc (Linux); undefined when it cannot be read. */
function groupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    return Number.isSafeInteger(pgrp) ? pgrp : undefined;
  } catch {
    return undefined;
  }
}

/** mcpgate's own process group, read while mcpgate (our parent) is alive. */
const parentGroup = groupOf(process.ppid);

function signalAll(signal: NodeJS.Signals): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, signal);
    } catch {
      // ESRCH: no such group. Either it is gone, or it is a launcher that has not made it yet.
      if (parentGroup !== undefined && groupOf(pgid) === parentGroup) {
        try {
          process.kill(pgid, signal);
          continue;
        } catch {
          // gone in between
        }
      }
      groups.delete(pgid);
    }
  }
}

function onLine(line: string): void {
  const pgid = Number(line.slice(1));
  if (line[0] === '+' && Number.isSafeInteger(pgid) && pgid > 1) groups.add(pgid);
  else if (line[0] === '-') groups.delete(pgid);
}

let ending = false;
function end(): void {
  if (ending) return;
  ending = true;
  if (groups.size === 0) process.exit(0);
  signalAll('SIGTERM');
  setTimeout(() => {
    signalAll('SIGKILL');
    process.exit(0);
  }, TERM_GRACE_MS);
}

// The watchdog must outlive the signals aimed at mcpgate's terminal or group.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => {});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffered += chunk;
  let nl = buffered.indexOf('\n');
  while (nl !== -1) {
    onLine(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    nl = buffered.indexOf('\n');
  }
  if (buffered.length > 64) buffered = ''; // never a real line: drop it rather than grow
});
process.stdin.on('end', end);
process.stdin.on('error', end);
