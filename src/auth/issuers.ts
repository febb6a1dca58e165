// The signing keys of the OAuth issuers in the rules' `auth.oauth` (rules/auth-config.ts): for each,
// the JWKS URL from the issuer's metadata (OpenID Connect discovery, then RFC 8414), and the key set
// itself, fetched by jose's remote JWKS: cached (10 min), fetched again when a token names a `kid`
// the cached set does not have — at most once per the issuer's `refreshCooldownSeconds` (a flood of made-up key ids
// cannot turn into a flood of fetches). A failed fetch is not retried for `failureCooldownMs`.
// Every response is bounded in size and time. One instance lives as long as the HTTP front, so the
// caches survive a reload of the rules; an issuer no longer configured ages out (at most MAX_CACHED).
// An issuer's metadata must name the issuer it was fetched for. Also RFC 7662 introspection of opaque
// tokens: HTTP Basic with the issuer entry's client credentials; answers cached by the token's SHA-256
// in two LRU maps (an active one until its `exp`, at most the entry's `cacheSeconds`; an inactive one
// 30 s); calls to an issuer limited to its `maxPerSecond` by a token bucket, past which a check is
// `IntrospectionLimited` (a 503) without a call.

import { createHash } from 'node:crypto';
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose';
import type { OAuthIssuer } from '../rules/auth-config.js';

interface IssuerKeysOptions {
  /** How long a failed metadata or JWKS fetch is answered from memory before it is tried again (default 5 s). */
  failureCooldownMs?: number;
  /** Per HTTP request (default 5 s). */
  timeoutMs?: number;
}

/** Why an issuer's keys could not be had: the gateway's problem (HTTP 503), not the token's. */
export class IssuerUnavailable extends Error {}

const MAX_RESPONSE_BYTES = 512 * 1024;
const MAX_CACHED = 32;
/**
 * Introspection answers kept, by the issuer and the token's SHA-256 (never the token): active ones
 * until their `exp`, at most the issuer's `cacheSeconds`; inactive ones (the negative cache) 30 s.
 * Two separate LRU maps, so a flood of made-up tokens evicts only other made-up tokens' answers.
 */
const MAX_INTROSPECTED = 10_000;
const INACTIVE_CACHE_MS = 30_000;

/** Why a token was not introspected: the issuer's `maxPerSecond` is spent (HTTP 503, not a call). */
export class IntrospectionLimited extends Error {}

/**
 * Who asks is part of the budget: a source (a client address) that has not presented an active token
 * within TRUSTED_MS may spend at most a quarter of an issuer's `maxPerSecond`, and never the half kept
 * for those that have, so a flood of made-up tokens from elsewhere cannot refuse a known agent's new token.
 */
const SOURCE_SHARE = 4;
const TRUSTED_MS = 10 * 60_000;
/** Sources remembered (budgets, trust) at most; the oldest are forgotten first. */
const MAX_SOURCES = 10_000;

interface Entry {
  keys: Promise<JWTVerifyGetKey> | undefined;
  failed: { at: number; message: string } | undefined;
}

export class IssuerKeys {
  private readonly entries = new Map<string, Entry>();
  private readonly metadata = new Map<string, Promise<Record<string, unknown>>>();
  private readonly active = new Map<string, { claims: Record<string, unknown>; until: number }>();
  private readonly inactive = new Map<string, { claims: Record<string, unknown>; until: number }>();
  /** Each introspecting issuer's call budget: a bucket of `maxPerSecond` calls, refilled at that rate. */
  private readonly budgets = new Map<string, { calls: number; at: number }>();
  /** Each source's own budget at each issuer (a bucket of a share of `maxPerSecond`), and when a source last presented an active token. */
  private readonly sourceBudgets = new Map<string, { calls: number; at: number }>();
  private readonly trusted = new Map<string, number>();
  private readonly failureCooldownMs: number;
  private readonly timeoutMs: number;

