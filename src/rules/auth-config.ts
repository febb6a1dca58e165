// The `auth` section of gateway-rules.json (docs/architecture.md "Agent identity"): validation and compilation
// of the JWT settings the HTTP front verifies tokens with (src/auth/auth.ts). The key is compiled
// (jwt-key.ts), once per load, into a KeyObject (the secret text is not kept), and the algorithms it may
// verify are fixed there from the key's type, so a token's header can never choose them: no `none`,
// no HMAC with a public key (RFC 8725 §2.1, §3.1). Static tokens live under each agent (schema.ts).

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
// OAuth issuers (`auth.oauth`) are compiled here too, their types in auth-types.ts: every issuer after
// the first must have a `namespace` (its agents are `NAMESPACE:ID`), and at most one may have
// `introspection`, both checked at load.

import { tryExpand } from '../config/expand.js';
import { describeValue, isPlainObject } from '../config/issues.js';
import {
  JWT_ALGORITHMS,
  type AuthConfig,
  type AuthCompileContext,
  type Introspection,
  type JwtAlgorithm,
  type JwtConfig,
  type OAuthIssuer,
} from './auth-types.js';
import { compileKey, HMAC_MIN_BYTES, JWT, KEY_SOURCES, type CompiledKey } from './jwt-key.js';

// The types live in auth-types.ts; src/auth/ and load.ts read them from here.
export type { AuthConfig, JwtConfig, KeyFileReader, OAuthIssuer } from './auth-types.js';

const AUTH_KEYS = new Set(['jwt', 'resource', 'oauth']);
const OAUTH_KEYS = [
  'issuer',
  'namespace',
  'jwksUri',
  'audience',
  'algorithms',
  'agentClaim',
  'scopes',
  'clockSkewSeconds',
  'refreshCooldownSeconds',
  'introspection',
  'requireClaims',
];
const INTROSPECTION_KEYS = ['clientId', 'clientSecret', 'endpoint', 'maxPerSecond', 'cacheSeconds'];
const MAX_INTROSPECTION_RATE = 1000;
const MAX_INTROSPECTION_CACHE_SECONDS = 3600;
const MAX_REFRESH_COOLDOWN_SECONDS = 3600;
const MAX_ISSUERS = 8;
const NAMESPACE = /^[A-Za-z0-9._-]{1,32}$/;
/** Every algorithm but HMAC's: what an issuer's published keys may sign with. */
const ASYMMETRIC_ALGORITHMS: readonly JwtAlgorithm[] = JWT_ALGORITHMS.filter((algorithm) => !algorithm.startsWith('HS'));
const JWT_KEYS = [
  'secret',
  'publicKey',
  'publicKeyFile',
  'algorithms',
  'issuer',
  'audience',
  'agentClaim',
  'clockSkewSeconds',
  'requireExp',
  'requireClaims',
];
const MAX_SKEW_SECONDS = 600;

const q = (value: string): string => JSON.stringify(value);

