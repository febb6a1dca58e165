// A JWT's header and signature (RFC 7515 compact JWS, RFC 7519 claims, RFC 8725 best practices),
// verified by jose with the algorithms of the configuration, never the token's header; and the
// fixed-key path of the rules' `auth.jwt`. A refusal jose makes is worded for the caller.
// Our own checks run before jose's, so a refusal names its reason clearly.

import { jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { JwtConfig } from '../rules/auth-config.js';
import { checkClaims, shownName } from './claims.js';
import { IssuerUnavailable } from './issuers.js';
import { fail, type AuthOutcome, type AuthRefusal } from './outcome.js';

/** The checks made before jose, for a clear reason; jose makes them again (it is the one that decides). */
export function headerProblem(header: Record<string, unknown>, algorithms: readonly string[]): string | undefined {
  const alg = header.alg;
  if (typeof alg !== 'string' || alg === '') return 'JWT header has no "alg"';
  if (alg.toLowerCase() === 'none') return 'JWT algorithm "none" (an unsigned token) is never accepted';
  // The configured list decides, never the header: it was fixed at load from the key's type.
  if (!algorithms.includes(alg)) return `JWT algorithm ${shownName(alg)} is not allowed (allowed: ${algorithms.join(', ')})`;
  if (header.crit !== undefined) return 'JWT header lists "crit" extensions, which mcpgate does not support (RFC 7515 §4.1.11)';
  return undefined;
}

export async function verifyJwt(config: JwtConfig, token: string, header: Record<string, unknown>, now: number): Promise<AuthOutcome> {
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

type Verified = { ok: true; claims: JWTPayload } | AuthRefusal;

/**
 * jose's verdict. A claim jose refuses is explained by `explain` (our own wording of the same
 * check, from the payload jose read) when it can; otherwise jose's message is given.
 */
export async function verifyWithJose(
  token: string,
  key: JwtConfig['key'] | JWTVerifyGetKey,
  options: JWTVerifyOptions,
  explain: (claims: JWTPayload) => AuthOutcome,
): Promise<Verified> {
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
        return fail(
          'JWT is signed with a key the issuer does not publish (no key in its JWKS matches the kid and algorithm, even after a refresh)',
        );
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
        return fail(`JWT algorithm is not allowed (allowed: ${(options.algorithms ?? []).join(', ')})`);
      case 'ERR_JWT_INVALID':
        return fail(
          isObject(decodeJson(token.split('.')[1] ?? ''))
            ? `JWT is malformed: ${(err as Error).message}`
            : 'JWT payload is not a JSON object',
        );
      case 'ERR_JWS_INVALID':
      case 'ERR_JOSE_NOT_SUPPORTED':
      case 'ERR_JWK_INVALID':
        return fail(`JWT is malformed or unsupported: ${(err as Error).message}`);
      default:
        return fail('JWT does not verify');
    }
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function decodeJson(part: string): unknown {
  if (part.length % 4 === 1) return undefined; // no base64url string has this length
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The unverified `iss`, only to choose which issuer's keys verify the token. */
export function peekIssuer(payloadPart: string): string | undefined {
  const payload = decodeJson(payloadPart);
  return isObject(payload) && typeof payload.iss === 'string' ? payload.iss : undefined;
}
