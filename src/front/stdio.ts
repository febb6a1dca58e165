// The stdio front: one agent on our stdin/stdout (newline-delimited JSON-RPC). stdout carries only
// protocol messages; everything else goes to the log on stderr.

import type { Readable, Writable } from 'node:stream';
import type { Gateway } from '../gateway/gateway.js';
import { readLines } from '../wire/line-reader.js';

export interface StdioFront {
  /** Resolves when the agent closes our stdin (or the output breaks). */
  readonly ended: Promise<void>;
  close(): void;
}

export function serveStdio(gateway: Gateway, agent: string, agentExplicit = true, input: Readable = process.stdin, output: Writable = process.stdout): StdioFront {
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  let broken = false;
  output.on('error', (err: NodeJS.ErrnoException) => {
    // EPIPE: the agent went away without closing our stdin first.
    gateway.log.debug('stdout closed by the agent', { error: err.code ?? err.message });
    broken = true;
    resolveEnded();
  });
  // Messages sent in one turn of the event loop go out in one write at its end (see StdioProcess.write).
  let batch: string | undefined;
  const flush = (): void => {
    const lines = batch;
    batch = undefined;
    if (lines !== undefined && !broken) output.write(lines);
  };
  const session = gateway.openSession({
    send(line) {
      if (broken) return false;
      if (batch === undefined) {
        batch = line + '\n';
        setImmediate(flush);
      } else {
        batch += line + '\n';
      }
      return true;
    },
  }, agent, agentExplicit);
  const stop = readLines(input, {
    line: (line) => session.handleLine(line),
    overflow: (length) => session.overflow(length),
    end: () => resolveEnded(),
  });
  input.once('error', () => resolveEnded());
  return {
    ended,
    close() {
      stop();
      session.close();
      flush();
    },
  };
}