/** Validates and compiles `auth`; records problems through `ctx` and returns undefined when absent or unusable. */
export function compileAuth(value: unknown, ctx: AuthCompileContext): AuthConfig | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    ctx.error(['auth'], `expected an object (the token and JWT settings of the HTTP front), got ${describeValue(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value)) if (!AUTH_KEYS.has(key)) ctx.warn(['auth', key], `unknown key ${q(key)} in auth is ignored`);
  const jwt = value.jwt === undefined ? undefined : compileJwt(value.jwt, ctx);
  const resource = value.resource === undefined ? undefined : readUrl(value.resource, ['auth', 'resource'], ctx, true);
  return Object.freeze({ jwt, resource, oauth: compileOAuth(value.oauth, ctx) });
}

// ---------------------------------------------------------------------------------------------
// OAuth issuers: `"oauth": {…}` or `[{…}, …]`

function compileOAuth(value: unknown, ctx: AuthCompileContext): readonly OAuthIssuer[] {
  if (value === undefined) return Object.freeze([]);
  const list = Array.isArray(value) ? value : [value];
  const at = (i: number): PropertyKey[] => (Array.isArray(value) ? ['auth', 'oauth', i] : ['auth', 'oauth']);
  if (list.length === 0 || list.length > MAX_ISSUERS) {
    ctx.error(
      ['auth', 'oauth'],
      `expected an issuer object or an array of 1 to ${MAX_ISSUERS} of them, got ${list.length === 0 ? 'an empty array' : `${list.length}`}`,
    );
    return Object.freeze([]);
  }
  const issuers: OAuthIssuer[] = [];
  list.forEach((item: unknown, i) => {
    const compiled = compileIssuer(item, at(i), ctx);
    if (compiled === undefined) return;
    if (issuers.some((other) => other.issuer === compiled.issuer))
      ctx.error([...at(i), 'issuer'], `issuer ${q(compiled.issuer)} is listed twice`);
    else if (compiled.namespace !== undefined && issuers.some((other) => other.namespace === compiled.namespace))
      ctx.error([...at(i), 'namespace'], `namespace ${q(compiled.namespace)} is used by two issuers`);
    else if (i > 0 && compiled.namespace === undefined) {
      // One agent namespace per source: the first issuer's ids are bare (as they always were), and
      // a second issuer's `sub=alice` must not become the agent `alice` of the first or of a static token.
      ctx.error(
        [...at(i), 'namespace'],
        `missing: with more than one issuer, each after the first needs a "namespace" (e.g. "partner"); its agents are then "NAMESPACE:${compiled.agentClaim}" in the rules ("partner:alice"), so they are never the first issuer's or a static token's agent of the same name`,
      );
    } else issuers.push(compiled);
  });
  const introspecting = issuers.filter((o) => o.introspection !== undefined);
  if (introspecting.length > 1) {
    // An opaque token names no issuer: sent to each in turn, every issuer would see the others' tokens.
    ctx.error(
      ['auth', 'oauth'],
      `${introspecting.length} issuers have "introspection" (${introspecting.map((o) => q(o.issuer)).join(', ')}): an opaque token names no issuer, so it would be shown to each; keep "introspection" on one issuer (the others' tokens must then be JWTs)`,
    );
  }
  return Object.freeze(issuers);
}

