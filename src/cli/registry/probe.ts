// The check `add` makes before it writes: the new entry, read by the config loader exactly as `serve`
// will read it (with the env file's values), is started — the stdio command spawned with the
// environment mcpgate gives it, or the remote endpoint asked — and its tools are listed. A remote
// that answers 401 wants a login: the entry gets `"auth": "oauth"` for `mcpgate login`.

import { Client, SSEClientTransport, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { parseServersConfig } from '../../config/load.js';
import { serverEnv } from '../../config/child-env.js';
import type { ServerConfig } from '../../config/types.js';
import { GATEWAY_INFO } from '../../version.js';

/** What a server wrote to stderr that is kept for the error message: its last lines, not all of it. */
const STDERR_TAIL_BYTES = 2048;
/** Pages of tools/list followed at most. */
const MAX_PAGES = 20;

type ProbeResult = { readonly tools: readonly string[] } | { readonly needsLogin: true };

/** Starts the server `name` of the config text and lists its tools; throws with the reason it could not. */
export async function probeServer(
  name: string,
  configText: string,
  configFile: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ProbeResult> {
  const server = parseServersConfig(configText, configFile, env).servers.find((s) => s.name === name);
  if (server === undefined) throw new Error(`the config has no server "${name}"`);
  if (server.type !== 'stdio' && server.auth !== undefined) return { needsLogin: true };
  if (server.type === 'http' && (await wantsLogin(server.url, server.headers, timeoutMs))) return { needsLogin: true };
  let stderr = '';
  const transport = transportFor(server, env, (chunk) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
  });
  const client = new Client({ name: 'mcpgate-add', version: GATEWAY_INFO.version });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no tools listed within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const list = async (): Promise<string[]> => {
      await client.connect(transport);
      const tools: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await client.listTools(cursor === undefined ? {} : { cursor });
        tools.push(...result.tools.map((t) => t.name));
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    };
    return { tools: await Promise.race([list(), timeout]) };
  } catch (err) {
    const tail = stderr.trim().split('\n').slice(-5).join('\n  ');
    throw new Error(`${(err as Error).message}${tail === '' ? '' : `\n  the server said:\n  ${tail}`}`, { cause: err });
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

function transportFor(server: ServerConfig, env: NodeJS.ProcessEnv, onStderr: (text: string) => void): Transport {
  if (server.type === 'stdio') {
    const transport = new StdioClientTransport({
      command: server.command,
      args: [...server.args],
      env: serverEnv(server, env),
      cwd: server.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8')));
    return transport;
  }
  const requestInit = { headers: { ...server.headers } };
  return server.type === 'sse'
    ? new SSEClientTransport(new URL(server.url), { requestInit })
    : new StreamableHTTPClientTransport(new URL(server.url), { requestInit });
}

/** Whether a Streamable HTTP endpoint answers an initialize with 401 (it wants an OAuth login). */
async function wantsLogin(url: string, headers: Readonly<Record<string, string>>, timeoutMs: number): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mcpgate-add', version: GATEWAY_INFO.version } },
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.status === 401;
  } catch {
    return false; // the real attempt reports why
  }
}
