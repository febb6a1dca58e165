// A child a test starts that does not read its stdin (an HTTP gateway, a remote server) would outlive
// a test process that dies before its `after` hook (the runner kills a file that runs past its
// timeout). A shell holds the other end of a pipe only this process writes: at EOF (this process is
// gone, however it died) it SIGTERMs the child. The release, for a child that has exited, writes a
// line, so the shell ends without signalling a pid that may have been reused.

import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';

/** Guards child `pid` against this process dying first; returns the release for once it has exited. */
export function killWhenTestsDie(pid: number): () => void {
  const shell = spawn('sh', ['-c', 'read _ || kill -TERM "$1" 2>/dev/null', 'mcpgate-test-guard', String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const input = shell.stdin as Socket;
  shell.unref();
  input.unref();
  input.on('error', () => {});
  return () => void input.end('\n');
}
