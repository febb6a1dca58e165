// Speaking to a server of the stateless 2026-07-28 revision (the server side): the
// per-request `_meta` envelope mcpgate puts on every request, the `server/discover` answer, the
// `subscriptions/listen` filter, and reading an input-required result. The session
// (server-session.ts) decides when; this file
// only says what the wire looks like.
// https://modelcontextprotocol.io/specification/2026-07-28 (basic: the envelope, server/discover;
// patterns: multi round-trip requests; subscriptions/listen)

import type { ServerConfig, ServerEra } from '../config/types.js';
import { GATEWAY_INFO } from '../version.js';

export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Which era a server session speaks: `legacy` = the 2025 initialize handshake and session. */
export type SessionEra = 'legacy' | 'modern';

const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

/** What mcpgate declares to every server: it relays sampling, elicitation and roots to its agents. */
export const CLIENT_CAPABILITIES: Readonly<Record<string, unknown>> = Object.freeze({
  sampling: {},
  elicitation: {},
  roots: { listChanged: true },
});

/**
 * What a connection declares to its server, with the `extensions` it declares (none: the plain ones).
 * A shared connection (no `agent`) declares what mcpgate relays for every agent: sampling, form-mode
 * elicitation and roots. A connection made for one agent declares what that agent can answer —
 * its sampling, its elicitation modes (URL mode where it takes it) — and roots where the agent has
 * them or the entry's `"roots"` (`configuredRoots`) answer for it: the server offers what it would
 * offer that agent directly.
 */
export function clientCapabilities(
  extensions: Readonly<Record<string, unknown>> | undefined,
  agent?: Readonly<Record<string, unknown>>,
  configuredRoots = false,
): Readonly<Record<string, unknown>> {
  const own = agent === undefined ? CLIENT_CAPABILITIES : forAgent(agent, configuredRoots);
  return extensions === undefined || Object.keys(extensions).length === 0 ? own : { ...own, extensions };
}

function forAgent(agent: Readonly<Record<string, unknown>>, configuredRoots: boolean): Record<string, unknown> {
  const declared: Record<string, unknown> = {};
  if (isObject(agent.sampling)) declared.sampling = agent.sampling;
  if (isObject(agent.elicitation)) declared.elicitation = elicitationModes(agent.elicitation);
  if (isObject(agent.roots) || configuredRoots) declared.roots = { listChanged: true };
  return declared;
}

/** The elicitation modes an agent takes, as mcpgate relays them (`{}`: form only, as the agent's `{}` means). */
function elicitationModes(elicitation: Record<string, unknown>): Record<string, unknown> {
  const modes: Record<string, unknown> = {};
  if (isObject(elicitation.form)) modes.form = elicitation.form;
  if (isObject(elicitation.url)) modes.url = elicitation.url;
  return modes;
}

/** The envelope keys, built once: every modern request gets these three, beside its own `_meta`. */
const ENVELOPE: Readonly<Record<string, unknown>> = Object.freeze({
  [VERSION_KEY]: MODERN_PROTOCOL_VERSION,
  [CAPABILITIES_KEY]: CLIENT_CAPABILITIES,
  [CLIENT_INFO_KEY]: GATEWAY_INFO,
});

/**
 * `params` with the envelope in its `_meta` (an agent's own `_meta` keys, e.g. progressToken, kept;
 * an agent's claim of another version replaced: mcpgate is the client here). `capabilities` are the
 * connection's (mcpgate's, with the extensions it declares there). With `agent`, sampling and
 * elicitation are declared only where that agent declared them too, elicitation with that agent's
 * modes (URL mode offered where it takes it); roots stay declared, since mcpgate answers roots/list
 * itself when the entry has `"roots"`. With `logLevel` (the agent's), the
 * server may send that agent's call its log messages at that level and above: the modern revision
 * has no `logging/setLevel`, a server logs only for requests whose envelope asks.
 */
export function withEnvelope(
  params: Record<string, unknown> | undefined,
  capabilities: Readonly<Record<string, unknown>> = CLIENT_CAPABILITIES,
  agent?: Record<string, unknown>,
  logLevel?: string,
): Record<string, unknown> {
  const declared = agent === undefined ? capabilities : relayable(capabilities, agent);
  let envelope = declared === CLIENT_CAPABILITIES ? ENVELOPE : { ...ENVELOPE, [CAPABILITIES_KEY]: declared };
  if (logLevel !== undefined) envelope = { ...envelope, [LOG_LEVEL_KEY]: logLevel };
  const meta = params?._meta;
  return { ...params, _meta: isObject(meta) ? { ...meta, ...envelope } : envelope };
}

function relayable(capabilities: Readonly<Record<string, unknown>>, agent: Record<string, unknown>): Readonly<Record<string, unknown>> {
  const elicitation = agent.elicitation;
  // The common agent (sampling, form-mode elicitation): the connection's own declaration.
  if (agent.sampling !== undefined && isObject(elicitation) && !isObject(elicitation.url)) return capabilities;
  const declared: Record<string, unknown> = { ...capabilities };
  if (agent.sampling === undefined) delete declared.sampling;
  if (!isObject(elicitation)) delete declared.elicitation;
  else if (declared.elicitation !== undefined) declared.elicitation = elicitationModes(elicitation);
  return declared;
}

