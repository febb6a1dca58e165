// The tokens of the rules' OAuth issuers (`auth.oauth`): a JWT verified by the issuer's keys (its
// JWKS, issuers.ts), or an opaque token the issuer calls active (RFC 7662 introspection); either
// bound to mcpgate's resource URI (RFC 8707) and holding the scopes the issuer's entry requires.
// Only one issuer introspects: an opaque token names no issuer, so it is shown to that one. The agent
// id is the issuer's configured claim, `NAMESPACE:ID` for an issuer with a `namespace` (`agentOf`).

import type { JWTPayload, JWTVerifyGetKey, JWTVerifyOptions } from 'jose';
import type { OAuthIssuer } from '../rules/auth-config.js';
import { checkClaims, type ClaimPolicy } from './claims.js';
import { IntrospectionLimited } from './issuers.js';
import { headerProblem, verifyWithJose } from './jwt.js';
import { fail, type AuthContext, type AuthOutcome } from './outcome.js';

export async function verifyOAuth(
  issuer: OAuthIssuer,
  token: string,
  header: Record<string, unknown>,
  now: number,
  context: AuthContext,
): Promise<AuthOutcome> {
  const problem = headerProblem(header, issuer.algorithms);
  if (problem !== undefined) return fail(problem);
  const audience = issuer.audience ?? (context.resource === undefined ? undefined : [context.resource]);
  if (context.issuers === undefined || audience === undefined)
    return fail('OAuth tokens cannot be checked here (no issuer keys or resource URI)');
  let keys: JWTVerifyGetKey;
  try {
    keys = await context.issuers.keysFor(issuer);
  } catch (err) {
    return {
      ok: false,
      status: 503,
      reason: `the signing keys of issuer ${issuer.issuer} are unavailable: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  const config: ClaimPolicy = {
    issuer: issuer.issuer,
    audience,
    agentClaim: issuer.agentClaim,
    requireClaims: issuer.requireClaims,
    clockSkewSeconds: issuer.clockSkewSeconds,
    requireExp: true,
  };
  const options: JWTVerifyOptions = {
    algorithms: [...issuer.algorithms],
    clockTolerance: issuer.clockSkewSeconds,
    currentDate: new Date(now),
    issuer: issuer.issuer,
    audience: [...audience],
    requiredClaims: ['exp'],
  };
  const verified = await verifyWithJose(token, keys, options, (claims) => checkClaims(config, claims, now));
  if (!verified.ok) return verified;
  const outcome = checkClaims(config, verified.claims, now);
  if (!outcome.ok) return outcome;
  const missing = issuer.scopes.filter((scope) => !scopesOf(verified.claims).includes(scope));
  if (missing.length > 0) {
    return {
      ok: false,
      status: 403,
      scope: issuer.scopes.join(' '),
      reason: `the token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(', ')} that issuer ${issuer.issuer} requires`,
    };
  }
  return { ok: true, agent: agentOf(issuer, outcome.agent), via: 'oauth', claims: verified.claims };
}

/** The agent id a token of `issuer` names: `NAMESPACE:ID` for an issuer with a namespace, else bare. */
function agentOf(issuer: OAuthIssuer, id: string): string {
  return issuer.namespace === undefined ? id : `${issuer.namespace}:${id}`;
}

/**
 * An opaque token, asked about at the one issuer with `introspection` (the rules refuse more than
 * one: an opaque token names no issuer, and no other issuer may see it), with the same checks as a
 * JWT (issuer, audience bound to the resource URI, expiry, agent claim, scopes).
 */
export async function introspect(issuer: OAuthIssuer, token: string, context: AuthContext): Promise<AuthOutcome> {
  if (context.issuers === undefined || context.resource === undefined)
    return fail('opaque tokens cannot be checked here (no issuer keys or resource URI)');
  const now = context.now ?? Date.now();
  let claims: Record<string, unknown>;
  try {
    claims = await context.issuers.introspect(issuer, token, context.source);
  } catch (err) {
    if (err instanceof IntrospectionLimited) return { ok: false, status: 503, reason: err.message };
    return {
      ok: false,
      status: 503,
      reason: `cannot introspect the token at issuer ${issuer.issuer}: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  if (claims.active !== true) return fail(`unknown token (not active at ${issuer.issuer})`);
  const policy: ClaimPolicy = {
    issuer: claims.iss === undefined ? undefined : issuer.issuer,
    audience: issuer.audience ?? [context.resource],
    agentClaim: issuer.agentClaim,
    requireClaims: issuer.requireClaims,
    clockSkewSeconds: issuer.clockSkewSeconds,
    requireExp: false,
  };
  const outcome = checkClaims(policy, claims, now);
  if (!outcome.ok) return fail(outcome.reason.replace(/^JWT/, 'the introspected token'));
  const missing = issuer.scopes.filter((scope) => !scopesOf(claims).includes(scope));
  if (missing.length > 0) {
    return {
      ok: false,
      status: 403,
      scope: issuer.scopes.join(' '),
      reason: `the token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(', ')} that issuer ${issuer.issuer} requires`,
    };
  }
  return { ok: true, agent: agentOf(issuer, outcome.agent), via: 'oauth', claims };
}

/** The token's scopes: `scope` (RFC 8693 §4.2, space-separated) or `scp` (an array, as some providers send). */
function scopesOf(claims: JWTPayload): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((s) => s !== '');
  const scp = claims.scp;
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ');
  return [];
}
