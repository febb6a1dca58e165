// End-to-end harness: spawns the real `mcpgate serve` (the built CLI) as a child process and drives it
// with the official SDK client (v2 by default, v1 on request) over its stdio. The transport is ours so
// tests also see the gateway's exit code and its stderr log lines, and can wait on them as events.

import { execFile, execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';

const execFileAsync = promisify(execFile);

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CLI = join(ROOT, 'dist/src/cli/main.js');

/** Absolute path of a compiled fixture server (`test/fixtures/NAME.ts`). */
export function fixture(name: string): string {
  return join(ROOT, 'dist/test/fixtures', `${name}.js`);
}

/** A stdio server entry running a fixture with node. */
export function fixtureServer(name: string, args: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [fixture(name), ...args], ...extra };
}

export interface TempDir {
  path: string;
  file(name: string): string;
  remove(): Promise<void>;
}

export async function tempDir(prefix = 'mcpgate-test-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, file: (name) => join(path, name), remove: () => rm(path, { recursive: true, force: true }) };
}

export async function writeConfig(dir: TempDir, servers: Record<string, unknown>, name = '.mcp.json'): Promise<string> {
  const file = dir.file(name);
  await writeFile(file, JSON.stringify({ mcpServers: servers }, null, 2));
  return file;
}

/** The JSON-RPC message shape both SDK generations' transports carry. */
type Message = Record<string, unknown>;

/** A Transport (same shape for SDK v1 and v2) over a spawned gateway's stdin/stdout. */
class ChildTransport {
  onmessage?: (message: never) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private buffer = '';

  constructor(private readonly child: ChildProcessWithoutNullStreams) {}

  start(): Promise<void> {
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl = this.buffer.indexOf('\n');
      while (nl !== -1) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (line.trim() !== '') {
          try {
            this.onmessage?.(JSON.parse(line) as never);
          } catch (err) {
            this.onerror?.(err as Error);
          }
        }
        nl = this.buffer.indexOf('\n');
      }
    });
    this.child.once('close', () => this.onclose?.());
    return Promise.resolve();
  }

  send(message: Message): Promise<void> {
    if (this.child.stdin.writable) this.child.stdin.write(JSON.stringify(message) + '\n');
    return Promise.resolve();
  }

  /** Raw line, for tests of malformed input. */
  sendRaw(line: string): void {
    this.child.stdin.write(line + '\n');
  }

  close(): Promise<void> {
    this.child.stdin.end();
    return Promise.resolve();
  }
}

export interface GatewayOptions {
  config: string;
  /**
   * The `--agent` identity (default `tester`). `null` passes no `--agent` and drops an inherited
   * MCPGATE_AGENT, so the gateway has no configured identity unless `env` sets MCPGATE_AGENT.
   */
  agent?: string | null;
  /** Extra CLI flags after `serve`. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  sdk?: 'v1' | 'v2';
  /** Client capabilities to declare (sampling, elicitation, roots…). */
  capabilities?: Record<string, unknown>;
  /** Do not connect an SDK client (for raw-protocol tests). */
  noClient?: boolean;
  /** Runs on the (v2) client before it connects: register handlers for requests that may come at once. */
  setup?: (client: Client) => void;
  /** The command that runs an installed `mcpgate` (e.g. `[PREFIX/bin/mcpgate]`, or npx and its arguments) instead of the built CLI. */
  bin?: readonly [string, ...string[]];
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class GatewayProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly transport: ChildTransport;
  readonly logs: Message[] = [];
  readonly exited: Promise<Exit>;
  private readonly waiters: { test: (line: Message) => boolean; resolve: (line: Message) => void }[] = [];
  client!: Client;
  clientV1!: ClientV1;

  constructor(options: GatewayOptions) {
    const identity = options.agent === null ? [] : ['--agent', options.agent ?? 'tester'];
    const args = ['serve', '--config', options.config, ...identity, '--log-level', 'debug', ...(options.args ?? [])];
    const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
    if (options.agent === null && options.env?.MCPGATE_AGENT === undefined) delete env.MCPGATE_AGENT;
    this.child =
      options.bin === undefined
        ? spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] })
        : spawn(options.bin[0], [...options.bin.slice(1), ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = once(this.child, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
    this.transport = new ChildTransport(this.child);
    let partial = '';
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const text of lines) this.onLog(text);
    });
  }

  private onLog(text: string): void {
    if (process.env.MCPGATE_TEST_VERBOSE !== undefined) process.stderr.write(`[gateway] ${text}\n`);
    let line: Message;
    try {
      line = JSON.parse(text) as Message;
    } catch {
      line = { level: 'raw', msg: text };
    }
    this.logs.push(line);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.test(line)) {
        this.waiters.splice(i, 1);
        waiter.resolve(line);
      }
    }
  }

  /** Resolves with the first log line (past or future) for which `test` holds. Bounded by the test's timeout. */
  waitForLog(test: (line: Message) => boolean): Promise<Message> {
    const seen = this.logs.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Closes the agent side (stdin EOF) and waits for the gateway to exit. */
  async stop(): Promise<Exit> {
    this.child.stdin.end();
    return this.exited;
  }
}

