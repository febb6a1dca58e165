// A modern server's input-required answers to an agent's call, as rounds of input requests to the
// agent: each input request goes up as a server→client request with a synthetic string id
// (INPUT_ID…) related to the call, the agent's answers come back by those ids (never written to the
// server), and when a round is complete the call is sent again as a new request with
// `inputResponses` and the server's `requestState`; at most MAX_INPUT_ROUNDS rounds. This file keeps
// which input requests are waited for, words each step and takes it; the call stays among its
// session's sent requests (sent-requests.ts) meanwhile, and the session (server-session.ts) settles it.

import { GatewayError, type JsonRpcErrorObject } from '../errors.js';
import type { JsonRpcRequest, RequestId } from '../wire/jsonrpc.js';
import { MAX_INPUT_ROUNDS, readInputRequired } from './modern-protocol.js';
import type { InputRound, SentRequest } from './session-types.js';
import type { SentRequests } from './sent-requests.js';

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

/** What the rounds need of the server session whose calls they are. */
interface RoundsOwner {
  readonly server: string;
  readonly sent: SentRequests;
  /** A new id of the session's (a round goes out under its own). */
  nextId(): number;
  /** Ends call `id` (it leaves the sent requests); undefined when it had already ended. */
  settle(id: number): SentRequest | undefined;
  /** Writes a round's request to the server; false when it could not be written. */
  write(line: string, wireId: number, request: JsonRpcRequest, entry: SentRequest): boolean;
  /** Sends an input request up to the agent whose call `callId` is. */
  ask(request: JsonRpcRequest, callId: number): void;
  /** Why the call cannot go on (the transport is gone). */
  unavailable(): GatewayError;
}

export class InputRounds {
  /** Input requests relayed to agents (synthetic ids) → the call and the key they answer. */
  private readonly waited = new Map<string, { callId: number; round: InputRound; key: string }>();
  private readonly server: string;

  constructor(private readonly owner: RoundsOwner) {
    this.server = owner.server;
  }

  /** Whether `id` is one of the synthetic ids of an input request (its answer is never the server's). */
  static owns(id: RequestId): id is string {
    return typeof id === 'string' && id.startsWith(INPUT_ID);
  }

  /**
   * A modern server answered call `callId` with `result`: true when it asked for input (the round is
   * taken here: the call ends, its input requests go to the agent, or it is sent again at once).
   */
  required(callId: number, result: Record<string, unknown>): boolean {
    const entry = this.owner.sent.get(callId);
    if (entry === undefined || entry.request === undefined) return false;
    const step = this.begin(callId, entry, result);
    if (step === undefined) return false;
    if ('end' in step) {
      this.owner.settle(callId);
      entry.sink.fail(step.end);
    } else if (step.ask.length === 0) {
      this.again(callId, entry);
    } else {
      // An agent's answer may end the call at once: the requests after it are then not asked.
      for (const ask of step.ask) if (this.waited.has(ask.id)) this.owner.ask(ask, callId);
    }
    return true;
  }

  /** The agent answered input request `sid`: the call ends, waits for more answers, or is sent again. */
  answered(sid: string, answer: { result: unknown } | { error: JsonRpcErrorObject }): void {
    const next = this.answer(sid, answer);
    if (next === undefined) return;
    if ('end' in next) {
      this.owner.settle(next.callId);
      next.entry.sink.fail(next.end);
    } else if (next.retry) {
      this.again(next.callId, next.entry);
    }
  }

  /** The call again, as a new request under a new id, with the round's answers. */
  private again(callId: number, entry: SentRequest): void {
    const wireId = this.owner.nextId();
    this.owner.sent.renumber(callId, wireId);
    const next = this.retry(entry, wireId);
    if ('end' in next) {
      this.owner.settle(callId);
      entry.sink.fail(next.end);
      return;
    }
    if (!this.owner.write(next.line, wireId, next.request, entry)) this.owner.settle(callId)?.sink.fail(this.owner.unavailable());
  }

  /**
   * The step a modern server's answer `result` to call `callId` (sent as `entry`) leads to:
   * undefined when it is no input-required result. A new round restarts the call's timeout: waiting
   * for a person (elicitation) is the agent's time, not the server's.
   */
  private begin(callId: number, entry: SentRequest, result: Record<string, unknown>): InputStep | undefined {
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

  /**
   * The agent answered input request `sid` (or refused it: the call ends, MCPG_INPUT_FAILED). One that
   * is no longer waited for (late, or its call ended: it has no such round) is dropped (undefined).
   */
  private answer(sid: string, answer: { result: unknown } | { error: JsonRpcErrorObject }): InputAnswer | undefined {
    const input = this.waited.get(sid);
    if (input === undefined) return undefined;
    this.waited.delete(sid);
    const entry = this.owner.sent.get(input.callId);
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
  private retry(entry: SentRequest, wireId: number): { line: string; request: JsonRpcRequest } | { end: GatewayError } {
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
