// The `auth` section of gateway-rules.json (docs/architecture.md "Agent identity"): validation and compilation
// of the JWT settings the HTTP front verifies tokens with (src/auth/auth.ts). The key is compiled
// here, once per load, into a KeyObject (the secret text is not kept), and the algorithms it may
// verify are fixed here from the key's type, so a token's header can never choose them: no `none`,
// no HMAC with a public key (RFC 8725 §2.1, §3.1). Static tokens live under each agent (schema.ts).
//
//   "auth": { "jwt": { "secret": "${JWT_SECRET}" } }                          HS256/384/512
//   "auth": { "jwt": { "publicKey": "-----BEGIN PUBLIC KEY-----…" | {JWK}, … } }  RS*, PS*, ES*, EdDSA
//   "auth": { "jwt": { "publicKeyFile": "keys/idp.pem", … } }   relative to the rules file's directory
// (a PEM may also be an X.509 certificate; `${VAR}` is expanded in all three key settings)
// with optional "algorithms", "issuer", "audience", "agentClaim" (default "sub"),
// "clockSkewSeconds" (default 30) and "requireExp" (default true).
//
// rules/ reads no files: `publicKeyFile` is resolved here and read through the `KeyFileReader` the
// caller gives (src/reload.ts reads it synchronously while the rules load, at startup and reload; a
// changed key file is picked up by the next reload of the rules file). Compiled from text alone, with
// no reader, a `publicKeyFile` is an error that says to give the key as `publicKey`.

import { createPublicKey, createSecretKey } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import path from 'node:path';
import { tryExpand } from '../config/expand.js';
import type { Env } from '../config/expand.js';
import { describeValue, isPlainObject } from '../config/issues.js';

export const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
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
  readonly clockSkewSeconds: number;
  readonly requireExp: boolean;
}

export interface AuthConfig {
  readonly jwt: JwtConfig | undefined;
}

/**
 * Reads the key file `publicKeyFile` names (an absolute path) as UTF-8 text, or throws — an errno
 * error (`code`) names the reason in the message. Given by the caller: rules/ reads no files.
 */
export type KeyFileReader = (file: string) => string;

/** What the compiler needs from schema.ts: where the file is, the environment, and where issues go. */
export interface AuthContext {
  /** Absolute path of the rules file (`publicKeyFile` is relative to its directory). */
  readonly file: string;
  readonly env: Env;
  /** How `publicKeyFile` is read; undefined when the rules are compiled from text alone. */
  readonly readKeyFile: KeyFileReader | undefined;
  error(segments: readonly PropertyKey[], message: string): void;
  warn(segments: readonly PropertyKey[], message: string): void;
}

const AUTH_KEYS = new Set(['jwt']);
const JWT_KEYS = ['secret', 'publicKey', 'publicKeyFile', 'algorithms', 'issuer', 'audience', 'agentClaim', 'clockSkewSeconds', 'requireExp'];
const KEY_SOURCES = ['secret', 'publicKey', 'publicKeyFile'] as const;
type KeySource = (typeof KEY_SOURCES)[number];
const MAX_SKEW_SECONDS = 600;
const HMAC_MIN_BYTES: Readonly<Record<string, number>> = { HS256: 32, HS384: 48, HS512: 64 }; // RFC 7518 §3.2
const EC_CURVES: Readonly<Record<string, JwtAlgorithm>> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };
const RSA_ALGORITHMS: readonly JwtAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const JWT = ['auth', 'jwt'] as const;

interface CompiledKey {
  readonly key: KeyObject;
  readonly description: string;
  /** Every algorithm this key can verify; the default for `algorithms`. */
  readonly fits: readonly JwtAlgorithm[];
}

const q = (value: string): string => JSON.stringify(value);

