// `mcpgate login SERVER` and `mcpgate logout SERVER` (issue 14): sign mcpgate in to a remote server
// that wants OAuth, or forget the tokens. Both work on the state directory alone (the one pins use);
// a running gateway with the same --state notices the change and connects (or parks: needs login).

import { spawn } from 'node:child_process';
import type { Env } from '../config/expand.js';
import { loadServersConfig } from '../config/load.js';
import type { RemoteServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { LoginError, login } from '../oauth/login.js';
import { TokenStore } from '../oauth/store.js';
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
}

export async function runLogin(request: LoginRequest, io: CliIo): Promise<number> {
  const server = await remoteServer(request.configFile, request.server, request.env);
  const store = new TokenStore(request.stateDir);
  const show = (url: URL): void => {
    io.out(`Open this URL in a browser to log in to server "${server.name}":\n\n  ${url.href}\n\nWaiting for the sign-in (up to ${Math.round(request.timeoutMs / 1000)} s)…\n`);
    if (request.browser) openBrowser(url.href);
  };
  try {
    await login(server, store, { port: request.port, timeoutMs: request.timeoutMs, show, ...(request.signal !== undefined && { signal: request.signal }) });
  } catch (err) {
    const message = err instanceof LoginError ? err.message : `login failed: ${(err as Error).message}`;
    io.err(`mcpgate: ${message}\n`);
    return 1;
  }
  io.out(`Logged in to server "${server.name}". The tokens are in ${store.fileOf(server.name)} (mode 0600); a gateway running with --state ${request.stateDir} uses them now.\n`);
  return 0;
}

export async function runLogout(configFile: string, stateDir: string, name: string, env: Env, io: CliIo): Promise<number> {
  const store = new TokenStore(stateDir);
  // The config is read only to catch a misspelt name; tokens of a server since removed from it can still be forgotten.
  const config = await loadServersConfig(configFile, env);
  const known = config.servers.some((s) => s.name === name);
  if (await store.remove(name)) {
    io.out(`Logged out of server "${name}": removed ${store.fileOf(name)}.\n`);
    return 0;
  }
  io.err(known ? `mcpgate: no login is stored for server "${name}" in ${stateDir}\n` : `mcpgate: no server "${name}" in ${config.file}, and no login stored for it in ${stateDir}\n`);
  return 1;
}

async function remoteServer(configFile: string, name: string, env: Env): Promise<RemoteServerConfig> {
  const config = await loadServersConfig(configFile, env);
  const server = config.servers.find((s) => s.name === name);
  if (server === undefined) throw new GatewayError('MCPG_USAGE', `no server "${name}" in ${config.file} (servers: ${config.servers.map((s) => s.name).join(', ') || 'none'})`);
  if (server.type !== 'http') throw new GatewayError('MCPG_USAGE', `server "${name}" is ${server.type === 'stdio' ? 'a stdio server' : 'a legacy SSE server'}; login is for remote Streamable HTTP servers ("type": "http")`);
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
