// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): an entry's
// `"clientMetadataUrl"` is mcpgate's client id with an authorization server that advertises
// `client_id_metadata_document_supported`, and the server fetches the document from that URL instead of
// mcpgate registering. Real parts: oidc-provider with its CIMD feature (test/helpers/oidc.ts; the
// document is served by the test on loopback HTTP, which the provider's `fetch` hook reaches for the
// https client id), the OAuth remote fixture (its `whoami` names the token's client), the built
// `mcpgate login` and `serve`. Verified: login stores the URL as the client and registers nothing; the
// document was fetched; the upstream token's `client_id` is the URL; a refresh after expiry works as
// that client. Against a server without the feature, the same entry registers dynamically and the
// document is never fetched. The agent side: an SDK client whose OAuth provider has a
// `clientMetadataUrl` signs in to mcpgate through mcpgate's protected-resource metadata.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { fixtureServer, startGateway, tempDir, textOf, until, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import {
  AGENT_REDIRECT,
  MemoryProvider,
  runLogin,
  startAuthServer,
  startOAuthRemote,
  type Idp,
  type OAuthRemote,
} from '../helpers/oidc.js';

const PATH = '/mcpgate/client.json';

interface DocumentServer {
  /** The https client id (`https://127.0.0.1:PORT/mcpgate/client.json`). */
  clientId: string;
  fetches: number;
  close(): Promise<void>;
}

/** Serves one client ID metadata document on loopback; `clientId` is its https name. */
async function serveDocument(document: (clientId: string) => Record<string, unknown>): Promise<DocumentServer> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const clientId = `https://127.0.0.1:${(server.address() as AddressInfo).port}${PATH}`;
  const served: DocumentServer = {
    clientId,
    fetches: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('request', (req, res) => {
    if (req.method !== 'GET' || req.url !== PATH) return void res.writeHead(404).end();
    served.fetches += 1;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(document(clientId)));
  });
  return served;
}

