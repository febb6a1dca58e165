// Modern (2026-07-28) agents: each request stands alone. It carries its protocol version and the
// agent's capabilities in `_meta` (the envelope), and there is no session. mcpgate serves one the
// same way it serves a legacy session's request, through an agent session of its own that lives as
// long as the request: the same router, rules, pins, progress, audit and metrics, so identity and
// rules apply per request exactly as per session. What differs is only at the edges (server/discover,
// subscriptions/listen, result types and cache hints, the envelope, a server's request to the agent,
// the request's end): src/gateway/README.md, "Modern agents".

import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import { GATEWAY_INFO } from '../../version.js';
import { encodeError, encodeNotification, type JsonRpcRequest, type RequestId } from '../../wire/jsonrpc.js';
import {
  MODERN_PROTOCOL_VERSIONS,
  SERVER_INFO_KEY,
  SUBSCRIPTION_ID_KEY,
  completeResult,
  stripEnvelope,
  type Envelope,
} from '../../wire/era.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../wire/protocol.js';
import type { AgentChannel } from '../session/agent-channel.js';
import type { AgentSession } from '../session/session.js';
import type { RequestStateSealer } from './request-state.js';

/** Where one modern request's messages go (its HTTP response stream, or stdout). */
export interface ModernSink {
  /** A message sent while the request runs (progress, logs, listen notifications); false if it cannot go. */
  during(line: string): boolean;
  /** The request's answer: the request is over. */
  final(line: string): void;
}

/** What serving a modern request uses of the gateway. */
interface ModernParts {
  /** The agent the request speaks for (its token, or the configured identity). */
  agent: string;
  /** Calls waiting for their agents' answers (input required), by handle; shared by the whole gateway. */
  waiting: Map<string, ModernCall>;
  /** Seals and opens `requestState`. */
  requestStates: RequestStateSealer;
  /** Opens an agent session for one request (registered like any other, closed when it ends). */
  open(channel: AgentChannel): AgentSession;
  /** True when every agent is shown the same lists (no rules): cache hints may then be public. */
  sameForAll(): boolean;
  /** The ready servers' instructions (and the capability directory, for an agent that gets it), for `server/discover`. */
  instructions(): string | undefined;
  /** Undefined once the catalog is listable; before, what `server/discover` waits for (bounded), as initialize does. */
  listed(): Promise<void> | undefined;
  /** What mcpgate declares (the servers' extensions merged in), for `server/discover`. */
  capabilities(): Record<string, unknown>;
}

/** One modern request in flight, as its front sees it. */
export interface ModernRequest {
  /** The agent went away: the request's calls are cancelled on the servers; no answer is sent. Idempotent. */
  cancel(): void;
  /** mcpgate ends the request (shutdown): a call is answered MCPG_SHUTTING_DOWN, a listen stream ends gracefully. */
  close(): void;
}

/**
 * How long agents may reuse a list or a read: never, by default. mcpgate's catalog changes whenever
 * a server reconnects, a tool is approved or the rules reload; agents learn of it on a listen stream.
 */
const CACHE_TTL_MS = 0;

const CACHEABLE = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

/** Methods of the 2025 era that the modern one removed: a modern request naming one is refused. */
const LEGACY_ONLY = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

const DONE: ModernRequest = { cancel() {}, close() {} };

export function serveModern(parts: ModernParts, msg: JsonRpcRequest, envelope: Envelope, sink: ModernSink): ModernRequest {
  const id = msg.id;
  if (LEGACY_ONLY.has(msg.method)) {
    sink.final(
      encodeError(
        id,
        new GatewayError(
          'MCPG_METHOD_NOT_FOUND',
          `method not found: ${msg.method} (not part of protocol revision ${envelope.protocolVersion})`,
        ).toJsonRpc(),
      ),
    );
    return DONE;
  }
  if (msg.method === 'server/discover') {
    const answer = (): void =>
      sink.final(completeResult(JSON.stringify({ jsonrpc: '2.0', id, result: discoverResult(parts) }), id, hints(parts, msg.method)));
    const waiting = parts.listed();
    if (waiting === undefined) {
      answer();
      return DONE;
    }
    // At start-up, the servers listed by then give their instructions (a cancelled request is not answered).
    let over = false;
    const once = (): void => {
      if (over) return;
      over = true;
      answer();
    };
    void waiting.then(once);
    return { cancel: () => void (over = true), close: once };
  }
  stripEnvelope(msg.params);
  if (msg.method === 'subscriptions/listen') return listen(parts, msg, envelope, sink);
  const params = msg.params;
  if (params !== undefined && params.requestState !== undefined) {
    // A retry of a call waiting in mcpgate (only mcpgate's own requestState reaches an agent).
    const { requestState, inputResponses } = params;
    delete params.requestState;
    delete params.inputResponses;
    return resume(parts, msg, { requestState, inputResponses }, sink);
  }
  // inputResponses without a requestState go to a modern server as they came (it may use them, as it
  // would directly); a 2025-era server never sees them (server-session.ts).
  const call = new ModernCall(parts, msg, sink, hints(parts, msg.method));
  call.start(envelope);
  return call;
}

