// A real OAuth 2.1 / OpenID authorization server on loopback for the e2e tests: `oidc-provider` (a
// certified OpenID provider) in the test process, with dynamic client registration, PKCE, resource
// indicators (RFC 8707: JWT access tokens whose `aud` is the resource asked for), client credentials
// for one static client, and its development login and consent pages, which `authorize` drives by
// HTTP the way a person's browser would. `rotate` replaces the signing keys (a new provider behind
// the same issuer URL and port, the new key first, the old one still published).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';

export const ROBOT = { id: 'robot', secret: 'robot-secret-for-tests-only-0123456789' };
/** A client whose access tokens are opaque (checked by introspection). */
export const OPAQUE_ROBOT = { id: 'opaque-robot', secret: 'opaque-robot-secret-for-tests-only-0123' };

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** An agent's redirect URI: never opened, the test reads the code from the redirect. */
export const AGENT_REDIRECT = 'http://127.0.0.1:9/callback';

/** The SDK's OAuth client provider, kept in memory; the "browser" step is recorded for the test to drive. */
export class MemoryProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private info: StoredOAuthClientInformation | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier = '';
  readonly redirectUrl = AGENT_REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'mcpgate e2e agent',
    redirect_uris: [AGENT_REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation(): StoredOAuthClientInformation | undefined { return this.info; }
  saveClientInformation(info: StoredOAuthClientInformation): void { this.info = info; }
  tokens(): StoredOAuthTokens | undefined { return this.saved; }
  saveTokens(tokens: StoredOAuthTokens): void { this.saved = tokens; }
  redirectToAuthorization(url: URL): void { this.authorizationUrl = url; }
  saveCodeVerifier(verifier: string): void { this.verifier = verifier; }
  codeVerifier(): string { return this.verifier; }
  get registered(): boolean { return this.info !== undefined; }
}

/**
 * An agent's access token for `resource`, the SDK client's way: its OAuth provider follows the 401
 * to the metadata, registers, and `login` signs in on the IdP's pages.
 */
export async function agentSignIn(idp: Idp, url: string, login: string): Promise<MemoryProvider> {
  const provider = new MemoryProvider();
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await new Client({ name: `agent-${login}`, version: '1.0.0' }).connect(transport).then(
      () => { throw new Error('connected without signing in'); },
      (err: unknown) => { if (!(err instanceof UnauthorizedError)) throw err; },
    );
    if (provider.authorizationUrl === undefined) throw new Error('the client was not sent to the authorization server');
    await transport.finishAuth(await idp.authorize(provider.authorizationUrl, AGENT_REDIRECT, login));
  } finally {
    await transport.close();
  }
  return provider;
}

export class Idp {
  issuer = '';
  keys: SigningKey[] = [];
  /** Extra claims of each account's access tokens (e.g. `groups`), by its login name. */
  readonly accountClaims = new Map<string, Record<string, unknown>>();
  private provider: Provider | undefined;
  private readonly server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (this.provider === undefined) res.writeHead(503).end();
    else void this.provider.callback()(req, res);
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.keys = [await signingKey('key-1')];
    this.provider = this.make();
  }

  /** A new signing key, first in the set (so it signs), the old ones still published. */
  async rotate(): Promise<SigningKey> {
    const key = await signingKey(`key-${this.keys.length + 1}`);
    this.keys = [key, ...this.keys];
    this.provider = this.make();
    return key;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private make(): Provider {
    const configuration: Configuration = {
      clients: [ROBOT, OPAQUE_ROBOT].map((c) => ({ client_id: c.id, client_secret: c.secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'mcp' })),
      jwks: { keys: this.keys.map((k) => k.jwk) },
      cookies: { keys: ['a-cookie-signing-key-for-tests'] },
      clientDefaults: { id_token_signed_response_alg: 'ES256' },
      scopes: ['openid', 'offline_access', 'mcp'],
      pkce: { required: () => true },
      ttl: { AccessToken: 300, ClientCredentials: 300, AuthorizationCode: 60, Grant: 3600, Interaction: 600, Session: 3600, RefreshToken: 3600 },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
      // What a company IdP puts in access tokens for authorization: group membership and the like.
      extraTokenClaims: (_ctx, token) => ('accountId' in token && typeof token.accountId === 'string' ? this.accountClaims.get(token.accountId) : undefined),
      features: {
        devInteractions: { enabled: true },
        registration: { enabled: true },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        resourceIndicators: {
          enabled: true,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource, client) => ({
            scope: 'mcp',
            audience: resource,
            accessTokenTTL: 300,
            ...(client.clientId === OPAQUE_ROBOT.id ? { accessTokenFormat: 'opaque' } : { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
          }),
        },
      },
    };
    return new Provider(this.issuer, configuration);
  }

  /** A client-credentials access token of a static client for `resource`. */
  async clientCredentials(resource: string, client: { id: string; secret: string } = ROBOT): Promise<string> {
    const res = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp', resource }).toString(),
    });
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200 || typeof body.access_token !== 'string') throw new Error(`client_credentials failed: ${res.status} ${JSON.stringify(body)}`);
    return body.access_token;
  }

  /**
   * What a person's browser does with the authorization URL: follow the redirects (keeping the
   * provider's cookies), sign in as `login` on the login page, confirm the consent page, and stop at
   * the redirect to `redirectUri`. Returns that redirect's parameters (`code`, `iss`, `state`).
   */
  async authorize(authorizationUrl: URL, redirectUri: string, login: string): Promise<URLSearchParams> {
    const jar = new Map<string, string>();
    let url = authorizationUrl.href;
    let form: string | undefined;
    for (let step = 0; step < 12; step++) {
      const res = await fetch(url, {
        method: form === undefined ? 'GET' : 'POST',
        redirect: 'manual',
        headers: {
          cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
          ...(form !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(form !== undefined && { body: form }),
      });
      for (const cookie of res.headers.getSetCookie()) {
        const pair = cookie.split(';')[0] ?? '';
        const eq = pair.indexOf('=');
        const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1)];
        if (value === '') jar.delete(name);
        else jar.set(name, value);
      }
      const text = await res.text();
      const location = res.headers.get('location');
      form = undefined;
      if (location !== null) {
        const next = new URL(location, url);
        if (next.href.startsWith(redirectUri)) {
          if (!next.searchParams.has('code')) throw new Error(`the provider redirected back without a code: ${next.href}`);
          return next.searchParams;
        }
        url = next.href;
      } else if (res.status === 200 && text.includes('name="prompt" value="login"')) {
        form = new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString();
      } else if (res.status === 200 && text.includes('name="prompt" value="consent"')) {
        form = new URLSearchParams({ prompt: 'consent' }).toString();
      } else {
        throw new Error(`unexpected answer ${res.status} at ${url}: ${text.slice(0, 300)}`);
      }
    }
    throw new Error('the authorization did not finish within 12 steps');
  }
}
