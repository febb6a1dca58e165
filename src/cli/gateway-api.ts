// How the commands that talk to a running HTTP gateway (`status`, `approve-call`) reach its operator
// routes: the gateway's base URL (`--url` or MCPGATE_URL, its `/mcp` URL taken too), the admin's
// token as a bearer token, five seconds at most, and one message when nothing answers there.

import type { CliIo } from './io.js';

const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8808';

/** The gateway's base URL from `--url` (a trailing slash or `/mcp` dropped). */
export function gatewayBase(url: string | undefined): string {
  return (url ?? DEFAULT_GATEWAY_URL).replace(/\/+$/, '').replace(/\/mcp$/, '');
}

/** The answer's status and body; undefined after saying that no gateway answers at `base`. */
export async function askGateway(
  io: CliIo,
  base: string,
  path: string,
  token: string | undefined,
  post?: unknown,
): Promise<{ status: number; ok: boolean; text: string } | undefined> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  let response: Response;
  try {
    response =
      post === undefined
        ? await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(5000) })
        : await fetch(`${base}${path}`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify(post),
            signal: AbortSignal.timeout(5000),
          });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    io.err(`mcpgate: no gateway answers at ${base} (${cause}); is 'mcpgate serve --http' running there? (--url or MCPGATE_URL)\n`);
    return undefined;
  }
  return { status: response.status, ok: response.ok, text: await response.text() };
}

/** The JSON-RPC error message of an error answer's body, else the start of the body. */
export function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    return body.error?.message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
