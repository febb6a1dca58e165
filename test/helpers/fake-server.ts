// An in-memory MCP server behind a real Connection: a ServerTransport that answers the messages the
// gateway writes (initialize, the lists, tools/call) without a process or a socket, so the gateway's
// routing (test/unit/gateway/gateway-routing.test.ts) and the fronts in-process (test/helpers/in-process.ts)
// are unit-tested and the e2e tests prove the real thing. A server can be told to hold its initialize
// answer, so a test sees the gateway before it settles; a tool can hold its calls until cancelled, or
// report progress one step each time the test says. Beside tools a server may have prompts (with
// completions), resources, resource templates, methods MCP does not define (`fallback`) and more
// capabilities; `setTools` changes its tools and announces it with tools/list_changed. `kitchenSink`
// `dynamicServer` and `toolsServer` are the in-memory counterparts of test/fixtures/kitchen-sink-server.ts,
// dynamic-server.ts and tools-server.ts: the part of each the in-process tests lean on, same names,
// texts and answers.

import type { ServerConfig } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/observability/logger.js';
import { Connection, type ConnectionHooks } from '../../src/servers/connection.js';
import type { SupervisionSettings } from '../../src/servers/supervision.js';
import type { ServerTransport, TransportEvents } from '../../src/servers/transports/transport.js';
import type { ConnectionFactory } from '../../src/gateway/gateway-options.js';
import { SETS } from '../fixtures/tool-sets.js';

export interface FakeTool {
  name: string;
  description?: string;
  /** The text of its answer (default `SERVER:TOOL`). */
  text?: (args: Record<string, unknown> | undefined) => string;
  /** Never answered: a call is held until the gateway cancels it (then it is in `cancelled`). */
  holds?: boolean;
  /** Answered (`text`) after `arguments.ms` milliseconds, unless the gateway cancels it first (then it is in `cancelled`). */
  sleeps?: boolean;
  /**
   * A call reports `arguments.steps` progress notifications (to its `_meta.progressToken`), one
   * each time the test calls `step()`, then answers `done`: the test decides what comes when.
   */
  progress?: boolean;
  /** Its inputSchema (default `{ type: 'object' }`). */
  inputSchema?: Record<string, unknown>;
  /** The whole result (content, structuredContent, isError), instead of `text`'s one text block. */
  result?: (args: Record<string, unknown> | undefined) => Record<string, unknown>;
  /** A JSON-RPC error answered instead of any result (the server's own, as it would send it). */
  refuses?: { code: number; message: string; data?: unknown };
}

export interface FakePrompt {
  name: string;
  description?: string;
  /** Its arguments, each required. */
  arguments?: string[];
  /** The text of its one user message. */
  text: (args: Record<string, string>) => string;
  /** What completion/complete offers for an argument: the values that start with what was typed. */
  complete?: Record<string, string[]>;
}

export interface FakeResource {
  uri: string;
  name: string;
  mimeType?: string;
  /** Its contents: text, or base64 `blob`. */
  text?: string;
  blob?: string;
}

export interface FakeTemplate {
  uriTemplate: string;
  name: string;
  description?: string;
  mimeType?: string;
  /** The text of a URI the template makes; undefined: not one of its URIs. */
  read: (uri: string) => string | undefined;
}

export interface FakeServerSpec {
  tools: FakeTool[];
  /** Hold the answer to initialize until release() is called. */
  holdStart?: boolean;
  prompts?: FakePrompt[];
  resources?: FakeResource[];
  templates?: FakeTemplate[];
  /** The `instructions` of its initialize result. */
  instructions?: string;
  /** Capabilities declared beside those of what it has (`experimental`, say). */
  capabilities?: Record<string, unknown>;
  /** Answers a method none of the above is for; undefined: -32601, as for any unknown method. */
  fallback?: (method: string, params: Record<string, unknown>) => unknown;
}

