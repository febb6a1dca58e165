// The fronts in-process, as fastify's `inject` does for its routes: the real HttpFront's request
// handler driven with in-memory request/response objects (no socket, no listen), and the real stdio
// front over in-memory streams (no child process), both in front of a real Gateway whose servers are
// in-memory (test/helpers/fake-server.ts through the Gateway's `connect` factory). What a real process
// or socket is needed for — supervision, signals, the HTTP parser, SDK clients over real HTTP —
// stays in test/e2e.
//
// The request is a Readable with what the front reads of an IncomingMessage (method, url, headers
// as node builds them from the raw ones, rawHeaders, socket.remoteAddress); the response a Writable
// with ServerResponse's head (setHeader, writeHead, flushHeaders, headersSent) whose bytes go to the
// test as they are written, so an event stream (an SSE POST, the GET stream) is read event by event
// while it is open. The agent can stop reading (`pause`: writes stay in the response's buffer, as in
// a socket's, and count in `writableLength`) and hang up (`abort`: 'close' without 'finish').
// The stdio agent (StdioAgent) reads the front's lines strictly in order (`next`), or asks as an SDK
// client does (`initialize`, `ask`/`result`/`error` with ids of its own, notifications kept in `all`).
// `reloadRules` swaps the rules as a reload applies them; `config` gives servers their .mcp.json
// fields (prefix, limits, timeout).

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, Readable, Writable } from 'node:stream';
import type { ServerConfig } from '../../src/config/types.js';
import { applyConfig } from '../../src/gateway/apply-config.js';
import { Gateway, type GatewayOptions } from '../../src/gateway/gateway.js';
import { HttpFront, type HttpFrontOptions } from '../../src/front/http/front.js';
import { serveStdio, type StdioFront } from '../../src/front/stdio.js';
import { Logger } from '../../src/observability/logger.js';
import { parseRules } from '../../src/rules/load.js';
import { fakeConnections, stdioConfig, type FakeServer } from './fake-server.js';
import type { RawResponse } from './http.js';
import { JSON_HEADERS, initializeBody } from './requests.js';

type StdioOptions = NonNullable<Parameters<typeof serveStdio>[3]>;

type LogLevel = NonNullable<ConstructorParameters<typeof Logger>[0]>;

export type HeaderPairs = readonly (readonly [string, string])[];

export interface InjectOptions {
  method?: string;
  /** Path and query (default `/mcp`). */
  url?: string;
  /** A record, or pairs in order (a name may then be repeated, as on the wire). */
  headers?: Record<string, string> | HeaderPairs;
  body?: string | Buffer;
  /** Send no Content-Length, as a chunked body does (`Transfer-Encoding: chunked`). */
  chunked?: boolean;
  remoteAddress?: string;
  /** Send no Host header at all, as an HTTP/1.0 client may. */
  noHost?: boolean;
}

