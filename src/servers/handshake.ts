// The handshake of a server session, in the server's era: `server/discover` for a server of the
// 2026-07-28 revision (modern-protocol.ts; an "auto" server is probed with half the startup time, and initialized
// when it does not answer or refuses; asked once more when refused with -32022 naming 2026-07-28),
// else `initialize`, validated with the SDK's schemas and followed by `notifications/initialized`.
// What it finds of an "auto" server's era is kept in the connection's `options.era`, so reconnects
// do not probe again: a stdio server that died of the probe is initialized without it next time, and
// an initialize refused after that forgets it. It speaks through the session it starts
// (server-session.ts): its `request`, and its `era`, set before `server/discover` so the request
// carries the modern envelope.

import type { ServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { UNSUPPORTED_PROTOCOL_VERSION } from '../wire/era.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../wire/protocol.js';
import { GATEWAY_INFO } from '../version.js';
import { CLIENT_CAPABILITIES, MODERN_PROTOCOL_VERSION, readDiscover, wantedEra } from './modern-protocol.js';
import { parksUntilNewCredentials } from './upstream-credentials.js';
import { serverSchemas } from './sdk-schemas.js';
import type { SessionEra } from './modern-protocol.js';
import type { ServerInfo, SessionOptions, SessionState } from './session-types.js';

/** What the handshake speaks through: the server session it starts (server-session.ts). */
interface Handshaking {
  readonly config: ServerConfig;
  readonly name: string;
  readonly state: SessionState;
  /** Closing or closed: an answer that comes now says nothing of the server's era. */
  readonly stopping: boolean;
  /** Set before `server/discover`, so the request carries the modern envelope. */
  era: SessionEra;
  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  notify(method: string, params?: Record<string, unknown>): void;
}

/** The share of the startup time an "auto" server's `server/discover` probe may take before initialize is tried. */
const PROBE_SHARE = 0.5;

/**
 * The handshake in the server's era: resolves with what the server said of itself once it may be
 * spoken to (`session.era` set to its era), or rejects with why it may not (the session fails with it).
 */
export async function handshake(session: Handshaking, options: SessionOptions, log: Logger): Promise<ServerInfo> {
  // "both" finds the era the way "auto" does; the pairing of a second session is the connection's.
  const wanted = wantedEra(session.config) === 'both' ? 'auto' : wantedEra(session.config);
  const started = performance.now();
  let probed: 'answered' | 'silent' | undefined;
  if (wanted === '2026-07-28' || (wanted === 'auto' && options.era?.known !== 'legacy')) {
    const found = await discover(session, options, log, wanted === 'auto');
    if (typeof found !== 'string') return found;
    probed = found;
  }
  const params = {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: options.clientCapabilities ?? CLIENT_CAPABILITIES,
    clientInfo: GATEWAY_INFO,
  };
  // After a probe that went unanswered, initialize gets what is left of the startup time.
  const timeoutMs =
    probed === 'silent' ? Math.max(1, options.startupTimeoutMs - Math.round(performance.now() - started)) : options.startupTimeoutMs;
  let raw: Record<string, unknown>;
  // Sent first: the SDK's schemas load (the first time) while the server boots and answers.
  const schemas = serverSchemas();
  schemas.catch(() => {}); // awaited below; a request that fails first must not leave it unhandled
  try {
    raw = await session.request('initialize', params, timeoutMs);
  } catch (err) {
    // An "auto" server remembered as legacy (its probe crashed it) that refuses initialize: probe it next time.
    if (
      wanted === 'auto' &&
      options.era !== undefined &&
      session.state === 'connecting' &&
      !(err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT')
    )
      delete options.era.known;
    const reason =
      err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT'
        ? new GatewayError(
            'MCPG_SERVER_START_FAILED',
            `server "${session.name}" did not answer ${probed === 'silent' ? 'server/discover or initialize' : 'initialize'} within ${options.startupTimeoutMs} ms`,
            { server: session.name },
          )
        : toStartError(err, session.name);
    throw reason;
  }
  const parsed = (await schemas).initialize.safeParse(raw);
  if (!parsed.success) {
    const reason = new GatewayError(
      'MCPG_SERVER_START_FAILED',
      `server "${session.name}" sent an invalid initialize result: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      { server: session.name },
    );
    throw reason;
  }
  const result = parsed.data;
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(result.protocolVersion)) {
    const reason = new GatewayError(
      'MCPG_SERVER_START_FAILED',
      `server "${session.name}" speaks protocol ${result.protocolVersion}, which mcpgate does not support (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      { server: session.name },
    );
    throw reason;
  }
  const info = {
    protocolVersion: result.protocolVersion,
    capabilities: result.capabilities,
    serverInfo: { name: result.serverInfo.name, version: result.serverInfo.version },
    instructions: result.instructions,
  };
  session.notify('notifications/initialized');
  if (options.era !== undefined && wanted === 'auto') options.era.known = 'legacy';
  return info;
}

/**
 * `server/discover` in place of initialize. Undefined: the server speaks 2026-07-28 and the session
 * is ready. Otherwise (only when `fallback`, for "auto") it does not, and initialize comes next:
 * `answered` — it refused or did not offer the revision; `silent` — no answer within the probe's
 * share of the startup time (a legacy server may drop what it does not know before initialize).
 * Any other failure fails the start; a server that died of the probe is initialized next time.
 */
async function discover(
  session: Handshaking,
  options: SessionOptions,
  log: Logger,
  fallback: boolean,
): Promise<'answered' | 'silent' | ServerInfo> {
  session.era = 'modern';
  let raw: Record<string, unknown>;
  const timeoutMs = fallback ? Math.max(1, Math.floor(options.startupTimeoutMs * PROBE_SHARE)) : options.startupTimeoutMs;
  try {
    raw = await discoverRequest(session, log, timeoutMs);
  } catch (err) {
    const alive = !session.stopping && session.state === 'connecting';
    const timedOut = err instanceof GatewayError && err.code === 'MCPG_SERVER_TIMEOUT';
    if (fallback && alive) {
      log.debug(
        timedOut
          ? 'server/discover went unanswered; falling back to initialize'
          : 'server/discover was refused; falling back to initialize',
        { error: err instanceof Error ? err.message : String(err) },
      );
      session.era = 'legacy';
      return timedOut ? 'silent' : 'answered';
    }
    // A stdio server that died of the probe is initialized without it next time; a remote one that
    // could not be reached says nothing about its era.
    const diedOfProbe = fallback && session.config.type === 'stdio';
    if (diedOfProbe && options.era !== undefined && !session.stopping) options.era.known = 'legacy';
    const reason = timedOut
      ? new GatewayError(
          'MCPG_SERVER_START_FAILED',
          `server "${session.name}" did not answer server/discover within ${options.startupTimeoutMs} ms`,
          { server: session.name },
        )
      : err instanceof GatewayError && err.code !== 'MCPG_SERVER_START_FAILED' && !parksUntilNewCredentials(err)
        ? new GatewayError(
            'MCPG_SERVER_START_FAILED',
            `${err.message} (before completing server/discover${diedOfProbe ? '; the probe for its era: it is initialized next time' : fallback ? '' : `; the entry's "era" is "${MODERN_PROTOCOL_VERSION}"`})`,
            { server: session.name, cause: err },
          )
        : toStartError(err, session.name);
    throw reason;
  }
  const found = readDiscover(raw, session.name);
  if (typeof found === 'string') {
    if (fallback) {
      log.debug('server/discover did not offer 2026-07-28; falling back to initialize', { why: found });
      session.era = 'legacy';
      return 'answered';
    }
    const reason = new GatewayError(
      'MCPG_SERVER_START_FAILED',
      `server "${session.name}" cannot be spoken to in the ${MODERN_PROTOCOL_VERSION} era: ${found} (set its "era" to "2025" or "auto")`,
      { server: session.name },
    );
    throw reason;
  }
  const info = { protocolVersion: MODERN_PROTOCOL_VERSION, ...found };
  if (options.era !== undefined) options.era.known = 'modern';
  return info;
}

/**
 * `server/discover`, sent once more when the server refuses it as an unsupported protocol version
 * (-32022) yet lists 2026-07-28 among those it supports: the version header or `_meta` it judged may
 * not be the one sent (a proxy between, a server that changed), and the spec has a client retry with
 * a version from that list. Once only, within the same time: a second refusal is the server's answer.
 */
async function discoverRequest(session: Handshaking, log: Logger, timeoutMs: number): Promise<Record<string, unknown>> {
  const started = performance.now();
  try {
    return await session.request('server/discover', undefined, timeoutMs);
  } catch (err) {
    const left = Math.floor(timeoutMs - (performance.now() - started));
    if (!offersModern(err) || left < 1 || session.stopping || session.state !== 'connecting') throw err;
    log.debug(
      `server/discover was refused as an unsupported protocol version, though the server lists ${MODERN_PROTOCOL_VERSION}; asking once more`,
      { error: err instanceof Error ? err.message : String(err) },
    );
    return await session.request('server/discover', undefined, left);
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
    if (err.code === 'MCPG_SERVER_START_FAILED' || parksUntilNewCredentials(err)) return err;
    return new GatewayError('MCPG_SERVER_START_FAILED', `${err.message} (before completing initialize)`, { server, cause: err });
  }
  return new GatewayError('MCPG_SERVER_START_FAILED', `server "${server}" failed to initialize: ${String(err)}`, { server });
}
