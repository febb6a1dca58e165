// One remote server's OAuth credentials in a running gateway (servers/upstream-credentials.ts is the
// contract the transport sees): the `Authorization` value of each request, read synchronously (for a
// DPoP-bound token, with a proof signed per request, dpop.ts). The tokens come from the token store
// (written by `mcpgate login`) or, for a machine grant, from the authorization server directly, and
// are refreshed before they expire and on a 401. When only a person can help, the answer is
// MCPG_SERVER_NEEDS_LOGIN naming the command; an answer no retry can change is
// MCPG_SERVER_AUTH_REFUSED; either parks the connection until new credentials come. No token is ever
// logged or put in an error. When each applies, and per-agent accounts: the room's README.

import { mkdirSync, statSync } from 'node:fs';
import {
  auth,
  computeScopeUnion,
  discoverOAuthProtectedResourceMetadata,
  OAuthError,
  type DpopSession,
} from '@modelcontextprotocol/client';
import type { OAuthSettings, RemoteServerConfig } from '../config/types.js';
import { watchFiles } from '../config/watch.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { parseChallenge } from './challenge.js';
import { dpopSession, isDpopBound, type StoredDpopKey } from './dpop.js';
import { IssuerNotPinned, NeedsLogin, sameIssuer, StoreProvider } from './provider.js';
import type { StoredTokens, TokenStore } from './store.js';

/** Refresh this long before expiry at most (less for short-lived tokens: a quarter of their life). */
const REFRESH_MARGIN_MS = 60_000;
/** After the authorization server refused the credentials, the next try is this much later, doubling up to REFUSAL_MAX_MS. */
const REFUSAL_FIRST_MS = 60_000;
const REFUSAL_MAX_MS = 30 * 60_000;
/** Token-endpoint answers (RFC 6749 §5.2) that the same request cannot change: retrying at once only hammers the server. */
const REFUSALS = new Set([
  'invalid_client',
  'unauthorized_client',
  'invalid_grant',
  'invalid_scope',
  'access_denied',
  'unsupported_grant_type',
]);
/** How long the server's resource metadata may take when a refused token makes mcpgate look whether it moved. */
const METADATA_TIMEOUT_MS = 5_000;
/** At most this many tokens are remembered as this process's own (older ones are forgotten). */
const MAX_KNOWN = 32;

export class OAuthCredentials {
  private tokens: StoredTokens | undefined;
  private loaded = false;
  private pending: Promise<void> | undefined;
  private readonly settings: OAuthSettings;
  /** The stored login's DPoP key and its session (proofs, the nonces servers handed out), while the tokens are bound to it. */
  private dpop: { key: StoredDpopKey; session: DpopSession } | undefined;
  /** The same store, telling this object of its own writes: a watch event for those is not new credentials. */
  private readonly own: TokenStore;
  /**
   * Access tokens this process wrote or held ('' for none): a token file holding one of them is not a
   * login (a refresh, a recorded step-up scope, an invalidation), so it revives nothing.
   */
  private readonly known = new Set<string>();
  /** The token file's identity when it was last read: a change (a login) is used by the very next request. */
  private stamp: string | undefined;
  /** The authorization server the stored tokens came from (their discovery), to tell a refusal from a move. */
  private authorizationServer: { url: string; resourceMetadataUrl: string | undefined } | undefined;
  /** The next `obtain` discovers again (the operator configured the server's new issuer). */
  private rediscover = false;
  /** The connection's revive (watch's `changed`) and the timer of the next try after a refusal. */
  private changed: (() => void) | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private refusalDelayMs = 0;

  constructor(
    private readonly server: RemoteServerConfig,
    private readonly store: TokenStore,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    // Without "auth" the server may still turn out to want OAuth (a 401 challenge): a login uses discovery and registration.
    this.settings = server.auth ?? { grant: 'authorization_code' };
    this.own = store.observed((_server, content) => this.remember(content.tokens));
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
    // A login stored since the last read (`mcpgate login` says the gateway uses it now): the next request does.
    if (this.fileStamp() !== this.stamp) {
      this.loaded = false;
      return true;
    }
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
    if (await this.newerStored(used)) return; // a login stored since this request went out
    if (this.tokens !== undefined) {
      // A server that moved to another authorization server refuses every token of this one: say so, and do not ask it again.
      const moved = await this.moved(challenge);
      if (moved !== undefined) throw moved;
      this.tokens = { ...this.tokens, expires_at: 0 };
    }
    if (this.tokens === undefined && this.server.auth === undefined)
      throw this.needsLogin('it answered HTTP 401 with an OAuth challenge and no login is stored');
    this.loaded = true;
    await this.ready();
  }