/** One fake server: its tools, the tools/call requests it received, and a way to let it start. */
export class FakeServer {
  readonly calls: { name: string; arguments: unknown }[] = [];
  /** The held calls (`holds`) the gateway cancelled, in order. */
  readonly cancelled: { name: string; arguments: unknown }[] = [];
  /** Calls reporting progress (`FakeTool.progress`), oldest first. */
  private readonly stepping: { id: number; token: unknown; steps: number; sent: number }[] = [];
  /** Held calls by the id the gateway gave them. */
  private readonly holding = new Map<unknown, { name: string; arguments: unknown; timer?: NodeJS.Timeout }>();
  /** A hung server: alive, but answers nothing from now on (it has no ping either way: -32601). */
  hung = false;
  /**
   * The tools/list requests each transport opened on it received, oldest transport first (a
   * per-agent or per-session server's catalog connection, then its pooled ones).
   */
  readonly toolLists: number[] = [];
  /** Each transport opened on it, as `toolLists` counts them. */
  private readonly opened: TransportEvents[] = [];
  /** Its tools now (`setTools` changes them). */
  private tools: FakeTool[];
  /** The notifications it was sent (methods, oldest first). */
  readonly notified: string[] = [];
  /** Its own requests to the gateway (`ask`) waiting for their answers, by id. */
  private readonly asking = new Map<string, (answer: { result?: unknown; error?: { message: string } }) => void>();
  private events: TransportEvents | undefined;
  private held: (() => void)[] = [];
  private releasedStart: boolean;

  constructor(
    readonly name: string,
    readonly spec: FakeServerSpec,
  ) {
    this.releasedStart = spec.holdStart !== true;
    this.tools = spec.tools;
  }

  /** Its tools change, and it says so (notifications/tools/list_changed). */
  setTools(tools: FakeTool[]): void {
    this.tools = tools;
    this.events?.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
  }

