// DPoP (RFC 9449): a login's own key pair, to which the authorization server binds its tokens, and
// the proofs signed with it. The protocol state — the proof JWT (typ `dpop+jwt`, the public `jwk`,
// `htm`, `htu` without query or fragment, `iat`, a fresh `jti`, `ath` beside an access token, the
// server's `nonce`) and the nonce each origin handed out — is the official SDK's `DpopSession`; this
// file only says when mcpgate uses DPoP and keeps the key in the token file, so that a bound token
// (and its refresh token) stays usable after a restart. Keys are ES256 (jose); the private half is
// stored as a JWK in the 0600 token file beside the tokens, nowhere else, and never logged.

import { DpopSession, type DpopKeyPair } from '@modelcontextprotocol/client';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

/** The only algorithm mcpgate signs proofs with. */
const DPOP_ALG = 'ES256';

/** A login's DPoP key as the token file keeps it. */
export interface StoredDpopKey {
  alg: typeof DPOP_ALG;
  /** The private key (EC P-256, with its public coordinates). */
  jwk: JWK;
}

/** Whether `metadata` (an authorization server's, or a resource's) lists ES256 in `dpop_signing_alg_values_supported`. */
function listsEs256(metadata: unknown): boolean {
  const algs = (metadata as { dpop_signing_alg_values_supported?: unknown } | undefined)?.dpop_signing_alg_values_supported;
  return Array.isArray(algs) && algs.includes(DPOP_ALG);
}

/**
 * Whether tokens are to be DPoP-bound: the authorization server's metadata lists ES256 in
 * `dpop_signing_alg_values_supported`, and the resource server takes DPoP — its challenge uses the
 * DPoP scheme (`challengeDpop`), its resource metadata (RFC 9728) lists ES256 or requires bound
 * tokens, or the stored login is bound already (`keyStored`). Many authorization servers offer DPoP
 * by default to resource servers that only read Bearer: those keep getting bearer tokens.
 */
export function dpopWanted(asMetadata: unknown, resourceMetadata: unknown, challengeDpop: boolean, keyStored: boolean): boolean {
  if (!listsEs256(asMetadata)) return false;
  const required =
    (resourceMetadata as { dpop_bound_access_tokens_required?: unknown } | undefined)?.dpop_bound_access_tokens_required === true;
  return keyStored || challengeDpop || required || listsEs256(resourceMetadata);
}

/** Whether a `WWW-Authenticate` value offers the DPoP scheme (alone or beside Bearer). */
export function challengesDpop(header: string | undefined): boolean {
  return header !== undefined && /(?:^|,)\s*dpop(?:\s|$|,)/i.test(header);
}

/** Whether a token of this `token_type` is presented with the DPoP scheme and a proof (else Bearer). */
export function isDpopBound(tokenType: string | undefined): boolean {
  return tokenType !== undefined && tokenType.toLowerCase() === 'dpop';
}

/** A new key for one login (extractable once, to be stored). */
export async function newDpopKey(): Promise<StoredDpopKey> {
  const { privateKey } = await generateKeyPair(DPOP_ALG, { extractable: true });
  return { alg: DPOP_ALG, jwk: await exportJWK(privateKey) };
}

/** A DPoP session (proofs, nonces) over a stored key; the key is imported non-extractable. */
export async function dpopSession(key: StoredDpopKey): Promise<DpopSession> {
  const { d: _d, ...publicJwk } = key.jwk;
  const pair: DpopKeyPair = {
    privateKey: (await importJWK(key.jwk, key.alg, { extractable: false })) as DpopKeyPair['privateKey'],
    publicKey: (await importJWK(publicJwk, key.alg)) as DpopKeyPair['publicKey'],
    publicJwk: { kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x, y: publicJwk.y },
    thumbprint: await calculateJwkThumbprint(publicJwk, 'sha256'),
    alg: key.alg,
  };
  return DpopSession.create({ keyPair: pair });
}
