// The stdio front: one agent on our stdin/stdout (newline-delimited JSON-RPC). stdout carries only
// protocol messages; everything else goes to the log on stderr.
//
// Back-pressure (hardening §4): while stdout does not drain (write() returned false), the agent's
// stdin is not read, so it cannot start more work than it takes answers for. Calls already running
// still answer; if what waits on stdout passes `maxAgentBuffer` bytes anyway, the agent is not
// reading at all: the front ends (MCPG_AGENT_TOO_SLOW in the log) and the gateway shuts down, rather
// than hold its output without limit. One agent is the whole process, so no other agent is affected.

import type { Readable, Writable } from 'node:stream';
import type { Gateway } from '../gateway/gateway.js';
import { readLines } from '../wire/line-reader.js';
import { DEFAULT_MAX_AGENT_BUFFER } from './http-channel.js';

/** Why the stdio front ended; `failed` when it was not the agent's own doing (it stopped reading). */
export interface StdioEnd {
  reason: string;
  failed: boolean;
}

export interface StdioFront {
  /** Resolves when the agent closes our stdin, the output breaks, or the agent stops reading. */
  readonly ended: Promise<StdioEnd>;
  close(): void;
}

export interface StdioOptions {
  input?: Readable;
  output?: Writable;
  /** Bytes waiting on stdout past which the front ends (default 32 MiB, `--max-agent-buffer`). */
  maxAgentBuffer?: number;
}

export function serveStdio(gateway: Gateway, agent: string, agentExplicit = true, options: StdioOptions = {}): StdioFront {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const maxBuffer = options.maxAgentBuffer ?? DEFAULT_MAX_AGENT_BUFFER;
  let resolveEnded!: (end: StdioEnd) => void;
  const ended = new Promise<StdioEnd>((resolve) => (resolveEnded = resolve));
  let broken = false;
  output.on('error', (err: NodeJS.ErrnoException) => {
    // EPIPE: the agent went away without closing our stdin first.
    gateway.log.debug('stdout closed by the agent', { error: err.code ?? err.message });
    broken = true;
    resolveEnded({ reason: 'stdout closed by the agent', failed: false });
  });
  let paused = false;
  output.on('drain', () => {
    if (!paused || broken) return;
    paused = false;
    input.resume();
  });
  // Messages sent in one turn of the event loop go out in one write at its end (see StdioProcess.write).
  let batch: string | undefined;
  const flush = (): void => {
    const lines = batch;
    batch = undefined;
    if (lines === undefined || broken) return;
    const queued = output.writableLength;
    if (queued > maxBuffer) {
      broken = true;
      const reason = `the agent has not read ${queued} bytes of our stdout (the limit is ${maxBuffer}, --max-agent-buffer)`;
      gateway.log.error(`ending: ${reason}`, { code: 'MCPG_AGENT_TOO_SLOW', agent });
      input.pause();
      resolveEnded({ reason, failed: true });
      return;
    }
    if (!output.write(lines) && !paused) {
      paused = true;
      input.pause();
    }
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
    end: () => resolveEnded({ reason: 'stdin closed', failed: false }),
  });
  input.once('error', () => resolveEnded({ reason: 'stdin failed', failed: false }));
  return {
    ended,
    close() {
      stop();
      session.close();
      flush();
    },
  };
}
