// A real OAuth 2.1 / OpenID authorization server on loopback for the e2e tests, both ways mcpgate
// meets one (agents signing in to mcpgate; mcpgate signing in to remote servers): `oidc-provider` (a
// certified OpenID provider) in the test process, with dynamic client registration, PKCE, resource
// indicators (RFC 8707: JWT access tokens whose `aud` is the resource asked for), rotated refresh
// tokens, revocation (RFC 7009), introspection, client credentials for static clients, optionally
// client ID metadata documents, and its development login and consent pages, which `authorize` and
// `signIn` drive by HTTP the way a person's browser would. `rotate` replaces the signing keys (a new
// provider behind the same issuer URL and port, the new key first, the old one still published).
// Also here: the OAuth remote server fixture's runner and `mcpgate login` driven as a person would.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { exportJWK, exportPKCS8, generateKeyPair, type CryptoKey, type JWK } from 'jose';
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
import { CLI, fixture } from './gateway.js';

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
  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.info = info;
  }
  tokens(): StoredOAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  get registered(): boolean {
    return this.info !== undefined;
  }
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
      () => {
        throw new Error('connected without signing in');
      },
      (err: unknown) => {
        if (!(err instanceof UnauthorizedError)) throw err;
      },
    );
    if (provider.authorizationUrl === undefined) throw new Error('the client was not sent to the authorization server');
    await transport.finishAuth(await idp.authorize(provider.authorizationUrl, AGENT_REDIRECT, login));
  } finally {
    await transport.close();
  }
  return provider;
}

export interface IdpOptions {
  /** Access-token lifetime in seconds (default 300). */
  accessTokenTtl?: number;
  /**
   * Accept client ID metadata documents (draft-ietf-oauth-client-id-metadata-document-02). Client
   * ids must be https URLs, which a loopback test cannot serve without a certificate: the provider's
   * `fetch` hook (its documented way to control outgoing requests) fetches `https://127.0.0.1:PORT/…`
   * as `http://127.0.0.1:PORT/…` instead — the document is still fetched, from the test's server.
   */
  clientIdMetadataDocuments?: boolean;
  /** Scopes the resource servers accept beyond `mcp` (a token gets those its request asked for). */
  extraScopes?: string[];
  /**
   * DPoP (RFC 9449, oidc-provider's `features.dPoP`): `offered` (the default, as oidc-provider ships
   * it: the metadata lists `dpop_signing_alg_values_supported`, a token request with a proof gets a
   * `token_type` DPoP token whose JWT carries `cnf.jkt`), `nonce` (offered, and every proof at the
   * token endpoint must carry the provider's nonce: the first is answered `use_dpop_nonce`), `off`
   * (not offered: no such metadata, proofs ignored, bearer tokens only).
   */
  dpop?: 'offered' | 'nonce' | 'off';
}

/** The id of the static client that authenticates with `private_key_jwt` (its key: `Idp.keyRobot`). */
export const KEY_ROBOT_ID = 'key-robot';

