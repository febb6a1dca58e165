// Who is calling the HTTP front (docs/architecture.md "Agent identity"): the request's bearer token (RFC 6750
// §2.1) is either a static token whose SHA-256 is listed under an agent in gateway-rules.json, or a
// JWT (RFC 7519) verified with the key and algorithms of the rules' `auth.jwt` (auth-config.ts).
// Pure and synchronous: the rules snapshot in force and the time are arguments, so a reload applies
// to the next request. Reasons are safe to show the caller: they never echo the token.

import { constants, createHash, createHmac, timingSafeEqual, verify } from 'node:crypto';
import type { JwtConfig } from '../rules/auth-config.js';
import type { Rules } from '../rules/schema.js';

export type AuthOutcome =
  | { ok: true; agent: string; via: 'token' | 'jwt' }
  | { ok: false; reason: string };

/** The `WWW-Authenticate` value without error parameters (RFC 6750 §3). */
export const BEARER_CHALLENGE = 'Bearer realm="mcpgate"';
export const NO_TOKEN = 'no bearer token (send Authorization: Bearer <token>)';
export const NOT_BEARER = 'the Authorization header is not a bearer token';

const MAX_TOKEN_LENGTH = 8192;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/; // RFC 6750 §2.1 b64token
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/; // JWS compact serialization
const ES_SIGNATURE_BYTES: Readonly<Record<string, number>> = { ES256: 64, ES384: 96, ES512: 132 }; // r || s (RFC 7518 §3.4)
const MAX_DATE_SECONDS = 8.64e12; // the largest a JS Date can show

/** `sha256:<64 lowercase hex>` of a token: the form agents' `tokens` list. */
export function hashToken(token: string): string {
  return `sha256:${createHash('sha256').update(token, 'utf8').digest('hex')}`;
}

/**
 * The agent a request's `Authorization` header identifies under `rules`: a static token first, then
 * (when `auth.jwt` is configured and the token has the JWT shape) a JWT. `now` is in milliseconds.
 */
export function authenticate(rules: Rules, authorization: string | undefined, now: number = Date.now()): AuthOutcome {
  const token = bearerToken(authorization);
  if (typeof token !== 'string') return token;
  // A map lookup by hash: the hash of a secret token reveals nothing through lookup timing.
  const agent = rules.tokens.get(hashToken(token));
  if (agent !== undefined) return { ok: true, agent, via: 'token' };
  if (!JWT_SHAPE.test(token)) return fail('unknown token');
  const jwt = rules.auth?.jwt;
  if (jwt === undefined) return fail('unknown token (it looks like a JWT, but JWT authentication is not configured)');
  return verifyJwt(jwt, token, now);
}

/**
 * The `WWW-Authenticate` value for a refusal. A request that sent no bearer credentials gets no
 * error code (RFC 6750 §3.1); any other gets `invalid_token` and the reason as description.
 */
export function challenge(reason: string): string {
  if (reason === NO_TOKEN || reason === NOT_BEARER) return BEARER_CHALLENGE;
  return `${BEARER_CHALLENGE}, error="invalid_token", error_description="${descriptionText(reason)}"`;
}

/**
 * RFC 6750 §3 allows only %x20-21 / %x23-5B / %x5D-7E in error_description: no `"` and no `\`, so
 * no quoted-string escapes either. Quotes become apostrophes; anything else outside the set, `?`.
 */
function descriptionText(reason: string): string {
  const text = reason.replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20-\x7e]/g, '?');
  return text.length > 300 ? `${text.slice(0, 299)}…`.replace(/[^\x20-\x7e]/g, '.') : text;
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/** The token of a `Bearer` header, or why there is none. The scheme is case-insensitive (RFC 9110 §11.1). */
function bearerToken(header: string | undefined): string | { ok: false; reason: string } {
  const text = header?.trim() ?? '';
  if (text === '') return fail(NO_TOKEN);
  const space = text.search(/\s/);
  const scheme = space < 0 ? text : text.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') return fail(NOT_BEARER);
  const token = space < 0 ? '' : text.slice(space).trim();
  if (token === '') return fail('the Authorization header has no token after "Bearer"');
  if (token.length > MAX_TOKEN_LENGTH) return fail(`the bearer token is longer than ${MAX_TOKEN_LENGTH} characters`);
  if (!TOKEN68.test(token)) return fail('the bearer token contains characters a token cannot have (RFC 6750 §2.1)');
  return token;
}