function compileIssuer(value: unknown, at: readonly PropertyKey[], outer: AuthCompileContext): OAuthIssuer | undefined {
  let failed = false;
  const ctx: AuthCompileContext = {
    ...outer,
    error: (segments, message) => {
      failed = true;
      outer.error(segments, message);
    },
  };
  if (!isPlainObject(value)) {
    ctx.error(at, `expected an object with "issuer" (the authorization server's issuer URL), got ${describeValue(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!OAUTH_KEYS.includes(key)) ctx.error([...at, key], `unknown key ${q(key)} in an oauth issuer (known: ${OAUTH_KEYS.join(', ')})`);
  }
  if (value.issuer === undefined)
    ctx.error(
      [...at, 'issuer'],
      'expected "issuer", the authorization server\'s issuer URL (e.g. "https://login.example.com/realms/acme")',
    );
  const issuer = value.issuer === undefined ? undefined : readUrl(value.issuer, [...at, 'issuer'], ctx, false);
  const jwksUri = value.jwksUri === undefined ? undefined : readUrl(value.jwksUri, [...at, 'jwksUri'], ctx, false);
  const audience = readAudience(value.audience, ctx, [...at, 'audience']);
  const algorithms =
    value.algorithms === undefined
      ? ASYMMETRIC_ALGORITHMS
      : readAlgorithms(
          value.algorithms,
          { description: "an issuer's published keys (HMAC is never accepted from an issuer)", fits: ASYMMETRIC_ALGORITHMS },
          ctx,
          [...at, 'algorithms'],
        );
  const agentClaim = readName(value.agentClaim, 'agentClaim', ctx, [...at, 'agentClaim']) ?? 'sub';
  const requireClaims = readClaimNames(value.requireClaims, ctx, [...at, 'requireClaims']);
  let namespace: string | undefined;
  if (value.namespace !== undefined) {
    if (typeof value.namespace === 'string' && NAMESPACE.test(value.namespace)) namespace = value.namespace;
    else
      ctx.error(
        [...at, 'namespace'],
        `expected 1 to 32 letters, digits, "." , "_" or "-" (the prefix of this issuer's agent ids, "NAMESPACE:ID"), got ${describeValue(value.namespace)}`,
      );
  }
  const scopes = readScopes(value.scopes, [...at, 'scopes'], ctx);
  const clockSkewSeconds = readSkew(value.clockSkewSeconds, ctx, [...at, 'clockSkewSeconds']);
  let refreshCooldownSeconds = 30;
  if (value.refreshCooldownSeconds !== undefined) {
    const v = value.refreshCooldownSeconds;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_REFRESH_COOLDOWN_SECONDS) refreshCooldownSeconds = v;
    else
      ctx.error(
        [...at, 'refreshCooldownSeconds'],
        `expected a whole number of seconds from 0 to ${MAX_REFRESH_COOLDOWN_SECONDS}, got ${describeValue(v)}`,
      );
  }
  const introspection =
    value.introspection === undefined ? undefined : readIntrospection(value.introspection, [...at, 'introspection'], ctx);
  if (failed || issuer === undefined || algorithms === undefined) return undefined;
  return Object.freeze({
    issuer,
    namespace,
    jwksUri,
    audience,
    algorithms: Object.freeze([...algorithms]),
    agentClaim,
    requireClaims,
    scopes,
    clockSkewSeconds,
    refreshCooldownSeconds,
    introspection,
  });
}

function readIntrospection(value: unknown, at: readonly PropertyKey[], ctx: AuthCompileContext): Introspection | undefined {
  if (!isPlainObject(value)) {
    ctx.error(
      at,
      `expected an object with "clientId" and "clientSecret" (mcpgate's credentials at the issuer), got ${describeValue(value)}`,
    );
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!INTROSPECTION_KEYS.includes(key))
      ctx.error([...at, key], `unknown key ${q(key)} in introspection (known: ${INTROSPECTION_KEYS.join(', ')})`);
  }
  const text = (name: 'clientId' | 'clientSecret'): string | undefined => {
    const raw = value[name];
    if (typeof raw !== 'string' || raw === '') {
      ctx.error(
        [...at, name],
        `expected a non-empty string${name === 'clientSecret' ? ', ideally "${VAR}"' : ''}, got ${describeValue(raw)}`,
      );
      return undefined;
    }
    const expanded = tryExpand(raw, ctx.env);
    if (!expanded.ok) {
      ctx.error([...at, name], expanded.reason);
      return undefined;
    }
    if (name === 'clientSecret' && !raw.includes('${'))
      ctx.warn([...at, name], 'the client secret is written in the rules file itself; prefer "${VAR}" with the variable set');
    return expanded.value;
  };
  const clientId = text('clientId');
  const clientSecret = text('clientSecret');
  const endpoint = value.endpoint === undefined ? undefined : readUrl(value.endpoint, [...at, 'endpoint'], ctx, false);
  const whole = (name: 'maxPerSecond' | 'cacheSeconds', min: number, max: number, fallback: number, what: string): number => {
    const raw = value[name];
    if (raw === undefined) return fallback;
    if (typeof raw === 'number' && Number.isInteger(raw) && raw >= min && raw <= max) return raw;
    ctx.error([...at, name], `expected ${what}, a whole number from ${min} to ${max}, got ${describeValue(raw)}`);
    return fallback;
  };
  const maxPerSecond = whole('maxPerSecond', 1, MAX_INTROSPECTION_RATE, 10, 'the most introspection calls a second to this issuer');
  const cacheSeconds = whole(
    'cacheSeconds',
    0,
    MAX_INTROSPECTION_CACHE_SECONDS,
    300,
    'how many seconds an active answer is trusted (a revoked token is accepted that long)',
  );
  if (clientId === undefined || clientSecret === undefined) return undefined;
  return Object.freeze({ endpoint, clientId, clientSecret, maxPerSecond, cacheSeconds });
}