/** Headers node:http keeps the first of when sent twice (its "discard duplicates" list); the rest are joined. */
const FIRST_ONLY: ReadonlySet<string> = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** `req.headers` as node:http builds it from the raw pairs. */
function headersOf(pairs: HeaderPairs): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (const [raw, value] of pairs) {
    const name = raw.toLowerCase();
    const had = headers[name];
    if (had === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (name === 'set-cookie') (had as string[]).push(value);
    else if (!FIRST_ONLY.has(name)) headers[name] = `${had as string}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return headers;
}

/** What the front reads of an IncomingMessage; its body is pushed when first read. */
export class InjectedRequest extends Readable {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly httpVersion = '1.1';
  readonly socket: { remoteAddress: string; encrypted: boolean };
  private body: Buffer | undefined;

  constructor(options: InjectOptions) {
    super();
    this.method = options.method ?? 'POST';
    this.url = options.url ?? '/mcp';
    this.body = options.body === undefined ? undefined : Buffer.from(options.body);
    const given: HeaderPairs = Array.isArray(options.headers) ? (options.headers as HeaderPairs) : Object.entries(options.headers ?? {});
    const pairs = [...given];
    const named = (name: string): boolean => pairs.some(([n]) => n.toLowerCase() === name);
    // What a client on the loopback sends unless told otherwise: its Host, the body's length.
    if (!named('host') && options.noHost !== true) pairs.unshift(['host', '127.0.0.1']);
    if (this.body !== undefined && options.chunked !== true && !named('content-length'))
      pairs.push(['content-length', String(this.body.length)]);
    if (options.chunked === true) pairs.push(['transfer-encoding', 'chunked']);
    this.rawHeaders = pairs.flat();
    this.headers = headersOf(pairs);
    this.socket = { remoteAddress: options.remoteAddress ?? '127.0.0.1', encrypted: false };
  }

  override _read(): void {
    const body = this.body;
    this.body = undefined;
    if (body !== undefined && body.length > 0) this.push(body);
    this.push(null);
  }
}

export type HeaderValue = string | number | readonly string[];

/** The head of a response, once written. */
export interface Head {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, HeaderValue>;
}

/**
 * ServerResponse's part the front uses, over a Writable: each chunk goes to `onChunk` when the
 * agent reads (at once, unless paused), and is held in the Writable's buffer until then.
 */
export class InjectedResponse extends Writable {
  statusCode = 200;
  statusMessage = '';
  /** Interim statuses written (102 Processing). */
  readonly interim: number[] = [];
  private readonly out = new Map<string, HeaderValue>();
  private head: Head | undefined;
  private reading = true;
  private held: (() => void)[] = [];

  constructor(
    private readonly onHead: (head: Head) => void,
    private readonly onChunk: (chunk: Buffer) => void,
  ) {
    super();
  }

  get headersSent(): boolean {
    return this.head !== undefined || this.writableEnded;
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.headersSent) throw new Error(`Cannot set header ${name} after they are sent to the client`);
    this.out.set(name.toLowerCase(), value);
    return this;
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.out.get(name.toLowerCase());
  }

  hasHeader(name: string): boolean {
    return this.out.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    if (this.headersSent) throw new Error(`Cannot remove header ${name} after they are sent to the client`);
    this.out.delete(name.toLowerCase());
  }

  getHeaders(): Record<string, HeaderValue> {
    return Object.fromEntries(this.out);
  }

  writeHead(status: number, reasonOrHeaders?: string | Record<string, HeaderValue>, maybeHeaders?: Record<string, HeaderValue>): this {
    if (this.head !== undefined) throw new Error('Cannot write headers after they are sent to the client');
    this.statusCode = status;
    const headers = typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders;
    if (typeof reasonOrHeaders === 'string') this.statusMessage = reasonOrHeaders;
    for (const [name, value] of Object.entries(headers ?? {})) this.out.set(name.toLowerCase(), value);
    this.sendHead();
    return this;
  }

  flushHeaders(): void {
    if (this.head === undefined) this.sendHead();
  }

  writeProcessing(): void {
    this.interim.push(102);
  }

  /** The agent stops reading: what is written stays in the buffer (and counts in writableLength). */
  pause(): void {
    this.reading = false;
  }

  /** The agent reads again: what was held is taken. */
  resume(): void {
    this.reading = true;
    for (const take of this.held.splice(0)) take();
  }

  private sendHead(): void {
    this.head = { status: this.statusCode, headers: Object.fromEntries(this.out) };
    this.onHead(this.head);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.head === undefined) this.sendHead();
    const take = (): void => {
      this.onChunk(chunk);
      done();
    };
    if (this.reading) take();
    else this.held.push(take);
  }

  override _final(done: (error?: Error | null) => void): void {
    if (this.head === undefined) this.sendHead();
    done();
  }
}

/** One event of a `text/event-stream` body. */
export interface SseEvent {
  id?: string;
  event?: string;
  retry?: number;
  /** The data lines joined with newlines ('' for a priming event). */
  data: string;
  /** `data` as JSON, when it is JSON. */
  json?: Record<string, unknown>;
}

/** Parses the complete events at the start of `text`; returns them and what is left (an event still coming). */
export function parseEvents(text: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  let rest = text;
  for (let end = rest.indexOf('\n\n'); end !== -1; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    const event: SseEvent = { data: '' };
    const data: string[] = [];
    let any = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue; // a comment (keep-alive)
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      any = true;
      if (field === 'data') data.push(value);
      else if (field === 'id') event.id = value;
      else if (field === 'event') event.event = value;
      else if (field === 'retry') event.retry = Number(value);
    }
    if (!any) continue;
    event.data = data.join('\n');
    if (event.data !== '') {
      try {
        event.json = JSON.parse(event.data) as Record<string, unknown>;
      } catch {
        // not JSON: the data stays as text
      }
    }
    events.push(event);
  }
  return { events, rest };
}

function jsonOf(body: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Answers one request: the handler an HttpFront exposes as `handle`. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * One request in flight and its response as the agent sees it: the head when written, the body as
 * it arrives (an event stream event by event), the end.
 */
export class Exchange {
  readonly req: InjectedRequest;
  readonly res: InjectedResponse;
  /** Resolves with the head once it is written. */
  readonly head: Promise<Head>;
  /** Resolves once the response is closed (ended, or cut by either side), with all it carried. */
  readonly done: Promise<RawResponse>;
  private text = '';
  private parsed = 0;
  private readonly queue: SseEvent[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(handler: Handler, options: InjectOptions) {
    this.req = new InjectedRequest(options);
    let headed!: (head: Head) => void;
    this.head = new Promise((resolve) => (headed = resolve));
    const decoder = new TextDecoder();
    this.res = new InjectedResponse(headed, (chunk) => {
      this.text += decoder.decode(chunk, { stream: true });
      this.parse();
      this.poke();
    });
    this.done = new Promise((resolve) => {
      this.res.once('close', () => {
        this.closed = true;
        this.poke();
        // As node:http does: a request whose response is over is read to its end (or cut with it).
        if (!this.req.destroyed) {
          if (this.res.writableFinished) this.req.resume();
          else this.req.destroy();
        }
        const status = this.res.headersSent ? this.res.statusCode : 0;
        resolve({ status, headers: { ...(this.res.getHeaders() as RawResponse['headers']) }, body: this.text, json: jsonOf(this.text) });
      });
    });
    handler(this.req as unknown as IncomingMessage, this.res as unknown as ServerResponse);
  }

  /** The body received so far. */
  get body(): string {
    return this.text;
  }

  /** The next event of an event-stream response; undefined once the response closed without another. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const event = this.queue.shift();
      if (event !== undefined) return event;
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** The next event that carries a JSON-RPC message (priming and retry-only events skipped). */
  async nextMessage(): Promise<Record<string, unknown> | undefined> {
    for (;;) {
      const event = await this.next();
      if (event === undefined) return undefined;
      if (event.json !== undefined) return event.json;
    }
  }

  /** The agent hangs up: the response closes without finishing. */
  abort(): void {
    this.res.destroy();
  }

  private parse(): void {
    const { events, rest } = parseEvents(this.text.slice(this.parsed));
    this.parsed = this.text.length - rest.length;
    this.queue.push(...events);
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** Sends one request and waits for the whole response. */
export function inject(handler: Handler, options: InjectOptions): Promise<RawResponse> {
  return new Exchange(handler, options).done;
}

/** Waits (bounded) until `check` holds, looking again after each turn of the event loop; false when it never did. */
export async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return true;
}

/** A log that keeps its lines, parsed, for tests that check what was logged. */
export function recordingLogger(level: LogLevel = 'info'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: new Logger(level, (line) => lines.push(JSON.parse(line) as Record<string, unknown>)), lines };
}

export interface InProcessOptions {
  servers: readonly FakeServer[];
  /** What .mcp.json says of a server beyond its command (`prefix`, `limits`, `timeout`), by name. */
  config?: Record<string, Partial<Omit<ServerConfig, 'name' | 'type'>>>;
  /** A rules file's contents (parsed as the real loader does), or none: every agent may use every server. */
  rules?: unknown;
  gateway?: Partial<Omit<GatewayOptions, 'config' | 'log' | 'connect' | 'rules'>>;
  /** The log (default: kept, at info; see `lines`). */
  log?: Logger;
}

/** A real Gateway over in-memory servers, started (every server ready or failed). */
export async function startGateway(options: InProcessOptions): Promise<{ gateway: Gateway; lines: Record<string, unknown>[] }> {
  const recorded = options.log === undefined ? recordingLogger() : { log: options.log, lines: [] };
  const names = options.servers.map((s) => s.name);
  const gateway = new Gateway({
    ...options.gateway,
    config: {
      file: '/in-process/.mcp.json',
      servers: options.servers.map((s) => ({ ...stdioConfig(s.name), ...options.config?.[s.name] })),
      warnings: [],
    },
    ...(options.rules !== undefined && { rules: parseRules(JSON.stringify(options.rules), '/in-process/gateway-rules.json', names) }),
    log: recorded.log,
    connect: fakeConnections(options.servers, options.gateway?.supervision),
  });
  // A real server's process holds the event loop open while the gateway is; in-memory ones hold
  // nothing, so a test waiting on the gateway's own (unref'd) timers, such as a restart's backoff,
  // would see the loop run dry. The gateway's close lets go.
  const hold = setInterval(() => {}, 60_000);
  const close = gateway.close.bind(gateway);
  gateway.close = () => {
    clearInterval(hold);
    return close();
  };
  await gateway.start();
  return { gateway, lines: recorded.lines };
}

/**
 * Replaces the rules as a reload applies them (src/gateway/apply-config.ts, the servers unchanged),
 * without the files and their watch: that part is the Reloader's, proved end to end in test/e2e.
 */
export async function reloadRules(gateway: Gateway, rules: unknown): Promise<void> {
  const names = gateway.config.servers.map((s) => s.name);
  await applyConfig(gateway, gateway.config, parseRules(JSON.stringify(rules), '/in-process/gateway-rules.json', names));
}

export interface InProcessHttp {
  gateway: Gateway;
  front: HttpFront;
  /** The log lines of the gateway and the front (when the default log was used). */
  lines: Record<string, unknown>[];
  /** One request, the whole response. */
  inject(options: InjectOptions): Promise<RawResponse>;
  /** One request whose response is read as it comes (an event stream). */
  open(options: InjectOptions): Exchange;
  /** Starts a session with raw requests (initialize, then notifications/initialized); returns its id. */
  session(headers?: Record<string, string>): Promise<string>;
  /** The front's graceful shutdown, then the gateway's. */
  close(): Promise<void>;
}

/**
 * The HTTP front in-process over a started Gateway of in-memory servers. Defaults as `serve --http
 * 127.0.0.1:PORT --no-auth`; `front` overrides any option (`auth: 'on'` with `rules` for tokens).
 */
export async function httpFront(options: InProcessOptions & { front?: Partial<HttpFrontOptions> }): Promise<InProcessHttp> {
  const { gateway, lines } = await startGateway(options);
  const log = options.log ?? new Logger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  const metrics = gateway.metrics;
  // Counted as the composition root counts them (src/mcpgate.ts), so /metrics tells the same.
  const front = new HttpFront(
    gateway,
    {
      host: '127.0.0.1',
      port: 0,
      auth: 'off',
      defaultAgent: 'tester',
      ops: { gateway, metrics: () => metrics.render() },
      onRequest: (route, status) => metrics.httpRequest(route, status),
      onReplay: {
        buffered: (n) => metrics.sseReplay('buffered', n),
        replayed: (n) => metrics.sseReplay('replayed', n),
        dropped: (n) => metrics.sseReplay('dropped', n),
        resumption: (outcome) => metrics.sseResumption(outcome),
      },
      ...options.front,
    },
    log.child({ front: 'http' }),
  );
  front.url = 'http://127.0.0.1/mcp';
  const handler: Handler = (req, res) => front.handle(req, res);
  return {
    gateway,
    front,
    lines,
    inject: (opts) => inject(handler, opts),
    open: (opts) => new Exchange(handler, opts),
    async session(headers = {}) {
      const init = await inject(handler, { headers: { ...JSON_HEADERS, ...headers }, body: initializeBody() });
      const id = init.headers['mcp-session-id'];
      if (init.status !== 200 || typeof id !== 'string') throw new Error(`initialize failed: ${init.status} ${init.body}`);
      await inject(handler, {
        headers: { ...JSON_HEADERS, ...headers, 'mcp-session-id': id },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      return id;
    },
    async close() {
      await front.close();
      await gateway.close();
    },
  };
}

export type Message = Record<string, unknown> & {
  id?: unknown;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
};

/** The agent's end of the stdio front: lines in, the front's messages out, read strictly in order. */
export class StdioAgent {
  readonly input = new PassThrough();
  readonly output = new PassThrough();
  /** Every message the front wrote, in order. */
  readonly all: Message[] = [];
  private readonly queue: Message[] = [];
  private wake: (() => void) | undefined;
  private partial = '';

  constructor() {
    this.output.setEncoding('utf8');
    this.output.on('data', (chunk: string) => {
      const lines = (this.partial + chunk).split('\n');
      this.partial = lines.pop()!;
      for (const line of lines) {
        if (line.trim() === '') continue;
        const message = JSON.parse(line) as Message;
        this.all.push(message);
        const asker = message.method === undefined ? this.awaited.get(message.id) : undefined;
        this.awaited.delete(message.id);
        if (asker !== undefined) asker(message);
        else this.queue.push(message);
      }
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    });
  }

  /** Writes one line (a message is encoded; a string is sent as it is). */
  send(message: unknown): void {
    this.input.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  }

  /** The next message the front writes (bounded by the test's timeout). */
  async next(): Promise<Message> {
    for (;;) {
      const message = this.queue.shift();
      if (message !== undefined) return message;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private asked = 0;
  /** The answers `ask` waits for, by id: they go there, not to `next`. */
  private readonly awaited = new Map<unknown, (message: Message) => void>();

  /**
   * Sends a request with an id of its own and resolves with its answer, which `next` never sees;
   * several may be in flight. What else comes (a notification) goes to `next`, and to `all`.
   */
  ask(method: string, params?: Record<string, unknown>): Promise<Message> {
    const id = `ask-${++this.asked}`;
    const answer = new Promise<Message>((resolve) => this.awaited.set(id, resolve));
    this.send({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
    return answer;
  }

  /** `ask`, for a request that must succeed: its result (an error answer throws). */
  async result(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const answer = await this.ask(method, params);
    if (answer.result === undefined) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
    return answer.result;
  }

  /** `ask`, for a request that must fail: its error, with `data` ({} when absent). */
  async error(method: string, params?: Record<string, unknown>): Promise<{ code: number; message: string; data: Record<string, unknown> }> {
    const answer = await this.ask(method, params);
    if (answer.error === undefined) throw new Error(`${method} did not fail: ${JSON.stringify(answer.result)}`);
    return { code: answer.error.code, message: answer.error.message, data: answer.error.data ?? {} };
  }

  /** initialize (2025-11-25), then notifications/initialized, as an SDK client starts. */
  async initialize(capabilities: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const result = await this.result('initialize', {
      protocolVersion: '2025-11-25',
      capabilities,
      clientInfo: { name: 'in-process', version: '1' },
    });
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return result;
  }

  /** Sends a request and waits for the next message, which must be its answer. */
  async request(id: string | number, method: string, params?: Record<string, unknown>): Promise<Message> {
    this.send({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
    return this.next();
  }
}

export interface InProcessStdio {
  gateway: Gateway;
  front: StdioFront;
  agent: StdioAgent;
  lines: Record<string, unknown>[];
  /** Ends stdin, closes the front, then the gateway. */
  close(): Promise<void>;
}

/** The stdio front (`serve` with `--agent NAME`) in-process over a started Gateway of in-memory servers. */
export async function stdioFront(
  options: InProcessOptions & { agent?: string; front?: Omit<StdioOptions, 'input' | 'output'> },
): Promise<InProcessStdio> {
  const { gateway, lines } = await startGateway(options);
  const agent = new StdioAgent();
  const front = serveStdio(gateway, options.agent ?? 'tester', true, { ...options.front, input: agent.input, output: agent.output });
  return {
    gateway,
    front,
    agent,
    lines,
    async close() {
      agent.input.end();
      await front.ended;
      front.close();
      await gateway.close();
    },
  };
}
