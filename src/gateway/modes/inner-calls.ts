// A session's inner calls: the tools/calls code-mode programs make as the session's agent. Each is
// sent into the session as if the agent had sent it, under an id of mcpgate's own
// (`mcpgate-run-<run>-<n>`), so it takes exactly the path of a direct call — router, rules, pins, the
// gate, views, rewriting and sanitizing, metrics, audit. The session writes to the channel this
// class puts between it and the agent's: what is about an inner call comes here instead of the
// agent — its answer resolves the program's call; the gate's "waiting for approval" progress pauses
// the run's clock — while what a server asks the agent during the call (elicitation, sampling, roots)
// and the approval page offered to it go on to the agent as part of the run_code request.

import { GatewayError } from '../../errors.js';
import { parseMessage, type RequestId } from '../../wire/jsonrpc.js';
import type { AgentChannel } from '../session/agent-channel.js';
import type { InnerAnswer, InnerToolCall } from './session-mode.js';

/** The id prefix of inner calls (never the agent's: the run id in it is random). */
const INNER_ID = 'mcpgate-run-';
/** How the gate's progress notification of a call held for approval begins (gated-calls.ts). */
const WAITING_FOR_APPROVAL = 'waiting for an admin';

interface Pending {
  readonly run: string;
  readonly about: RequestId;
  readonly waiting: (pause: boolean) => void;
  paused: boolean;
  settle(answer: InnerAnswer): void;
}

/** What the inner calls need of their session. */
interface InnerHost {
  /** Sends the inner call `id` with `params` down the session's path for an agent's tools/call. */
  send(id: string, params: Record<string, unknown>): void;
  /** Cancels the inner call `id` as the agent's `notifications/cancelled` would. */
  cancel(id: string, reason: string): void;
  /** Puts the trace context of the agent's request `about` (tracing on) in `meta`, so the inner call's span is its child. */
  traceContext(about: RequestId, meta: Record<string, unknown>): void;
}

export class InnerCalls {
  private readonly pending = new Map<RequestId, Pending>();
  private next = 1;
  /** The channel the session writes to. */
  readonly channel: AgentChannel;

  constructor(
    agent: AgentChannel,
    private readonly host: InnerHost,
  ) {
    const pending = this.pending;
    const inner = (about: RequestId | undefined): Pending | undefined =>
      about === undefined || typeof about !== 'string' || !about.startsWith(INNER_ID) ? undefined : pending.get(about);
    this.channel = {
      ...(agent.era !== undefined && { era: agent.era }),
      send: (line, about, final) => {
        const call = inner(about);
        if (call === undefined) return agent.send(line, about, final);
        if (final === true) {
          pending.delete(about!);
          call.settle(answerOf(line));
          return true;
        }
        return this.during(call, line, agent);
      },
      ...(agent.sendParts !== undefined && { sendParts: agent.sendParts.bind(agent) }),
      pause: (about, retryMs, resume) => {
        // An inner call's server asks to be polled: poll it after the wait it asked for.
        if (inner(about) !== undefined) return void setTimeout(resume, retryMs).unref();
        agent.pause?.(about, retryMs, resume);
      },
      rateLimited: (about, data) => {
        if (inner(about) === undefined) agent.rateLimited?.(about, data);
      },
      closed: () => agent.closed?.(),
    };
  }

  /** The run an inner call in flight was made from (undefined: `id` is not an inner call's). */
  runOf(id: RequestId): string | undefined {
    return typeof id === 'string' && id.startsWith(INNER_ID) ? this.pending.get(id)?.run : undefined;
  }

  /** Makes one inner call; resolves with its answer (never rejects). */
  call(call: InnerToolCall): Promise<InnerAnswer> {
    const id = `${INNER_ID}${call.run}-${this.next++}`;
    return new Promise<InnerAnswer>((resolve) => {
      if (call.signal.aborted) return resolve(cancelled());
      const onAbort = (): void => {
        const entry = this.pending.get(id);
        if (entry === undefined) return;
        this.pending.delete(id);
        if (entry.paused) call.waiting(false);
        this.host.cancel(id, 'the code run was cancelled');
        resolve(cancelled());
      };
      this.pending.set(id, {
        run: call.run,
        about: call.about,
        waiting: (pause) => call.waiting(pause),
        paused: false,
        settle: (answer) => {
          call.signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
      call.signal.addEventListener('abort', onAbort, { once: true });
      const meta: Record<string, unknown> = { progressToken: id };
      this.host.traceContext(call.about, meta);
      const params: Record<string, unknown> = { name: call.name, _meta: meta };
      if (call.arguments !== undefined) params.arguments = call.arguments;
      this.host.send(id, params);
    });
  }

  /** Something sent while an inner call runs: the gate's approval wait pauses the run's clock; a question goes to the agent. */
  private during(call: Pending, line: string, agent: AgentChannel): boolean | void {
    const parsed = parseMessage(line);
    if (parsed.kind === 'notification') {
      const params = parsed.msg.params;
      if (parsed.msg.method === 'notifications/progress') {
        // The call's own progress (the server's, or the gate's approval wait): the run reports per finished call instead.
        const message = params?.message;
        if (!call.paused && typeof message === 'string' && message.startsWith(WAITING_FOR_APPROVAL)) {
          call.paused = true;
          call.waiting(true);
        }
        return true;
      }
      return agent.send(line, call.about, false);
    }
    // A server's question to the agent, or the approval page offered by URL elicitation: part of run_code.
    return agent.send(line, call.about, false);
  }
}

function cancelled(): InnerAnswer {
  return { error: new GatewayError('MCPG_CODE_CANCELLED', 'the code run was cancelled; the call was cancelled too').toJsonRpc() };
}

/** The session's final answer to an inner call, as the program gets it. */
function answerOf(line: string): InnerAnswer {
  const parsed = parseMessage(line);
  if (parsed.kind === 'response') {
    const res = parsed.msg;
    if ('error' in res) return { error: res.error };
    if (typeof res.result === 'object' && res.result !== null) return { result: res.result };
  }
  return { error: new GatewayError('MCPG_INTERNAL', 'the inner call was answered with something that is not a result').toJsonRpc() };
}
