// stderr is the log's, and only the log's: stdout is the MCP transport. A client may close its end of
// mcpgate's stderr (mcporter reads stdout only), and every later log line then fails with EPIPE,
// reported as an 'error' event on process.stderr. Unhandled, that event is an uncaught exception and
// the last resort ends the gateway (exit 1). A lost log must never end the gateway: once stderr
// fails, its errors are dropped here and logging goes on into the void; stdout is untouched.

/** Keeps `stream`'s write errors (EPIPE, a destroyed stream) from ending the process; idempotent. */
export function tolerateClosedStderr(stream: NodeJS.WriteStream = process.stderr): void {
  if (stream.listeners('error').includes(dropped)) return;
  stream.on('error', dropped);
}

function dropped(): void {
  // Nothing to report it to: the log itself is what failed.
}