// ---------------------------------------------------------------------------------------------
// JWT (RFC 7515 compact JWS, RFC 7519 claims, RFC 8725 best practices)

function verifyJwt(config: JwtConfig, token: string, now: number): AuthOutcome {
  const [headerPart = '', payloadPart = '', signaturePart = ''] = token.split('.');
  const header = decodeJson(headerPart);
  if (header === undefined) return fail('JWT header is not base64url-encoded JSON');
  if (!isObject(header)) return fail('JWT header is not a JSON object');
  const alg = header.alg;
  if (typeof alg !== 'string' || alg === '') return fail('JWT header has no "alg"');
  if (alg.toLowerCase() === 'none') return fail('JWT algorithm "none" (an unsigned token) is never accepted');
  // The configured list decides, never the header: it was fixed at load from the key's type.
  const allowed = config.algorithms.find((a) => a === alg);
  if (allowed === undefined) return fail(`JWT algorithm ${shownName(alg)} is not allowed (allowed: ${config.algorithms.join(', ')})`);
  if (header.crit !== undefined) return fail('JWT header lists "crit" extensions, which mcpgate does not support (RFC 7515 §4.1.11)');
  if (!signatureValid(config, allowed, `${headerPart}.${payloadPart}`, signaturePart)) return fail('JWT signature does not verify');
  const claims = decodeJson(payloadPart);
  if (!isObject(claims)) return fail('JWT payload is not a JSON object');
  return checkClaims(config, claims, now);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function decodeJson(part: string): unknown {
  if (part.length % 4 === 1) return undefined; // no base64url string has this length
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function signatureValid(config: JwtConfig, alg: string, signingInput: string, signaturePart: string): boolean {
  if (signaturePart.length % 4 === 1) return false;
  const signature = Buffer.from(signaturePart, 'base64url');
  const data = Buffer.from(signingInput, 'ascii');
  const hash = `sha${alg.slice(2)}`;
  if (alg.startsWith('HS')) {
    // Never HMAC with a public key as the secret (the algorithm-confusion attack, RFC 8725 §2.1).
    if (config.key.type !== 'secret') return false;
    const expected = createHmac(hash, config.key).update(data).digest();
    return signature.length === expected.length && timingSafeEqual(signature, expected);
  }
  if (config.key.type !== 'public') return false;
  try {
    if (alg.startsWith('RS')) return verify(hash, data, config.key, signature);
    if (alg.startsWith('PS')) {
      return verify(hash, data, { key: config.key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, signature);
    }
    if (alg.startsWith('ES')) {
      return signature.length === ES_SIGNATURE_BYTES[alg] && verify(hash, data, { key: config.key, dsaEncoding: 'ieee-p1363' }, signature);
    }
    if (alg === 'EdDSA') return verify(null, data, config.key, signature);
  } catch {
    return false; // a signature OpenSSL cannot even parse does not verify
  }
  return false;
}

function checkClaims(config: JwtConfig, claims: Record<string, unknown>, now: number): AuthOutcome {
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
  const agent = claims[name];
  if (agent === undefined) return fail(`JWT has no ${JSON.stringify(name)} claim`);
  if (typeof agent !== 'string' || agent === '') return fail(`JWT claim ${JSON.stringify(name)} is not a non-empty string (it names the agent)`);
  return { ok: true, agent, via: 'jwt' };
}

function checkIssuer(config: JwtConfig, iss: unknown): string | undefined {
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
function checkAudience(config: JwtConfig, aud: unknown): string | undefined {
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
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function shownName(value: string): string {
  return /^[A-Za-z0-9]{1,16}$/.test(value) ? value : shown(value);
}