  /**
   * The server dies (as a killed process would): its transport reports the exit, and the next
   * start holds its initialize answer until release(), so a test sees the connection restarting.
   */
  crash(): void {
    this.releasedStart = false;
    this.forget();
    this.events?.exit(new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${this.name}" was killed by SIGKILL`, { server: this.name }));
  }

  /**
   * Each call reporting progress sends its next notification, or its answer after the last; returns
   * how many are still reporting.
   */
  step(): number {
    for (const call of [...this.stepping]) {
      if (call.sent < call.steps) {
        call.sent += 1;
        const params = { progressToken: call.token, progress: call.sent, total: call.steps, message: `step ${call.sent}` };
        this.events?.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params }));
      } else {
        this.stepping.splice(this.stepping.indexOf(call), 1);
        this.events?.line(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: { content: [{ type: 'text', text: 'done' }] } }));
      }
    }
    return this.stepping.length;
  }

  /** Sends a notification on one of its transports (by default the newest). */
  notify(method: string, link = this.opened.length - 1): void {
    this.opened[link]?.line(JSON.stringify({ jsonrpc: '2.0', method }));
  }

  /** Asks the gateway something (as a server asks `roots/list`) on its newest transport; resolves with the answer. */
  ask(method: string, params?: Record<string, unknown>): Promise<{ result?: unknown; error?: { message: string } }> {
    const id = `ask-${this.asking.size + 1}-${method}`;
    return new Promise((resolve) => {
      this.asking.set(id, resolve);
      this.events?.line(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) }));
    });
  }

  /** Lets a held server answer initialize. */
  release(): void {
    this.releasedStart = true;
    for (const answer of this.held.splice(0)) answer();
  }

  open(events: TransportEvents): ServerTransport {
    this.events = events;
    const link = this.opened.push(events) - 1;
    this.toolLists.push(0);
    let open = true;
    return {
      pid: undefined,
      write: (line: string) => {
        if (!open) return false;
        queueMicrotask(() => this.receive(line, link));
        return true;
      },
      stop: () => {
        open = false;
        this.forget();
        queueMicrotask(() =>
          events.exit(new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${this.name}" stopped`, { server: this.name })),
        );
        return Promise.resolve();
      },
      kill: () => {
        open = false;
        this.forget();
      },
    };
  }

  /** The process is gone: what it held (a sleeping call's timer) goes with it. */
  private forget(): void {
    for (const held of this.holding.values()) clearTimeout(held.timer);
    this.holding.clear();
  }

  /** A message written on transport `link`: answered on that transport. */
  private receive(line: string, link: number): void {
    if (this.hung) return;
    const msg = JSON.parse(line) as { id?: number; method?: string; params?: Record<string, unknown> };
    if (msg.id === undefined && msg.method === 'notifications/cancelled') {
      const held = this.holding.get(msg.params?.requestId);
      this.holding.delete(msg.params?.requestId);
      if (held !== undefined) {
        clearTimeout(held.timer);
        this.cancelled.push({ name: held.name, arguments: held.arguments });
      }
      return;
    }
    if (msg.method === undefined) {
      const asked = typeof msg.id === 'string' ? this.asking.get(msg.id) : undefined;
      if (asked !== undefined) {
        this.asking.delete(msg.id as unknown as string);
        asked(msg as { result?: unknown; error?: { message: string } });
      }
      return;
    }
    if (msg.id === undefined) return void this.notified.push(msg.method);
    const events = this.opened[link];
    const answer = (result: unknown): void => events?.line(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    const refuse = (code: number, message: string, data?: unknown): void =>
      events?.line(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code, message, ...(data !== undefined && { data }) } }));
    const params = msg.params ?? {};
    const { prompts = [], resources = [], templates = [] } = this.spec;
    switch (msg.method) {
      case 'initialize': {
        const capabilities: Record<string, unknown> = { tools: {}, ...this.spec.capabilities };
        if (prompts.length > 0) Object.assign(capabilities, { prompts: {}, completions: {} });
        if (resources.length > 0 || templates.length > 0) capabilities.resources = {};
        const send = (): void =>
          answer({
            protocolVersion: '2025-06-18',
            capabilities,
            serverInfo: { name: this.name, version: '1.0.0' },
            ...(this.spec.instructions !== undefined && { instructions: this.spec.instructions }),
          });
        if (this.releasedStart) send();
        else this.held.push(send);
        return;
      }
      case 'tools/list':
        this.toolLists[link] = (this.toolLists[link] ?? 0) + 1;
        return answer({
          tools: this.tools.map((t) => ({
            name: t.name,
            description: t.description ?? t.name,
            inputSchema: t.inputSchema ?? { type: 'object' },
          })),
        });
      case 'tools/call': {
        const name = String(params.name);
        const args = params.arguments as Record<string, unknown> | undefined;
        this.calls.push({ name, arguments: args });
        const tool = this.tools.find((t) => t.name === name);
        if (tool?.holds === true) return void this.holding.set(msg.id, { name, arguments: args });
        if (tool?.sleeps === true) {
          const timer = setTimeout(
            () => {
              this.holding.delete(msg.id);
              answer({ content: [{ type: 'text', text: tool.text?.(args) ?? `${this.name}:${name}` }] });
            },
            Number(args?.ms ?? 0),
          );
          return void this.holding.set(msg.id, { name, arguments: args, timer });
        }
        if (tool?.progress === true) {
          const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
          return void this.stepping.push({ id: msg.id, token, steps: Number(args?.steps ?? 0), sent: 0 });
        }
        if (tool?.refuses !== undefined) return refuse(tool.refuses.code, tool.refuses.message, tool.refuses.data);
        if (tool?.result !== undefined) return answer(tool.result(args));
        return answer({ content: [{ type: 'text', text: tool?.text?.(args) ?? `${this.name}:${name}` }] });
      }
      case 'prompts/list':
        return answer({
          prompts: prompts.map((p) => ({
            name: p.name,
            description: p.description ?? p.name,
            arguments: (p.arguments ?? []).map((a) => ({ name: a, required: true })),
          })),
        });
      case 'prompts/get': {
        const prompt = prompts.find((p) => p.name === params.name);
        if (prompt === undefined) return refuse(-32602, `Unknown prompt: ${String(params.name)}`);
        const args = (params.arguments ?? {}) as Record<string, string>;
        const missing = (prompt.arguments ?? []).find((a) => args[a] === undefined);
        if (missing !== undefined) return refuse(-32602, `Missing argument: ${missing}`);
        return answer({ messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }] });
      }
      case 'completion/complete': {
        const ref = params.ref as { type?: string; name?: string } | undefined;
        const argument = params.argument as { name: string; value: string };
        const pool = ref?.type === 'ref/prompt' ? (prompts.find((p) => p.name === ref.name)?.complete?.[argument.name] ?? []) : [];
        const values = pool.filter((v) => v.startsWith(argument.value));
        return answer({ completion: { values, total: values.length, hasMore: false } });
      }
      case 'resources/list':
        return answer({
          resources: resources.map((r) => ({ uri: r.uri, name: r.name, ...(r.mimeType !== undefined && { mimeType: r.mimeType }) })),
        });
      case 'resources/templates/list':
        return answer({ resourceTemplates: templates.map(({ read: _read, ...template }) => template) });
      case 'resources/read': {
        const uri = String(params.uri);
        const resource = resources.find((r) => r.uri === uri);
        if (resource !== undefined) {
          const { name: _name, ...contents } = resource;
          return answer({ contents: [contents] });
        }
        for (const template of templates) {
          const text = template.read(uri);
          if (text !== undefined) return answer({ contents: [{ uri, mimeType: template.mimeType ?? 'text/plain', text }] });
        }
        return refuse(-32002, 'Resource not found');
      }
      default: {
        const answered = this.spec.fallback?.(msg.method, params);
        if (answered !== undefined) return answer(answered);
        refuse(-32601, `no ${msg.method}`);
      }
    }
  }
}

