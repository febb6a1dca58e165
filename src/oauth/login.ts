// `mcpgate login SERVER`: the authorization code grant with PKCE for a native app (RFC 8252): a
// listener on 127.0.0.1 receives the redirect, the person signs in in a browser (opened with xdg-open
// when there is one; the URL is always printed), and the SDK's `auth()` does discovery, registration,
// PKCE, `state` and the code exchange with the `resource` parameter. The tokens go to the token store,
// where a running gateway finds them.
// The browser's page is answered after the code exchange: "Signed in", or why not. A client registered
// for another redirect URI is registered again. It asks for the server's challenge first
// (challenge.ts) and hands the SDK its `resource_metadata` URL; the scope it asks for is the entry's,
// else the challenge's, united with a pending step-up (`stepUpScope`) and what was granted before. The
// callback's `iss` goes to the SDK, which checks it (RFC 9207) and the metadata's issuer.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { auth, computeScopeUnion } from '@modelcontextprotocol/client';
import type { RemoteServerConfig } from '../config/types.js';
import { probeChallenge } from './challenge.js';
import { IssuerNotPinned, StoreProvider } from './provider.js';
import type { TokenFile, TokenStore } from './store.js';

interface LoginOptions {
  /** The loopback port to listen on (0: any free one; a pre-registered client needs a fixed one). */
  port: number;
  /** How long to wait for the person (ms). */
  timeoutMs: number;
  /** Shows the authorization URL (printed, and opened in a browser when possible). */
  show: (url: URL) => void | Promise<void>;
  signal?: AbortSignal;
}

const CALLBACK_PATH = '/callback';
const PAGE = (text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>mcpgate</title><p>${text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</p>`;
/** What a grant that needs no person is called, where `login` refuses it. */
const MACHINE_GRANTS: Readonly<Record<string, string>> = {
  client_credentials: 'client-credentials',
  jwt_bearer: 'jwt-bearer (workload identity)',
  id_jag: 'ID-JAG (enterprise-managed authorization)',
};

interface Callback {
  code: string;
  iss: string | undefined;
  /**
   * Answers the browser's redirect, which waits until the code exchange is done: the person is
   * told "Signed in" only once the tokens are had, and why not otherwise.
   */
  reply: (ok: boolean, text: string) => Promise<void>;
}

export class LoginError extends Error {}

/** Runs the whole login; resolves once the tokens are stored. */
export async function login(server: RemoteServerConfig, store: TokenStore, options: LoginOptions): Promise<void> {
  const settings = server.auth ?? { grant: 'authorization_code' as const };
  if (settings.grant !== 'authorization_code')
    throw new LoginError(`server "${server.name}" uses the ${MACHINE_GRANTS[settings.grant]} grant: it needs no login`);
  const listener = createServer();
  const state = randomBytes(16).toString('base64url');
  let stored;
  try {
    stored = await store.read(server.name, server.url);
  } catch {
    stored = undefined; // a login replaces whatever was there
  }
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(options.port, '127.0.0.1', () => resolve());
    });
    const redirectUrl = `http://127.0.0.1:${(listener.address() as { port: number }).port}${CALLBACK_PATH}`;
    const callback = waitForCallback(listener, state, options);
    callback.catch(() => {}); // awaited below; an early failure must not go unhandled meanwhile
    // A client registered for another redirect (another port) is registered again.
    const client = stored?.client as { redirect_uris?: unknown } | undefined;
    const reuse = Array.isArray(client?.redirect_uris) && client.redirect_uris.includes(redirectUrl);
    // The server's own challenge: the metadata URL it announces must be used, its scope asked for,
    // and its DPoP scheme says it takes DPoP-bound tokens.
    const challenge = await probeChallenge(server, options.signal);
    const provider = new StoreProvider(
      server,
      settings,
      store,
      { kind: 'login', redirectUrl, state, open: options.show, challengeDpop: challenge.dpop === true },
      {
        ...(reuse && stored?.client !== undefined && { client: stored.client }),
      },
    );
    // A configured client (its id, its secret) goes to one authorization server only: the entry's `issuer`, else the one first used.
    const pin = settings.clientId === undefined ? undefined : (settings.issuer ?? (await store.readPin(server.name)));
    provider.expectedIssuer = pin;
    const pinFirst = async (): Promise<void> => {
      if (settings.clientId !== undefined && pin === undefined && provider.discoveredIssuer !== undefined)
        await store.writePin(server.name, provider.discoveredIssuer);
    };
    const scope = loginScope(settings.scope, challenge.scope, stored);
    const common = {
      serverUrl: server.url,
      ...(scope !== undefined && { scope }),
      ...(challenge.resourceMetadataUrl !== undefined && { resourceMetadataUrl: challenge.resourceMetadataUrl }),
    };
    const first = await auth(provider, common).catch((err: unknown) => {
      if (err instanceof IssuerNotPinned)
        throw new LoginError(
          `${err.message}: the configured client is not presented there. If the move is genuine, set "issuer": "${err.found}" in the entry${settings.issuer === undefined ? ` (or remove ${store.pinFileOf(server.name)})` : ''}`,
        );
      throw err;
    });
    if (first === 'AUTHORIZED') return await pinFirst();
    const { code, iss, reply } = await callback;
    try {
      // The SDK checks `iss` against the issuer it discovered (RFC 9207), and that issuer against its metadata.
      const result = await auth(provider, { ...common, authorizationCode: code, ...(iss !== undefined && { iss }) });
      if (result !== 'AUTHORIZED' || provider.current.tokens === undefined)
        throw new LoginError('the authorization server issued no tokens');
    } catch (err) {
      await reply(
        false,
        `Sign-in failed: the code could not be exchanged for tokens (${err instanceof Error ? err.message : String(err)}). Return to the terminal.`,
      );
      throw err;
    }
    await pinFirst();
    await reply(true, 'Signed in. You can close this window and return to the terminal.');
  } finally {
    listener.closeAllConnections();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }
}