/** Starts the gateway and connects an SDK client to it (initialize included). */
export async function startGateway(options: GatewayOptions): Promise<GatewayProcess> {
  const gw = new GatewayProcess(options);
  if (options.noClient === true) return gw;
  const info = { name: 'mcpgate-test', version: '1.0.0' };
  const capabilities = options.capabilities ?? {};
  if (options.sdk === 'v1') {
    gw.clientV1 = new ClientV1(info, { capabilities });
    await gw.clientV1.connect(gw.transport as never);
  } else {
    gw.client = new Client(info, { capabilities });
    options.setup?.(gw.client);
    await gw.client.connect(gw.transport as never);
  }
  return gw;
}

/** Whether a process (or, with a negative pid, a process group) still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Gone for our purposes: no such process, or a zombie (an orphan waiting for an init that may never reap it). */
export function gone(pid: number): boolean {
  if (!alive(pid)) return true;
  try {
    return execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' })
      .trim()
      .startsWith('Z');
  } catch {
    return true;
  }
}

/** Waits up to `ms` for every pid to be gone; the ones still there. */
export async function survivors(pids: readonly number[], ms: number): Promise<number[]> {
  await until(() => pids.every(gone), ms);
  return pids.filter((p) => !gone(p));
}

/** Waits until `pid` is gone, checking on the exit of something we can observe; bounded by `ms`. */
export async function waitGone(pid: number, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return !alive(pid);
}

/** Parses a text content block's JSON (the fixtures answer in JSON text). */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  const first = content[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`expected a text result, got ${JSON.stringify(result)}`);
  return first.text;
}

export function jsonOf(result: unknown): unknown {
  return JSON.parse(textOf(result));
}

/** Bounded polling for a condition only observable by looking (a marker file, a counter tool). */
export async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  // The check is asked once per round and its answer kept: asking again to report it would repeat a
  // check that acts (a call that takes a limit's last slot) and could answer otherwise the second time.
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Any SDK transport once its client has connected (the client put its handler in `onmessage`). */
interface Delivering {
  onmessage?: (message: never, extra?: never) => void;
}

/**
 * Both SDK clients run notification handlers a microtask late but settle responses at once, so a
 * progress notification read in the same chunk as its call's response can be dropped by the client
 * (not by the gateway: the wire order is right). This delivers each message on its own turn — for a
 * gateway's stdio, or any connected SDK transport (Streamable HTTP's POST streams too).
 */
export function yieldBetweenMessages(target: GatewayProcess | Delivering): () => void {
  const transport: Delivering = target instanceof GatewayProcess ? target.transport : target;
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => void setImmediate(() => deliver(message, extra));
  return () => void (transport.onmessage = deliver);
}

export interface RawReply {
  jsonrpc?: unknown;
  id?: unknown;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** The gateway's stdout (for a gateway started with noClient) as a queue of parsed messages, read strictly in order. */
export class RawReplies {
  private readonly queue: RawReply[] = [];
  private waiter: ((reply: RawReply) => void) | undefined;
  readonly all: RawReply[] = [];

  constructor(gw: GatewayProcess) {
    let partial = '';
    gw.child.stdout.setEncoding('utf8');
    gw.child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines.filter((l) => l.trim() !== '')) {
        const reply = JSON.parse(line) as RawReply;
        this.all.push(reply);
        const waiter = this.waiter;
        this.waiter = undefined;
        if (waiter !== undefined) waiter(reply);
        else this.queue.push(reply);
      }
    });
  }

  /** The next message the gateway writes (bounded by the test's timeout). */
  next(): Promise<RawReply> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve) => (this.waiter = resolve));
  }
}

export interface RpcError {
  code: unknown;
  message: string;
  data: Record<string, unknown>;
}

/** The JSON-RPC error a call ends with (fails the test if it succeeds). */
export async function rpcError(call: Promise<unknown>): Promise<RpcError> {
  try {
    await call;
  } catch (err) {
    const e = err as { code?: unknown; message: string; data?: Record<string, unknown> };
    return { code: e.code, message: e.message, data: e.data ?? {} };
  }
  assert.fail('expected the call to fail');
}

type ListKind = 'tools' | 'resources' | 'prompts';

/** Counts the agent's list_changed notifications of each kind, and lets a test wait for the n-th. */
export class Notifications {
  readonly count: Record<ListKind, number> = { tools: 0, resources: 0, prompts: 0 };
  private waiters: { kind: ListKind; n: number; resolve: () => void }[] = [];

  constructor(gw: GatewayProcess) {
    for (const kind of ['tools', 'resources', 'prompts'] as const) {
      gw.client.setNotificationHandler(`notifications/${kind}/list_changed`, () => {
        this.count[kind] += 1;
        const due = this.waiters.filter((w) => w.kind === kind && this.count[kind] >= w.n);
        this.waiters = this.waiters.filter((w) => !due.includes(w));
        for (const w of due) w.resolve();
      });
    }
  }

  /** Resolves once `n` notifications of `kind` have arrived in total (bounded by the test's timeout). */
  until(kind: ListKind, n: number): Promise<void> {
    if (this.count[kind] >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ kind, n, resolve }));
  }
}

/** Runs the built CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
export async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args]);
    return { code: 0, out: stdout, err: stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}

/** Tears down a test rig: stops its gateway if it is still running, then removes its directory. */
export async function closeRig(r: { gw: GatewayProcess; dir: TempDir } | undefined): Promise<void> {
  if (r === undefined) return;
  if (r.gw.child.exitCode === null && r.gw.child.signalCode === null) await r.gw.stop();
  await r.dir.remove();
}