  async insufficientScope(used: string | undefined, challenge: string): Promise<void> {
    if (this.pending !== undefined) await this.pending.catch(() => {});
    if (used !== undefined && this.header() !== used) return; // a wider token came meanwhile: try it
    if (await this.newerStored(used)) return; // a login stored since this request went out
    const name = this.server.name;
    const wanted = parseChallenge(challenge).scope;
    const granted = this.tokens?.scope ?? this.settings.scope;
    const machine = this.settings.grant !== 'authorization_code';
    // The server names the scope; what mcpgate asks for is bounded by the entry (a machine grant without one: what it holds).
    const bound = this.settings.maxScope ?? this.settings.scope ?? (machine ? granted : undefined);
    const beyond = words(wanted).filter((w) => bound !== undefined && !words(bound).includes(w));
    if (beyond.length > 0) {
      const which = this.settings.maxScope !== undefined ? '"maxScope"' : this.settings.scope !== undefined ? '"scope"' : 'granted scope';
      throw this.refuse(
        `it asked for scope "${beyond.join(' ')}", beyond the entry's ${which} "${bound}"; mcpgate does not ask for it (widen "maxScope" in the entry to allow it)`,
      );
    }
    const union = computeScopeUnion(granted, wanted);
    if (machine) {
      // No person needed: a new token for the union of what was asked and what the server wants, once.
      if (words(wanted).every((w) => words(this.tokens?.scope).includes(w)))
        throw this.refuse(`it refused a token granted the scope it asks for ("${wanted ?? ''}")`);
      await this.obtain(union, true);
      const missing = words(wanted).filter((w) => this.tokens?.scope !== undefined && !words(this.tokens.scope).includes(w));
      if (missing.length > 0) throw this.refuse(`it wants scope "${missing.join(' ')}", which the authorization server did not grant`);
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
      // This write is this process's own (the token stays): the watch takes it for no login, and the connection stays parked.
      const { version: _v, savedAt: _s, ...rest } = stored;
      await this.own.write(name, { ...rest, stepUpScope: computeScopeUnion(stored.stepUpScope, wanted)! }).catch((err: unknown) => {
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
    this.changed = changed;
    const tokens = watchFiles([file], () => void this.tokenFileChanged(changed), this.log);
    // Says "a gateway watches this file" to `mcpgate login`, which then waits for the acknowledgement of its tokens.
    if (this.server.auth !== undefined) void this.acknowledge();
    // The workload's assertion and the person's ID token are the machine grant's credentials: a new one is worth a try.
    const grantFiles = [this.settings.assertionFile, this.settings.idTokenFile].filter((f): f is string => f !== undefined);
    const grant =
      grantFiles.length === 0
        ? undefined
        : watchFiles(
            grantFiles,
            () => {
              this.refusalDelayMs = 0;
              this.loaded = false;
              changed();
            },
            this.log,
          );
    return () => {
      tokens.close();
      grant?.close();
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      this.changed = undefined;
    };
  }

  /** The token file changed: new credentials only where it holds a token this process neither wrote nor held (a login). */
  private async tokenFileChanged(changed: () => void): Promise<void> {
    if (this.pending !== undefined) await this.pending.catch(() => {});
    let token: string;
    try {
      token = (await this.store.read(this.server.name, this.server.url))?.tokens?.access_token ?? '';
    } catch {
      token = 'unreadable'; // let the next attempt say what is wrong with it
    }
    if (this.known.has(token)) return;
    this.loaded = false;
    this.refusalDelayMs = 0;
    // Held before it is acknowledged: `mcpgate login` says "uses them now" only then.
    await this.ready().catch(() => {});
    changed();
    await this.acknowledge();
  }

  /** Writes which tokens this gateway holds now (their digest) for `mcpgate login` to see. */
  private async acknowledge(): Promise<void> {
    let token: string | undefined;
    try {
      token = (await this.store.read(this.server.name, this.server.url))?.tokens?.access_token;
    } catch {
      return;
    }
    if (token !== undefined && this.tokens?.access_token !== token && this.loaded) return; // not held (yet)
    await this.store.writeSeen(this.server.name, token).catch((err: unknown) => {
      this.log.debug('cannot acknowledge the stored login', { server: this.server.name, error: err });
    });
  }

  /** After a request was refused: true when a login stored other tokens since (now held: send again). */
  private async newerStored(used: string | undefined): Promise<boolean> {
    let token;
    try {
      token = (await this.store.read(this.server.name, this.server.url))?.tokens?.access_token;
    } catch {
      return false;
    }
    if (token === undefined || this.known.has(token)) return false;
    this.loaded = false;
    await this.ready();
    return this.header() !== used;
  }

  /**
   * A server refused a token: did it move to another authorization server (its resource metadata no
   * longer lists the one the tokens came from)? Then no refresh there can help: the error says what happened.
   */
  private async moved(challenge: string | undefined): Promise<GatewayError | undefined> {
    const was = this.authorizationServer;
    if (was === undefined) return undefined;
    let listed: string[] | undefined;
    try {
      const metadataUrl =
        parseChallenge(challenge).resourceMetadataUrl ??
        (was.resourceMetadataUrl !== undefined ? new URL(was.resourceMetadataUrl) : undefined);
      const metadata = await discoverOAuthProtectedResourceMetadata(
        this.server.url,
        metadataUrl !== undefined ? { resourceMetadataUrl: metadataUrl } : undefined,
        (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(METADATA_TIMEOUT_MS) }),
      );
      listed = metadata.authorization_servers;
    } catch {
      return undefined; // no metadata to tell: an ordinary refusal
    }
    if (listed === undefined || listed.length === 0 || listed.some((a) => sameIssuer(a, was.url))) return undefined;
    const now = listed[0]!;
    if (this.pinned) {
      if (this.settings.issuer !== undefined && sameIssuer(now, this.settings.issuer)) {
        this.rediscover = true; // the operator already names the new one: use it
        return undefined;
      }
      return this.refuse(
        `it refused the access token and now names the authorization server ${now}, not ${was.url} where its credentials are used; they are not presented to ${now}. If the move is genuine, set "issuer": "${now}" in the entry${this.settings.issuer === undefined ? ` (or remove ${this.store.pinFileOf(this.server.name)})` : ''}`,
      );
    }
    return this.needsLogin(
      `it refused the access token: the server moved to the authorization server ${now}, and the stored login is from ${was.url}`,
    );
  }

  /** Whether the entry's credentials are presented to one authorization server only: a machine grant's, or a configured client's. */
  private get pinned(): boolean {
    return this.settings.grant !== 'authorization_code' || this.settings.clientId !== undefined;
  }

  /**
   * The authorization server refused the credentials (or is not the one they are for): parked, and
   * tried again on a slow schedule (doubling), or at once when the credentials change.
   */
  private refuse(why: string): GatewayError {
    const name = this.server.name;
    this.refusalDelayMs = this.refusalDelayMs === 0 ? REFUSAL_FIRST_MS : Math.min(this.refusalDelayMs * 2, REFUSAL_MAX_MS);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.loaded = false;
      this.changed?.();
    }, this.refusalDelayMs);
    this.retryTimer.unref();
    return new GatewayError(
      'MCPG_SERVER_AUTH_REFUSED',
      `server "${name}": ${why}; tried again in ${this.refusalDelayMs / 1000} s, or at once when its credentials change`,
      { server: name },
    );
  }