/** Validates and compiles `auth`; records problems through `ctx` and returns undefined when absent or unusable. */
export function compileAuth(value: unknown, ctx: AuthContext): AuthConfig | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    ctx.error(['auth'], `expected an object (the token and JWT settings of the HTTP front), got ${describeValue(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value)) if (!AUTH_KEYS.has(key)) ctx.warn(['auth', key], `unknown key ${q(key)} in auth is ignored`);
  return Object.freeze({ jwt: value.jwt === undefined ? undefined : compileJwt(value.jwt, ctx) });
}

function compileJwt(value: unknown, outer: AuthContext): JwtConfig | undefined {
  let failed = false;
  const ctx: AuthContext = { ...outer, error: (segments, message) => { failed = true; outer.error(segments, message); } };
  if (!isPlainObject(value)) {
    ctx.error(JWT, `expected an object with "secret", "publicKey" or "publicKeyFile", got ${describeValue(value)}`);
    return undefined;
  }
  // An error, not a warning: a misspelt "audience" or "issuer" would silently check nothing.
  for (const key of Object.keys(value)) {
    if (!JWT_KEYS.includes(key)) ctx.error([...JWT, key], `unknown key ${q(key)} in auth.jwt (known: ${JWT_KEYS.join(', ')})`);
  }
  const sources = KEY_SOURCES.filter((source) => value[source] !== undefined);
  let key: CompiledKey | undefined;
  const [source] = sources;
  if (source === undefined) ctx.error(JWT, 'expected one of "secret" (for HS256/384/512), "publicKey" or "publicKeyFile" (for RS*, PS*, ES*, EdDSA)');
  else if (sources.length > 1) ctx.error(JWT, `${sources.map(q).join(' and ')} are ${sources.length === 2 ? 'both' : 'all'} set; give exactly one key`);
  else key = compileKey(source, value[source], ctx);

  const algorithms = readAlgorithms(value.algorithms, key, ctx);
  const issuer = readName(value.issuer, 'issuer', ctx);
  const audience = readAudience(value.audience, ctx);
  const agentClaim = readName(value.agentClaim, 'agentClaim', ctx) ?? 'sub';
  const clockSkewSeconds = readSkew(value.clockSkewSeconds, ctx);
  let requireExp = true;
  if (value.requireExp !== undefined) {
    if (typeof value.requireExp === 'boolean') requireExp = value.requireExp;
    else ctx.error([...JWT, 'requireExp'], `expected true or false, got ${describeValue(value.requireExp)}`);
  }
  if (failed || key === undefined || algorithms === undefined) return undefined;
  return Object.freeze({ key: key.key, keyDescription: key.description, algorithms, issuer, audience, agentClaim, clockSkewSeconds, requireExp });
}

// ---------------------------------------------------------------------------------------------
// Keys

function compileKey(source: KeySource, value: unknown, ctx: AuthContext): CompiledKey | undefined {
  const at = [...JWT, source];
  if (source === 'publicKey' && isPlainObject(value)) return fromJwk(value, ctx);
  if (typeof value !== 'string') {
    const expected = source === 'secret' ? 'the HMAC secret, ideally "${VAR}"' : source === 'publicKey' ? 'a PEM public key or a JWK object' : 'the path of a PEM file';
    ctx.error(at, `expected a string (${expected}), got ${describeValue(value)}`);
    return undefined;
  }
  const expanded = tryExpand(value, ctx.env);
  if (!expanded.ok) {
    ctx.error(at, expanded.reason);
    return undefined;
  }
  if (source === 'secret') return fromSecret(expanded.value, !value.includes('${'), ctx);
  if (source === 'publicKey') return fromPem(expanded.value, at, 'publicKey', ctx);
  if (expanded.value === '') {
    ctx.error(at, 'expected the path of a PEM file, got ""');
    return undefined;
  }
  const file = path.resolve(path.dirname(ctx.file), expanded.value);
  if (ctx.readKeyFile === undefined) {
    ctx.error(at, `cannot read the key file ${file}: these rules are compiled from text alone, with no file reader; give the key itself as "publicKey"`);
    return undefined;
  }
  let text: string;
  try {
    text = ctx.readKeyFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    ctx.error(at, `cannot read the key file ${file}: ${code === 'ENOENT' ? 'no such file' : code ?? String(err)}`);
    return undefined;
  }
  return fromPem(text, at, `the key file ${file}`, ctx);
}

function fromSecret(secret: string, literal: boolean, ctx: AuthContext): CompiledKey | undefined {
  const at = [...JWT, 'secret'];
  const bytes = Buffer.from(secret, 'utf8');
  if (literal) ctx.warn(at, 'the secret is written in the rules file itself; prefer "${JWT_SECRET}" with the variable set, so the file holds no secret');
  if (bytes.length < 32) {
    // The length only, never the value.
    ctx.error(at, `the secret is ${bytes.length === 0 ? 'empty' : `${bytes.length} bytes`}; HMAC keys need at least 32 bytes (RFC 7518 §3.2)`);
    return undefined;
  }
  const fits = (['HS256', 'HS384', 'HS512'] as const).filter((alg) => bytes.length >= (HMAC_MIN_BYTES[alg] ?? 0));
  return { key: createSecretKey(bytes), description: `a ${bytes.length}-byte secret`, fits };
}

function fromPem(text: string, at: readonly PropertyKey[], what: string, ctx: AuthContext): CompiledKey | undefined {
  if (text.includes('PRIVATE KEY-----')) {
    ctx.error(at, `${what} holds a private key; give the public key only (the gateway never needs the private half)`);
    return undefined;
  }
  try {
    return classify(createPublicKey(text), at, ctx);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    ctx.error(at, `${what} is not a usable PEM public key ("-----BEGIN PUBLIC KEY-----" …): ${detail}`);
    return undefined;
  }
}

function fromJwk(jwk: Record<string, unknown>, ctx: AuthContext): CompiledKey | undefined {
  const at = [...JWT, 'publicKey'];
  if (jwk.d !== undefined) {
    ctx.error(at, 'publicKey is a private JWK (it has "d"); give the public key only');
    return undefined;
  }
  try {
    return classify(createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }), at, ctx);
  } catch (err) {
    ctx.error(at, `publicKey is not a usable JWK: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** The algorithms a public key can verify, from its type (and curve); an error for a key that verifies none. */
function classify(key: KeyObject, at: readonly PropertyKey[], ctx: AuthContext): CompiledKey | undefined {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (type === 'rsa' || type === 'rsa-pss') {
    const bits = details.modulusLength ?? 0;
    if (bits < 2048) {
      ctx.error(at, `the RSA key is ${bits} bits; JWT signatures need at least 2048 (RFC 7518 §3.3)`);
      return undefined;
    }
    const fits = type === 'rsa' ? RSA_ALGORITHMS : RSA_ALGORITHMS.filter((alg) => alg.startsWith('PS'));
    return { key, description: `an ${type === 'rsa' ? 'RSA' : 'RSA-PSS'} ${bits}-bit public key`, fits };
  }
  if (type === 'ec') {
    const curve = details.namedCurve ?? 'unknown';
    const alg = EC_CURVES[curve];
    if (alg === undefined) {
      ctx.error(at, `an EC key on curve ${curve} cannot verify JWTs; ES256, ES384 and ES512 need P-256, P-384 and P-521`);
      return undefined;
    }
    return { key, description: `an EC ${curve} public key`, fits: [alg] };
  }
  if (type === 'ed25519' || type === 'ed448') return { key, description: `an ${type === 'ed25519' ? 'Ed25519' : 'Ed448'} public key`, fits: ['EdDSA'] };
  ctx.error(at, `a ${type ?? 'non-asymmetric'} key cannot verify JWTs; use an RSA (2048 bits or more), EC (P-256, P-384, P-521) or Ed25519 key`);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The other settings

function isAlgorithm(value: string): value is JwtAlgorithm {
  return (JWT_ALGORITHMS as readonly string[]).includes(value);
}

function readAlgorithms(value: unknown, key: CompiledKey | undefined, ctx: AuthContext): readonly JwtAlgorithm[] | undefined {
  const at = [...JWT, 'algorithms'];
  if (value === undefined) return key === undefined ? undefined : Object.freeze([...key.fits]);
  if (!Array.isArray(value) || value.length === 0) {
    ctx.error(at, `expected a non-empty array of algorithm names (${JWT_ALGORITHMS.join(', ')}), got ${Array.isArray(value) ? 'an empty array' : describeValue(value)}`);
    return undefined;
  }
  const algorithms: JwtAlgorithm[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string') ctx.error([...at, i], `expected an algorithm name, got ${describeValue(item)}`);
    else if (item.toLowerCase() === 'none') ctx.error([...at, i], 'the "none" algorithm (an unsigned token) is never accepted');
    else if (!isAlgorithm(item)) ctx.error([...at, i], `unknown algorithm ${describeValue(item, true)} (known: ${JWT_ALGORITHMS.join(', ')})`);
    else if (key !== undefined && !key.fits.includes(item)) {
      const why = item.startsWith('HS') && !key.fits.some((alg) => alg.startsWith('HS'))
        ? 'HMAC needs "secret"; a public key never verifies HMAC tokens'
        : item.startsWith('HS') && key.fits.some((alg) => alg.startsWith('HS'))
          ? `the secret is too short for it (RFC 7518 §3.2: ${HMAC_MIN_BYTES[item]} bytes or more)`
          : `it fits ${key.fits.join(', ')}`;
      ctx.error([...at, i], `algorithm ${item} cannot be verified with ${key.description}: ${why}`);
    } else if (!algorithms.includes(item)) algorithms.push(item);
  });
  return Object.freeze(algorithms);
}

function readName(value: unknown, name: 'issuer' | 'agentClaim', ctx: AuthContext): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return value;
  ctx.error([...JWT, name], `expected a non-empty string, got ${describeValue(value)}`);
  return undefined;
}

