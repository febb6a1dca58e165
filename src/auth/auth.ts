// Who is calling the HTTP front (docs/architecture.md "Agent identity"): the request's bearer token (RFC 6750
// §2.1) is either a static token whose SHA-256 is listed under an agent in gateway-rules.json, a JWT
// access token from one of the OAuth issuers of the rules' `auth.oauth` (keys from the issuer's JWKS,
// issuers.ts; audience bound to mcpgate's resource URI, RFC 8707), or a JWT verified with the fixed
// key of `auth.jwt` (auth-config.ts). Signatures, algorithms and the registered claims are checked by
// jose (RFC 7515/7519, RFC 8725): the algorithms come from the configuration, never the token's
// header. The rules snapshot in force is an argument, so a reload applies to the next request.
// Reasons are safe to show the caller: they never echo the token.

import { createHash } from 'node:crypto';
import { jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { JwtConfig, OAuthIssuer } from '../rules/auth-config.js';
import type { Claims } from '../rules/decide.js';
import type { Rules } from '../rules/schema.js';
import { IssuerUnavailable, type IssuerKeys } from './issuers.js';

/**
 * `claims`: the verified claims of a JWT or an introspected token (the rules' `grants` read them);
 * none for a static token.
 */
export type AuthClaims = Claims;

export type AuthOutcome =
  | { ok: true; agent: string; via: 'token' | 'jwt' | 'oauth'; claims?: Claims }
  | AuthRefusal;

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
}

/** The `WWW-Authenticate` value without error parameters (RFC 6750 §3). */
export const BEARER_CHALLENGE = 'Bearer realm="mcpgate"';
export const NO_TOKEN = 'no bearer token (send Authorization: Bearer <token>)';
export const NOT_BEARER = 'the Authorization header is not a bearer token';

const MAX_TOKEN_LENGTH = 8192;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/; // RFC 6750 §2.1 b64token
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/; // JWS compact serialization
const MAX_DATE_SECONDS = 8.64e12; // the largest a JS Date can show

/** `sha256:<64 lowercase hex>` of a token: the form agents' `tokens` list. */
export function hashToken(token: string): string {
  return `sha256:${createHash('sha256').update(token, 'utf8').digest('hex')}`;
}

/**
 * The agent a request's `Authorization` header identifies under `rules`: a static token first, then
 * (when the token has the JWT shape) a JWT: from the `auth.oauth` issuer its `iss` names, else by
 * the `auth.jwt` key. A static token is answered without waiting on anything.
 */
export async function authenticate(rules: Rules, authorization: string | undefined, context: AuthContext = {}): Promise<AuthOutcome> {
  const token = bearerToken(authorization);
  if (typeof token !== 'string') return token;
  // A map lookup by hash: the hash of a secret token reveals nothing through lookup timing.
  const agent = rules.tokens.get(hashToken(token));
  if (agent !== undefined) return { ok: true, agent, via: 'token' };
  const jwt = rules.auth?.jwt;
  const oauth = rules.auth?.oauth ?? [];
  if (!JWT_SHAPE.test(token)) {
    const introspecting = oauth.filter((o) => o.introspection !== undefined);
    return introspecting.length === 0 ? fail('unknown token') : introspect(introspecting, token, context);
  }
  if (jwt === undefined && oauth.length === 0) return fail('unknown token (it looks like a JWT, but JWT authentication is not configured)');
  const now = context.now ?? Date.now();
  const [headerPart = '', payloadPart = ''] = token.split('.');
  const header = decodeJson(headerPart);
  if (header === undefined) return fail('JWT header is not base64url-encoded JSON');
  if (!isObject(header)) return fail('JWT header is not a JSON object');
  const iss = peekIssuer(payloadPart);
  const issuer = oauth.find((o) => o.issuer === iss);
  if (issuer !== undefined) return verifyOAuth(issuer, token, header, now, context);
  if (jwt !== undefined) return verifyJwt(jwt, token, header, now);
  const known = oauth.map((o) => JSON.stringify(o.issuer)).join(', ');
  return fail(iss === undefined ? `JWT has no "iss" claim (expected ${known})` : `JWT issuer ${shown(iss)} is not a configured issuer (${known})`);
}

/** Options for the `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1). */
export interface ChallengeOptions {
  /** The protected-resource metadata URL, when OAuth issuers are configured. */
  resourceMetadata?: string;
  /** The scopes to ask for (space-separated). */
  scope?: string;
  /** `insufficient_scope` (403) rather than `invalid_token`. */
  insufficientScope?: boolean;
}

/**
 * The `WWW-Authenticate` value for a refusal. A request that sent no bearer credentials gets no
 * error code (RFC 6750 §3.1); any other gets `invalid_token` (or `insufficient_scope`) and the
 * reason as description. With OAuth issuers configured it names the resource metadata, where an
 * MCP client finds the authorization server (MCP authorization, RFC 9728 §5.1).
 */