/**
 * A retry carrying `requestState` (and the agent's `inputResponses`): the answers go to the server
 * that asked, and the call, still running on that server session, goes on under the retry's id.
 */
function resume(
  parts: ModernParts,
  msg: JsonRpcRequest,
  retry: { readonly requestState: unknown; readonly inputResponses: unknown },
  sink: ModernSink,
): ModernRequest {
  const { requestState, inputResponses } = retry;
  const refuse = (
    message: string,
    code: 'MCPG_REQUEST_STATE_INVALID' | 'MCPG_INVALID_PARAMS' = 'MCPG_REQUEST_STATE_INVALID',
  ): ModernRequest => {
    sink.final(encodeError(msg.id, new GatewayError(code, message).toJsonRpc()));
    return DONE;
  };
  if (typeof requestState !== 'string') return refuse(`${msg.method} params.requestState must be a string`, 'MCPG_INVALID_PARAMS');
  if (inputResponses !== undefined && (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))) {
    return refuse(`${msg.method} params.inputResponses must be an object`, 'MCPG_INVALID_PARAMS');
  }
  const opened = parts.requestStates.open(parts.agent, requestState);
  if (typeof opened === 'string') return refuse(opened);
  const call = parts.waiting.get(opened.handle);
  if (call === undefined || call.agent !== parts.agent)
    return refuse(
      'requestState names no call waiting for input: it was used already, or the call ended or expired; send the request again without it',
    );
  if (call.method !== msg.method || call.target !== targetOf(msg))
    return refuse(`a retry must repeat the request it answers (${call.method} ${call.target ?? ''})`);
  call.resume(sink, msg.id, (inputResponses ?? {}) as Record<string, unknown>);
  return call;
}

/** The name or URI a request is about (a retry must name the same). */
function targetOf(msg: JsonRpcRequest): string | undefined {
  const value = msg.params?.name ?? msg.params?.uri;
  return typeof value === 'string' ? value : undefined;
}

/** Times one call is sent again after the URL elicitations its server required. */
const MAX_URL_ROUNDS = 3;

/**
 * The URL elicitations of a -32042 error answer (`data.elicitations`), as 2026-07-28 input requests
 * (URL mode; that revision has no `elicitationId`); undefined for any other answer.
 */