export class Idp {
  issuer = '';
  /** The static confidential client for the client-credentials grant. */
  readonly machine = { clientId: ROBOT.id, clientSecret: ROBOT.secret };
  /** A client-credentials client that authenticates with `private_key_jwt`: its private key (PEM, PKCS #8); the provider holds the public one. */
  keyRobot = { clientId: KEY_ROBOT_ID, privateKeyPem: '', publicJwk: {} as JWK };
  keys: SigningKey[] = [];
  /** Extra claims of each account's access tokens (e.g. `groups`), by its login name. */
  readonly accountClaims = new Map<string, Record<string, unknown>>();
  /** How many requests reached the introspection endpoint (RFC 7662) since start. */
  introspections = 0;
  /** Requests to the token endpoint: with a DPoP proof, without, and those answered `use_dpop_nonce`. */
  readonly tokenRequests = { dpop: 0, plain: 0, nonceChallenges: 0 };
  /** A 32-byte secret the provider derives its DPoP nonces from (`dpop: 'nonce'`). */
  private readonly nonceSecret = randomBytes(32);
  private provider: Provider | undefined;
  private readonly server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST' && req.url?.startsWith('/token/introspection') === true) this.introspections += 1;
    else if (req.method === 'POST' && req.url === '/token') {
      this.tokenRequests[req.headers.dpop === undefined ? 'plain' : 'dpop'] += 1;
      res.once('finish', () => {
        if (res.statusCode === 400 && res.hasHeader('dpop-nonce')) this.tokenRequests.nonceChallenges += 1;
      });
    }
    if (this.provider === undefined) res.writeHead(503).end();
    else void this.provider.callback()(req, res);
  });

  constructor(private readonly options: IdpOptions = {}) {}

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.keys = [await signingKey('key-1')];
    const pair = await generateKeyPair('ES256', { extractable: true });
    this.keyRobot = {
      clientId: KEY_ROBOT_ID,
      privateKeyPem: await exportPKCS8(pair.privateKey),
      publicJwk: { ...(await exportJWK(pair.publicKey)), alg: 'ES256', use: 'sig' },
    };
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

  /** Same as stop (the upstream tests' name). */
  close(): Promise<void> {
    return this.stop();
  }

  private make(): Provider {
    const ttl = this.options.accessTokenTtl ?? 300;
    const configuration: Configuration = {
      clients: [
        ...[ROBOT, OPAQUE_ROBOT].map((c) => ({
          client_id: c.id,
          client_secret: c.secret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          scope: 'mcp',
        })),
        {
          client_id: KEY_ROBOT_ID,
          token_endpoint_auth_method: 'private_key_jwt',
          token_endpoint_auth_signing_alg: 'ES256',
          jwks: { keys: [this.keyRobot.publicJwk] },
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          scope: 'mcp',
        },
      ],
      jwks: { keys: this.keys.map((k) => k.jwk) },
      cookies: { keys: ['a-cookie-signing-key-for-tests'] },
      clientDefaults: { id_token_signed_response_alg: 'ES256' },
      scopes: ['openid', 'offline_access', 'mcp', ...(this.options.extraScopes ?? [])],
      pkce: { required: () => true },
      ttl: {
        AccessToken: ttl,
        ClientCredentials: ttl,
        AuthorizationCode: 60,
        Grant: 86_400,
        Interaction: 600,
        Session: 86_400,
        RefreshToken: 86_400,
        IdToken: 3600,
      },
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
      // What a company IdP puts in access tokens for authorization: group membership and the like.
      extraTokenClaims: (_ctx, token) =>
        'accountId' in token && typeof token.accountId === 'string' ? this.accountClaims.get(token.accountId) : undefined,
      features: {
        devInteractions: { enabled: true },
        registration: { enabled: true },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        dPoP: {
          enabled: this.options.dpop !== 'off',
          ...(this.options.dpop === 'nonce' && { nonceSecret: this.nonceSecret, requireNonce: () => true }),
        },
        ...(this.options.clientIdMetadataDocuments === true && { clientIdMetadataDocument: { enabled: true, ack: 'draft-02' } }),
        resourceIndicators: {
          enabled: true,
          // A refresh without a `resource` parameter gets the one resource the grant holds.
          defaultResource: (_ctx, _client, oneOf) => oneOf ?? undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource, client) => ({
            scope: ['mcp', ...(this.options.extraScopes ?? [])].join(' '),
            audience: resource,
            accessTokenTTL: ttl,
            ...(client.clientId === OPAQUE_ROBOT.id
              ? { accessTokenFormat: 'opaque' }
              : { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
          }),
        },
      },
      ...(this.options.clientIdMetadataDocuments === true && {
        fetch: (url: string | URL | Request, init?: RequestInit) => {
          // Without its `dispatcher`: that guard refuses loopback addresses, which are all a test has.
          const { dispatcher: _guard, ...rest } = (init ?? {}) as RequestInit & { dispatcher?: unknown };
          const href = url instanceof Request ? url.url : String(url);
          return globalThis.fetch(href.replace(/^https:\/\/127\.0\.0\.1:/, 'http://127.0.0.1:'), rest);
        },
      }),
    };
    return new Provider(this.issuer, configuration);
  }

  /** A client-credentials access token of a static client for `resource`. */
  async clientCredentials(resource: string, client: { id: string; secret: string } = ROBOT): Promise<string> {
    const res = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp', resource }).toString(),
    });
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200 || typeof body.access_token !== 'string')
      throw new Error(`client_credentials failed: ${res.status} ${JSON.stringify(body)}`);
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

  /**
   * A person signing in on the authorization URL of a client whose redirect the test does not know
   * in advance (`mcpgate login`'s loopback port): like `authorize`, and resolves with the first
   * redirect that leaves the provider, which the caller then opens.
   */
  async signIn(authorizationUrl: string, login = 'alice'): Promise<URL> {
    const url = new URL(authorizationUrl);
    const redirect = url.searchParams.get('redirect_uri');
    if (redirect === null) throw new Error(`no redirect_uri in ${authorizationUrl}`);
    const params = await this.authorize(url, redirect, login);
    const back = new URL(redirect);
    for (const [name, value] of params) back.searchParams.set(name, value);
    return back;
  }

  /** Revokes a refresh token as its (public) client would (RFC 7009). */
  async revoke(token: string, clientId: string): Promise<void> {
    const res = await fetch(`${this.issuer}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: clientId, token_type_hint: 'refresh_token' }).toString(),
    });
    if (!res.ok) throw new Error(`revocation failed: HTTP ${res.status} ${await res.text()}`);
  }
}

/** An authorization server for the upstream tests, started (`close` stops it). */
export async function startAuthServer(options: IdpOptions = {}): Promise<Idp> {
  const idp = new Idp(options);
  await idp.start();
  return idp;
}

/** A running test/fixtures/oauth-remote-server.ts: a remote MCP server that wants this authorization server's JWTs. */
export interface OAuthRemote {
  url: string;
  base: string;
  /** `requests`: every request to its metadata or /mcp, whatever the answer. */
  stats(): Promise<{ accepted: number; refused: number; requests: number }>;
  /** Every distinct Authorization value the server received. */
  seen(): Promise<string[]>;
  /** With `--dpop`: proofs accepted, `use_dpop_nonce` answers given, and why proofs were refused. */
  dpop(): Promise<{ accepted: number; nonceChallenges: number; refused: string[] }>;
  refuseLast(): Promise<void>;
  /** The resource moves to the authorization server `issuer`. */
  move(issuer: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startOAuthRemote(issuer: string, args: string[] = []): Promise<OAuthRemote> {
  const child: ChildProcess = spawn(process.execPath, [fixture('oauth-remote-server'), '--issuer', issuer, ...args], {
    stdio: ['ignore', 'pipe', process.env.MCPGATE_TEST_VERBOSE !== undefined ? 'inherit' : 'ignore'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error('the remote fixture exited before listening');
    }),
  ])) as [string];
  lines.close();
  const { url } = JSON.parse(first) as { url: string };
  const base = new URL(url).origin;
  return {
    url,
    base,
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { accepted: number; refused: number; requests: number },
    seen: async () => (await (await fetch(`${base}/seen`)).json()) as string[],
    dpop: async () => (await (await fetch(`${base}/dpop`)).json()) as { accepted: number; nonceChallenges: number; refused: string[] },
    refuseLast: async () => void (await fetch(`${base}/refuse-last`, { method: 'POST' })).body?.cancel(),
    move: async (issuer: string) => {
      const res = await fetch(`${base}/move?issuer=${encodeURIComponent(issuer)}`, { method: 'POST' });
      assert.equal(res.status, 204, await res.text());
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

export interface LoginRun {
  config: string;
  state: string;
  /** The server entry (default `remote`). */
  server?: string;
  /** `--agent`: that agent's own account. */
  agent?: string;
  /** Who signs in at the authorization server (default `alice`). */
  user?: string;
  /** `--port`: a fixed loopback port (a client registered for its redirect is used again). */
  port?: number;
  /** What the "browser" does with the redirect back to mcpgate (default: opens it, expecting 200). */
  callback?: (url: URL) => Promise<void>;
}

/** Runs the built `mcpgate login` as a person would: reads the printed URL, signs in through the provider as `user`, lands on the loopback callback. */
export async function runLogin(as: Idp, run: LoginRun): Promise<{ code: number | null; out: string; err: string }> {
  const args = [
    CLI,
    'login',
    run.server ?? 'remote',
    '--config',
    run.config,
    '--state',
    run.state,
    '--no-browser',
    '--login-timeout',
    '60000',
    ...(run.agent === undefined ? [] : ['--agent', run.agent]),
    ...(run.port === undefined ? [] : ['--port', String(run.port)]),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  let signingIn: Promise<void> | undefined;
  lines.on('line', (line) => {
    out += `${line}\n`;
    const url = /^\s+(http:\/\/\S+)$/.exec(line)?.[1];
    if (url === undefined || signingIn !== undefined) return;
    signingIn = (async () => {
      const callback = await as.signIn(url, run.user);
      if (run.callback !== undefined) return run.callback(callback);
      const res = await fetch(callback);
      assert.equal(res.status, 200, await res.text());
    })();
  });
  const [code] = (await exited) as [number | null];
  await signingIn;
  return { code, out, err };
}
