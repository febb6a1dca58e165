// Token revocation on `mcpgate logout` (RFC 7009): the stored refresh token, then the access
// token, are revoked at the authorization server's `revocation_endpoint` when its metadata (kept from
// the login's discovery, else discovered again) advertises one. The client authenticates as it did
// at the token endpoint (its stored registration: Basic, a body secret, or its id alone). Every
// exchange is bounded in time and bytes; no token is ever put in a message.
// A configured client secret is passed in by cli/login.ts. `unsupported_token_type` for the access
// token after the refresh token is "kept", not a failure. Bounded at 10 s; it never throws.

import { discoverAuthorizationServerMetadata } from '@modelcontextprotocol/client';
import type { TokenFile } from './store.js';

const TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 16 * 1024;
const UNSUPPORTED = 'unsupported_token_type';

type TokenKind = 'refresh_token' | 'access_token';

type Revocation =
  /**
   * The server answered 200 for `tokens`; `kept` it cannot revoke (RFC 7009 §2.2.1
   * `unsupported_token_type`, e.g. a JWT access token, valid until it expires).
   */
  | { kind: 'revoked'; endpoint: string; tokens: TokenKind[]; kept: TokenKind[] }
  /** The authorization server advertises no revocation endpoint: nothing to do there. */
  | { kind: 'unsupported'; issuer: string | undefined }
  /** Nothing stored to revoke. */
  | { kind: 'nothing' }
  | { kind: 'failed'; reason: string };

interface RevokeOptions {
  /** The entry's own client secret (`auth.clientSecret`), which the store never holds, for its `clientId`. */
  client?: { clientId: string; clientSecret: string };
  signal?: AbortSignal;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Revokes what `file` holds; never throws (a failure is the `failed` outcome, worded without the token). */
export async function revokeStored(file: TokenFile, options: RevokeOptions = {}): Promise<Revocation> {
  const tokens = file.tokens;
  if (tokens === undefined) return { kind: 'nothing' };
  const signal = AbortSignal.any([
    AbortSignal.timeout(options.timeoutMs ?? TIMEOUT_MS),
    ...(options.signal === undefined ? [] : [options.signal]),
  ]);
  const doFetch = options.fetch ?? fetch;
  let endpoint: string | undefined;
  const issuer = file.discovery?.authorizationServerUrl;
  try {
    endpoint = revocationEndpoint(file.discovery?.authorizationServerMetadata);
    if (endpoint === undefined && issuer !== undefined && file.discovery?.authorizationServerMetadata === undefined) {
      const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: (url, init) => doFetch(url, { ...init, signal }) });
      endpoint = revocationEndpoint(metadata);
    }
  } catch (err) {
    return {
      kind: 'failed',
      reason: `cannot read the authorization server's metadata at ${issuer ?? 'an unknown issuer'}: ${messageOf(err)}`,
    };
  }
  if (endpoint === undefined) return { kind: 'unsupported', issuer };
  const configured = options.client;
  const client =
    configured !== undefined && file.client?.client_id === configured.clientId
      ? { ...file.client, client_secret: configured.clientSecret }
      : file.client;
  if (client === undefined) return { kind: 'failed', reason: 'the stored login has no client registration to revoke with' };
  // The refresh token first: revoking it ends the grant, and with it (at most servers) its access tokens.
  const list: [TokenKind, string][] = [];
  if (tokens.refresh_token !== undefined) list.push(['refresh_token', tokens.refresh_token]);
  list.push(['access_token', tokens.access_token]);
  const revoked: TokenKind[] = [];
  const kept: TokenKind[] = [];
  for (const [hint, token] of list) {
    const problem = await revokeOne(endpoint, client, token, hint, signal, doFetch);
    if (problem === undefined) revoked.push(hint);
    // A server that cannot revoke this kind (self-contained JWT access tokens) still ended the grant with the refresh token.
    else if (problem.startsWith(UNSUPPORTED) && hint === 'access_token' && revoked.length > 0) kept.push(hint);
    else
      return {
        kind: 'failed',
        reason: `the ${hint === 'refresh_token' ? 'refresh' : 'access'} token was not revoked at ${endpoint}: ${problem}`,
      };
  }
  return { kind: 'revoked', endpoint, tokens: revoked, kept };
}

function revocationEndpoint(metadata: unknown): string | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const endpoint = (metadata as { revocation_endpoint?: unknown }).revocation_endpoint;
  if (typeof endpoint !== 'string') return undefined;
  try {
    const url = new URL(endpoint);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** One RFC 7009 §2.1 request; undefined when the server answered 200, else why not. */
async function revokeOne(
  endpoint: string,
  client: NonNullable<TokenFile['client']>,
  token: string,
  hint: string,
  signal: AbortSignal,
  doFetch: typeof fetch,
): Promise<string | undefined> {
  const body = new URLSearchParams({ token, token_type_hint: hint });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const secret = typeof client.client_secret === 'string' ? client.client_secret : undefined;
  if (secret !== undefined && client.token_endpoint_auth_method !== 'client_secret_post') {
    // RFC 6749 §2.3.1: each part form-encoded, then Basic.
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  } else {
    body.set('client_id', client.client_id);
    if (secret !== undefined) body.set('client_secret', secret);
  }
  let res: Response;
  try {
    res = await doFetch(endpoint, { method: 'POST', headers, body: body.toString(), signal, redirect: 'error' });
  } catch (err) {
    return messageOf(err);
  }
  if (res.status === 200) {
    await res.body?.cancel();
    return undefined;
  }
  const text = await boundedText(res);
  let error = '';
  try {
    const parsed = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (parsed.error === UNSUPPORTED) return `${UNSUPPORTED} (HTTP ${res.status})`;
    if (typeof parsed.error === 'string')
      error = ` ${parsed.error}${typeof parsed.error_description === 'string' ? ` (${parsed.error_description.slice(0, 200)})` : ''}`;
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${res.status}${error}`;
}

async function boundedText(res: Response): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const read = await reader.read();
    if (read.done) break;
    const value = read.value;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      break;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function messageOf(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'no answer in time';
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err instanceof Error ? err.message : String(err)}${cause}`;
}