export function challenge(reason: string, options: ChallengeOptions = {}): string {
  let value = BEARER_CHALLENGE;
  if (options.resourceMetadata !== undefined) value += `, resource_metadata="${options.resourceMetadata.replace(/["\\]/g, '')}"`;
  if (options.scope !== undefined && options.scope !== '') value += `, scope="${options.scope}"`;
  if (reason === NO_TOKEN || reason === NOT_BEARER) return value;
  return `${value}, error="${options.insufficientScope === true ? 'insufficient_scope' : 'invalid_token'}", error_description="${descriptionText(reason)}"`;
}

/**
 * The RFC 9728 protected-resource metadata of mcpgate: its resource URI, the configured issuers as
 * authorization servers, and the scopes any of them requires.
 */
export function resourceMetadata(rules: Rules, resource: string): Record<string, unknown> {
  const oauth = rules.auth?.oauth ?? [];
  const scopes = [...new Set(oauth.flatMap((o) => o.scopes))];
  return {
    resource,
    authorization_servers: oauth.map((o) => o.issuer),
    bearer_methods_supported: ['header'],
    ...(scopes.length > 0 && { scopes_supported: scopes }),
    resource_name: 'mcpgate',
  };
}

/** Where a resource URI's metadata is (RFC 9728 §3.1: the well-known segment goes before its path). */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}/.well-known/oauth-protected-resource${path}`;
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
// JWT (RFC 7515 compact JWS, RFC 7519 claims, RFC 8725 best practices), verified by jose

/** The checks made before jose, for a clear reason; jose makes them again (it is the one that decides). */
function headerProblem(header: Record<string, unknown>, algorithms: readonly string[]): string | undefined {
  const alg = header.alg;
  if (typeof alg !== 'string' || alg === '') return 'JWT header has no "alg"';
  if (alg.toLowerCase() === 'none') return 'JWT algorithm "none" (an unsigned token) is never accepted';
  // The configured list decides, never the header: it was fixed at load from the key's type.
  if (!algorithms.includes(alg)) return `JWT algorithm ${shownName(alg)} is not allowed (allowed: ${algorithms.join(', ')})`;
  if (header.crit !== undefined) return 'JWT header lists "crit" extensions, which mcpgate does not support (RFC 7515 §4.1.11)';
  return undefined;
}

async function verifyJwt(config: JwtConfig, token: string, header: Record<string, unknown>, now: number): Promise<AuthOutcome> {
  const problem = headerProblem(header, config.algorithms);
  if (problem !== undefined) return fail(problem);
  const options: JWTVerifyOptions = {
    algorithms: [...config.algorithms],
    clockTolerance: config.clockSkewSeconds,
    currentDate: new Date(now),
    ...(config.issuer !== undefined && { issuer: config.issuer }),
    ...(config.audience !== undefined && { audience: [...config.audience] }),
    ...(config.requireExp && { requiredClaims: ['exp'] }),
  };
  const verified = await verifyWithJose(token, config.key, options, (claims) => checkClaims(config, claims, now));
  if (!verified.ok) return verified;
  return checkClaims(config, verified.claims, now);
}

async function verifyOAuth(issuer: OAuthIssuer, token: string, header: Record<string, unknown>, now: number, context: AuthContext): Promise<AuthOutcome> {
  const problem = headerProblem(header, issuer.algorithms);
  if (problem !== undefined) return fail(problem);
  const audience = issuer.audience ?? (context.resource === undefined ? undefined : [context.resource]);
  if (context.issuers === undefined || audience === undefined) return fail('OAuth tokens cannot be checked here (no issuer keys or resource URI)');
  let keys: JWTVerifyGetKey;
  try {
    keys = await context.issuers.keysFor(issuer);
  } catch (err) {
    return { ok: false, status: 503, reason: `the signing keys of issuer ${issuer.issuer} are unavailable: ${err instanceof Error ? err.message : String(err)}` };
  }
  const config: ClaimPolicy = {
    issuer: issuer.issuer,
    audience,
    agentClaim: issuer.agentClaim,
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
    return { ok: false, status: 403, scope: issuer.scopes.join(' '), reason: `the token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(', ')} that issuer ${issuer.issuer} requires` };
  }
  return { ok: true, agent: outcome.agent, via: 'oauth', claims: verified.claims };
}

/**
 * An opaque token, asked about at each issuer with `introspection` in turn (RFC 7662): the first
 * that calls it active decides, with the same checks as a JWT (issuer, audience bound to the resource
 * URI, expiry, agent claim, scopes).
 */
async function introspect(issuers: readonly OAuthIssuer[], token: string, context: AuthContext): Promise<AuthOutcome> {
  if (context.issuers === undefined || context.resource === undefined) return fail('opaque tokens cannot be checked here (no issuer keys or resource URI)');
  const now = context.now ?? Date.now();
  for (const issuer of issuers) {
    let claims: Record<string, unknown>;
    try {
      claims = await context.issuers.introspect(issuer, token);
    } catch (err) {
      return { ok: false, status: 503, reason: `cannot introspect the token at issuer ${issuer.issuer}: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (claims.active !== true) continue;
    const policy: ClaimPolicy = {
      issuer: claims.iss === undefined ? undefined : issuer.issuer,
      audience: issuer.audience ?? [context.resource],
      agentClaim: issuer.agentClaim,
      clockSkewSeconds: issuer.clockSkewSeconds,
      requireExp: false,
    };
    const outcome = checkClaims(policy, claims, now);
    if (!outcome.ok) return fail(outcome.reason.replace(/^JWT/, 'the introspected token'));
    const missing = issuer.scopes.filter((scope) => !scopesOf(claims).includes(scope));
    if (missing.length > 0) {
      return { ok: false, status: 403, scope: issuer.scopes.join(' '), reason: `the token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(', ')} that issuer ${issuer.issuer} requires` };
    }
    return { ok: true, agent: outcome.agent, via: 'oauth', claims };
  }
  return fail(`unknown token (not active at ${issuers.map((o) => o.issuer).join(', ')})`);
}