/** A tool schema of named string or number properties, each required (as the kitchen sink writes them). */
function schema(props: Record<string, 'string' | 'number'>): Record<string, unknown> {
  const properties = Object.fromEntries(Object.entries(props).map(([k, type]) => [k, { type }]));
  return { type: 'object', properties, required: Object.keys(props) };
}

/**
 * test/fixtures/kitchen-sink-server.ts in memory, as far as the in-process tests use it: its tools
 * echo, structured, fail, elicit, env, pid, progress and slow (same descriptions and schemas; slow
 * sleeps `ms` unless cancelled, elicit does not ask the agent, progress reports one step per `step()`),
 * its resources sink://static/1 and /2 and sink://blob/1, the template sink://item/{id}, and the
 * prompt greet with its completions.
 */
export function kitchenSink(name: string): FakeServer {
  const text = (args: Record<string, unknown> | undefined, key: string): string => String(args?.[key]);
  const blob = Buffer.from(Array.from({ length: 16 }, (_, i) => i)).toString('base64');
  return new FakeServer(name, {
    tools: [
      { name: 'echo', description: 'Echoes the text back', inputSchema: schema({ text: 'string' }), text: (a) => text(a, 'text') },
      {
        name: 'structured',
        description: 'Adds a and b, returning structured content',
        inputSchema: schema({ a: 'number', b: 'number' }),
        result: (a) => {
          const out = { sum: Number(a?.a) + Number(a?.b) };
          return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
        },
      },
      {
        name: 'fail',
        description: 'Returns an error result',
        inputSchema: schema({}),
        result: () => ({ content: [{ type: 'text', text: 'tool failed on purpose' }], isError: true }),
      },
      { name: 'elicit', description: 'Asks the client who the user is', inputSchema: schema({}), text: () => 'elicited' },
      {
        name: 'env',
        description: 'Reads an environment variable',
        inputSchema: schema({ name: 'string' }),
        text: (a) => process.env[text(a, 'name')] ?? '<unset>',
      },
      { name: 'pid', description: 'Reports the process id', inputSchema: schema({}), text: () => String(process.pid) },
      { name: 'progress', description: 'Sends `steps` progress notifications', inputSchema: schema({ steps: 'number' }), progress: true },
      {
        name: 'slow',
        description: 'Sleeps `ms` milliseconds unless cancelled',
        inputSchema: schema({ ms: 'number' }),
        sleeps: true,
        text: () => 'slept',
      },
    ],
    resources: [
      { uri: 'sink://static/1', name: 'static-1', mimeType: 'text/plain', text: 'one' },
      { uri: 'sink://static/2', name: 'static-2', mimeType: 'text/plain', text: 'two' },
      { uri: 'sink://blob/1', name: 'blob-1', mimeType: 'application/octet-stream', blob },
    ],
    templates: [
      {
        uriTemplate: 'sink://item/{id}',
        name: 'item',
        description: 'An item by id',
        mimeType: 'text/plain',
        read: (uri) => {
          const id = /^sink:\/\/item\/(.+)$/.exec(uri)?.[1];
          return id === undefined ? undefined : `item ${id}`;
        },
      },
    ],
    prompts: [
      {
        name: 'greet',
        description: 'Greets someone by name',
        arguments: ['name'],
        text: (a) => `Hello, ${a.name ?? ''}!`,
        complete: { name: ['alice', 'albert', 'bob'] },
      },
    ],
    capabilities: { tools: { listChanged: true } },
  });
}