/** A validated `server/discover` result, reduced to what mcpgate keeps of a server. */
interface Discovered {
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string };
  instructions: string | undefined;
}

/** Reads a `server/discover` result; a string says what is wrong with it. */
export function readDiscover(raw: Record<string, unknown>, fallbackName: string): Discovered | string {
  const versions = raw.supportedVersions;
  if (!Array.isArray(versions) || !versions.every((v) => typeof v === 'string'))
    return 'its server/discover result has no supportedVersions list';
  if (!versions.includes(MODERN_PROTOCOL_VERSION))
    return `it supports ${versions.length === 0 ? 'no modern revision' : versions.join(', ')}, not ${MODERN_PROTOCOL_VERSION}`;
  if (!isObject(raw.capabilities)) return 'its server/discover result has no capabilities object';
  const meta = isObject(raw._meta) ? raw._meta : {};
  const info = isObject(meta[SERVER_INFO_KEY]) ? meta[SERVER_INFO_KEY] : {};
  return {
    capabilities: raw.capabilities,
    serverInfo: {
      name: typeof info.name === 'string' ? info.name : fallbackName,
      version: typeof info.version === 'string' ? info.version : '',
    },
    instructions: typeof raw.instructions === 'string' ? raw.instructions : undefined,
  };
}

/** The `subscriptions/listen` filter for what the server can announce (undefined: nothing to listen for). */
export function listenFilter(capabilities: Record<string, unknown>, uris: ReadonlySet<string>): Record<string, unknown> | undefined {
  const changes = (kind: string): boolean => isObject(capabilities[kind]) && capabilities[kind].listChanged === true;
  const filter: Record<string, unknown> = {};
  if (changes('tools')) filter.toolsListChanged = true;
  if (changes('prompts')) filter.promptsListChanged = true;
  if (changes('resources')) filter.resourcesListChanged = true;
  if (uris.size > 0) filter.resourceSubscriptions = [...uris];
  return Object.keys(filter).length === 0 ? undefined : filter;
}

/**
 * The era an entry asks for: its own `"era"`, else `auto` (probe `server/discover`, fall back to
 * initialize; `pairsEras` says when a server that takes both is spoken to in both) — but `2025` for
 * the old HTTP+SSE transport, which the 2026-07-28 revision does not have.
 */
export function wantedEra(config: ServerConfig): ServerEra {
  return config.era ?? (config.type === 'sse' ? '2025' : 'auto');
}

/**
 * Whether a server found modern is also asked for a 2025 session beside it (era-twin.ts): with
 * `"both"`, and by default for a remote server, where the second session is the same process. A
 * stdio server's second session is a second process with a state of its own, so by default it runs
 * as one process, in the era it answered first; `"both"` is the opt-in for a stateless one.
 */
export function pairsEras(config: ServerConfig): boolean {
  const wanted = wantedEra(config);
  return wanted === 'both' || (wanted === 'auto' && config.type !== 'stdio');
}

/** The server→client requests the 2026-07-28 revision folds into input-required results. */
const INPUT_METHODS: ReadonlySet<string> = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list']);
/** Input requests in one result, and rounds of them per call, that mcpgate relays before giving up. */
const MAX_INPUT_REQUESTS = 16;
export const MAX_INPUT_ROUNDS = 8;

interface InputRequired {
  requests: [key: string, method: string, params: Record<string, unknown> | undefined][];
  requestState: string | undefined;
}

/** An input-required result read, a string saying why it cannot be relayed, or undefined: a complete result. */
export function readInputRequired(result: Record<string, unknown>): InputRequired | string | undefined {
  if (result.resultType !== 'input_required') return undefined;
  const raw = isObject(result.inputRequests) ? result.inputRequests : {};
  const requestState = typeof result.requestState === 'string' ? result.requestState : undefined;
  const entries = Object.entries(raw);
  if (entries.length === 0 && requestState === undefined) return 'an input-required result with neither inputRequests nor requestState';
  if (entries.length > MAX_INPUT_REQUESTS) return `${entries.length} input requests at once (mcpgate relays at most ${MAX_INPUT_REQUESTS})`;
  const requests: InputRequired['requests'] = [];
  for (const [key, value] of entries) {
    if (!isObject(value) || typeof value.method !== 'string' || !INPUT_METHODS.has(value.method)) {
      return `an input request "${key}" that is not sampling/createMessage, elicitation/create or roots/list`;
    }
    requests.push([key, value.method, isObject(value.params) ? value.params : undefined]);
  }
  return { requests, requestState };
}

/** What goes in the `Mcp-Name` header: the tool or prompt name, or the resource URI. */
export function mcpName(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const value = method === 'resources/read' ? params?.uri : method === 'tools/call' || method === 'prompts/get' ? params?.name : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * A value as an HTTP header may carry it: visible ASCII as is, anything else (non-ASCII, control
 * characters, edge whitespace, or a value that looks like the sentinel) as `=?base64?…?=` of its UTF-8.
 */
export function headerValue(value: string): string {
  if (/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !value.startsWith('=?base64?')) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
