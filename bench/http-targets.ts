// The targets of the HTTP benchmark. Each runs in a child process that leads its own process group,
// so stopping a target also stops whatever it spawned (the gateways' echo servers): SIGTERM to the
// group, a grace period, then SIGKILL to the group and to any process of its tree that lives in a
// group of its own (mcpgate starts its servers so). A target is ready once a full MCP session on it
// has answered one echo call.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { openSession, type Transport } from './http-client.js';
import { killLeftovers, tree } from './proc.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const CLI = join(ROOT, 'dist/src/cli/main.js');
const FLOOR = join(ROOT, 'dist/bench/http-floor.js');
const RELAY = join(ROOT, 'dist/bench/http-relay.js');
const START_TIMEOUT_MS = 30_000;

export interface RunningTarget {
  readonly name: string;
  readonly transport: Transport;
  readonly url: URL;
  readonly tool: string;
  readonly token?: string;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface TargetSpec {
  readonly name: string;
  /** `dir` is a scratch directory the target may write its config (and state) into. */
  start(dir: string): Promise<RunningTarget>;
}

const live = new Set<number>();
// Last resort if the bench itself dies or is interrupted: no target outlives it. (The targets lead
// process groups of their own, so a Ctrl-C in the terminal does not reach them.)
process.once('exit', () => {
  for (const pgid of live) killGroup(pgid, 'SIGKILL');
});
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => process.exit(code));
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The whole group is already gone.
  }
}

class Group {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<void>;
  private tail = '';
  private readonly watchers = new Set<(line: string) => void>();

  constructor(
    readonly name: string,
    args: string[],
    env: NodeJS.ProcessEnv = {},
  ) {
    // stdin stays open: some servers take EOF on stdin as the order to shut down.
    this.child = spawn(process.execPath, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    if (this.child.pid === undefined) throw new Error(`${name}: spawn failed`);
    this.pid = this.child.pid;
    live.add(this.pid);
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      let partial = '';
      // Always drained: a target that logs every call must never block on a full pipe.
      stream.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        this.tail = (this.tail + text).slice(-4000);
        if (this.watchers.size === 0) return;
        const lines = (partial + text).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) for (const watcher of this.watchers) watcher(line);
      });
    }
  }

  /** Resolves with the first non-undefined `pick(line)` of the target's output. */
  async waitFor(pick: (line: string) => string | undefined): Promise<string> {
    let watcher: ((line: string) => void) | undefined;
    try {
      return await Promise.race([
        new Promise<string>((resolve) => {
          watcher = (line) => {
            const found = pick(line);
            if (found !== undefined) resolve(found);
          };
          this.watchers.add(watcher);
        }),
        this.exited.then(() => Promise.reject(this.failure('exited before it was ready'))),
        sleep(START_TIMEOUT_MS).then(() => Promise.reject(this.failure(`not ready in ${START_TIMEOUT_MS} ms`))),
      ]);
    } finally {
      if (watcher !== undefined) this.watchers.delete(watcher);
    }
  }

  failure(what: string): Error {
    const { exitCode, signalCode } = this.child;
    const exit = exitCode !== null ? ` (exit code ${exitCode})` : signalCode !== null ? ` (${signalCode})` : '';
    return new Error(`${this.name} ${what}${exit}; its last output:\n${this.tail}`);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async stop(): Promise<void> {
    if (!live.has(this.pid)) return;
    // Listed first: a target may start its servers in process groups of their own.
    const started = (await tree(this.pid)) ?? [];
    killGroup(this.pid, 'SIGTERM');
    await Promise.race([this.exited, sleep(3000)]);
    // Children that ignored SIGTERM, or outlived their parent, go now.
    killGroup(this.pid, 'SIGKILL');
    live.delete(this.pid);
    await this.exited;
    await sleep(200);
    const killed = await killLeftovers(started);
    if (killed.length > 0) console.warn(`  (${this.name} left processes behind, killed: ${killed.join(', ')})`);
  }
}

function target(group: Group, transport: Transport, url: string, tool: string, token?: string): RunningTarget {
  return {
    name: group.name,
    transport,
    url: new URL(url),
    tool,
    pid: group.pid,
    stop: () => group.stop(),
    ...(token === undefined ? {} : { token }),
  };
}

/** Polls with a real session and a real call until the target answers. */
async function untilReady(group: Group, running: RunningTarget): Promise<RunningTarget> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const agent = new Agent({ keepAlive: false });
    try {
      const session = await openSession(running.transport, running.url, agent, running.token);
      try {
        await session.call('tools/call', { name: running.tool, arguments: { text: 'ping' } });
      } finally {
        await session.close();
      }
      return running;
    } catch (err) {
      if (!group.running) throw group.failure('exited before it was ready');
      if (Date.now() > deadline) throw group.failure(`not ready in ${START_TIMEOUT_MS} ms (${String(err)})`);
      await sleep(200);
    } finally {
      agent.destroy();
    }
  }
}

async function guarded(group: Group, ready: () => Promise<RunningTarget>): Promise<RunningTarget> {
  try {
    return await ready();
  } catch (err) {
    await group.stop();
    throw err;
  }
}

