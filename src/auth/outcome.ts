// What authentication answers (an agent, or a refusal whose reason is safe to show the caller) and
// what it is given besides the rules (the time, the issuers' key caches, mcpgate's resource URI).
// auth.ts exports them too.

import type { Claims } from '../rules/decide.js';
import type { IssuerKeys } from './issuers.js';

/**
 * `claims`: the verified claims of a JWT or an introspected token (the rules' `grants` read them);
 * none for a static token.
 */
export type AuthClaims = Claims;

export type AuthOutcome = { ok: true; agent: string; via: 'token' | 'jwt' | 'oauth'; claims?: Claims } | AuthRefusal;

/**
 * Why not. `status` is 401 unless set: 403 for a valid token without the scopes the issuer's entry
 * requires (`insufficient_scope`, with `scope`), 503 when the issuer's keys cannot be fetched.
 */
export interface AuthRefusal {
  ok: false;
  reason: string;
  status?: 403 | 503;
  scope?: string;
}

/** What verification needs besides the rules: the time, the issuers' key caches, mcpgate's resource URI. */
export interface AuthContext {
  /** Milliseconds since 1970 (default: now). */
  now?: number;
  /** Required for `auth.oauth` tokens; without it they are refused. */
  issuers?: IssuerKeys;
  /** The default audience of `auth.oauth` tokens: `auth.resource`, or the one derived from the listen address. */
  resource?: string;
  /** Who presents the token (the client's address): introspection budgets and refusals are kept per source. */
  source?: string;
}

export function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
