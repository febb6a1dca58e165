// One remote server's OAuth credentials in a running gateway (servers/credentials.ts is the contract
// the transport sees). The tokens come from the token store (written by `mcpgate login`) or, for a
// `client_credentials` entry, from the authorization server directly. They are refreshed before they
// expire (checked before each request: `stale`), and on a 401 once for every request that saw the same
// token. When only a person can help — no tokens, an expired token without a refresh token, a refused
// refresh token — the answer is MCPG_SERVER_NEEDS_LOGIN naming the command; the connection parks and
// is revived when the token file changes. A per-agent server's pooled connection for an identified
// agent gets credentials over that agent's own store (`TokenStore.forAgent`): it reads, refreshes and
// watches only that agent's file, and "needs login" names `--agent`. A server without `"auth"` gets these too, so a 401 with a
// Bearer challenge says "needs login" and a login for it is used; it then sends a token only once one
// is stored. No token is ever logged or put in an error.
// The `Authorization` value is read synchronously per request (for a DPoP-bound token, with a proof
// signed per request, dpop.ts). The server without `"auth"` above is one without a configured
// `Authorization` header either, and a DPoP challenge on its 401 asks for a login as a Bearer one does.

import { mkdirSync } from 'node:fs';
import { auth, computeScopeUnion, type DpopSession } from '@modelcontextprotocol/client';
import type { OAuthSettings, RemoteServerConfig } from '../config/types.js';
import { watchFiles } from '../config/watch.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { parseChallenge } from './challenge.js';
import { dpopSession, isDpopBound, type StoredDpopKey } from './dpop.js';
import { NeedsLogin, StoreProvider } from './provider.js';
import type { StoredTokens, TokenStore } from './store.js';

/** Refresh this long before expiry at most (less for short-lived tokens: a quarter of their life). */
const REFRESH_MARGIN_MS = 60_000;

export class OAuthCredentials {
  private tokens: StoredTokens | undefined;
  private loaded = false;
  private pending: Promise<void> | undefined;
  private readonly settings: OAuthSettings;
  /** The stored login's DPoP key and its session (proofs, the nonces servers handed out), while the tokens are bound to it. */
  private dpop: { key: StoredDpopKey; session: DpopSession } | undefined;

  constructor(
    private readonly server: RemoteServerConfig,
    private readonly store: TokenStore,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    // Without "auth" the server may still turn out to want OAuth (a 401 challenge): a login uses discovery and registration.
    this.settings = server.auth ?? { grant: 'authorization_code' };
  }

  get loginCommand(): string {
    return this.store.loginCommand(this.server.name);
  }

  header(): string | undefined {
    if (this.tokens === undefined) return undefined;
    return `${this.dpop === undefined ? 'Bearer' : 'DPoP'} ${this.tokens.access_token}`;
  }

  bound(method: string, url: URL): Promise<{ authorization: string; dpop: string }> | undefined {
    const { tokens, dpop } = this;
    if (tokens === undefined || dpop === undefined) return undefined;
    const token = tokens.access_token;
    return dpop.session
      .buildProof({ htm: method, htu: url, accessToken: token })
      .then((proof) => ({ authorization: `DPoP ${token}`, dpop: proof }));
  }

  nonce(url: URL, value: string): void {
    this.dpop?.session.rememberNonce(url, value);
  }

  get stale(): boolean {
    if (!this.loaded) return true;
    if (this.tokens === undefined) return this.server.auth !== undefined;
    return this.expiring(this.tokens);
  }

  ready(): Promise<void> {
    this.pending ??= this.obtain().finally(() => (this.pending = undefined));
    return this.pending;
  }

  concerns(challenge: string | undefined): boolean {
    return (
      this.tokens !== undefined || this.server.auth !== undefined || (challenge !== undefined && /^\s*(bearer|dpop)\b/i.test(challenge))
    );
  }

  async unauthorized(used: string | undefined, challenge: string | undefined): Promise<void> {
    // RFC 9449 §9: the server wants its nonce in the proof; it came with this answer (nonce()).
    if (this.dpop !== undefined && parseChallenge(challenge).error === 'use_dpop_nonce') return;
    if (this.pending !== undefined) await this.pending.catch(() => {});
    if (used !== undefined && this.header() !== used) return; // someone else refreshed already
    if (this.tokens !== undefined) this.tokens = { ...this.tokens, expires_at: 0 };
    else if (this.server.auth === undefined) throw this.needsLogin('it answered HTTP 401 with an OAuth challenge and no login is stored');
    this.loaded = true;
    await this.ready();
  }