/**
 * What a login asks for: the entry's scope, else the server's challenge's; and where the server asked
 * for more than was granted (a step-up), that too with what was granted (a new authorization replaces
 * the old grant, so nothing granted is dropped). Undefined: the SDK's choice (the resource metadata's
 * `scopes_supported`, else none).
 */
function loginScope(configured: string | undefined, challenged: string | undefined, stored: TokenFile | undefined): string | undefined {
  const base = configured ?? challenged;
  if (stored?.stepUpScope === undefined) return base;
  return computeScopeUnion(base, stored.tokens?.scope, stored.stepUpScope);
}

/** The one redirect to the loopback listener that carries our `state`: its code, or the error it reports. */
function waitForCallback(listener: Server, state: string, options: LoginOptions): Promise<Callback> {
  return new Promise<Callback>((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new LoginError(`no sign-in within ${Math.round(options.timeoutMs / 1000)} s`)),
      options.timeoutMs,
    );
    const aborted = (): void => finish(new LoginError('login cancelled'));
    options.signal?.addEventListener('abort', aborted, { once: true });
    let done = false;
    function finish(result: Callback | Error): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', aborted);
      if (result instanceof Error) reject(result);
      else resolve(result);
    }
    listener.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH || url.searchParams.get('state') !== state) {
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE('Not the sign-in this mcpgate login is waiting for.'));
        return;
      }
      const error = url.searchParams.get('error');
      const code = url.searchParams.get('code');
      if (error !== null || code === null) {
        const why = `${error ?? 'no code'}${url.searchParams.has('error_description') ? `: ${url.searchParams.get('error_description')!.slice(0, 300)}` : ''}`;
        res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE(`Sign-in failed (${why}). Return to the terminal.`));
        finish(new LoginError(`the authorization server refused: ${why}`));
        return;
      }
      // Answered once the code is exchanged (the listener closes after that, ending it either way).
      const reply = (ok: boolean, text: string): Promise<void> =>
        new Promise<void>((resolve) => {
          if (res.writableEnded || res.destroyed) return resolve();
          res.once('close', () => resolve());
          res
            .writeHead(ok ? 200 : 502, { 'content-type': 'text/html; charset=utf-8', connection: 'close' })
            .end(PAGE(text), () => resolve());
        });
      finish({ code, iss: url.searchParams.get('iss') ?? undefined, reply });
    });
  });
}
