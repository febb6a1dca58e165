// Who is calling the HTTP front (docs/architecture.md "Agent identity"): this file reads the
// request's bearer token (RFC 6750 §2.1), answers a static token (its SHA-256 listed under an agent
// in gateway-rules.json) itself and hands any other to its verifier — a JWT of an `auth.oauth` issuer
// or of the fixed `auth.jwt` key (jwt.ts, oauth-tokens.ts; claims.ts words the claim checks), or
// introspection — and it writes the `WWW-Authenticate` challenge and the RFC 9728 resource metadata.
// The rules snapshot, the time, the issuers' key caches and mcpgate's resource URI are arguments
// (outcome.ts `AuthContext`); the verified claims come back with the identity (`AuthOutcome.claims`),
// and reasons never echo the token. Which token goes to which verifier: the room's README.

import { createHash } from 'node:crypto';
import type { Rules } from '../rules/schema.js';
import { shown } from './claims.js';
import { decodeJson, isObject, peekIssuer, verifyJwt } from './jwt.js';
import { introspect, verifyOAuth } from './oauth-tokens.js';
import { fail, type AuthContext, type AuthOutcome } from './outcome.js';

export type { AuthClaims } from './outcome.js';

/** The `WWW-Authenticate` value without error parameters (RFC 6750 §3). */
const BEARER_CHALLENGE = 'Bearer realm="mcpgate"';
const NO_TOKEN = 'no bearer token (send Authorization: Bearer <token>)';
const NOT_BEARER = 'the Authorization header is not a bearer token';

/**
 * Marks mcpgate's own tokens (`mcpgate token`: agents' and admins'), so one found in a log or a
 * repository is recognisable (and scannable), and one the rules do not list is refused here without
 * being sent to an issuer's introspection.
 */
export const TOKEN_PREFIX = 'mcpg_';

const MAX_TOKEN_LENGTH = 8192;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/; // RFC 6750 §2.1 b64token
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/; // JWS compact serialization

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
  const hash = hashToken(token);
  const agent = rules.tokens.get(hash);
  if (agent !== undefined) return { ok: true, agent, via: 'token' };
  // An admin's token is no agent's: it opens the console and the operator's /status, never /mcp,
  // and is never sent to an issuer's introspection.
  if (rules.admins.has(hash))
    return fail(
      'this is an admin\'s token (the rules\' "admins"): it opens the console and /status, not /mcp; an agent needs a token of its own',
    );
  const jwt = rules.auth?.jwt;
  const oauth = rules.auth?.oauth ?? [];
  if (token.startsWith(TOKEN_PREFIX))
    return fail('unknown token (an mcpgate token that the rules do not list: revoked, or for another gateway)');
  if (!JWT_SHAPE.test(token)) {
    // The rules allow one introspecting issuer at most: an opaque token goes there and nowhere else.
    const introspecting = oauth.find((o) => o.introspection !== undefined);
    return introspecting === undefined ? fail('unknown token') : introspect(introspecting, token, context);
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
  return fail(
    iss === undefined ? `JWT has no "iss" claim (expected ${known})` : `JWT issuer ${shown(iss)} is not a configured issuer (${known})`,
  );
}

/**
 * The admin (the rules' `admins`) whose token the `Authorization` header carries, if any: the
 * operators that /status and the console answer. Never an agent's token, never a JWT.
 */
export function adminOf(rules: Rules, authorization: string | undefined): string | undefined {
  const token = bearerToken(authorization);
  return typeof token === 'string' ? rules.admins.get(hashToken(token)) : undefined;
}

/** Options for the `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1). */
interface ChallengeOptions {
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
  const text = reason
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x7e]/g, '?');
  return text.length > 300 ? `${text.slice(0, 299)}…`.replace(/[^\x20-\x7e]/g, '.') : text;
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
