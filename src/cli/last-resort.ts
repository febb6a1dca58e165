// The last resort: an error that escaped every handler (a bug in mcpgate). The process's state can no
// longer be trusted, so it does not limp on: it logs the error with its stack, kills every server's
// process group (so no child outlives it) and exits non-zero. Errors from one agent's request or one
// server's message are contained long before this (AgentSession.handleMessage, ServerSession.onLine);
// reaching here is always a bug to report.

import type { Logger } from '../observability/logger.js';

/** The handler itself: logs once, kills the servers, exits 1 (the kill's own failure cannot stop the exit). */
function fatalHandler(log: Logger, killServers: () => void, exit: (code: number) => void): (err: unknown) => void {
  let fired = false;
  return (err) => {
    if (fired) return;
    fired = true;
    try {
      log.error('fatal: an error escaped every handler (a bug in mcpgate); killing every server and exiting', { error: err });
    } finally {
      try {
        killServers();
      } finally {
        exit(1);
      }
    }
  };
}

/** Installs the handler for `uncaughtException` and `unhandledRejection`; returns its uninstaller. */
export function installLastResort(
  log: Logger,
  killServers: () => void,
  exit: (code: number) => void = (code) => process.exit(code),
): () => void {
  const onFatal = fatalHandler(log, killServers, exit);
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  return () => {
    process.off('uncaughtException', onFatal);
    process.off('unhandledRejection', onFatal);
  };
}