const jsonText = (value: unknown): Record<string, unknown> => ({ content: [{ type: 'text', text: JSON.stringify(value) }] });

/** dynamic-server's `echo`: its answer is JSON; `revisions` > 0 revises its description, as SIGUSR1 does. */
export function dynamicEcho(revisions = 0): FakeTool {
  const description = 'Echoes the message back as JSON';
  return {
    name: 'echo',
    description: revisions === 0 ? description : `${description} (revised ${revisions})`,
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    result: (a) => jsonText({ echo_message: a?.message }),
  };
}

/** dynamic-server's second tool, added by SIGHUP there (`setTools` here). */
export const DYNAMIC_CALCULATOR: FakeTool = {
  name: 'calculator',
  description: 'Does arithmetic on a and b',
  inputSchema: {
    type: 'object',
    properties: {
      a: { type: 'number' },
      b: { type: 'number' },
      operation: { type: 'string', enum: ['add', 'subtract', 'multiply', 'divide'] },
    },
    required: ['a', 'b', 'operation'],
  },
  result: (args) => {
    const a = Number(args?.a);
    const b = Number(args?.b);
    const results: Record<string, number> = { add: a + b, subtract: a - b, multiply: a * b, divide: a / b };
    return jsonText({ result: results[String(args?.operation)] });
  },
};

/** test/fixtures/dynamic-server.ts in memory: `echo` alone at first; `setTools` adds or revises, with list_changed. */
export function dynamicServer(name: string): FakeServer {
  return new FakeServer(name, { tools: [dynamicEcho()], capabilities: { tools: { listChanged: true } } });
}

/**
 * test/fixtures/tools-server.ts in memory: a tool set of test/fixtures/tool-sets.ts (`github` or
 * `files`), every tool answering `called NAME pid=P`; `retitle` changes `search_code`'s description
 * and announces it with tools/list_changed.
 */
export function toolsServer(name: string, set: 'github' | 'files'): FakeServer {
  const defs = SETS[set]!.map((d) => ({ ...d }));
  const toolOf = (d: (typeof defs)[number]): FakeTool => ({
    name: d.name,
    description: d.description,
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(Object.entries(d.params).map(([k, v]) => [k, { type: 'string', description: v }])),
    },
    text: () => {
      if (d.name === 'retitle') {
        const code = defs.find((c) => c.name === 'search_code');
        if (code !== undefined) code.description = 'Search code across GitHub repositories (changed)';
        server.setTools(defs.map(toolOf));
      }
      return `called ${d.name} pid=${process.pid}`;
    },
  });
  const server: FakeServer = new FakeServer(name, { tools: defs.map(toolOf), capabilities: { tools: { listChanged: true } } });
  return server;
}

/** The factory the Gateway takes: real Connections whose transport is the named fake server. */
export function fakeConnections(servers: readonly FakeServer[], supervision?: SupervisionSettings): ConnectionFactory {
  const byName = new Map(servers.map((s) => [s.name, s]));
  return (config: ServerConfig, hooks: ConnectionHooks, log: Logger) =>
    new Connection(config, hooks, log, {
      startupTimeoutMs: 5000,
      supervision,
      transport: (cfg, _log, events) => {
        const server = byName.get(cfg.name);
        if (server === undefined) throw new Error(`no fake server named ${cfg.name}`);
        return server.open(events);
      },
    });
}

export function stdioConfig(name: string): ServerConfig {
  return { type: 'stdio', name, command: 'none', args: [], env: {}, cwd: '/', disabled: false, timeout: 5000, sessions: 'shared' };
}
