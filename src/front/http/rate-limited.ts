// How a refusal for being over a limit (MCPG_RATE_LIMITED) looks over HTTP when it is the
// whole answer to a request: status 429 and the headers the specification's draft asks for
// (SEP-3304): `Retry-After` in whole seconds, rounded up from `retryAfterMs`, and `RateLimit-Limit` /
// `RateLimit-Remaining` when the error's data has `limit` / `remaining`.

import type { RateLimitedData } from '../../gateway/session/agent-channel.js';

export const TOO_MANY_REQUESTS = 429;

/** The refusal's data, as the agent channel's contract names it. */
export type RateLimitedInfo = RateLimitedData;

export function rateLimitedHeaders(info: RateLimitedInfo): Record<string, string> {
  const headers: Record<string, string> = { 'retry-after': String(Math.max(1, Math.ceil(info.retryAfterMs / 1000))) };
  if (typeof info.limit === 'number') headers['ratelimit-limit'] = String(info.limit);
  if (typeof info.remaining === 'number') headers['ratelimit-remaining'] = String(info.remaining);
  return headers;
}
