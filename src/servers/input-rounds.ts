// A modern (2026-07-28) server's input-required answers to agents' calls. The call stays pending:
// each input request goes up to the agent as a server→client request with a synthetic string id
// (INPUT_ID…), related to the call; the answers come back through the session's respond/respondError
// (never written to the server), and the call is re-sent as a new request (a new id: the server
// answered the last one) with `inputResponses` and the server's `requestState`; at most
// MAX_INPUT_ROUNDS rounds. The server session owns one
// (server-session.ts) and gives it `InputHost`.

import { GatewayError, type JsonRpcErrorObject } from '../errors.js';
import type { JsonRpcRequest } from '../wire/jsonrpc.js';
import type { ModernRoute } from './transport.js';
import { MAX_INPUT_ROUNDS, mcpName, readInputRequired } from './era.js';
import type { InputRound, Pending } from './session-types.js';

/** The prefix of the ids of input requests relayed to agents (a server's own ids never reach respond with it). */
export const INPUT_ID = 'mcpgate-input-';

/**
 * The server's own key of an input request relayed to an agent: a modern agent gets its input
 * requests under the keys the server chose (a 2025-era agent gets ordinary requests, without one).
 */
export const INPUT_KEY: unique symbol = Symbol('mcpgate.inputKey');
export interface WithInputKey {
  [INPUT_KEY]?: string;
}

/** What the input rounds need of their session. */
export interface InputHost {
  readonly name: string;
  /** The pending call `id`, if any. */
  entry(id: number): Pending | undefined;
  /** Takes call `id` out of the pending table. */
  settle(id: number): Pending | undefined;
  /** Relays an input request to the agent, as a server→client request related to call `callId`. */
  ask(msg: JsonRpcRequest, callId: number): void;
  /** A new id on the wire for call `callId`'s next round (answers under it are the call's). */
  renumber(callId: number): number;
  write(line: string, id: number, route: ModernRoute): boolean;
  unavailable(): GatewayError;
}

export class InputRounds {
  /** The synthetic ids of input requests relayed to agents → the call and the key they answer. */
  private readonly inputs = new Map<string, { callId: number; round: InputRound; key: string }>();

  constructor(private readonly host: InputHost) {}

  /**
   * A modern server answered an agent's call with an input-required result: its input requests go to
   * the agent as server→client requests related to the call (synthetic string ids, never sent to the
   * server), and the call stays pending until every one is answered, then is retried. True: handled.
   */
  required(id: number, result: Record<string, unknown>): boolean {
    const entry = this.host.entry(id);
    if (entry === undefined || entry.request === undefined) return false;
    const read = readInputRequired(result);
    if (read === undefined) return false;
    if (typeof read === 'string') {
      this.host.settle(id);
      entry.sink.fail(new GatewayError('MCPG_INPUT_FAILED', `server "${this.host.name}" sent ${read}; the call was ended`, { server: this.host.name }));
      return true;
    }
    entry.rounds = (entry.rounds ?? 0) + 1;
    if (entry.rounds > MAX_INPUT_ROUNDS) {
      this.host.settle(id);
      entry.sink.fail(new GatewayError('MCPG_INPUT_ROUNDS_EXCEEDED', `server "${this.host.name}" still asked for input after ${MAX_INPUT_ROUNDS} rounds of ${entry.method}; the call was ended`, { server: this.host.name, detail: { rounds: MAX_INPUT_ROUNDS } }));
      return true;
    }
    // Waiting for a person (elicitation) is the agent's time, not the server's: the timeout restarts.
    entry.deadline = Math.min(performance.now() + entry.timeoutMs, entry.ceiling);
    const round: InputRound = { answers: {}, keys: new Map(), requestState: read.requestState };
    entry.input = round;
    if (read.requests.length === 0) {
      this.retry(id, entry, round);
      return true;
    }
    read.requests.forEach(([key], n) => {
      const sid = `${INPUT_ID}${id}-${entry.rounds}-${n}`;
      round.keys.set(sid, key);
      this.inputs.set(sid, { callId: id, round, key });
    });
    let n = 0;
    for (const [key, method, params] of read.requests) {
      const sid = `${INPUT_ID}${id}-${entry.rounds}-${n++}`;
      const ask: JsonRpcRequest & WithInputKey = { jsonrpc: '2.0', id: sid, method, params: params ?? {}, [INPUT_KEY]: key };
      if (this.inputs.has(sid)) this.host.ask(ask, id);
    }
    return true;
  }

  /**
   * The agent answered one input request (or refused it: the call ends, MCPG_INPUT_FAILED). One that
   * is no longer waited for (late, or its call ended) is dropped.
   */
  answered(sid: string, answer: { result: unknown } | { error: JsonRpcErrorObject }): void {
    const input = this.inputs.get(sid);
    if (input === undefined) return;
    this.inputs.delete(sid);
    const entry = this.host.entry(input.callId);
    if (entry === undefined || entry.input !== input.round) return; // the call ended meanwhile
    if ('error' in answer) {
      this.host.settle(input.callId);
      entry.sink.fail(new GatewayError('MCPG_INPUT_FAILED', `server "${this.host.name}" needs input the agent did not give (${answer.error.message}); the call was ended`, { server: this.host.name, detail: { agentError: answer.error } }));
      return;
    }
    input.round.answers[input.key] = answer.result;
    input.round.keys.delete(sid);
    if (input.round.keys.size === 0) this.retry(input.callId, entry, input.round);
  }

  /** A call with a round waiting ended: its input requests are no longer waited for. */
  forget(round: InputRound): void {
    for (const sid of round.keys.keys()) this.inputs.delete(sid);
  }

  /** The session ended: nothing is waited for. */
  clear(): void {
    this.inputs.clear();
  }

  /**
   * The call again, as a new request under a new id (the server answered the previous one; a server
   * may tell rounds apart by id), with the answers and the server's state.
   */
  private retry(id: number, entry: Pending, round: InputRound): void {
    entry.input = undefined;
    const request = entry.request!;
    request.id = this.host.renumber(id);
    const { inputResponses: _answers, requestState: _state, ...params } = request.params ?? {};
    request.params = { ...params, inputResponses: round.answers, ...(round.requestState !== undefined && { requestState: round.requestState }) };
    let line: string;
    try {
      line = JSON.stringify(request);
    } catch (err) {
      this.host.settle(id);
      entry.sink.fail(new GatewayError('MCPG_INPUT_FAILED', `the agent's input for server "${this.host.name}" could not be encoded: ${err instanceof Error ? err.message : String(err)}`, { server: this.host.name }));
      return;
    }
    if (!this.host.write(line, request.id, { method: request.method, name: mcpName(request.method, request.params), params: entry.paramHeaders })) {
      this.host.settle(id)?.sink.fail(this.host.unavailable());
    }
  }
}