/** An absolute http(s) URL without a fragment or credentials (`${VAR}` expanded); a resource URI has no query either. */
function readUrl(value: unknown, at: readonly PropertyKey[], ctx: AuthCompileContext, resource: boolean): string | undefined {
  if (typeof value !== 'string' || value === '') {
    ctx.error(at, `expected an absolute http(s) URL, got ${describeValue(value)}`);
    return undefined;
  }
  const expanded = tryExpand(value, ctx.env);
  if (!expanded.ok) {
    ctx.error(at, expanded.reason);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(expanded.value);
  } catch {
    ctx.error(at, `${describeValue(expanded.value, true)} is not an absolute URL`);
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    ctx.error(at, `expected an http(s) URL, got ${url.protocol.slice(0, -1)}`);
    return undefined;
  }
  if (url.hash !== '' || expanded.value.includes('#') || (resource && url.search !== '')) {
    ctx.error(at, resource ? 'a resource URI has no fragment and no query (RFC 8707 §2)' : 'the URL has a fragment');
    return undefined;
  }
  if (url.username !== '' || url.password !== '') {
    ctx.error(at, 'the URL carries credentials; remove them');
    return undefined;
  }
  // The issuer is compared with `iss` exactly as written (RFC 8414 §3.3), so it is kept verbatim.
  return expanded.value;
}

function readScopes(value: unknown, at: readonly PropertyKey[], ctx: AuthCompileContext): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value) || value.some((s) => typeof s !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) {
    ctx.error(at, `expected an array of scope names (no spaces, quotes or backslashes; RFC 6749 §3.3), got ${describeValue(value)}`);
    return Object.freeze([]);
  }
  return Object.freeze([...new Set(value as string[])]);
}

function compileJwt(value: unknown, outer: AuthCompileContext): JwtConfig | undefined {
  let failed = false;
  const ctx: AuthCompileContext = {
    ...outer,
    error: (segments, message) => {
      failed = true;
      outer.error(segments, message);
    },
  };
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
  if (source === undefined)
    ctx.error(JWT, 'expected one of "secret" (for HS256/384/512), "publicKey" or "publicKeyFile" (for RS*, PS*, ES*, EdDSA)');
  else if (sources.length > 1)
    ctx.error(JWT, `${sources.map(q).join(' and ')} are ${sources.length === 2 ? 'both' : 'all'} set; give exactly one key`);
  else key = compileKey(source, value[source], ctx);

  const algorithms = readAlgorithms(value.algorithms, key, ctx);
  const issuer = readName(value.issuer, 'issuer', ctx);
  const audience = readAudience(value.audience, ctx);
  const agentClaim = readName(value.agentClaim, 'agentClaim', ctx) ?? 'sub';
  const requireClaims = readClaimNames(value.requireClaims, ctx, [...JWT, 'requireClaims']);
  const clockSkewSeconds = readSkew(value.clockSkewSeconds, ctx);
  let requireExp = true;
  if (value.requireExp !== undefined) {
    if (typeof value.requireExp === 'boolean') requireExp = value.requireExp;
    else ctx.error([...JWT, 'requireExp'], `expected true or false, got ${describeValue(value.requireExp)}`);
  }
  if (failed || key === undefined || algorithms === undefined) return undefined;
  return Object.freeze({
    key: key.key,
    keyDescription: key.description,
    algorithms,
    issuer,
    audience,
    agentClaim,
    requireClaims,
    clockSkewSeconds,
    requireExp,
  });
}

