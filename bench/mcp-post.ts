// A lean raw Streamable HTTP client for the benches that open sessions and make echo calls over a
// node:http keep-alive Agent (bench/pool.ts, bench/cluster.ts): one POST, an initialize + initialized,
// and an `echo__echo` call whose answer is checked.
import { request, type Agent } from 'node:http';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** The revision `openSession` negotiates, sent on every later request as SDK clients do. */
const PROTOCOL_VERSION = '2025-11-25';

export interface Posted {
  status: number;
  session: string | undefined;
  body: string;
}

/** One POST to `${base}/mcp`; `extra` adds headers (e.g. `x-mcpgate-agent`). */
export function post(agent: Agent, base: string, body: string, session?: string, extra?: Record<string, string>): Promise<Posted> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...HEADERS, ...extra, 'content-length': String(Buffer.byteLength(body)) };
    if (session !== undefined) {
      headers['mcp-session-id'] = session;
      headers['mcp-protocol-version'] = PROTOCOL_VERSION;
    }
    const req = request(`${base}/mcp`, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, session: res.headers['mcp-session-id'] as string | undefined, body: text }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A 2025-era session: initialize, then notifications/initialized; its id. */
export async function openSession(agent: Agent, base: string, extra?: Record<string, string>): Promise<string> {
  const init = await post(
    agent,
    base,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
    undefined,
    extra,
  );
  if (init.session === undefined) throw new Error(`initialize failed: ${init.status} ${init.body}`);
  await post(agent, base, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), init.session, extra);
  return init.session;
}

let nextId = 1;
/** One `echo__echo` call on the session, its answer checked; the milliseconds it took. */
export async function callEcho(agent: Agent, base: string, session: string, extra?: Record<string, string>): Promise<number> {
  const t = performance.now();
  const r = await post(
    agent,
    base,
    JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'hi' } } }),
    session,
    extra,
  );
  const ms = performance.now() - t;
  if (r.status !== 200 || !r.body.includes('"hi"')) throw new Error(`call failed: ${r.status} ${r.body.slice(0, 300)}`);
  return ms;
}
