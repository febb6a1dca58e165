// The yardstick for the client baselines: a minimal client built on the official SDK alone
// (@modelcontextprotocol/client: its Client, its Streamable HTTP transport, its `auth()` with the
// providers it ships), run by `conformance client --command "node sdk-client-driver.js"` exactly as
// client-driver.ts runs mcpgate. A scenario may sit in a client baseline only when this driver fails
// it too. Run it over every client scenario of a suite version (after a build):
//   node_modules/node22/bin/node node_modules/conformance-0.2/dist/index.js client \
//     --command "node dist/test/conformance/sdk-client-driver.js" --suite all --timeout 120000
// The authorization code grant is driven as a browser would: the authorization URL is fetched, its
// redirect read (the suite's authorization servers answer at once, no login page), and the code and
// `iss` handed to the transport's `finishAuth`.

import {
  Client,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  DpopSession,
  PrivateKeyJwtProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  requestJwtAuthorizationGrant,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { callsFor, serverRefusedCall } from './scenario-args.js';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, string | undefined> & { toolCalls?: unknown };
if (url === undefined) {
  process.stderr.write('usage: sdk-client-driver.js URL (run by the conformance suite)\n');
  process.exit(2);
}

/** The authorization code grant with a "browser" that follows the redirect itself. */
class BrowserProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  callback: URLSearchParams | undefined;
  private readonly session: Promise<DpopSession> | undefined;

  constructor(dpop: boolean) {
    if (context.client_id !== undefined)
      this.client = { client_id: context.client_id, ...(context.client_secret !== undefined && { client_secret: context.client_secret }) };
    this.session = dpop ? DpopSession.create() : undefined;
  }

  /** The client ID metadata document the suite's clients are known by (auth/basic-cimd). */
  readonly clientMetadataUrl = 'https://conformance-test.local/client-metadata.json';

  get redirectUrl(): string {
    return 'http://127.0.0.1:3999/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'sdk-conformance-client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (location === null) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
    this.callback = new URL(location, authorizationUrl).searchParams;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  dpop(): Promise<DpopSession> | undefined {
    return this.session;
  }
}

function provider(): OAuthClientProvider | undefined {
  if (!scenario.startsWith('auth/')) return undefined;
  const id = context.client_id ?? '';
  if (scenario === 'auth/client-credentials-basic')
    return new ClientCredentialsProvider({ clientId: id, clientSecret: context.client_secret ?? '' });
  if (scenario === 'auth/client-credentials-jwt')
    return new PrivateKeyJwtProvider({
      clientId: id,
      privateKey: context.private_key_pem ?? '',
      algorithm: context.signing_algorithm ?? 'ES256',
    });
  if (scenario === 'auth/enterprise-managed-authorization' || scenario === 'auth/cross-app-access-complete-flow') {
    return new CrossAppAccessProvider({
      clientId: id,
      clientSecret: context.client_secret ?? '',
      // The IdP's token endpoint is handed out: its metadata is no full OpenID Provider document.
      assertion: async (ctx) =>
        (
          await requestJwtAuthorizationGrant({
            tokenEndpoint: context.idp_token_endpoint ?? '',
            audience: ctx.authorizationServerUrl,
            resource: ctx.resourceUrl,
            idToken: context.idp_id_token ?? '',
            clientId: context.idp_client_id ?? '',
          })
        ).jwtAuthGrant,
    });
  }
  if (scenario === 'auth/wif-jwt-bearer') {
    // The SDK ships no provider for the RFC 7523 jwt-bearer grant: this is the documented extension point.
    const machine = new ClientCredentialsProvider({ clientId: id, clientSecret: '' });
    machine.prepareTokenRequest = (scope?: string) =>
      new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion: context.valid_jwt ?? '',
        ...(scope !== undefined && { scope }),
      });
    return machine;
  }
  return new BrowserProvider(scenario.startsWith('auth/dpop'));
}

const auth = provider();

async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  for (let attempt = 0; ; attempt++) {
    const transport = new StreamableHTTPClientTransport(new URL(url!), auth === undefined ? {} : { authProvider: auth });
    // The era the scenario is written for: 2026-07-28 pinned (stateless, `server/discover`), else initialize.
    const client = new Client(
      { name: 'sdk-conformance-client', version: '1.0.0' },
      {
        capabilities: { elicitation: { form: { applyDefaults: true } } },
        ...(version === '2026-07-28' && { versionNegotiation: { mode: { pin: version } } }),
      },
    );
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: {} }));
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || !(auth instanceof BrowserProvider) || auth.callback === undefined || attempt > 1)
        throw err;
      await transport.finishAuth(auth.callback);
      auth.callback = undefined;
    }
  }
}

let session: { client: Client; transport: StreamableHTTPClientTransport } | undefined;

/** One request; where the transport started an authorization (a step-up), finish it and ask again. */
async function request<T>(send: (client: Client) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    session ??= await connect();
    try {
      return await send(session.client);
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || !(auth instanceof BrowserProvider) || auth.callback === undefined || attempt > 1)
        throw err;
      await session.transport.finishAuth(auth.callback);
      auth.callback = undefined;
    }
  }
}

let failed = false;
try {
  const { tools } = await request((c) => c.listTools());
  if (scenario !== 'initialize') {
    for (const planned of callsFor(tools, context)) {
      const result = await request((c) => c.callTool(planned)).catch((err: unknown) => {
        if (serverRefusedCall(err)) return String(err);
        throw err;
      });
      process.stdout.write(`${planned.name}: ${JSON.stringify(result)}\n`);
    }
  }
  await session?.client.close();
} catch (err) {
  failed = true;
  process.stderr.write(`sdk-client-driver (${scenario}): ${String(err)}\n`);
}
process.exit(failed ? 1 : 0);