// ---------------------------------------------------------------------------------------------
// The other settings

function isAlgorithm(value: string): value is JwtAlgorithm {
  return (JWT_ALGORITHMS as readonly string[]).includes(value);
}

function readAlgorithms(
  value: unknown,
  key: Pick<CompiledKey, 'description' | 'fits'> | undefined,
  ctx: AuthCompileContext,
  at: readonly PropertyKey[] = [...JWT, 'algorithms'],
): readonly JwtAlgorithm[] | undefined {
  if (value === undefined) return key === undefined ? undefined : Object.freeze([...key.fits]);
  if (!Array.isArray(value) || value.length === 0) {
    ctx.error(
      at,
      `expected a non-empty array of algorithm names (${JWT_ALGORITHMS.join(', ')}), got ${Array.isArray(value) ? 'an empty array' : describeValue(value)}`,
    );
    return undefined;
  }
  const algorithms: JwtAlgorithm[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string') ctx.error([...at, i], `expected an algorithm name, got ${describeValue(item)}`);
    else if (item.toLowerCase() === 'none') ctx.error([...at, i], 'the "none" algorithm (an unsigned token) is never accepted');
    else if (!isAlgorithm(item))
      ctx.error([...at, i], `unknown algorithm ${describeValue(item, true)} (known: ${JWT_ALGORITHMS.join(', ')})`);
    else if (key !== undefined && !key.fits.includes(item)) {
      const why =
        item.startsWith('HS') && !key.fits.some((alg) => alg.startsWith('HS'))
          ? 'HMAC needs "secret"; a public key never verifies HMAC tokens'
          : item.startsWith('HS') && key.fits.some((alg) => alg.startsWith('HS'))
            ? `the secret is too short for it (RFC 7518 §3.2: ${HMAC_MIN_BYTES[item]} bytes or more)`
            : `it fits ${key.fits.join(', ')}`;
      ctx.error([...at, i], `algorithm ${item} cannot be verified with ${key.description}: ${why}`);
    } else if (!algorithms.includes(item)) algorithms.push(item);
  });
  return Object.freeze(algorithms);
}

function readName(
  value: unknown,
  name: 'issuer' | 'agentClaim',
  ctx: AuthCompileContext,
  at: readonly PropertyKey[] = [...JWT, name],
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return value;
  ctx.error(at, `expected a non-empty string, got ${describeValue(value)}`);
  return undefined;
}

/** `requireClaims`: a list of claim names (or dotted paths); absent: none. */
function readClaimNames(value: unknown, ctx: AuthCompileContext, at: readonly PropertyKey[]): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' && item !== '') && value.length <= 32)
    return Object.freeze([...new Set(value as string[])]);
  ctx.error(at, `expected a list of at most 32 claim names (e.g. ["groups"]), got ${describeValue(value)}`);
  return Object.freeze([]);
}

function readAudience(
  value: unknown,
  ctx: AuthCompileContext,
  at: readonly PropertyKey[] = [...JWT, 'audience'],
): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return Object.freeze([value]);
  if (!Array.isArray(value) || value.length === 0) {
    ctx.error(
      at,
      `expected a non-empty string or a non-empty array of them, got ${Array.isArray(value) ? 'an empty array' : describeValue(value)}`,
    );
    return undefined;
  }
  const audience: string[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item === 'string' && item !== '') audience.push(item);
    else ctx.error([...at, i], `expected a non-empty string, got ${describeValue(item)}`);
  });
  return Object.freeze(audience);
}

function readSkew(value: unknown, ctx: AuthCompileContext, at: readonly PropertyKey[] = [...JWT, 'clockSkewSeconds']): number {
  if (value === undefined) return 30;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_SKEW_SECONDS) return value;
  ctx.error(at, `expected a whole number of seconds from 0 to ${MAX_SKEW_SECONDS}, got ${describeValue(value)}`);
  return 30;
}
