// An in-memory MCP server behind a real Connection: a ServerTransport that answers the messages the
// gateway writes (initialize, the lists, tools/call) without a process or a socket, so the gateway's
// routing (test/unit/gateway-routing.test.ts) and the fronts in-process (test/helpers/in-process.ts)
// are unit-tested and the e2e tests prove the real thing. A server can be told to hold its initialize
// answer, so a test sees the gateway before it settles; a tool can hold its calls until cancelled, or
// report progress one step each time the test says.

import type { ServerConfig } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/observability/logger.js';
import { Connection, type ConnectionHooks, type SupervisionSettings } from '../../src/servers/connection.js';
import type { ServerTransport, TransportEvents } from '../../src/servers/transports/transport.js';
import type { ConnectionFactory } from '../../src/gateway/gateway.js';

export interface FakeTool {
  name: string;
  description?: string;
  /** The text of its answer (default `SERVER:TOOL`). */
  text?: (args: Record<string, unknown> | undefined) => string;
  /** Never answered: a call is held until the gateway cancels it (then it is in `cancelled`). */
  holds?: boolean;
  /**
   * A call reports `arguments.steps` progress notifications (to its `_meta.progressToken`), one
   * each time the test calls `step()`, then answers `done`: the test decides what comes when.
   */
  progress?: boolean;
}

export interface FakeServerSpec {
  tools: FakeTool[];
  /** Hold the answer to initialize until release() is called. */
  holdStart?: boolean;
}

/** One fake server: its tools, the tools/call requests it received, and a way to let it start. */
export class FakeServer {
  readonly calls: { name: string; arguments: unknown }[] = [];
  /** The held calls (`holds`) the gateway cancelled, in order. */
  readonly cancelled: { name: string; arguments: unknown }[] = [];
  /** Calls reporting progress (`FakeTool.progress`), oldest first. */
  private readonly stepping: { id: number; token: unknown; steps: number; sent: number }[] = [];
  /** Held calls by the id the gateway gave them. */
  private readonly holding = new Map<unknown, { name: string; arguments: unknown }>();
  /** A hung server: alive, but answers nothing from now on (it has no ping either way: -32601). */
  hung = false;
  /**
   * The tools/list requests each transport opened on it received, oldest transport first (a
   * per-agent or per-session server's catalog connection, then its pooled ones).
   */
  readonly toolLists: number[] = [];
  /** Each transport opened on it, as `toolLists` counts them. */
  private readonly opened: TransportEvents[] = [];
  private events: TransportEvents | undefined;
  private held: (() => void)[] = [];
  private releasedStart: boolean;

  constructor(
    readonly name: string,
    readonly spec: FakeServerSpec,
  ) {
    this.releasedStart = spec.holdStart !== true;
  }

  /**
   * The server dies (as a killed process would): its transport reports the exit, and the next
   * start holds its initialize answer until release(), so a test sees the connection restarting.
   */
  crash(): void {
    this.releasedStart = false;
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
        queueMicrotask(() =>
          events.exit(new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${this.name}" stopped`, { server: this.name })),
        );
        return Promise.resolve();
      },
      kill: () => {
        open = false;
      },
    };
  }

  /** A message written on transport `link`: answered on that transport. */
  private receive(line: string, link: number): void {
    if (this.hung) return;
    const msg = JSON.parse(line) as { id?: number; method?: string; params?: Record<string, unknown> };
    if (msg.id === undefined && msg.method === 'notifications/cancelled') {
      const held = this.holding.get(msg.params?.requestId);
      this.holding.delete(msg.params?.requestId);
      if (held !== undefined) this.cancelled.push(held);
      return;
    }
    if (msg.id === undefined || msg.method === undefined) return; // other notifications, and answers
    const events = this.opened[link];
    const answer = (result: unknown): void => events?.line(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    switch (msg.method) {
      case 'initialize': {
        const send = (): void =>
          answer({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: this.name, version: '1.0.0' } });
        if (this.releasedStart) send();
        else this.held.push(send);
        return;
      }
      case 'tools/list':
        this.toolLists[link] = (this.toolLists[link] ?? 0) + 1;
        return answer({
          tools: this.spec.tools.map((t) => ({ name: t.name, description: t.description ?? t.name, inputSchema: { type: 'object' } })),
        });
      case 'tools/call': {
        const name = String(msg.params?.name);
        const args = msg.params?.arguments as Record<string, unknown> | undefined;
        this.calls.push({ name, arguments: args });
        const tool = this.spec.tools.find((t) => t.name === name);
        if (tool?.holds === true) return void this.holding.set(msg.id, { name, arguments: args });
        if (tool?.progress === true) {
          const token = (msg.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
          return void this.stepping.push({ id: msg.id, token, steps: Number(args?.steps ?? 0), sent: 0 });
        }
        return answer({ content: [{ type: 'text', text: tool?.text?.(args) ?? `${this.name}:${name}` }] });
      }
      default:
        events?.line(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no ${msg.method}` } }));
    }
  }
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