function urlElicitationsOf(line: string): Record<string, unknown>[] | undefined {
  if (!line.includes('-32042')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  const error = (parsed as { error?: { code?: unknown; data?: { elicitations?: unknown } } }).error;
  const elicitations = error?.code === -32042 ? error.data?.elicitations : undefined;
  if (!Array.isArray(elicitations) || elicitations.length === 0 || elicitations.length > MAX_QUESTIONS) return undefined;
  const requests: Record<string, unknown>[] = [];
  for (const e of elicitations as unknown[]) {
    const { url, message } = (typeof e === 'object' && e !== null ? e : {}) as { url?: unknown; message?: unknown };
    if (typeof url !== 'string' || typeof message !== 'string') return undefined;
    requests.push({ mode: 'url', message, url });
  }
  return requests;
}

/** Server→agent requests a modern agent is asked in an input-required result. */
const INPUT_METHODS = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list']);
/** Questions one call may have waiting for the agent at once. */
const MAX_QUESTIONS = 16;
/** How long a call waits for the agent's retry with its answers; then it is cancelled on the server. */
const INPUT_WAIT_MS = 5 * 60_000;
/** Calls that may wait for their agents' answers at once, gateway-wide. */
const MAX_WAITING = 10_000;

/**
 * One modern request's call: the channel of its agent session. Its answer goes to the request's
 * stream. A 2025-era server's question during it (sampling, elicitation, roots) ends the request
 * with an input-required result instead: the call keeps running on its server session, waiting in
 * `waiting` under a random handle that only the sealed `requestState` names, until the agent's
 * retry brings the answers (`resume`) — then the retry's stream carries the rest of the call.
 */
export class ModernCall implements AgentChannel, ModernRequest {
  readonly era = 'modern';
  session!: AgentSession;
  readonly agent: string;
  readonly method: string;
  readonly target: string | undefined;
  /** The agent's id of the request that now carries the call (the retry's, once resumed). */
  private id: RequestId;
  private readonly firstId: RequestId;
  private sink: ModernSink | undefined;
  private over = false;
  /** The server's questions relayed to the agent and not answered: inputRequests key → the question. */
  private readonly asked = new Map<string, { id: number; method: string; params: unknown }>();
  private handle: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The agent's request and envelope, sent again after URL elicitations the server required (`redo`). */
  private readonly request: JsonRpcRequest;
  private envelope: Envelope | undefined;
  /** The call waits for the agent to complete URL elicitations, then is sent again; how often it has. */
  private redo = false;
  private redone = 0;

  constructor(
    private readonly parts: ModernParts,
    msg: JsonRpcRequest,
    sink: ModernSink,
    private readonly extra: Record<string, unknown>,
  ) {
    this.agent = parts.agent;
    this.request = msg;
    this.method = msg.method;
    this.target = targetOf(msg);
    this.id = this.firstId = msg.id;
    this.sink = sink;
  }

  /** Sends the request through an agent session of its own (again, after URL elicitations). */
  start(envelope: Envelope): void {
    this.envelope = envelope;
    this.session = this.parts.open(this);
    this.session.adoptEnvelope(envelope);
    this.session.handleMessage({ kind: 'request', msg: this.request });
  }

  send(line: string, about?: RequestId, final?: boolean): boolean {
    if (this.over) return false;
    if (final === true && about === this.firstId) {
      this.finish(line);
      return true;
    }
    if (line.startsWith('{"jsonrpc":"2.0","id":')) {
      // A server's question to the agent (agent-requests.ts encoded it): asked in an input-required result.
      const question = JSON.parse(line) as { id: number; method: string; params?: unknown };
      if (!INPUT_METHODS.has(question.method) || this.asked.size >= MAX_QUESTIONS) return false;
      // Under the server's own key when a modern server asked (as the agent would see it directly).
      const key = this.session.inputKey(question.id) ?? `${question.method.split('/')[0]!}-${question.id}`;
      if (this.asked.has(key)) return false;
      this.asked.set(key, { id: question.id, method: question.method, params: question.params ?? {} });
      // Questions sent in one turn go out together.
      if (this.sink !== undefined) queueMicrotask(() => this.askAgent());
      return true;
    }
    return this.sink?.during(line) ?? false;
  }

  /** Ends the request with an input-required result; the call waits for the agent's retry. */
  private askAgent(): void {
    const sink = this.sink;
    if (this.over || sink === undefined || this.asked.size === 0) return;
    if (this.parts.waiting.size >= MAX_WAITING) {
      this.over = true;
      sink.final(
        encodeError(
          this.id,
          new GatewayError(
            'MCPG_OVERLOADED',
            `${this.parts.waiting.size} calls are waiting for their agents' input (the limit is ${MAX_WAITING}); the call was cancelled`,
          ).toJsonRpc(),
        ),
      );
      this.session.close();
      return;
    }
    this.sink = undefined;
    this.handle = randomBytes(18).toString('base64url');
    this.parts.waiting.set(this.handle, this);
    const expires = Date.now() + INPUT_WAIT_MS;
    this.timer = setTimeout(() => this.expire(), INPUT_WAIT_MS).unref();
    const inputRequests: Record<string, unknown> = {};
    for (const [key, { method, params }] of this.asked) inputRequests[key] = { method, params };
    const requestState = this.parts.requestStates.seal(this.agent, { handle: this.handle, expires });
    sink.final(JSON.stringify({ jsonrpc: '2.0', id: this.id, result: { resultType: 'input_required', inputRequests, requestState } }));
  }

  /** The agent's retry: its answers go to the server; its stream carries the rest of the call. */
  resume(sink: ModernSink, id: RequestId, inputResponses: Record<string, unknown>): void {
    this.unpark();
    this.sink = sink;
    this.id = id;
    if (this.redo) return this.afterUrls(inputResponses);
    for (const [key, result] of Object.entries(inputResponses)) {
      const question = this.asked.get(key);
      if (question === undefined) continue;
      this.asked.delete(key);
      this.session.handleMessage({ kind: 'response', msg: { jsonrpc: '2.0', id: question.id, result: result as Record<string, unknown> } });
    }
    // What is still unanswered (or was asked meanwhile) is asked again at once.
    if (this.asked.size > 0) this.askAgent();
  }

  private finish(line: string, urlsAsked = false): void {
    const urls =
      !urlsAsked && this.redone < MAX_URL_ROUNDS && this.sink !== undefined && this.takesUrls() ? urlElicitationsOf(line) : undefined;
    if (urls !== undefined) return this.askUrls(urls, line);
    this.over = true;
    this.unpark();
    const sink = this.sink;
    this.sink = undefined;
    queueMicrotask(() => this.session.close());
    // Ended while waiting for the agent (the server gave up): the agent's retry will find nothing.
    if (sink === undefined) return;
    const done = completeResult(line, this.firstId, this.extra);
    if (this.id === this.firstId) return sink.final(done);
    const reply = JSON.parse(done) as { id: RequestId };
    reply.id = this.id;
    sink.final(JSON.stringify(reply));
  }

  /**
   * A 2025-era server answered URL elicitation required (-32042, which the 2026-07-28 revision does
   * not have): as that revision asks for it, an input-required result whose input requests are the
   * URL elicitations; once the agent's retry says it completed them, the request is sent again.
   */
  private askUrls(urls: Record<string, unknown>[], line: string): void {
    queueMicrotask(() => this.session.close());
    this.redo = true;
    this.required = line;
    this.asked.clear();
    urls.forEach((params, i) => this.asked.set(`url-${i + 1}`, { id: -1, method: 'elicitation/create', params }));
    this.askAgent();
  }

  /** Whether the agent declared URL-mode elicitation (`elicitation.url`): only it is asked to open URLs. */
  private takesUrls(): boolean {
    const elicitation = this.envelope?.capabilities.elicitation;
    return typeof elicitation === 'object' && elicitation !== null && typeof (elicitation as Record<string, unknown>).url === 'object';
  }

  /** The answer to send when the agent did not complete the URL elicitations: the server's own. */
  private required: string | undefined;

  /** The agent's retry after URL elicitations: every one accepted sends the request again; else the server's answer. */
  private afterUrls(inputResponses: Record<string, unknown>): void {
    const accepted = [...this.asked.keys()].every((key) => {
      const answer = inputResponses[key];
      return typeof answer === 'object' && answer !== null && (answer as { action?: unknown }).action === 'accept';
    });
    this.redo = false;
    this.asked.clear();
    if (!accepted || this.envelope === undefined) return this.finish(this.required!, true);
    this.redone += 1;
    this.start(this.envelope);
  }

  private unpark(): void {
    if (this.handle !== undefined) this.parts.waiting.delete(this.handle);
    this.handle = undefined;
    clearTimeout(this.timer);
  }

  /** Nobody came back for it: the call is cancelled on the server, and its questions answered with an error. */
  private expire(): void {
    this.unpark();
    this.over = true;
    this.session.close();
  }

  cancel(): void {
    if (this.over) return;
    this.over = true;
    this.unpark();
    this.session.close();
  }

  close(): void {
    this.session.close();
  }
}

function hints(parts: ModernParts, method: string): Record<string, unknown> {
  if (!CACHEABLE.has(method)) return {};
  const shared = method !== 'resources/read' && parts.sameForAll();
  return { ttlMs: CACHE_TTL_MS, cacheScope: shared ? 'public' : 'private' };
}

function discoverResult(parts: ModernParts): Record<string, unknown> {
  const instructions = parts.instructions();
  return {
    supportedVersions: [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS],
    capabilities: parts.capabilities(),
    ...(instructions !== undefined && { instructions }),
    _meta: { [SERVER_INFO_KEY]: GATEWAY_INFO },
  };
}

/** The filter a listen request asks for, or why it is not one. */
interface Filter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

const MAX_RESOURCE_SUBSCRIPTIONS = 1000;

function filterOf(params: Record<string, unknown> | undefined): Filter | string {
  const raw = params?.notifications;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'subscriptions/listen needs params.notifications (an object)';
  const r = raw as Record<string, unknown>;
  const filter: Filter = {};
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    if (r[key] === undefined) continue;
    if (typeof r[key] !== 'boolean') return `params.notifications.${key} must be a boolean`;
    filter[key] = r[key];
  }
  const uris = r.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string'))
      return 'params.notifications.resourceSubscriptions must be an array of URIs';
    if (uris.length > MAX_RESOURCE_SUBSCRIPTIONS)
      return `params.notifications.resourceSubscriptions names ${uris.length} URIs (the limit is ${MAX_RESOURCE_SUBSCRIPTIONS})`;
    filter.resourceSubscriptions = [...new Set(uris)];
  }
  return filter;
}

