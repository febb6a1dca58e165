// An agent's mode as its agent session meets it: what tools/list shows, which tool names the mode
// owns and how a call of one is answered, and which tools list a list change is compared against.
// One implementation per mode (aggregate-mode.ts, discovery-mode.ts, search-session.ts), each made
// once when the session opens; the session asks the one for the agent's mode now (a reload may
// change it) and never branches on the mode's name. A mode reaches its session only through
// `ModeHost`.

import type { Catalog } from '../../catalog/catalog.js';
import type { Claims } from '../../rules/decide.js';
import type { CompiledView } from '../../rules/views.js';
import type { JsonRpcErrorObject } from '../../errors.js';
import type { JsonRpcRequest, RequestId } from '../../wire/jsonrpc.js';
import type { SkillHit } from '../routing/skill-search.js';

/** A call of one of the mode's own tools, its params checked by the session. */
export interface ModeToolCall {
  readonly msg: JsonRpcRequest;
  readonly name: string;
  readonly params: Readonly<Record<string, unknown>>;
  /** Its arguments when they are an object; absent or not an object: `{}`. */
  readonly args: Readonly<Record<string, unknown>>;
}

/** One inner call of a code-mode run: a tools/call of the session's agent, made as a direct one is. */
export interface InnerToolCall {
  /** The tool's public name as the agent calls it (its curated view's, when the session is on one). */
  readonly name: string;
  readonly arguments: unknown;
  /** The run it is made from: named in its audit line, and the gate applies the rules' `code.approve`. */
  readonly run: string;
  /** The agent's run_code request: what the server asks during the call (elicitation, sampling) travels with it. */
  readonly about: RequestId;
  /** Aborted: the call is cancelled on its server, or withdrawn from the gate where it is held. */
  readonly signal: AbortSignal;
  /** The call is held at the gate for a person's decision, or no longer is: the run's clock excludes the wait. */
  waiting(pause: boolean): void;
}

/** What a call from inside the gateway comes to: the answer the agent would have got (its result rewritten and sanitized as for the agent), or the error. */
export type InnerAnswer = { readonly result: Record<string, unknown> } | { readonly error: JsonRpcErrorObject };

/** What a mode reads of its agent session and asks of it. */
export interface ModeHost {
  readonly agent: string;
  /** The claims of the agent's latest token (undefined: none). */
  claims(): Claims | undefined;
  /** False when the identity is only the default: then a discovery tool may name the agent. */
  readonly agentExplicit: boolean;
  /** Whether the session serves one modern request (it ends with the answer: nothing is remembered). */
  modern(): boolean;
  /** The session's own catalogs (undefined: none). */
  own(): readonly Catalog[] | undefined;
  /** Runs `handler` once the servers have settled (or the catalog is listable). */
  untilSettled(id: RequestId, handler: () => void, until?: 'settled' | 'listable'): void;
  sendResult(id: RequestId, result: unknown): void;
  sendEncodedResult(id: RequestId, resultJson: string): void;
  sendResultBytes(id: RequestId, result: readonly Buffer[]): void;
  sendError(id: RequestId, err: unknown): void;
  /** The tools list as the session shows it now (remembered as shown). */
  serveTools(): readonly Buffer[];
  /** The agent's tools list may have changed: announce it if it differs from what was shown. */
  toolsChanged(): void;
  /** The session's id (the audit trail's `session`). */
  readonly session: string;
  /** Sends the agent a notification, as part of its request `about`. */
  notify(method: string, params: unknown, about: RequestId): void;
  /** One inner call of a code-mode run, through the same path as the agent's own tools/call. */
  callInner(call: InnerToolCall): Promise<InnerAnswer>;
  /** The best `limit` skills for a search among those the agent may list (its rules, view and the pins). */
  findSkills(query: string, limit: number): readonly SkillHit[];
  /** The curated view the session is on, from the rules in force; undefined: none (the agent's whole view). */
  curatedView(): CompiledView | undefined;
  /** A new tools/call of `params` (a meta-tool's rewrite), made as `as.agent`. */
  callAs(msg: JsonRpcRequest, params: Record<string, unknown>, as: { agent: string; timeoutMs: number | undefined }): void;
}

export interface SessionMode {
  /** Answers tools/list. */
  listTools(msg: JsonRpcRequest): void;
  /** Whether `name` is one of the mode's own tools (search_tools, a meta-tool). */
  owns(name: string): boolean;
  /** Answers a call of one of the mode's own tools. */
  call(call: ModeToolCall): void;
  /** The tools list a list change is compared against; undefined: the agent's ordinary view. */
  shownTools(): readonly Buffer[] | undefined;
  /** The agent cancelled its request `id`: a mode's own call still running stops (true if there was one). */
  cancel?(id: RequestId, reason: string): boolean;
  /** The session ends: a mode's own calls still running stop, unanswered. */
  close?(): void;
}