function readAudience(value: unknown, ctx: AuthContext): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return Object.freeze([value]);
  const at = [...JWT, 'audience'];
  if (!Array.isArray(value) || value.length === 0) {
    ctx.error(at, `expected a non-empty string or a non-empty array of them, got ${Array.isArray(value) ? 'an empty array' : describeValue(value)}`);
    return undefined;
  }
  const audience: string[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item === 'string' && item !== '') audience.push(item);
    else ctx.error([...at, i], `expected a non-empty string, got ${describeValue(item)}`);
  });
  return Object.freeze(audience);
}

function readSkew(value: unknown, ctx: AuthContext): number {
  if (value === undefined) return 30;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_SKEW_SECONDS) return value;
  ctx.error([...JWT, 'clockSkewSeconds'], `expected a whole number of seconds from 0 to ${MAX_SKEW_SECONDS}, got ${describeValue(value)}`);
  return 30;
}

/** A secret-free summary for status output. */
export function describeAuth(auth: AuthConfig | undefined): Record<string, unknown> | null {
  const jwt = auth?.jwt;
  if (jwt === undefined) return null;
  return {
    jwt: {
      key: jwt.keyDescription,
      algorithms: [...jwt.algorithms],
      issuer: jwt.issuer ?? null,
      audience: jwt.audience === undefined ? null : [...jwt.audience],
      agent_claim: jwt.agentClaim,
      clock_skew_seconds: jwt.clockSkewSeconds,
      require_exp: jwt.requireExp,
    },
  };
}
