// A modern server's input-required answers to an agent's call, as rounds of input requests to the
// agent: each input request goes up as a server→client request with a synthetic string id (INPUT_ID…)
// related to the call, the agent's answers come back by those ids (never written to the server), and
// when a round is complete the call is sent again as a new request with `inputResponses` and the
// server's `requestState`; at most MAX_INPUT_ROUNDS rounds. This file keeps which input requests are
// waited for and words each step; the session that owns the call (server-session.ts) keeps it among
// its sent requests meanwhile, sends the requests and the retried call, and settles it.

import { GatewayError, type JsonRpcErrorObject } from '../errors.js';
import type { JsonRpcRequest, RequestId } from '../wire/jsonrpc.js';
import { MAX_INPUT_ROUNDS, readInputRequired } from './modern-protocol.js';
import type { InputRound, SentRequest } from './session-types.js';

/** The prefix of the ids of input requests relayed to agents (a server's own ids never reach respond with it). */
const INPUT_ID = 'mcpgate-input-';

/**
 * The server's own key of an input request relayed to an agent: a modern agent gets its input
 * requests under the keys the server chose (a 2025-era agent gets ordinary requests, without one).
 */
export const INPUT_KEY: unique symbol = Symbol('mcpgate.inputKey');
export interface WithInputKey {
  [INPUT_KEY]?: string;
}

/** One input request as it goes up to the agent. */
type InputRequest = JsonRpcRequest & WithInputKey & { readonly id: string };

/** What a call's input-required answer leads to. */
type InputStep =
  /** The call ends with this error (a malformed input request, too many rounds). */
  | { readonly end: GatewayError }
  /** These requests go to the agent (none: the call is sent again at once, `retry`). */
  | { readonly ask: readonly InputRequest[] };

/** An agent's answer to one input request: the round is complete (`retry` the call), or still waits. */
type InputAnswer = { readonly callId: number; readonly entry: SentRequest } & (
  { readonly end: GatewayError } | { readonly retry: boolean }
);

export class InputRounds {
  /** Input requests relayed to agents (synthetic ids) → the call and the key they answer. */
  private readonly waited = new Map<string, { callId: number; round: InputRound; key: string }>();

  constructor(private readonly server: string) {}

  /** Whether `id` is one of the synthetic ids of an input request (its answer is never the server's). */
  static owns(id: RequestId): id is string {
    return typeof id === 'string' && id.startsWith(INPUT_ID);
  }

  /**
   * A modern server answered call `callId` (sent as `entry`) with `result`: undefined when it is
   * no input-required result, else the next step. A new round restarts the call's timeout: waiting
   * for a person (elicitation) is the agent's time, not the server's.
   */
  begin(callId: number, entry: SentRequest, result: Record<string, unknown>): InputStep | undefined {
    const read = readInputRequired(result);
    if (read === undefined) return undefined;
    if (typeof read === 'string')
      return {
        end: new GatewayError('MCPG_INPUT_FAILED', `server "${this.server}" sent ${read}; the call was ended`, { server: this.server }),
      };
    entry.rounds = (entry.rounds ?? 0) + 1;
    if (entry.rounds > MAX_INPUT_ROUNDS)
      return {
        end: new GatewayError(
          'MCPG_INPUT_ROUNDS_EXCEEDED',
          `server "${this.server}" still asked for input after ${MAX_INPUT_ROUNDS} rounds of ${entry.method}; the call was ended`,
          { server: this.server, detail: { rounds: MAX_INPUT_ROUNDS } },
        ),
      };
    entry.deadline = Math.min(performance.now() + entry.timeoutMs, entry.ceiling);
    const round: InputRound = { answers: {}, keys: new Map(), requestState: read.requestState };
    entry.input = round;
    const ask = read.requests.map(([key, method, params], n): InputRequest => {
      const sid = `${INPUT_ID}${callId}-${entry.rounds}-${n}`;
      round.keys.set(sid, key);
      this.waited.set(sid, { callId, round, key });
      return { jsonrpc: '2.0', id: sid, method, params: params ?? {}, [INPUT_KEY]: key };
    });
    return { ask };
  }

  /** Whether input request `sid` is still waited for (its call may have ended while an earlier one was asked). */
  waits(sid: string): boolean {
    return this.waited.has(sid);
  }

  /**
   * The agent answered input request `sid` (or refused it: the call ends, MCPG_INPUT_FAILED). One that
   * is no longer waited for (late, or its call ended: `sent` has no such round) is dropped (undefined).
   */
  answer(
    sid: string,
    answer: { result: unknown } | { error: JsonRpcErrorObject },
    sent: { get(id: number): SentRequest | undefined },
  ): InputAnswer | undefined {
    const input = this.waited.get(sid);
    if (input === undefined) return undefined;
    this.waited.delete(sid);
    const entry = sent.get(input.callId);
    if (entry === undefined || entry.input !== input.round) return undefined; // the call ended meanwhile
    if ('error' in answer)
      return {
        callId: input.callId,
        entry,
        end: new GatewayError(
          'MCPG_INPUT_FAILED',
          `server "${this.server}" needs input the agent did not give (${answer.error.message}); the call was ended`,
          { server: this.server, detail: { agentError: answer.error } },
        ),
      };
    input.round.answers[input.key] = answer.result;
    input.round.keys.delete(sid);
    return { callId: input.callId, entry, retry: input.round.keys.size === 0 };
  }

  /**
   * The call's request for its next round under `wireId` (the server answered the previous one; a
   * server may tell rounds apart by id), with the answers and the server's state: its line, or why
   * it could not be encoded.
   */
  retry(entry: SentRequest, wireId: number): { line: string; request: JsonRpcRequest } | { end: GatewayError } {
    const round = entry.input;
    entry.input = undefined;
    const request = entry.request!;
    request.id = wireId;
    const { inputResponses: _answers, requestState: _state, ...params } = request.params ?? {};
    request.params = {
      ...params,
      inputResponses: round?.answers ?? {},
      ...(round?.requestState !== undefined && { requestState: round.requestState }),
    };
    try {
      return { line: JSON.stringify(request), request };
    } catch (err) {
      return {
        end: new GatewayError(
          'MCPG_INPUT_FAILED',
          `the agent's input for server "${this.server}" could not be encoded: ${err instanceof Error ? err.message : String(err)}`,
          { server: this.server },
        ),
      };
    }
  }

  /** The call ended: its round's input requests are no longer waited for. */
  forget(entry: SentRequest): void {
    if (entry.input !== undefined) for (const sid of entry.input.keys.keys()) this.waited.delete(sid);
  }

  /** The session ended: nothing is waited for. */
  clear(): void {
    this.waited.clear();
  }
}
