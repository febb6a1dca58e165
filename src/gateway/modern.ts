// Modern (2026-07-28) agents: each request stands alone. It carries its protocol version and the
// agent's capabilities in `_meta` (the envelope), and there is no session. mcpgate serves one the
// same way it serves a legacy session's request, through an agent session of its own that lives as
// long as the request: the same router, rules, pins, progress, audit and metrics, so identity and
// rules apply per request exactly as per session. What differs is only at the edges:
//
// - `server/discover` is answered here; `subscriptions/listen` keeps its session open, hearing list
//   changes (filtered by the agent's view) and resource updates, until the agent ends the stream.
// - results carry `resultType: "complete"`, and lists and reads their cache hints: `public` only
//   while every agent is shown the same lists (no rules), `private` otherwise.
// - the envelope's keys are taken off before a request goes to a (2025-era) server.
// - a server's request to the agent (sampling, elicitation, roots) cannot travel on a modern
//   request's stream: the server is refused at once (MCPG_AGENT_UNAVAILABLE), never left waiting.
// - the request ends with its answer, or when the front cancels it (the agent closed the stream,
//   or sent notifications/cancelled on stdio): its calls are cancelled on the servers.

import { GatewayError } from '../errors.js';
import { GATEWAY_INFO } from '../version.js';
import { encodeError, encodeNotification, type JsonRpcRequest } from '../wire/jsonrpc.js';
import {
  MODERN_PROTOCOL_VERSIONS, SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY, completeResult, stripEnvelope, type Envelope,
} from '../wire/era.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../wire/protocol.js';
import { GATEWAY_CAPABILITIES } from './methods.js';
import type { AgentChannel, AgentSession } from './session.js';

/** Where one modern request's messages go (its HTTP response stream, or stdout). */
export interface ModernSink {
  /** A message sent while the request runs (progress, logs, listen notifications); false if it cannot go. */
  during(line: string): boolean;
  /** The request's answer: the request is over. */
  final(line: string): void;
}

/** What serving a modern request uses of the gateway. */
export interface ModernParts {
  /** Opens an agent session for one request (registered like any other, closed when it ends). */
  open(channel: AgentChannel): AgentSession;
  /** True when every agent is shown the same lists (no rules): cache hints may then be public. */
  sameForAll(): boolean;
  /** The ready servers' instructions, for `server/discover`. */
  instructions(): string | undefined;
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

const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read', 'server/discover']);

/** Methods of the 2025 era that the modern one removed: a modern request naming one is refused. */
const LEGACY_ONLY = new Set(['initialize', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

const DONE: ModernRequest = { cancel() {}, close() {} };

export function serveModern(parts: ModernParts, msg: JsonRpcRequest, envelope: Envelope, sink: ModernSink): ModernRequest {
  const id = msg.id;
  if (LEGACY_ONLY.has(msg.method)) {
    sink.final(encodeError(id, new GatewayError('MCPG_METHOD_NOT_FOUND', `method not found: ${msg.method} (not part of protocol revision ${envelope.protocolVersion})`).toJsonRpc()));
    return DONE;
  }
  if (msg.method === 'server/discover') {
    sink.final(completeResult(JSON.stringify({ jsonrpc: '2.0', id, result: discoverResult(parts) }), id, hints(parts, msg.method)));
    return DONE;
  }
  stripEnvelope(msg.params);
  if (msg.method === 'subscriptions/listen') return listen(parts, msg, envelope, sink);
  let over = false;
  const extra = hints(parts, msg.method);
  const session = parts.open({
    send(line, about, final) {
      if (over) return false;
      if (final === true && about === id) {
        over = true;
        sink.final(completeResult(line, id, extra));
        queueMicrotask(() => session.close());
        return true;
      }
      // A server's request to the agent: a modern request's stream carries none (see the header).
      if (line.startsWith('{"jsonrpc":"2.0","id":')) return false;
      return sink.during(line);
    },
  });
  session.adoptEnvelope(envelope.capabilities, envelope.logLevel);
  session.handleMessage({ kind: 'request', msg });
  return {
    cancel() {
      over = true;
      session.close();
    },
    close: () => session.close(),
  };
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
    capabilities: GATEWAY_CAPABILITIES,
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
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) return 'params.notifications.resourceSubscriptions must be an array of URIs';
    if (uris.length > MAX_RESOURCE_SUBSCRIPTIONS) return `params.notifications.resourceSubscriptions names ${uris.length} URIs (the limit is ${MAX_RESOURCE_SUBSCRIPTIONS})`;
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
  session.adoptEnvelope(envelope.capabilities, undefined);
  void (async () => {
    const honoured: Filter = {};
    for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) if (filter[key] !== undefined) honoured[key] = filter[key];
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