  private remember(tokens: StoredTokens | undefined): void {
    if (this.known.size >= MAX_KNOWN) this.known.clear();
    this.known.add(tokens?.access_token ?? '');
  }

  /** The token file's identity (inode, size, time), read per request: cheap, and no read of the file itself. */
  private fileStamp(): string {
    try {
      const st = statSync(this.store.fileOf(this.server.name), { throwIfNoEntry: false });
      return st === undefined ? 'none' : `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return 'unreadable';
    }
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
    this.stamp = this.fileStamp(); // before the read: a write after it is seen by the next request
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
    const discovered = stored?.discovery;
    this.authorizationServer =
      discovered === undefined
        ? undefined
        : {
            url: issuerOf(discovered.authorizationServerMetadata) ?? discovered.authorizationServerUrl,
            resourceMetadataUrl: typeof discovered.resourceMetadataUrl === 'string' ? discovered.resourceMetadataUrl : undefined,
          };
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
    const { version: _v, savedAt: _s, url: _u, tokens: _t, ...kept } = stored ?? { version: 1 as const, url: '', savedAt: '' };
    if (this.rediscover) delete kept.discovery;
    this.rediscover = false;
    // The client (id, secret, key) and the assertion go to one authorization server only: the entry's
    // `issuer`, else the one first used (pinned in the state directory).
    let pin: string | undefined;
    if (this.pinned) {
      try {
        pin = this.settings.issuer ?? (await this.store.readPin(name));
      } catch (err) {
        throw this.refuse(`cannot read its authorization server pin: ${(err as Error).message}`);
      }
    }
    const provider = new StoreProvider(
      this.server,
      this.settings,
      this.own,
      machine ? { kind: 'machine' } : { kind: 'gateway' },
      {
        ...kept,
        ...(this.tokens !== undefined && !force && { tokens: this.tokens }),
      },
      this.now,
    );
    provider.expectedIssuer = pin;
    try {
      await auth(provider, { serverUrl: this.server.url, ...(scope !== undefined && { scope }) });
    } catch (err) {
      this.tokens = provider.current.tokens;
      if (err instanceof IssuerNotPinned)
        throw this.refuse(
          `${err.message}, so they are not presented there. If the move is genuine, set "issuer": "${err.found}" in the entry${this.settings.issuer === undefined ? ` (or remove ${this.store.pinFileOf(name)})` : ''}`,
        );
      if (machine && err instanceof OAuthError && REFUSALS.has(err.code))
        throw this.refuse(
          `its authorization server refused the "${this.settings.grant}" grant (${err.code}${err.message !== '' && err.message !== err.code ? `: ${err.message.slice(0, 200)}` : ''}); check the entry's ${this.settings.grant === 'jwt_bearer' ? '"clientId" and the assertion in "assertionFile"' : this.settings.grant === 'id_jag' ? '"clientId" and the ID-JAG exchange' : '"clientId" and its secret or key'}`,
        );
      if (err instanceof NeedsLogin) throw this.needsLogin('the authorization server refused the refresh token');
      throw new GatewayError(
        'MCPG_SERVER_UNAVAILABLE',
        `server "${name}": could not get an access token from its authorization server: ${(err as Error).message}`,
        { server: name },
      );
    }
    await this.hold(provider.current.tokens, provider.current.dpop);
    if (this.tokens === undefined) throw this.needsLogin('no access token was issued');
    this.refusalDelayMs = 0;
    if (this.pinned && pin === undefined && provider.discoveredIssuer !== undefined) {
      await this.store.writePin(name, provider.discoveredIssuer).catch((err: unknown) => {
        this.log.warn('cannot pin the authorization server its credentials were presented to', { server: name, error: err });
      });
      this.log.info(`pinned the authorization server ${provider.discoveredIssuer} for its credentials (trust on first use)`, {
        server: name,
      });
    }
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
    this.remember(tokens);
  }

  private needsLogin(why: string): GatewayError {
    const name = this.server.name;
    return new GatewayError('MCPG_SERVER_NEEDS_LOGIN', `server "${name}" needs login: run \`${this.loginCommand}\` (${why})`, {
      server: name,
    });
  }
}

/** The scope tokens of a space-separated scope (RFC 6749 §3.3). */
function words(scope: string | undefined): string[] {
  return scope === undefined ? [] : scope.split(' ').filter((w) => w !== '');
}

/** The issuer a stored authorization server metadata document names, if it names one. */
function issuerOf(metadata: unknown): string | undefined {
  const issuer = (metadata as { issuer?: unknown } | undefined)?.issuer;
  return typeof issuer === 'string' ? issuer : undefined;
}