/** A port that was free a moment ago, for gateways that cannot listen on port 0 and say where. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function binOf(pkg: string): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
    bin: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[pkg]!;
  return join(ROOT, 'node_modules', pkg, bin);
}

function jsonField(line: string, check: (o: Record<string, unknown>) => boolean, field: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    return check(o) && typeof o[field] === 'string' ? o[field] : undefined;
  } catch {
    return undefined;
  }
}

export const FLOOR_NAME = 'node:http (floor)';
export const RELAY_NAME = 'http→stdio relay';
export const MCPGATE_NAME = 'mcpgate';

export const floor: TargetSpec = {
  name: FLOOR_NAME,
  async start() {
    const group = new Group(FLOOR_NAME, [FLOOR]);
    return guarded(group, async () => target(group, 'streamable', await group.waitFor((l) => jsonField(l, () => true, 'url')), 'echo'));
  },
};

export const relay: TargetSpec = {
  name: RELAY_NAME,
  async start() {
    const group = new Group(RELAY_NAME, [RELAY, process.execPath, ECHO]);
    return guarded(group, async () =>
      untilReady(group, target(group, 'streamable', await group.waitFor((l) => jsonField(l, () => true, 'url')), 'echo')),
    );
  },
};

/** mcpgate as a target: `cli` (this build, or another for an A/B in one run) and optionally a rules file's JSON. */
function mcpgateTarget(name: string, cli: string, rules?: unknown): TargetSpec {
  return {
    name,
    async start(dir) {
      const stem = name.replace(/[^a-z0-9]+/gi, '-');
      const config = join(dir, `${stem}.mcp.json`);
      await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
      const rulesArgs: string[] = [];
      if (rules !== undefined) {
        const file = join(dir, `${stem}.rules.json`);
        await writeFile(file, JSON.stringify(rules));
        rulesArgs.push('--rules', file);
      }
      const group = new Group(name, [
        cli,
        'serve',
        '--config',
        config,
        ...rulesArgs,
        '--http',
        '127.0.0.1:0',
        '--no-auth',
        '--agent',
        'bench',
        '--log-level',
        'info',
      ]);
      return guarded(group, async () => {
        const url = await group.waitFor((l) =>
          jsonField(l, (o) => typeof o.msg === 'string' && o.msg.startsWith('mcpgate listening on'), 'url'),
        );
        return untilReady(group, target(group, 'streamable', url, 'echo__echo'));
      });
    },
  };
}

export const mcpgate: TargetSpec = mcpgateTarget(MCPGATE_NAME, CLI);

/**
 * Rules whose limits the bench never reaches (a window and calls in flight for its agent): what a
 * limit check costs a call, against the same build without limits.
 */
export const UNREACHED_LIMITS = {
  agents: { bench: { allow: { servers: ['*'] }, limits: { calls: 1_000_000_000, per: '1d', inFlight: 1_000_000 } } },
};

/**
 * Opt-in extra mcpgate targets, in the same rounds: `MCPGATE_BENCH_BASELINE` (another build's
 * dist/src/cli/main.js: "mcpgate (baseline)", for before/after in one run) and `MCPGATE_BENCH_LIMITS=1`
 * ("mcpgate (limits)": this build with limits that are never reached).
 */
export function extraMcpgates(): TargetSpec[] {
  const extra: TargetSpec[] = [];
  const baseline = process.env.MCPGATE_BENCH_BASELINE;
  if (baseline !== undefined && baseline !== '') extra.push(mcpgateTarget('mcpgate (baseline)', baseline));
  if (process.env.MCPGATE_BENCH_LIMITS === '1') extra.push(mcpgateTarget('mcpgate (limits)', CLI, UNREACHED_LIMITS));
  return extra;
}

export const mcpProxy: TargetSpec = {
  name: 'mcp-proxy',
  async start() {
    const port = await freePort();
    const group = new Group('mcp-proxy', [
      binOf('mcp-proxy'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--server',
      'stream',
      '--',
      process.execPath,
      ECHO,
    ]);
    return guarded(group, () => untilReady(group, target(group, 'streamable', `http://127.0.0.1:${port}/mcp`, 'echo')));
  },
};

export const supergateway: TargetSpec = {
  name: 'supergateway',
  async start() {
    const port = await freePort();
    // Stateful: in its default stateless mode supergateway spawns a new server for every request.
    const group = new Group('supergateway', [
      binOf('supergateway'),
      '--stdio',
      `'${process.execPath}' '${ECHO}'`,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
      '--logLevel',
      'none',
    ]);
    return guarded(group, () => untilReady(group, target(group, 'streamable', `http://127.0.0.1:${port}/mcp`, 'echo')));
  },
};

export const mcpHub: TargetSpec = {
  name: 'mcp-hub (SSE)',
  async start(dir) {
    const port = await freePort();
    const config = join(dir, 'mcp-hub.json');
    await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
    // mcp-hub keeps state and caches under the XDG directories: keep them in the scratch directory.
    const home = join(dir, 'mcp-hub-home');
    const env = {
      HOME: home,
      XDG_STATE_HOME: join(home, 'state'),
      XDG_DATA_HOME: join(home, 'data'),
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_CACHE_HOME: join(home, 'cache'),
    };
    const group = new Group('mcp-hub (SSE)', [binOf('mcp-hub'), '--port', String(port), '--config', config], env);
    return guarded(group, () => untilReady(group, target(group, 'sse', `http://127.0.0.1:${port}/mcp`, 'echo__echo')));
  },
};

export const OTHER_GATEWAYS: readonly TargetSpec[] = [mcpProxy, supergateway, mcpHub];

/** The other gateways that speak Streamable HTTP (mcp-hub's endpoint is the older HTTP+SSE transport). */
export const STREAMABLE_PEERS: ReadonlySet<string> = new Set([mcpProxy.name, supergateway.name]);