  async insufficientScope(used: string | undefined, challenge: string): Promise<void> {
    if (this.pending !== undefined) await this.pending.catch(() => {});
    if (used !== undefined && this.header() !== used) return; // a wider token came meanwhile: try it
    const name = this.server.name;
    const wanted = parseChallenge(challenge).scope;
    const granted = this.tokens?.scope ?? this.settings.scope;
    const union = computeScopeUnion(granted, wanted);
    if (this.settings.grant !== 'authorization_code') {
      // No person needed: a new token for the union of what was asked and what the server wants.
      await this.obtain(union, true);
      return;
    }
    // A refresh cannot widen a grant (RFC 6749 §6): the next login asks for the union.
    let stored;
    try {
      stored = await this.store.read(name, this.server.url);
    } catch {
      stored = undefined;
    }
    if (stored !== undefined && wanted !== undefined) {
      const { version: _v, savedAt: _s, ...rest } = stored;
      await this.store.write(name, { ...rest, stepUpScope: computeScopeUnion(stored.stepUpScope, wanted)! }).catch((err: unknown) => {
        this.log.warn('cannot record the scope the server asked for', { server: name, error: err });
      });
    }
    throw new GatewayError(
      'MCPG_SERVER_NEEDS_LOGIN',
      `server "${name}" needs login (scope "${union ?? wanted ?? 'unknown'}"): run \`${this.loginCommand}\` (the request needs a scope the stored login was not granted)`,
      { server: name },
    );
  }

  watch(changed: () => void): () => void {
    const file = this.store.fileOf(this.server.name);
    try {
      mkdirSync(this.store.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      this.log.warn('cannot create the token directory; a login is noticed on SIGHUP only', { dir: this.store.dir, error: err });
    }
    const watch = watchFiles(
      [file],
      () => {
        this.loaded = false;
        changed();
      },
      this.log,
    );
    return () => watch.close();
  }

  private expiring(tokens: StoredTokens): boolean {
    if (tokens.expires_at === undefined) return false;
    const life = typeof tokens.expires_in === 'number' ? tokens.expires_in * 1000 : REFRESH_MARGIN_MS * 4;
    return this.now() >= tokens.expires_at - Math.min(REFRESH_MARGIN_MS, life / 4);
  }

  /** `scope`/`force`: a machine grant's new token for a wider scope (a step-up), whatever is held. */
  private async obtain(scope = this.settings.scope, force = false): Promise<void> {
    const name = this.server.name;
    let stored;
    try {
      stored = await this.store.read(name, this.server.url);
    } catch (err) {
      throw new GatewayError(
        'MCPG_SERVER_NEEDS_LOGIN',
        `server "${name}" needs login: run \`${this.loginCommand}\` (${(err as Error).message})`,
        { server: name },
      );
    }
    this.loaded = true;
    // A token the server refused (expires_at 0) is refreshed, unless a login stored another since.
    const refused = this.tokens?.expires_at === 0 ? this.tokens : undefined;
    await this.hold(
      refused !== undefined && (stored?.tokens === undefined || stored.tokens.access_token === refused.access_token)
        ? refused
        : stored?.tokens,
      stored?.dpop,
    );
    const machine = this.settings.grant !== 'authorization_code';
    if (this.tokens !== undefined && !this.expiring(this.tokens) && !force) return;
    if (!machine) {
      if (this.tokens === undefined) {
        if (this.server.auth === undefined) return; // not known to need OAuth: try without
        throw this.needsLogin('no login is stored');
      }
      if (this.tokens.refresh_token === undefined) throw this.needsLogin('the access token expired and there is no refresh token');
    }
    // Everything stored goes on: the provider rewrites the whole file. The DPoP key above all — a
    // refresh signed by another key is refused (the refresh token is bound to this one) — and a
    // pending step-up scope, which the next login is to ask for.
    const { version: _v, savedAt: _s, url: _u, tokens: _t, ...kept } = stored ?? {};
    const provider = new StoreProvider(
      this.server,
      this.settings,
      this.store,
      machine ? { kind: 'machine' } : { kind: 'gateway' },
      {
        ...kept,
        ...(this.tokens !== undefined && !force && { tokens: this.tokens }),
      },
      this.now,
    );
    try {
      await auth(provider, { serverUrl: this.server.url, ...(scope !== undefined && { scope }) });
    } catch (err) {
      this.tokens = provider.current.tokens;
      if (err instanceof NeedsLogin) throw this.needsLogin('the authorization server refused the refresh token');
      throw new GatewayError(
        'MCPG_SERVER_UNAVAILABLE',
        `server "${name}": could not get an access token from its authorization server: ${(err as Error).message}`,
        { server: name },
      );
    }
    await this.hold(provider.current.tokens, provider.current.dpop);
    if (this.tokens === undefined) throw this.needsLogin('no access token was issued');
    this.log.debug(machine ? 'obtained an access token (client credentials)' : 'refreshed the access token', { server: name });
  }

  /**
   * Holds `tokens`, presented with the DPoP scheme where they are bound to `key` (`token_type` DPoP);
   * the same key keeps its session and the nonces servers gave. Both change together.
   */
  private async hold(tokens: StoredTokens | undefined, key: StoredDpopKey | undefined): Promise<void> {
    let dpop: OAuthCredentials['dpop'];
    if (key !== undefined && isDpopBound(tokens?.token_type)) {
      dpop = this.dpop !== undefined && this.dpop.key.jwk.d === key.jwk.d ? this.dpop : { key, session: await dpopSession(key) };
    }
    this.tokens = tokens;
    this.dpop = dpop;
  }

  private needsLogin(why: string): GatewayError {
    const name = this.server.name;
    return new GatewayError('MCPG_SERVER_NEEDS_LOGIN', `server "${name}" needs login: run \`${this.loginCommand}\` (${why})`, {
      server: name,
    });
  }
}
