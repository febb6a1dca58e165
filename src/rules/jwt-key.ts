// The key of `auth.jwt` (auth-config.ts): a secret, a PEM or JWK public key, or a PEM file read
// through the caller's KeyFileReader, compiled once per load into a KeyObject, with the algorithms
// its type can verify (RFC 8725 §2.1, §3.1: a token's header never chooses them).

import { createPublicKey, createSecretKey } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import path from 'node:path';
import { tryExpand } from '../config/expand.js';
import { describeValue, isPlainObject } from '../config/issues.js';
import type { AuthCompileContext, JwtAlgorithm } from './auth-types.js';

export const KEY_SOURCES = ['secret', 'publicKey', 'publicKeyFile'] as const;
type KeySource = (typeof KEY_SOURCES)[number];
export const HMAC_MIN_BYTES: Readonly<Record<string, number>> = { HS256: 32, HS384: 48, HS512: 64 }; // RFC 7518 §3.2
const EC_CURVES: Readonly<Record<string, JwtAlgorithm>> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };
const RSA_ALGORITHMS: readonly JwtAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
export const JWT = ['auth', 'jwt'] as const;

export interface CompiledKey {
  readonly key: KeyObject;
  readonly description: string;
  /** Every algorithm this key can verify; the default for `algorithms`. */
  readonly fits: readonly JwtAlgorithm[];
}

export function compileKey(source: KeySource, value: unknown, ctx: AuthCompileContext): CompiledKey | undefined {
  const at = [...JWT, source];
  if (source === 'publicKey' && isPlainObject(value)) return fromJwk(value, ctx);
  if (typeof value !== 'string') {
    const expected =
      source === 'secret'
        ? 'the HMAC secret, ideally "${VAR}"'
        : source === 'publicKey'
          ? 'a PEM public key or a JWK object'
          : 'the path of a PEM file';
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
    ctx.error(
      at,
      `cannot read the key file ${file}: these rules are compiled from text alone, with no file reader; give the key itself as "publicKey"`,
    );
    return undefined;
  }
  let text: string;
  try {
    text = ctx.readKeyFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    ctx.error(at, `cannot read the key file ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(err))}`);
    return undefined;
  }
  return fromPem(text, at, `the key file ${file}`, ctx);
}

function fromSecret(secret: string, literal: boolean, ctx: AuthCompileContext): CompiledKey | undefined {
  const at = [...JWT, 'secret'];
  const bytes = Buffer.from(secret, 'utf8');
  if (literal)
    ctx.warn(
      at,
      'the secret is written in the rules file itself; prefer "${JWT_SECRET}" with the variable set, so the file holds no secret',
    );
  if (bytes.length < 32) {
    // The length only, never the value.
    ctx.error(
      at,
      `the secret is ${bytes.length === 0 ? 'empty' : `${bytes.length} bytes`}; HMAC keys need at least 32 bytes (RFC 7518 §3.2)`,
    );
    return undefined;
  }
  const fits = (['HS256', 'HS384', 'HS512'] as const).filter((alg) => bytes.length >= (HMAC_MIN_BYTES[alg] ?? 0));
  return { key: createSecretKey(bytes), description: `a ${bytes.length}-byte secret`, fits };
}

function fromPem(text: string, at: readonly PropertyKey[], what: string, ctx: AuthCompileContext): CompiledKey | undefined {
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

function fromJwk(jwk: Record<string, unknown>, ctx: AuthCompileContext): CompiledKey | undefined {
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
function classify(key: KeyObject, at: readonly PropertyKey[], ctx: AuthCompileContext): CompiledKey | undefined {
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
  if (type === 'ed25519' || type === 'ed448')
    return { key, description: `an ${type === 'ed25519' ? 'Ed25519' : 'Ed448'} public key`, fits: ['EdDSA'] };
  ctx.error(
    at,
    `a ${type ?? 'non-asymmetric'} key cannot verify JWTs; use an RSA (2048 bits or more), EC (P-256, P-384, P-521) or Ed25519 key`,
  );
  return undefined;
}