const LIST_CHANGED_FILTER: Readonly<Record<string, keyof Filter>> = {
  'notifications/tools/list_changed': 'toolsListChanged',
  'notifications/prompts/list_changed': 'promptsListChanged',
  'notifications/resources/list_changed': 'resourcesListChanged',
};

/**
 * `subscriptions/listen`: an agent session that stays open, told of list changes in the agent's own
 * view (the same announcement legacy sessions get) and of updates to the resources it names (each
 * subscribed under the rules, as `resources/subscribe` is). The acknowledgement names what is
 * honoured: a resource the agent may not see, or whose server cannot subscribe, is left out. Every
 * notification carries the listen request's id; the session ends when the agent ends the stream, or
 * with the empty result when mcpgate shuts down.
 */
function listen(parts: ModernParts, msg: JsonRpcRequest, envelope: Envelope, sink: ModernSink): ModernRequest {
  const id = msg.id;
  const filter = filterOf(msg.params);
  if (typeof filter === 'string') {
    sink.final(encodeError(id, new GatewayError('MCPG_INVALID_PARAMS', filter).toJsonRpc()));
    return DONE;
  }
  let over = false;
  let acknowledged = false;
  const stamp = { [SUBSCRIPTION_ID_KEY]: id };
  const session = parts.open({
    send(line, about) {
      if (over || !acknowledged || about !== undefined) return false;
      if (line.startsWith('{"jsonrpc":"2.0","id":')) return false; // a server's request: not on a listen stream
      const note = JSON.parse(line) as { method: string; params?: Record<string, unknown> };
      const wanted = LIST_CHANGED_FILTER[note.method];
      if (wanted !== undefined ? filter[wanted] !== true : note.method !== 'notifications/resources/updated') return false;
      note.params = { ...note.params, _meta: { ...(note.params?._meta as Record<string, unknown> | undefined), ...stamp } };
      return sink.during(encodeNotification(note.method, note.params));
    },
    closed() {
      if (over) return;
      over = true;
      sink.final(JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: stamp } }));
    },
  });
  session.adoptEnvelope({ ...envelope, logLevel: undefined });
  void (async () => {
    const honoured: Filter = {};
    for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const)
      if (filter[key] !== undefined) honoured[key] = filter[key];
    if (filter.resourceSubscriptions !== undefined) {
      honoured.resourceSubscriptions = [];
      for (const uri of filter.resourceSubscriptions) {
        try {
          await session.subscribeUri(true, uri);
          honoured.resourceSubscriptions.push(uri);
        } catch {
          // Not honoured: the acknowledgement leaves it out (a denial reveals no more than "unknown").
        }
      }
    }
    if (over) return;
    acknowledged = true;
    session.listenForChanges();
    sink.during(encodeNotification('notifications/subscriptions/acknowledged', { notifications: honoured, _meta: stamp }));
  })();
  return {
    cancel() {
      over = true;
      session.close();
    },
    close: () => session.close(),
  };
}