/** The token's scopes: `scope` (RFC 8693 §4.2, space-separated) or `scp` (an array, as some providers send). */
function scopesOf(claims: JWTPayload): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((s) => s !== '');
  const scp = claims.scp;
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ');
  return [];
}

/** The claim checks of auth.jwt and of an OAuth issuer alike. */
type ClaimPolicy = Pick<JwtConfig, 'issuer' | 'audience' | 'agentClaim' | 'clockSkewSeconds' | 'requireExp'>;

type Verified = { ok: true; claims: JWTPayload } | AuthRefusal;

/**
 * jose's verdict. A claim jose refuses is explained by `explain` (our own wording of the same
 * check, from the payload jose read) when it can; otherwise jose's message is given.
 */
async function verifyWithJose(token: string, key: JwtConfig['key'] | JWTVerifyGetKey, options: JWTVerifyOptions, explain: (claims: JWTPayload) => AuthOutcome): Promise<Verified> {
  try {
    // Two calls for jose's two overloads (a key, or a key lookup such as a remote JWKS).
    const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
    return { ok: true, claims: payload };
  } catch (err) {
    if (err instanceof IssuerUnavailable) return { ok: false, status: 503, reason: `the signing keys are unavailable: ${err.message}` };
    const code = (err as { code?: unknown }).code;
    const payload = (err as { payload?: unknown }).payload;
    switch (code) {
      case 'ERR_JWT_EXPIRED':
      case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
        const explained = isObject(payload) ? explain(payload) : undefined;
        return fail(explained !== undefined && !explained.ok ? explained.reason : `JWT ${(err as Error).message}`);
      }
      case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
        return fail('JWT signature does not verify');
      case 'ERR_JWKS_NO_MATCHING_KEY':
        return fail('JWT is signed with a key the issuer does not publish (no key in its JWKS matches the kid and algorithm, even after a refresh)');
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
        return fail(`JWT algorithm is not allowed (allowed: ${(options.algorithms ?? []).join(', ')})`);
      case 'ERR_JWT_INVALID':
        return fail(isObject(decodeJson(token.split('.')[1] ?? '')) ? `JWT is malformed: ${(err as Error).message}` : 'JWT payload is not a JSON object');
      case 'ERR_JWS_INVALID':
      case 'ERR_JOSE_NOT_SUPPORTED':
      case 'ERR_JWK_INVALID':
        return fail(`JWT is malformed or unsupported: ${(err as Error).message}`);
      default:
        return fail('JWT does not verify');
    }
  }
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

/** The unverified `iss`, only to choose which issuer's keys verify the token. */
function peekIssuer(payloadPart: string): string | undefined {
  const payload = decodeJson(payloadPart);
  return isObject(payload) && typeof payload.iss === 'string' ? payload.iss : undefined;
}

/** Our wording of the claim checks (jose makes them too), plus `iat` not in the future, `aud` refused when none is configured, and the agent claim. */
function checkClaims(config: ClaimPolicy, claims: Record<string, unknown>, now: number): AuthOutcome {
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
  if (typeof agent !== 'string' || agent === '') return fail(`JWT claim ${JSON.stringify(name)} is not a non-empty string (it names the agent)`);
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
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function shownName(value: string): string {
  return /^[A-Za-z0-9]{1,16}$/.test(value) ? value : shown(value);
}
