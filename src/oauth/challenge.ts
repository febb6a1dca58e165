// What a protected resource says in its `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1):
// where its resource metadata is (`resource_metadata`), the scope it wants (`scope`), and why it
// refused (`error`: `invalid_token`, `insufficient_scope`). The parameters are read by the SDK's own
// parser (Bearer and DPoP schemes). `mcpgate login` asks for a challenge before it signs in — an
// unauthenticated request to the server — because the metadata URL announced there must be used
// when present, and its scope is what to ask for.
// It also says whether a challenge offers the DPoP scheme. The probe is `initialize`, then
// `tools/list` in that session where `initialize` was let through; bounded, 10 s.

import { extractWWWAuthenticateParams } from '@modelcontextprotocol/client';
import type { RemoteServerConfig } from '../config/types.js';
import { challengesDpop } from './dpop.js';
import { GATEWAY_INFO } from '../version.js';

interface Challenge {
  resourceMetadataUrl?: URL;
  scope?: string;
  error?: string;
  /** The challenge offers the DPoP scheme (RFC 9449 §7.1): the resource server takes DPoP-bound tokens. */
  dpop?: boolean;
}

/** The protocol revision the probe's `initialize` names (any a 2025 server accepts). */
const PROBE_VERSION = '2025-11-25';

/** A bound on the unauthenticated requests that reveal the challenge. */
const PROBE_MS = 10_000;

/** The parameters of one `WWW-Authenticate` header value (undefined: none). */
export function parseChallenge(header: string | undefined): Challenge {
  if (header === undefined || header === '') return {};
  const params = extractWWWAuthenticateParams(new Response(null, { headers: { 'www-authenticate': header } }));
  return {
    ...(params.resourceMetadataUrl !== undefined && { resourceMetadataUrl: params.resourceMetadataUrl }),
    ...(params.scope !== undefined && params.scope !== '' && { scope: params.scope }),
    ...(params.error !== undefined && { error: params.error }),
    ...(challengesDpop(header) && { dpop: true }),
  };
}

/**
 * Asks the server for its challenge without credentials: an `initialize`, and where a server lets
 * that through (some guard only what comes after), `tools/list` in the session it opened, which is
 * then ended. A server that refuses neither (or answers nothing within PROBE_MS) announces nothing:
 * discovery then uses the well-known locations.
 */
export async function probeChallenge(server: RemoteServerConfig, signal?: AbortSignal): Promise<Challenge> {
  const deadline = AbortSignal.timeout(PROBE_MS);
  const abort = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  const post = async (message: object, session: string | undefined): Promise<Response> => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        ...server.headers,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        ...(session !== undefined && { 'mcp-session-id': session, 'mcp-protocol-version': PROBE_VERSION }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...message }),
      redirect: 'manual',
      signal: abort,
    });
    await res.body?.cancel();
    return res;
  };
  const refused = (res: Response): Challenge | undefined =>
    res.status === 401 || res.status === 403 ? parseChallenge(res.headers.get('www-authenticate') ?? undefined) : undefined;
  try {
    const init = await post(
      { id: 0, method: 'initialize', params: { protocolVersion: PROBE_VERSION, capabilities: {}, clientInfo: GATEWAY_INFO } },
      undefined,
    );
    const first = refused(init);
    if (first !== undefined || !init.ok) return first ?? {};
    const session = init.headers.get('mcp-session-id') ?? undefined;
    try {
      await post({ method: 'notifications/initialized' }, session);
      return refused(await post({ id: 1, method: 'tools/list' }, session)) ?? {};
    } finally {
      if (session !== undefined) {
        await fetch(server.url, { method: 'DELETE', headers: { ...server.headers, 'mcp-session-id': session }, signal: abort }).then(
          (res) => res.body?.cancel(),
          () => {},
        );
      }
    }
  } catch {
    return {};
  }
}