  constructor(options: IssuerKeysOptions = {}) {
    this.failureCooldownMs = options.failureCooldownMs ?? 5_000;
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /** The key lookup for `issuer`'s tokens, for jose's jwtVerify; rejects with IssuerUnavailable. */
  async keysFor(issuer: OAuthIssuer): Promise<JWTVerifyGetKey> {
    const id = `${issuer.issuer}\n${issuer.jwksUri ?? ''}\n${issuer.refreshCooldownSeconds}`;
    let entry = this.entries.get(id);
    if (entry === undefined) {
      if (this.entries.size >= MAX_CACHED) this.entries.delete(this.entries.keys().next().value as string);
      entry = { keys: undefined, failed: undefined };
      this.entries.set(id, entry);
    }
    if (entry.failed !== undefined && Date.now() - entry.failed.at < this.failureCooldownMs)
      throw new IssuerUnavailable(entry.failed.message);
    const current = entry;
    current.keys ??= this.discover(issuer).catch((err: unknown) => {
      current.keys = undefined;
      current.failed = { at: Date.now(), message: err instanceof Error ? err.message : String(err) };
      throw new IssuerUnavailable(current.failed.message);
    });
    const lookup = await current.keys;
    current.failed = undefined;
    return this.guarded(lookup, current);
  }

  /** The JWKS lookup, with fetch failures remembered (and turned into IssuerUnavailable). */
  private guarded(lookup: JWTVerifyGetKey, entry: Entry): JWTVerifyGetKey {
    return async (header, token) => {
      if (entry.failed !== undefined && Date.now() - entry.failed.at < this.failureCooldownMs)
        throw new IssuerUnavailable(entry.failed.message);
      try {
        return await lookup(header, token);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        // jose's own verdicts about the token (no matching key, ...) pass through; a failed fetch does not.
        if (typeof code === 'string' && !['ERR_JOSE_GENERIC', 'ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID'].includes(code)) throw err;
        const message = `cannot fetch the signing keys: ${err instanceof Error ? err.message : String(err)}`;
        entry.failed = { at: Date.now(), message };
        throw new IssuerUnavailable(message);
      }
    };
  }

  private async discover(issuer: OAuthIssuer): Promise<JWTVerifyGetKey> {
    const jwksUri = issuer.jwksUri ?? (await this.jwksUriOf(issuer.issuer));
    return createRemoteJWKSet(new URL(jwksUri), {
      cooldownDuration: issuer.refreshCooldownSeconds * 1000,
      timeoutDuration: this.timeoutMs,
      [customFetch]: (url: string, init: RequestInit) => boundedFetch(url, init),
    });
  }

  /**
   * RFC 7662: the issuer's answer about an opaque token (`active`, `sub`, `aud`, `exp`, …), cached
   * by the token's SHA-256; rejects with IssuerUnavailable when the endpoint cannot be asked.
   */
  async introspect(issuer: OAuthIssuer, token: string, source = ''): Promise<Record<string, unknown>> {
    const config = issuer.introspection;
    if (config === undefined) throw new IssuerUnavailable(`issuer ${issuer.issuer} has no introspection configured`);
    const key = `${issuer.issuer}\n${createHash('sha256').update(token).digest('hex')}`;
    // A refusal is remembered for the source that presented it only: another source's answer is its own.
    const inactiveKey = `${key}\n${source}`;
    const now = Date.now();
    const active = cached(this.active, key, now);
    if (active !== undefined) {
      this.trust(source, now);
      return active;
    }
    const inactive = cached(this.inactive, inactiveKey, now);
    if (inactive !== undefined) return inactive;
    this.spend(issuer.issuer, config.maxPerSecond, now, source);
    let claims: Record<string, unknown>;
    try {
      const endpoint = config.endpoint ?? (await this.introspectionEndpointOf(issuer.issuer));
      const basic = Buffer.from(`${encodeURIComponent(config.clientId)}:${encodeURIComponent(config.clientSecret)}`).toString('base64');
      const response = await boundedFetch(endpoint, {
        method: 'POST',
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      });
      if (response.status !== 200)
        throw new Error(
          `the introspection endpoint ${endpoint} answered HTTP ${response.status}${response.status === 401 ? ' (check introspection.clientId and clientSecret)' : ''}`,
        );
      const body: unknown = await response.json().catch(() => undefined);
      if (
        typeof body !== 'object' ||
        body === null ||
        Array.isArray(body) ||
        typeof (body as Record<string, unknown>).active !== 'boolean'
      ) {
        throw new Error(`the introspection endpoint ${endpoint} did not answer a JSON object with "active"`);
      }
      claims = body as Record<string, unknown>;
    } catch (err) {
      if (err instanceof IssuerUnavailable) throw err;
      throw new IssuerUnavailable(err instanceof Error ? err.message : String(err));
    }
    const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity;
    if (claims.active === true) {
      remember(this.active, key, claims, Math.min(exp, now + config.cacheSeconds * 1000));
      this.trust(source, now);
    } else remember(this.inactive, inactiveKey, claims, now + INACTIVE_CACHE_MS);
    return claims;
  }

  /**
   * Takes one call from the issuer's budget, or throws IntrospectionLimited: a client sending
   * made-up opaque tokens cannot make mcpgate call the issuer (with its client credentials) faster
   * than `maxPerSecond`. Tokens answered from the caches cost nothing, so agents already known keep
   * working through such a flood.
   */
  private spend(issuer: string, perSecond: number, now: number, source: string): void {
    const budget = refill(this.budgets, issuer, perSecond, now, MAX_CACHED);
    const own = refill(this.sourceBudgets, `${issuer}\n${source}`, Math.max(1, Math.ceil(perSecond / SOURCE_SHARE)), now, MAX_SOURCES);
    const trustedAt = this.trusted.get(source);
    const known = trustedAt !== undefined && now - trustedAt < TRUSTED_MS;
    // A known source (one proxy in front of every agent, say) may use the whole budget; others a share, never the reserve.
    const reserve = known ? 0 : Math.floor(perSecond / 2);
    if (budget.calls < 1 + reserve || (!known && own.calls < 1))
      throw new IntrospectionLimited(
        `more than ${perSecond} introspection calls a second to issuer ${issuer} (introspection.maxPerSecond): the token was not checked; try again shortly`,
      );
    budget.calls -= 1;
    own.calls -= 1;
  }

  /** `source` presented an active token now: it may use the reserved share. */
  private trust(source: string, now: number): void {
    this.trusted.delete(source);
    if (this.trusted.size >= MAX_SOURCES) this.trusted.delete(this.trusted.keys().next().value as string);
    this.trusted.set(source, now);
  }

  private async introspectionEndpointOf(issuer: string): Promise<string> {
    const doc = await this.metadataOf(issuer);
    const endpoint = doc.introspection_endpoint;
    if (typeof endpoint !== 'string' || !/^https?:\/\//.test(endpoint))
      throw new Error(`the metadata of issuer ${issuer} has no http(s) "introspection_endpoint"; set introspection.endpoint`);
    return endpoint;
  }

  /** `jwks_uri` from the issuer's metadata. */
  private async jwksUriOf(issuer: string): Promise<string> {
    const doc = await this.metadataOf(issuer);
    const jwks = doc.jwks_uri;
    if (typeof jwks !== 'string' || !/^https?:\/\//.test(jwks))
      throw new Error(`the metadata of issuer ${issuer} has no http(s) "jwks_uri"`);
    return jwks;
  }

  /** The issuer's metadata, cached once read (a failure is not). */
  private metadataOf(issuer: string): Promise<Record<string, unknown>> {
    let doc = this.metadata.get(issuer);
    if (doc === undefined) {
      if (this.metadata.size >= MAX_CACHED) this.metadata.delete(this.metadata.keys().next().value as string);
      doc = this.readMetadata(issuer);
      doc.catch(() => this.metadata.delete(issuer));
      this.metadata.set(issuer, doc);
    }
    return doc;
  }

  /** The issuer's metadata document; it must name the same issuer (RFC 8414 §3.3). */
  private async readMetadata(issuer: string): Promise<Record<string, unknown>> {
    const base = issuer.replace(/\/+$/, '');
    const url = new URL(issuer);
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
    const candidates = [`${base}/.well-known/openid-configuration`, `${url.origin}/.well-known/oauth-authorization-server${path}`];
    const problems: string[] = [];
    for (const candidate of candidates) {
      let response: Response;
      try {
        response = await boundedFetch(candidate, {
          signal: AbortSignal.timeout(this.timeoutMs),
          redirect: 'manual',
          headers: { accept: 'application/json' },
        });
      } catch (err) {
        problems.push(`${candidate}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      if (response.status !== 200) {
        problems.push(`${candidate}: HTTP ${response.status}`);
        continue;
      }
      let metadata: unknown;
      try {
        metadata = await response.json();
      } catch {
        problems.push(`${candidate}: not JSON`);
        continue;
      }
      const doc = (typeof metadata === 'object' && metadata !== null ? metadata : {}) as Record<string, unknown>;
      if (doc.issuer !== issuer)
        throw new Error(`the metadata at ${candidate} names issuer ${JSON.stringify(doc.issuer)}, not ${JSON.stringify(issuer)}`);
      return doc;
    }
    throw new Error(`cannot read the metadata of issuer ${issuer} (${problems.join('; ')})`);
  }
}

/** A live cached answer (moved to the newest end: least recently used goes first), or undefined. */
function cached(
  map: Map<string, { claims: Record<string, unknown>; until: number }>,
  key: string,
  now: number,
): Record<string, unknown> | undefined {
  const hit = map.get(key);
  if (hit === undefined) return undefined;
  map.delete(key);
  if (hit.until <= now) return undefined;
  map.set(key, hit);
  return hit.claims;
}

function remember(
  map: Map<string, { claims: Record<string, unknown>; until: number }>,
  key: string,
  claims: Record<string, unknown>,
  until: number,
): void {
  map.delete(key);
  if (map.size >= MAX_INTROSPECTED) map.delete(map.keys().next().value as string);
  map.set(key, { claims, until });
}

/** fetch, with the body read up to MAX_RESPONSE_BYTES (past it: an error) and handed back as a Response. */
async function boundedFetch(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (reader !== undefined) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_RESPONSE_BYTES) {
        await reader.cancel();
        throw new Error(`the response from ${url} is larger than ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(value);
    }
  }
  return new Response(response.status === 204 || response.status === 304 ? null : Buffer.concat(chunks), {
    status: response.status,
    headers: response.headers,
  });
}

/** The bucket `key` of `map` (made full when new; the oldest forgotten beyond `most`), refilled at `perSecond` up to it. */
function refill(
  map: Map<string, { calls: number; at: number }>,
  key: string,
  perSecond: number,
  now: number,
  most: number,
): { calls: number; at: number } {
  let budget = map.get(key);
  if (budget === undefined) {
    if (map.size >= most) map.delete(map.keys().next().value as string);
    budget = { calls: perSecond, at: now };
    map.set(key, budget);
  }
  budget.calls = Math.min(perSecond, budget.calls + ((now - budget.at) / 1000) * perSecond);
  budget.at = now;
  return budget;
}
