// The load client of the HTTP benchmark: an MCP client written directly on `node:http`, so that its
// own cost is small and identical for every target. It speaks Streamable HTTP (MCP 2025-06-18,
// "Transports") and, for gateways that only have it, the older HTTP+SSE transport (2024-11-05):
// a GET stream that carries every answer, and POSTs to the endpoint that stream names.

import { request, type Agent, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';

export const PROTOCOL_VERSION = '2025-06-18';
const CALL_TIMEOUT_MS = 30_000;
const CLIENT_INFO = { name: 'mcpgate-bench', version: '1.0.0' };

export type Transport = 'streamable' | 'sse';

export interface McpSession {
  /** Sends one request and resolves with its `result`; a JSON-RPC error or a bad reply rejects. */
  call(method: string, params: unknown): Promise<unknown>;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Message {
  id?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string };
}

function send(agent: Agent | false, url: URL, method: string, headers: OutgoingHttpHeaders, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { agent, method, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.setTimeout(CALL_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${url.href}: no answer in ${CALL_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Splits an SSE text into events; `rest` is an unfinished event at the end of the text. */
export function parseSse(text: string): { events: { event: string; data: string }[]; rest: string } {
  const blocks = text.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  const events = blocks.map((block) => {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
    return { event, data: data.join('\n') };
  });
  return { events, rest };
}

function resultOf(message: Message, what: string): unknown {
  if (message.error !== undefined) throw new Error(`${what}: JSON-RPC error ${message.error.code}: ${message.error.message}`);
  return message.result;
}

/** A Streamable HTTP session: every request is a POST whose reply is JSON or an SSE stream. */
export class StreamableSession implements McpSession {
  private sessionId: string | undefined;
  private version: string | undefined;
  private nextId = 1;

  private constructor(
    private readonly url: URL,
    private readonly agent: Agent,
    private readonly token: string | undefined,
  ) {}

  static async open(url: URL, agent: Agent, token?: string): Promise<StreamableSession> {
    const session = new StreamableSession(url, agent, token);
    const init = (await session.call('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO })) as {
      protocolVersion?: string;
    };
    session.version = init.protocolVersion ?? PROTOCOL_VERSION;
    const reply = await send(
      agent,
      url,
      'POST',
      session.headers(),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    );
    if (reply.status !== 202 && reply.status !== 200)
      throw new Error(`notifications/initialized: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
    return session;
  }

  private headers(): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    if (this.version !== undefined) headers['mcp-protocol-version'] = this.version;
    return headers;
  }

  async call(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    const reply = await send(this.agent, this.url, 'POST', this.headers(), JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    if (reply.status !== 200) throw new Error(`${method}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
    const session = reply.headers['mcp-session-id'];
    if (method === 'initialize' && typeof session === 'string') this.sessionId = session;
    const type = reply.headers['content-type'] ?? '';
    if (type.startsWith('application/json')) return resultOf(JSON.parse(reply.body) as Message, method);
    if (!type.startsWith('text/event-stream')) throw new Error(`${method}: unexpected content-type ${type}`);
    // The POST's stream may carry requests and notifications before the response it ends with.
    for (const { data } of parseSse(`${reply.body}\n\n`).events) {
      if (data === '') continue;
      const message = JSON.parse(data) as Message;
      if (message.id === id && ('result' in message || 'error' in message)) return resultOf(message, method);
    }
    throw new Error(`${method}: the event stream ended without the response`);
  }

  async close(): Promise<void> {
    if (this.sessionId === undefined) return;
    await send(this.agent, this.url, 'DELETE', this.headers()).catch(() => undefined);
  }
}

/** An HTTP+SSE session (the 2024-11-05 transport): answers arrive on one long GET stream. */
export class SseSession implements McpSession {
  private readonly pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  private endpoint: URL | undefined;
  private stream: IncomingMessage | undefined;
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly agent: Agent,
    private readonly token: string | undefined,
  ) {}

  static async open(url: URL, agent: Agent, token?: string): Promise<SseSession> {
    const session = new SseSession(agent, token);
    await session.listen(url);
    await session.call('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO });
    const reply = await send(
      agent,
      session.endpoint!,
      'POST',
      session.headers(),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    );
    if (reply.status >= 300) throw new Error(`notifications/initialized: HTTP ${reply.status}`);
    return session;
  }

  private headers(): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { 'content-type': 'application/json' };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    return headers;
  }

  /** Opens the GET stream (on its own socket, outside the pool the calls use) and waits for `endpoint`. */
  private listen(url: URL): Promise<void> {
    return new Promise((resolve, reject) => {
      const headers: OutgoingHttpHeaders = { accept: 'text/event-stream' };
      if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
      const req = request(url, { agent: false, headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url.href}: HTTP ${res.statusCode}`));
        this.stream = res;
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const { events, rest } = parseSse(buffer + chunk);
          buffer = rest;
          for (const { event, data } of events) {
            if (event === 'endpoint') {
              this.endpoint = new URL(data, url);
              resolve();
            } else if (event === 'message' && data !== '') {
              const message = JSON.parse(data) as Message;
              const waiter = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
              if (waiter !== undefined) {
                this.pending.delete(message.id as number);
                waiter.resolve(message);
              }
            }
          }
        });
        res.on('close', () => this.fail(new Error('the SSE stream closed')));
      });
      req.on('error', (err) => {
        reject(err);
        this.fail(err);
      });
      req.end();
    });
  }

  private fail(err: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }

  async call(method: string, params: unknown): Promise<unknown> {
    if (this.closed) throw new Error(`${method}: the session is closed`);
    const id = this.nextId++;
    const answer = new Promise<Message>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    // The stream may fail while the POST is still out; the await below sees it.
    void answer.catch(() => undefined);
    const reply = await send(
      this.agent,
      this.endpoint!,
      'POST',
      this.headers(),
      JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    ).catch((err: unknown) => {
      this.pending.delete(id);
      throw err;
    });
    if (reply.status >= 300) {
      this.pending.delete(id);
      throw new Error(`${method}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${method}: no answer on the SSE stream in ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
    });
    try {
      return resultOf(await Promise.race([answer, timeout]), method);
    } finally {
      clearTimeout(timer);
      this.pending.delete(id);
    }
  }

  close(): Promise<void> {
    this.closed = true;
    this.stream?.destroy();
    this.fail(new Error('the session was closed'));
    return Promise.resolve();
  }
}

export function openSession(transport: Transport, url: URL, agent: Agent, token?: string): Promise<McpSession> {
  return transport === 'sse' ? SseSession.open(url, agent, token) : StreamableSession.open(url, agent, token);
}
