// End-to-end harness for the HTTP front: starts the real `mcpgate serve --http 127.0.0.1:0`, reads
// the URL it logs, connects official SDK clients (v2, Streamable HTTP) as agents, and sends raw
// HTTP requests for the cases an SDK client never produces (bad bodies, wrong methods, no token).

import { request } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { GatewayProcess, type GatewayOptions, type TempDir } from './gateway.js';
import { JSON_HEADERS, initializeBody } from './requests.js';
import { killWhenTestsDie } from './orphan-guard.js';

export { JSON_HEADERS, initializeBody, makeToken } from './requests.js';

export interface HttpGateway {
  gw: GatewayProcess;
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** SIGTERM, then the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `mcpgate serve --http 127.0.0.1:0` and waits for its URL. */
export async function startHttpGateway(options: Omit<GatewayOptions, 'noClient' | 'sdk' | 'setup' | 'capabilities'>): Promise<HttpGateway> {
  const gw = new GatewayProcess({ ...options, args: ['--http', '127.0.0.1:0', ...(options.args ?? [])] });
  const line = await Promise.race([
    gw.waitForLog((l) => typeof l.url === 'string' && String(l.msg).startsWith('mcpgate listening on')),
    gw.exited.then((exit) => {
      throw new Error(`the gateway exited (${JSON.stringify(exit)}) before listening: ${JSON.stringify(gw.logs.slice(-3))}`);
    }),
  ]);
  const url = line.url as string;
  const release = killWhenTestsDie(gw.child.pid!);
  void gw.exited.then(release);
  return {
    gw,
    url,
    base: url.replace(/\/mcp$/, ''),
    async stop() {
      if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGTERM');
      return gw.exited;
    },
  };
}

/** The JSON-RPC error message of an answer's body (the whole body as JSON when there is none). */
export function messageOf(body: Record<string, unknown> | undefined): string {
  const message = (body?.error as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : JSON.stringify(body);
}

export async function writeRules(dir: TempDir, rules: unknown): Promise<string> {
  const file = dir.file('gateway-rules.json');
  await writeFile(file, JSON.stringify(rules, null, 2));
  return file;
}

export interface AgentOptions {
  token?: string;
  capabilities?: Record<string, unknown>;
  /** Register handlers before connecting. */
  setup?: (client: Client) => void;
  headers?: Record<string, string>;
}

/** An official SDK client connected to the gateway over Streamable HTTP. */
export async function connectAgent(
  url: string,
  options: AgentOptions = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'mcpgate-http-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  options.setup?.(client);
  await client.connect(transport);
  return { client, transport };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body as JSON (undefined when it is not JSON). */
  json: Record<string, unknown> | undefined;
}

/** One raw HTTP request (the body is sent as given; a `Content-Length` is set unless `chunked`). */
export function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; chunked?: boolean } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined && options.chunked !== true) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = request(url, { method: options.method ?? 'POST', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        let json: Record<string, unknown> | undefined;
        try {
          json = JSON.parse(body) as Record<string, unknown>;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
      });
      res.on('error', reject);
    });
    // A refused body may close the socket before we finish writing it: that is the point of 413.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

/** Starts a session with raw requests; returns its id. */
export async function rawSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await raw(url, { headers: { ...JSON_HEADERS, ...headers }, body: initializeBody() });
  const id = res.headers['mcp-session-id'];
  if (res.status !== 200 || typeof id !== 'string') throw new Error(`initialize failed: ${res.status} ${res.body}`);
  await raw(url, {
    headers: { ...JSON_HEADERS, ...headers, 'mcp-session-id': id },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return id;
}
