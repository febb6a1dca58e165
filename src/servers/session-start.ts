// The start of a server session, in either era: the transport to the server opened, then the
// handshake — `server/discover` for a server of the 2026-07-28 revision (era.ts; an "auto" server is
// probed, and initialized when it does not answer or refuses), else initialize, validated with the
// SDK's schemas. ServerSession.start hands it the parts of the session it needs (`StartingSession`).

import { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } from '../wire/protocol.js';
import type { ServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { StdioProcess } from './stdio-process.js';
import { HttpTransport } from './http-transport.js';
import { SseTransport } from './sse-transport.js';
import type { ServerTransport, TransportEvents } from './transport.js';
import { GATEWAY_INFO } from '../version.js';
import { UNSUPPORTED_PROTOCOL_VERSION } from '../wire/era.js';
import { CLIENT_CAPABILITIES, MODERN_PROTOCOL_VERSION, readDiscover, wantedEra, type SessionEra } from './era.js';
import type { ServerInfo, SessionOptions } from './session-types.js';
import { serverSchemas } from './sdk-schemas.js';

/** The share of the startup time an "auto" server's `server/discover` probe may take before initialize is tried. */
const PROBE_SHARE = 0.5;

/** What the start-up needs of its session (given once, by ServerSession.start). */
export interface StartingSession {
  readonly name: string;
  readonly config: ServerConfig;
  readonly log: Logger;
  readonly options: SessionOptions;
  /** The era the session's requests are written in from now on. */
  speak(era: SessionEra): void;
  /** The session is still `connecting` (not ready, failed or closed). */
  connecting(): boolean;
  /** The session's close has begun. */
  closing(): boolean;
  request(method: string, params: Record<string, unknown> | undefined, timeoutMs: number): Promise<Record<string, unknown>>;
  notify(method: string): void;
  fail(reason: GatewayError): void;
  /** The handshake is done: the session keeps the server's info and is ready. */
  ready(info: ServerInfo): void;
  /** A modern session opens its `subscriptions/listen` stream (listen-stream.ts). */
  listen(): void;
}

/** The way to the server: the factory the options give, else by the entry's type. */
export function openTransport(config: ServerConfig, log: Logger, events: TransportEvents, options: SessionOptions): ServerTransport {
  const open = options.transport;
  if (open !== undefined) return open(config, log, events);
  if (config.type === 'stdio') return new StdioProcess(config, log, events, { secretEnv: options.secretEnv });
  if (config.type === 'http') return new HttpTransport(config, log, events, options.credentials === undefined ? {} : { credentials: options.credentials });
  return new SseTransport(config, log, events);
}

/** The handshake in the server's era. Resolves when ready; rejects (and the session is `failed`) otherwise. */
export async function handshake(s: StartingSession): Promise<void> {
  const wanted = wantedEra(s.config);
  const started = performance.now();
  let probed: 'answered' | 'silent' | undefined;
  if (wanted === '2026-07-28' || (wanted === 'auto' && s.options.era?.known !== 'legacy')) {
    probed = await discover(s, wanted === 'auto');
    if (probed === undefined) return;
  }
  const params = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: s.options.clientCapabilities ?? CLIENT_CAPABILITIES, clientInfo: GATEWAY_INFO };
  // After a probe that went unanswered, initialize gets what is left of the startup time.
  const timeoutMs = probed === 'silent' ? Math.max(1, s.options.startupTimeoutMs - Math.round(performance.now() - started)) : s.options.startupTimeoutMs;
  let raw: Record<string, unknown>;
  // Sent first: the SDK's schemas load (the first time) while the server boots and answers.
  const schemas = serverSchemas();
  schemas.catch(() => {}); // awaited below; a request that fails first must not leave it unhandled
  try {
    raw = await s.request('initialize', params, timeoutMs);
  } catch (err) {
    // An "auto" server remembered as legacy (its probe crashed it) that refuses initialize: probe it next time.
    if (wanted === 'auto' && s.options.era !== undefined && s.connecting() && !(err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT')) delete s.options.era.known;
    const reason = err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT'
      ? new GatewayError('MCPG_SERVER_START_FAILED', `server "${s.name}" did not answer ${probed === 'silent' ? 'server/discover or initialize' : 'initialize'} within ${s.options.startupTimeoutMs} ms`, { server: s.name })
      : toStartError(err, s.name);
    s.fail(reason);
    throw reason;
  }
  const parsed = (await schemas).initialize.safeParse(raw);
  if (!parsed.success) {
    const reason = new GatewayError('MCPG_SERVER_START_FAILED', `server "${s.name}" sent an invalid initialize result: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { server: s.name });
    s.fail(reason);
    throw reason;
  }
  const result = parsed.data;
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(result.protocolVersion)) {
    const reason = new GatewayError('MCPG_SERVER_START_FAILED', `server "${s.name}" speaks protocol ${result.protocolVersion}, which mcpgate does not support (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`, { server: s.name });
    s.fail(reason);
    throw reason;
  }
  const info = {
    protocolVersion: result.protocolVersion,
    capabilities: result.capabilities,
    serverInfo: { name: result.serverInfo.name, version: result.serverInfo.version },
    instructions: result.instructions,
  };
  s.notify('notifications/initialized');
  if (s.options.era !== undefined && wanted === 'auto') s.options.era.known = 'legacy';
  s.ready(info);
}

/**
 * `server/discover` in place of initialize. Undefined: the server speaks 2026-07-28 and the session
 * is ready. Otherwise (only when `fallback`, for "auto") it does not, and initialize comes next:
 * `answered` — it refused or did not offer the revision; `silent` — no answer within the probe's
 * share of the startup time (a legacy server may drop what it does not know before initialize).
 * Any other failure fails the start; a server that died of the probe is initialized next time.
 */
async function discover(s: StartingSession, fallback: boolean): Promise<'answered' | 'silent' | undefined> {
  s.speak('modern');
  let raw: Record<string, unknown>;
  const timeoutMs = fallback ? Math.max(1, Math.floor(s.options.startupTimeoutMs * PROBE_SHARE)) : s.options.startupTimeoutMs;
  try {
    raw = await discoverRequest(s, timeoutMs);
  } catch (err) {
    const alive = !s.closing() && s.connecting();
    const timedOut = err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT';
    if (fallback && alive) {
      s.log.debug(timedOut ? 'server/discover went unanswered; falling back to initialize' : 'server/discover was refused; falling back to initialize', { error: err instanceof Error ? err.message : String(err) });
      s.speak('legacy');
      return timedOut ? 'silent' : 'answered';
    }
    // A stdio server that died of the probe is initialized without it next time; a remote one that
    // could not be reached says nothing about its era.
    const diedOfProbe = fallback && s.config.type === 'stdio';
    if (diedOfProbe && s.options.era !== undefined && !s.closing()) s.options.era.known = 'legacy';
    const reason = timedOut
      ? new GatewayError('MCPG_SERVER_START_FAILED', `server "${s.name}" did not answer server/discover within ${s.options.startupTimeoutMs} ms`, { server: s.name })
      : err instanceof GatewayError && err.code !== 'MCPG_SERVER_START_FAILED' && err.code !== 'MCPG_SERVER_NEEDS_LOGIN'
        ? new GatewayError('MCPG_SERVER_START_FAILED', `${err.message} (before completing server/discover${diedOfProbe ? '; the probe for its era: it is initialized next time' : fallback ? '' : `; the entry's "era" is "${MODERN_PROTOCOL_VERSION}"`})`, { server: s.name, cause: err })
        : toStartError(err, s.name);
    s.fail(reason);
    throw reason;
  }
  const found = readDiscover(raw, s.name);
  if (typeof found === 'string') {
    if (fallback) {
      s.log.debug('server/discover did not offer 2026-07-28; falling back to initialize', { why: found });
      s.speak('legacy');
      return 'answered';
    }
    const reason = new GatewayError('MCPG_SERVER_START_FAILED', `server "${s.name}" cannot be spoken to in the ${MODERN_PROTOCOL_VERSION} era: ${found} (set its "era" to "2025" or "auto")`, { server: s.name });
    s.fail(reason);
    throw reason;
  }
  const info = { protocolVersion: MODERN_PROTOCOL_VERSION, ...found };
  if (s.options.era !== undefined) s.options.era.known = 'modern';
  s.ready(info);
  s.listen();
  return undefined;
}

/**
 * `server/discover`, sent once more when the server refuses it as an unsupported protocol version
 * (-32022) yet lists 2026-07-28 among those it supports: the version header or `_meta` it judged may
 * not be the one sent (a proxy between, a server that changed), and the spec has a client retry with
 * a version from that list. Once only, within the same time: a second refusal is the server's answer.
 */
async function discoverRequest(s: StartingSession, timeoutMs: number): Promise<Record<string, unknown>> {
  const started = performance.now();
  try {
    return await s.request('server/discover', undefined, timeoutMs);
  } catch (err) {
    const left = Math.floor(timeoutMs - (performance.now() - started));
    if (!offersModern(err) || left < 1 || s.closing() || !s.connecting()) throw err;
    s.log.debug(`server/discover was refused as an unsupported protocol version, though the server lists ${MODERN_PROTOCOL_VERSION}; asking once more`, { error: err instanceof Error ? err.message : String(err) });
    return await s.request('server/discover', undefined, left);
  }
}

/** Whether a server's refusal is -32022 "unsupported protocol version" naming 2026-07-28 as supported. */
function offersModern(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return false;
  const refusal = err.detail?.serverError as { code?: unknown; data?: { supported?: unknown } } | undefined;
  if (refusal?.code !== UNSUPPORTED_PROTOCOL_VERSION) return false;
  const supported = refusal.data?.supported;
  return Array.isArray(supported) && supported.includes(MODERN_PROTOCOL_VERSION);
}

function toStartError(err: unknown, server: string): GatewayError {
  if (err instanceof GatewayError) {
    if (err.code === 'MCPG_SERVER_START_FAILED' || err.code === 'MCPG_SERVER_NEEDS_LOGIN') return err;
    return new GatewayError('MCPG_SERVER_START_FAILED', `${err.message} (before completing initialize)`, { server, cause: err });
  }
  return new GatewayError('MCPG_SERVER_START_FAILED', `server "${server}" failed to initialize: ${String(err)}`, { server });
}