/** What an operator serves for mcpgate `login` (a native app: any loopback port, RFC 8252). */
const mcpgateDocument = (clientId: string): Record<string, unknown> => ({
  client_id: clientId,
  client_name: 'mcpgate',
  application_type: 'native',
  redirect_uris: ['http://127.0.0.1/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
});

interface TokenFile {
  client?: { client_id: string };
  tokens?: { access_token: string; expires_at?: number };
}

describe('mcpgate identifies itself with a client ID metadata document', { timeout: 120_000 }, () => {
  let as: Idp;
  let remote: OAuthRemote;
  let doc: DocumentServer;
  let dir: TempDir;
  let gw: GatewayProcess | undefined;

  before(async () => {
    as = await startAuthServer({ accessTokenTtl: 4, clientIdMetadataDocuments: true });
    remote = await startOAuthRemote(as.issuer);
    doc = await serveDocument(mcpgateDocument);
    dir = await tempDir();
  });

  after(async () => {
    if (gw !== undefined && gw.child.exitCode === null) await gw.stop();
    await remote?.stop();
    await doc?.close();
    await as?.close();
    await dir?.remove();
  });

  it("logs in as the document's URL (no registration), calls the server as that client, and refreshes as it", async () => {
    const config = await writeConfig(dir, {
      remote: { type: 'http', url: remote.url, auth: { type: 'oauth', clientMetadataUrl: doc.clientId } },
    });
    const state = dir.file('state');
    const result = await runLogin(as, { config, state });
    assert.equal(result.code, 0, result.err);
    assert.ok(doc.fetches >= 1, 'the authorization server fetched the document');
    const stored = JSON.parse(await readFile(`${state}/oauth/remote.json`, 'utf8')) as TokenFile;
    assert.equal(stored.client?.client_id, doc.clientId, "the client is the document's URL, not a registered one");

    gw = await startGateway({ config, args: ['--state', state] });
    const who = JSON.parse(textOf(await gw.client.callTool({ name: 'remote__whoami', arguments: {} }))) as {
      sub: string;
      client_id: string;
    };
    assert.deepEqual(who, { sub: 'alice', client_id: doc.clientId });

    assert.ok(await until(() => Date.now() > stored.tokens!.expires_at!, 10_000));
    assert.equal(textOf(await gw.client.callTool({ name: 'remote__echo', arguments: { text: 'refreshed' } })), 'refreshed');
    const after = JSON.parse(await readFile(`${state}/oauth/remote.json`, 'utf8')) as TokenFile;
    assert.notEqual(after.tokens!.access_token, stored.tokens!.access_token, 'refreshed as the same client');
    assert.equal(after.client?.client_id, doc.clientId);
  });
});

describe('client ID metadata documents: a server without the feature', { timeout: 120_000 }, () => {
  let as: Idp;
  let remote: OAuthRemote;
  let doc: DocumentServer;
  let dir: TempDir;

  before(async () => {
    as = await startAuthServer();
    remote = await startOAuthRemote(as.issuer);
    doc = await serveDocument(mcpgateDocument);
    dir = await tempDir();
  });

  after(async () => {
    await remote?.stop();
    await doc?.close();
    await as?.close();
    await dir?.remove();
  });

  it('registers dynamically where the server does not advertise client_id_metadata_document_supported', async () => {
    const config = await writeConfig(dir, {
      remote: { type: 'http', url: remote.url, auth: { type: 'oauth', clientMetadataUrl: doc.clientId } },
    });
    const state = dir.file('state');
    const result = await runLogin(as, { config, state });
    assert.equal(result.code, 0, result.err);
    const stored = JSON.parse(await readFile(`${state}/oauth/remote.json`, 'utf8')) as TokenFile;
    assert.ok(stored.client?.client_id !== undefined && stored.client.client_id !== doc.clientId, 'a registered client');
    assert.equal(doc.fetches, 0, 'nobody fetched the document');
  });
});

describe('an agent signing in to mcpgate with a client ID metadata document', { timeout: 120_000 }, () => {
  let as: Idp;
  let doc: DocumentServer;
  let dir: TempDir;
  let gate: HttpGateway | undefined;

  before(async () => {
    as = await startAuthServer({ clientIdMetadataDocuments: true });
    // The agent's own document: its redirect URI is the one the test reads the code from.
    doc = await serveDocument((clientId) => ({
      client_id: clientId,
      client_name: 'cimd agent',
      redirect_uris: [AGENT_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    }));
    dir = await tempDir();
  });

  after(async () => {
    await gate?.stop();
    await doc?.close();
    await as?.close();
    await dir?.remove();
  });

  it("follows the 401 to mcpgate's resource metadata, uses its document's URL as client id, and calls a tool", async () => {
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const rules = await writeRules(dir, {
      auth: { oauth: { issuer: as.issuer, scopes: ['mcp'] } },
      agents: { carol: { allow: { servers: ['echo'] } } },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules, '--pins', 'off'] });
    const provider = new CimdProvider(doc.clientId);
    const signIn = new StreamableHTTPClientTransport(new URL(gate.url), { authProvider: provider });
    await new Client({ name: 'cimd-agent', version: '1.0.0' }).connect(signIn).then(
      () => assert.fail('connected without signing in'),
      (err: unknown) => assert.ok(err instanceof UnauthorizedError, String(err)),
    );
    assert.ok(provider.authorizationUrl !== undefined);
    assert.equal(provider.authorizationUrl.searchParams.get('client_id'), doc.clientId, "the client id is the document's URL");
    assert.equal(provider.clientInformation()?.client_id, doc.clientId, 'nothing was registered');
    await signIn.finishAuth(await as.authorize(provider.authorizationUrl, AGENT_REDIRECT, 'carol'));
    await signIn.close();
    assert.ok(doc.fetches >= 1, "the authorization server fetched the agent's document");
    const transport = new StreamableHTTPClientTransport(new URL(gate.url), { authProvider: provider });
    const client = new Client({ name: 'cimd-agent', version: '1.0.0' });
    await client.connect(transport);
    try {
      assert.equal(textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'hi' } })), 'hi');
    } finally {
      await client.close();
    }
  });
});

/** The SDK's in-memory OAuth client provider, identifying itself by a client ID metadata document. */
class CimdProvider extends MemoryProvider {
  constructor(readonly clientMetadataUrl: string) {
    super();
  }
}
