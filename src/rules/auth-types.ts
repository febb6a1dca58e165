// The compiled `auth` section of gateway-rules.json (auth-config.ts compiles it): the JWT settings,
// the OAuth issuers, and what the compiler is given. src/auth/ reads these through auth-config.ts.

import type { KeyObject } from 'node:crypto';
import type { Env } from '../config/expand.js';

export const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

export interface JwtConfig {
  /** A secret key for HS*, a public key for everything else. */
  readonly key: KeyObject;
  /** What the key is, for messages and status (never the key itself): "a 48-byte secret", "an RSA 2048-bit public key". */
  readonly keyDescription: string;
  /** The algorithms a token may use; every one of them fits `key` (checked at load). */
  readonly algorithms: readonly JwtAlgorithm[];
  /** `iss` must equal this, when set. */
  readonly issuer: string | undefined;
  /** `aud` (a string or an array) must contain one of these, when set. */
  readonly audience: readonly string[] | undefined;
  /** The claim whose (non-empty string) value is the agent id. */
  readonly agentClaim: string;
  /**
   * Claims every token must carry (names, or dotted paths into nested claims): the claims the rules'
   * grants read, so that a restriction written as a grant cannot be escaped by a token without them.
   */
  readonly requireClaims: readonly string[];
  readonly clockSkewSeconds: number;
  readonly requireExp: boolean;
}

/** One OAuth authorization server whose JWT access tokens name agents (`auth.oauth`). */
export interface OAuthIssuer {
  /** The issuer identifier: `iss` must equal it, and its metadata (RFC 8414 / OIDC discovery) names the JWKS. */
  readonly issuer: string;
  /**
   * The namespace of this issuer's agent ids: `NAMESPACE:CLAIM`. Undefined only for the first issuer
   * of the list (its ids stay bare, as static tokens' are); every later one must have one, so a
   * partner's `sub=alice` is never the agent `alice`.
   */
  readonly namespace: string | undefined;
  /** Where the signing keys are, when set; otherwise `jwks_uri` from the issuer's metadata. */
  readonly jwksUri: string | undefined;
  /** `aud` must contain one of these; undefined: the gateway's resource URI (RFC 8707). */
  readonly audience: readonly string[] | undefined;
  /** Asymmetric algorithms only: an issuer's tokens are never checked with HMAC. */
  readonly algorithms: readonly JwtAlgorithm[];
  readonly agentClaim: string;
  /** Claims every token must carry (as `JwtConfig.requireClaims`). */
  readonly requireClaims: readonly string[];
  /** Scopes every token must carry (`scope` or `scp`); also advertised in the resource metadata. */
  readonly scopes: readonly string[];
  readonly clockSkewSeconds: number;
  /** Least time between two JWKS fetches caused by a token whose `kid` the cached set lacks. */
  readonly refreshCooldownSeconds: number;
  /** RFC 7662 introspection of opaque (non-JWT) tokens, when set. */
  readonly introspection: Introspection | undefined;
}

export interface Introspection {
  /** Where to ask; undefined: `introspection_endpoint` from the issuer's metadata. */
  readonly endpoint: string | undefined;
  readonly clientId: string;
  /** The client secret (from `${VAR}`): sent with HTTP Basic to the endpoint, never shown. */
  readonly clientSecret: string;
  /**
   * The most introspection calls a second to this issuer (a bucket of this many, refilled at this
   * rate): unknown tokens past it are refused with 503, not sent. Default 10.
   */
  readonly maxPerSecond: number;
  /**
   * How long an active answer is trusted (capped by the token's `exp`): a token revoked at the
   * issuer is still accepted for up to this long. Default 300.
   */
  readonly cacheSeconds: number;
}

export interface AuthConfig {
  readonly jwt: JwtConfig | undefined;
  /** mcpgate's resource URI (RFC 8707, RFC 9728 `resource`); undefined: derived from the listen address. */
  readonly resource: string | undefined;
  readonly oauth: readonly OAuthIssuer[];
}

/**
 * Reads the key file `publicKeyFile` names (an absolute path) as UTF-8 text, or throws — an errno
 * error (`code`) names the reason in the message. Given by the caller: rules/ reads no files.
 */
export type KeyFileReader = (file: string) => string;

/** What the compiler needs from schema.ts: where the file is, the environment, and where issues go. */
export interface AuthCompileContext {
  /** Absolute path of the rules file (`publicKeyFile` is relative to its directory). */
  readonly file: string;
  readonly env: Env;
  /** How `publicKeyFile` is read; undefined when the rules are compiled from text alone. */
  readonly readKeyFile: KeyFileReader | undefined;
  error(segments: readonly PropertyKey[], message: string): void;
  warn(segments: readonly PropertyKey[], message: string): void;
}
