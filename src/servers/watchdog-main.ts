// The watchdog process (hardening issue §1): one per mcpgate, detached into its own session so a kill
// of mcpgate's process group does not take it along. It reads lines from a pipe whose other end only
// mcpgate holds: `+PGID` registers a server's process group, `-PGID` says the group is gone. When the pipe closes — mcpgate exited, was SIGKILLed or
// OOM-killed — it SIGTERMs every group still registered, SIGKILLs them shortly after, and exits. It
// only ever signals groups mcpgate registered and has not reported gone: a pgid cannot be reused while
// any member of the group lives, so the window for a wrong kill is the time a `-PGID` line is in flight.

const groups = new Set<number>();
const TERM_GRACE_MS = 500;
let buffered = '';

function signalAll(signal: NodeJS.Signals): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, signal);
    } catch {
      groups.delete(pgid); // ESRCH: already gone
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
