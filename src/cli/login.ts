// `mcpgate login SERVER` and `mcpgate logout SERVER`: sign mcpgate in to a remote server
// that wants OAuth, or forget the tokens. Both work on the state directory alone (the one pins use);
// a running gateway with the same --state notices the change and connects (or parks: needs login).

import { spawn } from 'node:child_process';
import type { Env } from '../config/expand.js';
import { loadServersConfig } from '../config/load.js';
import type { RemoteServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { LoginError, login } from '../oauth/login.js';
import { revokeStored } from '../oauth/revoke.js';
import { tokenDigest, TokenStore, type TokenFile } from '../oauth/store.js';
import type { CliIo } from './io.js';

export interface LoginRequest {
  configFile: string;
  stateDir: string;
  server: string;
  env: Env;
  /** Open the URL with xdg-open (macOS: open) when possible. */
  browser: boolean;
  port: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** An agent's own account on a per-agent server (`--agent`); absent: the server's shared login. */
  agent?: string;
}

export async function runLogin(request: LoginRequest, io: CliIo): Promise<number> {
  const server = await remoteServer(request.configFile, request.server, request.env);
  const shared = new TokenStore(request.stateDir);
  const agent = request.agent;
  if (agent !== undefined) {
    // Only a per-agent server's connections are an agent's own; on any other an agent's login would never be used.
    if (server.sessions !== 'per-agent')
      throw new GatewayError(
        'MCPG_USAGE',
        `--agent ${agent}: server "${server.name}" is "sessions": "${server.sessions}", so every agent's calls share its connection and its one login; give it "sessions": "per-agent" in ${request.configFile} for per-agent accounts, or log in without --agent`,
      );
    if (server.auth !== undefined && server.auth.grant !== 'authorization_code')
      throw new GatewayError(
        'MCPG_USAGE',
        `--agent ${agent}: server "${server.name}" uses the client-credentials grant: one machine account, no login, for every agent`,
      );
  }
  const store = agent === undefined ? shared : shared.forAgent(agent);
  const show = (url: URL): void => {
    io.out(
      `Open this URL in a browser to log in to server "${server.name}"${agent === undefined ? '' : ` as agent "${agent}"`}:\n\n  ${url.href}\n\nWaiting for the sign-in (up to ${Math.round(request.timeoutMs / 1000)} s)…\n`,
    );
    if (request.browser) openBrowser(url.href);
  };
  // A gateway watching this state directory acknowledges every login it takes; without one ever, nothing is waited for.
  const watched = (await store.readSeen(server.name)) !== undefined;
  try {
    await login(server, store, {
      port: request.port,
      timeoutMs: request.timeoutMs,
      show,
      ...(request.signal !== undefined && { signal: request.signal }),
    });
  } catch (err) {
    const message = err instanceof LoginError ? err.message : `login failed: ${(err as Error).message}`;
    io.err(`mcpgate: ${message}\n`);
    return 1;
  }
  const taken = watched && (await acknowledged(store, server.name));
  io.out(
    `Logged in to server "${server.name}"${agent === undefined ? '' : ` for agent "${agent}" (its own account; only its connections use it)`}. The tokens are in ${store.fileOf(server.name)} (mode 0600); ${taken ? `the gateway running with --state ${request.stateDir} uses them now` : watched ? `no gateway running with --state ${request.stateDir} took them within ${ACK_WAIT_MS / 1000} s; one does once it notices the file` : `a gateway with --state ${request.stateDir} uses them once it notices the file (at once when it starts)`}.\n`,
  );
  return 0;
}

/** How long `login` waits for a running gateway to acknowledge the new tokens. */
const ACK_WAIT_MS = 5_000;

/** Whether a running gateway acknowledged the tokens now stored for `server` within ACK_WAIT_MS. */
async function acknowledged(store: TokenStore, server: string): Promise<boolean> {
  const want = tokenDigest((await store.readAny(server).catch(() => undefined))?.tokens?.access_token);
  const deadline = Date.now() + ACK_WAIT_MS;
  while (Date.now() < deadline) {
    if ((await store.readSeen(server)) === want) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/**
 * Revokes the stored tokens at the authorization server (RFC 7009) when it advertises a revocation
 * endpoint, then removes them. A failed revocation is reported (exit 1: the tokens may still work
 * at the server until they expire) but the local tokens are removed all the same.
 */
export async function runLogout(
  configFile: string,
  stateDir: string,
  name: string,
  env: Env,
  io: CliIo,
  signal?: AbortSignal,
  agent?: string,
): Promise<number> {
  const shared = new TokenStore(stateDir);
  // --agent: only that agent's own login; the shared one and other agents' stay.
  const store = agent === undefined ? shared : shared.forAgent(agent);
  const whose = agent === undefined ? '' : ` for agent "${agent}"`;
  // The config is read only to catch a misspelt name; tokens of a server since removed from it can still be forgotten.
  const config = await loadServersConfig(configFile, env);
  const entry = config.servers.find((s) => s.name === name);
  const known = entry !== undefined;
  const auth = entry?.type === 'http' ? entry.auth : undefined;
  let stored: TokenFile | undefined;
  let unreadable: string | undefined;
  try {
    stored = await store.readAny(name);
  } catch (err) {
    unreadable = (err as Error).message;
  }
  const revocation =
    stored === undefined
      ? undefined
      : await revokeStored(stored, {
          ...(signal !== undefined && { signal }),
          ...(auth?.clientId !== undefined &&
            auth.clientSecret !== undefined && { client: { clientId: auth.clientId, clientSecret: auth.clientSecret } }),
        });
  if (await store.remove(name)) {
    io.out(`Logged out of server "${name}"${whose}: removed ${store.fileOf(name)}.\n`);
    if (unreadable !== undefined) {
      io.err(`mcpgate: the stored login could not be read, so nothing was revoked at the authorization server (${unreadable})\n`);
      return 1;
    }
    switch (revocation?.kind) {
      case 'revoked':
        io.out(`Revoked the ${revocation.tokens.map((t) => t.replace('_', ' ')).join(' and the ')} at ${revocation.endpoint}.\n`);
        if (revocation.kept.length > 0)
          io.out(
            'The authorization server cannot revoke the access token itself (a self-contained token): it stays valid there until it expires.\n',
          );
        return 0;
      case 'unsupported':
        io.out(
          `The authorization server${revocation.issuer === undefined ? '' : ` ${revocation.issuer}`} advertises no revocation endpoint: the tokens stay valid there until they expire.\n`,
        );
        return 0;
      case 'failed':
        io.err(
          `mcpgate: could not revoke the tokens: ${revocation.reason}. The local tokens are removed; revoke the grant at the provider if it must end now.\n`,
        );
        return 1;
      default:
        return 0;
    }
  }
  io.err(
    known
      ? `mcpgate: no login is stored for server "${name}"${whose} in ${stateDir}\n`
      : `mcpgate: no server "${name}" in ${config.file}, and no login stored for it${whose} in ${stateDir}\n`,
  );
  return 1;
}

async function remoteServer(configFile: string, name: string, env: Env): Promise<RemoteServerConfig> {
  const config = await loadServersConfig(configFile, env);
  const server = config.servers.find((s) => s.name === name);
  if (server === undefined)
    throw new GatewayError(
      'MCPG_USAGE',
      `no server "${name}" in ${config.file} (servers: ${config.servers.map((s) => s.name).join(', ') || 'none'})`,
    );
  if (server.type !== 'http')
    throw new GatewayError(
      'MCPG_USAGE',
      `server "${name}" is ${server.type === 'stdio' ? 'a stdio server' : 'a legacy SSE server'}; login is for remote Streamable HTTP servers ("type": "http")`,
    );
  return server;
}

/** Best effort: a desktop opens the URL; anywhere else the printed URL is the way. */
function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : 'xdg-open';
  try {
    const child = spawn(command, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no opener: the URL is printed
  }
}
