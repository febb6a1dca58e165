// The stdio front: one agent on our stdin/stdout (newline-delimited JSON-RPC). stdout carries only
// protocol messages; everything else goes to the log on stderr.

// Back-pressure: while stdout does not drain (write() returned false), the agent's
// stdin is not read, so it cannot start more work than it takes answers for. Calls already running
// still answer; if what waits on stdout passes `maxAgentBuffer` bytes anyway, the agent is not
// reading at all: the front ends (MCPG_AGENT_TOO_SLOW in the log) and the gateway shuts down, rather
// than hold its output without limit. One agent is the whole process, so no other agent is affected.
// The agent's identity is `--agent`; a front ended for a slow agent makes the gateway exit 1.
//
// Modern (2026-07-28) requests on stdio: a line is looked at for the era only if it contains the
// envelope key (or, while modern requests are in flight, names `notifications/cancelled`, which may
// come without it); modern requests are tracked by id, so `notifications/cancelled` ends one.

import type { Readable, Writable } from 'node:stream';
import type { Gateway } from '../gateway/gateway.js';
import { readLines } from '../wire/jsonrpc.js';
import { encodeError, parseMessage, type RequestId } from '../wire/jsonrpc.js';
import { eraOf, mayBeModern } from '../wire/era.js';
import { forModernAgent } from '../wire/modern-answers.js';
import { GatewayError } from '../errors.js';
import type { ModernRequest } from '../gateway/modern/modern-requests.js';
import { agentIdentity } from '../gateway/session/agent-identity.js';
import { DEFAULT_MAX_AGENT_BUFFER } from './http/options.js';
import type { EncodedParts } from '../wire/encoded.js';

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

interface StdioOptions {
  input?: Readable;
  output?: Writable;
  /** Bytes waiting on stdout past which the front ends (default 32 MiB, `--max-agent-buffer`). */
  maxAgentBuffer?: number;
  /** The curated view the agent is on (`--view`); the caller has checked that the rules define it. */
  view?: string;
}

/** Modern requests one stdio agent may have in flight at once. */
const MAX_MODERN_INFLIGHT = 1000;

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
    if (lines !== undefined) emit([lines]);
  };
  /** Writes now, in one writev, unless the agent stopped reading (then the front ends). */
  const emit = (chunks: EncodedParts): void => {
    if (broken) return;
    const queued = output.writableLength;
    if (queued > maxBuffer) {
      broken = true;
      const reason = `the agent has not read ${queued} bytes of our stdout (the limit is ${maxBuffer}, --max-agent-buffer)`;
      gateway.log.error(`ending: ${reason}`, { code: 'MCPG_AGENT_TOO_SLOW', agent });
      input.pause();
      resolveEnded({ reason, failed: true });
      return;
    }
    let ok = true;
    if (chunks.length === 1) ok = output.write(chunks[0]!);
    else {
      output.cork();
      for (const chunk of chunks) ok = output.write(chunk);
      output.uncork();
    }
    if (!ok && !paused) {
      paused = true;
      input.pause();
    }
  };
  const write = (line: string): boolean => {
    if (broken) return false;
    if (batch === undefined) {
      batch = line + '\n';
      setImmediate(flush);
    } else {
      batch += line + '\n';
    }
    return true;
  };
  /** A message in pieces (a cached list answer): what was batched goes first, then its bytes as they are. */
  const writeParts = (parts: EncodedParts): boolean => {
    if (broken) return false;
    flush();
    emit([...parts, '\n']);
    return !broken;
  };
  const who = agentIdentity(agent, { explicit: agentExplicit });
  const session = gateway.openSession({ send: write, sendParts: writeParts }, who);
  session.view = options.view;
  // Modern (2026-07-28) requests in flight, by the agent's id: notifications/cancelled ends one.
  const modern = new Map<RequestId, ModernRequest>();
  /**
   * A line that may carry the modern envelope (a substring test keeps the legacy hot path at one
   * parse): the era is chosen per message, and a legacy one goes to the agent session as usual.
   */
  const modernLine = (line: string): void => {
    const parsed = parseMessage(line);
    if (parsed.kind !== 'request' && parsed.kind !== 'notification') return session.handleMessage(parsed);
    const msg = parsed.msg;
    if (parsed.kind === 'notification' && msg.method === 'notifications/cancelled') {
      // Routed by the request it names: a modern agent's cancellation may carry no envelope (the
      // revision allows it), and a modern request in flight under that id is the one it means.
      const requestId = (msg.params as { requestId?: RequestId } | undefined)?.requestId;
      const request = requestId === undefined ? undefined : modern.get(requestId);
      if (request === undefined) return session.handleMessage(parsed);
      modern.delete(requestId!);
      return request.cancel();
    }
    const era = eraOf(msg.method, msg.params, parsed.kind === 'request');
    if (era.era === 'legacy') return session.handleMessage(parsed);
    if (parsed.kind === 'notification') return;
    const id = parsed.msg.id;
    if (era.era === 'refused')
      return void write(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          error: { code: era.code, message: era.message, ...(era.data !== undefined && { data: era.data }) },
        }),
      );
    if (modern.has(id))
      return void write(
        encodeError(
          id,
          new GatewayError('MCPG_INVALID_REQUEST', `request id ${JSON.stringify(id)} is already in use by a request in flight`).toJsonRpc(),
        ),
      );
    if (modern.size >= MAX_MODERN_INFLIGHT)
      return void write(
        encodeError(
          id,
          new GatewayError(
            'MCPG_OVERLOADED',
            `${modern.size} modern requests are in flight (the limit is ${MAX_MODERN_INFLIGHT}); wait for some to finish`,
          ).toJsonRpc(),
        ),
      );
    let done = false;
    const request = gateway.serveModern(
      parsed.msg,
      era.envelope!,
      {
        during: write,
        final(line) {
          done = true;
          modern.delete(id);
          write(forModernAgent(line));
        },
      },
      { who, view: options.view },
    );
    if (!done) modern.set(id, request);
  };
  const stop = readLines(input, {
    // A cancellation is looked at whenever modern requests are in flight: it names its request by id only.
    line: (line) =>
      mayBeModern(line) || (modern.size > 0 && line.includes('notifications/cancelled')) ? modernLine(line) : session.handleLine(line),
    overflow: (length) => session.overflow(length),
    end: () => resolveEnded({ reason: 'stdin closed', failed: false }),
  });
  input.once('error', () => resolveEnded({ reason: 'stdin failed', failed: false }));
  return {
    ended,
    close() {
      stop();
      for (const request of [...modern.values()]) request.close();
      modern.clear();
      session.close();
      flush();
    },
  };
}
