// A real OAuth 2.1 / OpenID authorization server for the tests: oidc-provider (a certified OpenID
// provider) on 127.0.0.1 in the test process, configured as remote MCP servers' authorization
// servers are: dynamic client registration (RFC 7591), authorization code + PKCE, refresh tokens
// (rotated), client credentials, revocation, and resource indicators (RFC 8707) issuing JWT access
// tokens whose audience is the resource. `signIn` plays the person in the browser: it follows the
// authorization URL through the provider's own login and consent pages with plain HTTP requests.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { CLI, fixture } from './gateway.js';

export interface AuthServer {
  readonly issuer: string;
  /** The confidential client registered for the client-credentials grant. */
  readonly machine: { clientId: string; clientSecret: string };
  /** Follows an authorization URL through login and consent as `user`; resolves with the redirect it ends on. */
  signIn(authorizationUrl: string, user?: string): Promise<URL>;
  /** Revokes a refresh token as its (public) client would. */
  revoke(token: string, clientId: string): Promise<void>;
  close(): Promise<void>;
}

export interface AuthServerOptions {
  /** Access-token lifetime in seconds (default 3600). */
  accessTokenTtl?: number;
}

export async function startAuthServer(options: AuthServerOptions = {}): Promise<AuthServer> {
  const ttl = options.accessTokenTtl ?? 3600;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' };
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  const machine = { clientId: 'machine', clientSecret: 'machine-secret-0123456789abcdef' };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: [{ client_id: machine.clientId, client_secret: machine.clientSecret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] }],
    scopes: ['openid', 'offline_access', 'mcp'],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: readonly string[]) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({ scope: 'mcp', audience: resource, accessTokenTTL: ttl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    pkce: { required: () => true },
    ttl: { AccessToken: ttl, ClientCredentials: ttl, RefreshToken: 86_400, Grant: 86_400, Session: 86_400, Interaction: 600, AuthorizationCode: 60, IdToken: 3600 },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    cookies: { keys: ['test-cookie-key-0123456789'] },
  });
  const handle = provider.callback();
  http.on('request', (req, res) => void handle(req, res));

  async function signIn(authorizationUrl: string, user = 'alice'): Promise<URL> {
    const cookies = new Map<string, string>();
    const send = async (url: string, init: RequestInit = {}): Promise<Response> => {
      const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      return res;
    };
    let url = authorizationUrl;
    for (let hop = 0; hop < 20; hop++) {
      const res = await send(url);
      const location = res.headers.get('location');
      await res.body?.cancel();
      if (location === null) throw new Error(`the authorization server stopped at ${url} (HTTP ${res.status})`);
      const next = new URL(location, url);
      if (next.origin !== issuer) return next;
      const interaction = /^\/interaction\/([^/]+)$/.exec(next.pathname);
      if (interaction === null) {
        url = next.href;
        continue;
      }
      const page = await send(next.href);
      const html = await page.text();
      const prompt = html.includes('name="login"') ? 'login' : 'consent';
      const form = new URLSearchParams(prompt === 'login' ? { prompt, login: user, password: 'any' } : { prompt });
      const done = await send(next.href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
      await done.body?.cancel();
      const resume = done.headers.get('location');
      if (resume === null) throw new Error(`the ${prompt} form was refused (HTTP ${done.status})`);
      url = new URL(resume, next).href;
    }
    throw new Error('too many redirects while signing in');
  }

  async function revoke(token: string, clientId: string): Promise<void> {
    const res = await fetch(`${issuer}/token/revocation`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token, client_id: clientId, token_type_hint: 'refresh_token' }).toString() });
    if (!res.ok) throw new Error(`revocation failed: HTTP ${res.status} ${await res.text()}`);
  }

  return {
    issuer,
    machine,
    signIn,
    revoke,
    close: () => new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    }),
  };
}

/** A running test/fixtures/oauth-remote-server.ts: a remote MCP server that wants this authorization server's JWTs. */
export interface OAuthRemote {
  url: string;
  base: string;
  stats(): Promise<{ accepted: number; refused: number }>;
  /** Every distinct Authorization value the server received. */
  seen(): Promise<string[]>;
  refuseLast(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOAuthRemote(issuer: string): Promise<OAuthRemote> {
  const child: ChildProcess = spawn(process.execPath, [fixture('oauth-remote-server'), '--issuer', issuer], { stdio: ['ignore', 'pipe', process.env.MCPGATE_TEST_VERBOSE !== undefined ? 'inherit' : 'ignore'] });
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(() => { throw new Error('the remote fixture exited before listening'); })])) as [string];
  lines.close();
  const { url } = JSON.parse(first) as { url: string };
  const base = new URL(url).origin;
  return {
    url,
    base,
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { accepted: number; refused: number },
    seen: async () => (await (await fetch(`${base}/seen`)).json()) as string[],
    refuseLast: async () => void (await fetch(`${base}/refuse-last`, { method: 'POST' })).body?.cancel(),
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
}

/** Runs the built `mcpgate login` as a person would: reads the printed URL, signs in through the provider as `user`, lands on the loopback callback. */
export async function runLogin(as: AuthServer, run: LoginRun): Promise<{ code: number | null; out: string; err: string }> {
  const args = [CLI, 'login', run.server ?? 'remote', '--config', run.config, '--state', run.state, '--no-browser', '--login-timeout', '60000', ...(run.agent === undefined ? [] : ['--agent', run.agent])];
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
      const res = await fetch(callback);
      assert.equal(res.status, 200, await res.text());
    })();
  });
  const [code] = (await exited) as [number | null];
  await signingIn;
  return { code, out, err };
}
