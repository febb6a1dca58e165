// mcpgate's OAuthClientProvider for the official SDK's `auth()` (@modelcontextprotocol/client), which
// does the protocol: RFC 9728 resource metadata → RFC 8414 / OIDC discovery, dynamic registration
// (RFC 7591), PKCE, the `resource` parameter (RFC 8707) on every token request, refresh, and
// client credentials. This file only says who mcpgate is (client metadata, or the entry's client) and
// keeps what the SDK hands it in the token store. With `clientMetadataUrl`, mcpgate's client id is that
// URL (a client ID metadata document the operator serves) wherever the authorization server advertises
// `client_id_metadata_document_supported`. Three uses:
// - `login`: a person signs in; the redirect goes to the loopback listener of `mcpgate login`;
// - `gateway`: refreshing stored tokens; when a person is needed, it throws `NeedsLogin` instead;
// - `machine`: the entry's machine grant (client credentials, jwt-bearer, ID-JAG), no person, no redirect.

import { readFile } from 'node:fs/promises';
import { createPrivateKeyJwtAuth, requestJwtAuthorizationGrant } from '@modelcontextprotocol/client';
import type {
  AddClientAuthentication,
  DpopSession,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { OAuthSettings, RemoteServerConfig } from '../config/types.js';
import { dpopSession, dpopWanted, newDpopKey } from './dpop.js';
import type { TokenFile, TokenStore } from './store.js';

/** The RFC 7523 §2.1 grant type: a JWT as the authorization grant. */
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** How long the IdP may take to answer a token exchange. */
const IDP_TIMEOUT_MS = 10_000;

/** The SDK asked for a person's authorization where none can be given (the gateway). */
export class NeedsLogin extends Error {}

/** Discovery named an authorization server other than the one the entry's credentials are pinned to: nothing was sent there. */
export class IssuerNotPinned extends Error {
  constructor(
    readonly found: string,
    readonly pinned: string,
  ) {
    super(`the server names the authorization server ${found}, but its credentials are pinned to ${pinned}`);
  }
}

/** Two issuer identifiers name the same authorization server (a trailing slash aside). */
export function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

type ProviderUse =
  | { kind: 'login'; redirectUrl: string; state: string; open: (url: URL) => void | Promise<void>; challengeDpop?: boolean }
  | { kind: 'gateway' }
  | { kind: 'machine' };

type Stored = Omit<TokenFile, 'version' | 'savedAt' | 'url'>;

export class StoreProvider implements OAuthClientProvider {
  private verifier: string | undefined;
  /** The authorization server and resource of this `auth()` run (the SDK hands them after discovery). */
  private authorizationServer: string | undefined;
  private resource: string | undefined;
  private session: Promise<DpopSession> | undefined;
  /**
   * The only authorization server this run may present the entry's client (id, secret, key) or
   * assertion to: checked as soon as discovery names one, before any registration or token request.
   */
  expectedIssuer: string | undefined;
  /**
   * `private_key_jwt` (RFC 7523 §2.2): with the entry's `privateKey`, every token request carries a
   * client assertion the SDK signs (with jose) for this client, instead of a secret.
   */
  readonly addClientAuthentication: AddClientAuthentication | undefined;

  constructor(
    private readonly server: RemoteServerConfig,
    private readonly settings: OAuthSettings,
    private readonly store: TokenStore,
    private readonly use: ProviderUse,
    /** What is stored now (the provider keeps it current and writes every change). */
    private stored: Stored,
    private readonly now: () => number = Date.now,
  ) {
    const key = settings.privateKey;
    const id = settings.clientId;
    this.addClientAuthentication =
      key === undefined || id === undefined
        ? undefined
        : createPrivateKeyJwtAuth({ issuer: id, subject: id, privateKey: key, alg: settings.signingAlgorithm ?? 'ES256' });
  }

  get current(): Stored {
    return this.stored;
  }

  get redirectUrl(): string | undefined {
    if (this.use.kind === 'login') return this.use.redirectUrl;
    if (this.use.kind === 'machine') return undefined;
    // Refreshing needs no redirect, but the SDK takes "no redirect URL" to mean a machine client.
    const registered = (this.stored.client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    return Array.isArray(registered) && typeof registered[0] === 'string' ? registered[0] : 'http://127.0.0.1/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    const machine = this.settings.grant !== 'authorization_code';
    const redirect = this.redirectUrl;
    return {
      client_name: 'mcpgate',
      redirect_uris: redirect === undefined ? [] : [redirect],
      grant_types: !machine
        ? ['authorization_code', 'refresh_token']
        : this.settings.grant === 'jwt_bearer' || this.settings.grant === 'id_jag'
          ? [JWT_BEARER]
          : ['client_credentials'],
      response_types: machine ? [] : ['code'],
      token_endpoint_auth_method:
        this.settings.privateKey !== undefined
          ? 'private_key_jwt'
          : this.settings.clientSecret !== undefined
            ? 'client_secret_basic'
            : 'none',
      ...(this.settings.scope !== undefined && { scope: this.settings.scope }),
    };
  }

  state(): string {
    if (this.use.kind !== 'login') throw new NeedsLogin('no authorization request outside mcpgate login');
    return this.use.state;
  }

  /**
   * The client ID metadata document's URL (draft-ietf-oauth-client-id-metadata-document): the SDK
   * uses it as the client id where the authorization server advertises support, else registers.
   */
  get clientMetadataUrl(): string | undefined {
    return this.use.kind === 'machine' ? undefined : this.settings.clientMetadataUrl;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    // Who mcpgate is, in this order: its metadata document where the server takes one, the entry's
    // client, else the client it registered (the SDK registers when this returns nothing).
    const document = this.clientMetadataUrl;
    const metadata = this.stored.discovery?.authorizationServerMetadata as { client_id_metadata_document_supported?: unknown } | undefined;
    if (document !== undefined && metadata?.client_id_metadata_document_supported === true) {
      return this.stored.client?.client_id === document ? this.stored.client : undefined;
    }
    const id = this.settings.clientId;
    if (id !== undefined) {
      // The authorization server it was stamped with (SEP-2352) is stored; the secret stays in .mcp.json.
      const issuer = this.stored.client?.client_id === id ? this.stored.client.issuer : undefined;
      return {
        client_id: id,
        ...(this.settings.clientSecret !== undefined && { client_secret: this.settings.clientSecret }),
        ...(typeof issuer === 'string' && { issuer }),
      };
    }
    return this.stored.client;
  }

  async saveClientInformation(info: StoredOAuthClientInformation): Promise<void> {
    // A configured client (and its secret) stays in .mcp.json; only a registered one is stored.
    if (this.settings.clientId !== undefined) {
      await this.save({ ...this.stored, client: { client_id: info.client_id, ...(info.issuer !== undefined && { issuer: info.issuer }) } });
      return;
    }
    await this.save({ ...this.stored, client: info });
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.stored.tokens as StoredOAuthTokens | undefined;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    const expiresAt = typeof tokens.expires_in === 'number' ? this.now() + tokens.expires_in * 1000 : undefined;
    // A refresh answer without a new refresh token keeps the old one (RFC 6749 §6).
    const refresh = tokens.refresh_token ?? this.stored.tokens?.refresh_token;
    await this.save({
      ...this.stored,
      tokens: {
        ...tokens,
        ...(refresh !== undefined && { refresh_token: refresh }),
        ...(expiresAt !== undefined && { expires_at: expiresAt }),
      },
    });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.use.kind !== 'login') throw new NeedsLogin('a person must authorize mcpgate');
    await this.use.open(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE code verifier: the authorization was not started by this login');
    return this.verifier;
  }

  /** The issuer of the authorization server `auth()` discovered: the ID-JAG's audience. */
  saveAuthorizationServerUrl(url: string): void {
    if (this.expectedIssuer !== undefined && !sameIssuer(url, this.expectedIssuer)) throw new IssuerNotPinned(url, this.expectedIssuer);
    this.authorizationServer = url;
  }

  /** The issuer this run's discovery named (after `auth()`), to pin on first use. */
  get discoveredIssuer(): string | undefined {
    return this.authorizationServer;
  }

  /** The resource (RFC 8707) `auth()` asks tokens for: the ID-JAG's resource. */
  saveResourceUrl(url: string): void {
    this.resource = url;
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    if (this.use.kind !== 'machine') return undefined;
    const file = this.settings.assertionFile;
    if (this.settings.grant === 'jwt_bearer' && file !== undefined) {
      // Read for every request: the platform rotates the workload's token in place.
      const assertion = await readToken(file, 'the workload token "assertionFile"');
      return new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...(scope !== undefined && { scope }) });
    }
    if (this.settings.grant === 'id_jag')
      return new URLSearchParams({ grant_type: JWT_BEARER, assertion: await this.idJag(scope), ...(scope !== undefined && { scope }) });
    return new URLSearchParams({ grant_type: 'client_credentials', ...(scope !== undefined && { scope }) });
  }

  /**
   * Enterprise-managed authorization: the person's ID token (read for every request: whatever signs
   * them in to the IdP renews it in place) exchanged at the IdP (RFC 8693, by the SDK's
   * `requestJwtAuthorizationGrant`) for an ID-JAG for this authorization server and resource. The SDK's
   * own `CrossAppAccessProvider` keeps tokens in memory; mcpgate keeps them in the token store, so the
   * exchange is done here.
   */
  private async idJag(scope: string | undefined): Promise<string> {
    const { idpTokenEndpoint, idpClientId, idpClientSecret, idTokenFile } = this.settings;
    if (idpTokenEndpoint === undefined || idpClientId === undefined || idTokenFile === undefined)
      throw new Error('the "id_jag" grant needs "idpTokenEndpoint", "idpClientId" and "idTokenFile"');
    const audience = this.authorizationServer;
    const resource = this.resource;
    if (audience === undefined) throw new Error("no authorization server discovered for the ID-JAG's audience");
    if (resource === undefined)
      throw new Error(`server "${this.server.name}" publishes no protected resource metadata (RFC 9728): an ID-JAG needs its resource`);
    const idToken = await readToken(idTokenFile, 'the ID token "idTokenFile"');
    try {
      const { jwtAuthGrant } = await requestJwtAuthorizationGrant({
        tokenEndpoint: idpTokenEndpoint,
        audience,
        resource,
        idToken,
        clientId: idpClientId,
        ...(idpClientSecret !== undefined && { clientSecret: idpClientSecret }),
        ...(scope !== undefined && { scope }),
        fetchFn: (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(IDP_TIMEOUT_MS) }),
      });
      return jwtAuthGrant;
    } catch (err) {
      throw new Error(`the IdP's token exchange at ${idpTokenEndpoint} (ID token for an ID-JAG) failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /**
   * DPoP (RFC 9449): where both servers take it (dpop.ts says when), the SDK signs every token
   * request with this session's key (and answers a `use_dpop_nonce` once). The key is the stored one
   * (a refresh keeps the binding), else a new one for this login, stored with the tokens it binds.
   */
  dpop(): Promise<DpopSession> | undefined {
    const discovery = this.stored.discovery;
    const challenged = this.use.kind === 'login' && this.use.challengeDpop === true;
    if (!dpopWanted(discovery?.authorizationServerMetadata, discovery?.resourceMetadata, challenged, this.stored.dpop !== undefined))
      return undefined;
    this.session ??= (async () => {
      if (this.stored.dpop === undefined) this.stored = { ...this.stored, dpop: (await newDpopKey()) as NonNullable<Stored['dpop']> };
      return dpopSession(this.stored.dpop!);
    })();
    return this.session;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.save({ ...this.stored, discovery: { ...state } });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.stored.discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.verifier = undefined;
      return;
    }
    const next = { ...this.stored };
    if (scope === 'all' || scope === 'client') delete next.client;
    if (scope === 'all' || scope === 'tokens') delete next.tokens;
    if (scope === 'all') {
      delete next.dpop;
      this.session = undefined;
    }
    if (scope === 'all' || scope === 'discovery') delete next.discovery;
    await this.save(next);
  }

  private async save(next: Stored): Promise<void> {
    this.stored = next;
    await this.store.write(this.server.name, { url: this.server.url, ...next });
  }
}

/** A token kept in a file by the platform (trimmed); a clear error when it cannot be read or is empty. */
async function readToken(file: string, what: string): Promise<string> {
  let token: string;
  try {
    token = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    throw new Error(`cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  if (token === '') throw new Error(`${what} ${file} is empty`);
  return token;
}
