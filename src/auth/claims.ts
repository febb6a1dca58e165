// The claim checks of a JWT (auth.jwt or an OAuth issuer's) and of an introspected token, in our own
// wording (jose makes the registered ones too): expiry, not-before, issued-at, issuer, audience and
// the claim that names the agent. Reasons quote the caller's own claim values, cut short.
// `iat` may not be in the future, and a token is refused when no audience is configured. The token
// itself is never echoed.

import type { JwtConfig } from '../rules/auth-config.js';
import { claimValue } from '../rules/decide.js';
import { fail, type AuthOutcome } from './outcome.js';

const MAX_DATE_SECONDS = 8.64e12; // the largest a JS Date can show

/** The claim checks of auth.jwt and of an OAuth issuer alike. */
export type ClaimPolicy = Pick<JwtConfig, 'issuer' | 'audience' | 'agentClaim' | 'requireClaims' | 'clockSkewSeconds' | 'requireExp'>;

/** Our wording of the claim checks (jose makes them too), plus `iat` not in the future, `aud` refused when none is configured, and the agent claim. */
export function checkClaims(config: ClaimPolicy, claims: Record<string, unknown>, now: number): AuthOutcome {
  const skew = config.clockSkewSeconds * 1000;
  const { exp, nbf, iat } = claims;
  if (exp === undefined) {
    if (config.requireExp) return fail('JWT has no "exp" claim; tokens must expire');
  } else if (!isNumericDate(exp)) return fail('JWT "exp" claim is not a number of seconds');
  else if (now - skew >= exp * 1000) return fail(`JWT expired at ${dateText(exp)}`);
  if (nbf !== undefined) {
    if (!isNumericDate(nbf)) return fail('JWT "nbf" claim is not a number of seconds');
    if (now + skew < nbf * 1000) return fail(`JWT is not valid before ${dateText(nbf)}`);
  }
  if (iat !== undefined) {
    if (!isNumericDate(iat)) return fail('JWT "iat" claim is not a number of seconds');
    if (iat * 1000 > now + skew) return fail(`JWT was issued in the future (iat ${dateText(iat)})`);
  }
  const issuerProblem = checkIssuer(config, claims.iss);
  if (issuerProblem !== undefined) return fail(issuerProblem);
  const audienceProblem = checkAudience(config, claims.aud);
  if (audienceProblem !== undefined) return fail(audienceProblem);
  const name = config.agentClaim;
  // A machine's token (client credentials) may carry no `sub`: its client is the agent then
  // (RFC 9068 §2.2 makes `sub` the client id in that case; RFC 7662 names it `client_id`).
  const agent = name === 'sub' && claims.sub === undefined && typeof claims.client_id === 'string' ? claims.client_id : claims[name];
  if (agent === undefined) return fail(`JWT has no ${JSON.stringify(name)} claim`);
  if (typeof agent !== 'string' || agent === '')
    return fail(`JWT claim ${JSON.stringify(name)} is not a non-empty string (it names the agent)`);
  for (const required of config.requireClaims)
    if (claimValue(claims, required) === undefined)
      return fail(`JWT has no ${JSON.stringify(required)} claim, which this gateway requires of every token (requireClaims)`);
  return { ok: true, agent, via: 'jwt', claims };
}

function checkIssuer(config: ClaimPolicy, iss: unknown): string | undefined {
  const expected = config.issuer;
  if (expected === undefined || iss === expected) return undefined;
  if (iss === undefined) return `JWT has no "iss" claim (expected ${JSON.stringify(expected)})`;
  return `JWT issuer ${shown(iss)} is not ${JSON.stringify(expected)}`;
}

/**
 * `aud` is a string or an array of strings; one of them must be a configured audience. A token that
 * names an audience is refused when none is configured: it was issued for some other service
 * (RFC 7519 §4.1.3, RFC 8725 §3.9).
 */
function checkAudience(config: ClaimPolicy, aud: unknown): string | undefined {
  const expected = config.audience;
  if (aud === undefined) return expected === undefined ? undefined : `JWT has no "aud" claim (expected ${expectedText(expected)})`;
  const list = typeof aud === 'string' ? [aud] : Array.isArray(aud) && aud.every((a) => typeof a === 'string') ? aud : undefined;
  if (list === undefined) return 'JWT "aud" claim is not a string or an array of strings';
  if (expected === undefined) return `JWT audience ${shown(aud)} is not accepted: no audience is configured for this gateway`;
  if (list.some((a) => expected.includes(a))) return undefined;
  return `JWT audience ${shown(aud)} is not ${expectedText(expected)}`;
}

function expectedText(expected: readonly string[]): string {
  return expected.length === 1 ? JSON.stringify(expected[0]) : `one of ${expected.map((e) => JSON.stringify(e)).join(', ')}`;
}

function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function dateText(seconds: number): string {
  return Math.abs(seconds) <= MAX_DATE_SECONDS ? new Date(seconds * 1000).toISOString() : `${seconds} seconds after 1970`;
}

/** A claim value from the token, JSON-quoted and cut short (it is the caller's own data, not a secret). */
export function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

export function shownName(value: string): string {
  return /^[A-Za-z0-9]{1,16}$/.test(value) ? value : shown(value);
}
