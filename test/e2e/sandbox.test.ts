// Sandboxed stdio servers, with real processes under bubblewrap: a probe server that tries what the
// sandbox must refuse — a file under the real $HOME/.ssh, a write outside its granted folder, a
// listing of another project, a loopback port not on its allow-list (straight or through the proxy),
// an environment variable its entry does not pass — fails at each attempt while the granted folder,
// the listed port and the passed variable work. Real servers (the filesystem and memory servers from
// node_modules, a Python SDK server from .venv-mcp) list and answer calls sandboxed. Stopping the
// gateway, or SIGKILL to it, leaves no process of a sandbox behind (a sandbox's processes have pids
// of their own namespace, so they are found by their process group here, not by pidfiles). A missing
// path in a sandbox fails the start with a hint naming the rule. Only loopback addresses are used.

import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ROOT,
  fixture,
  gone,
  startGateway,
  survivors,
  tempDir,
  textOf,
  until,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { pythonWithMcp } from '../helpers/python.js';
import { sandboxUnavailable } from '../../src/servers/transports/stdio/sandbox-launch.js';

const UNAVAILABLE = sandboxUnavailable();
const NODE_MODULES = resolve(ROOT, 'node_modules');

/** A loopback TCP server that greets each connection with one line. */
async function greeter(line: string): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.end(`${line}\n`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port };
}

/** Every live process whose process group is `pgid` (a sandbox's, seen from outside). */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** The children of `pid` (the gateway's server leaders). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

interface Layout {
  dir: TempDir;
  home: string;
  project: string;
  data: string;
  other: string;
}

async function layout(): Promise<Layout> {
  const dir = await tempDir('mcpgate-sandbox-');
  const home = dir.file('home');
  const project = dir.file('project');
  const data = dir.file('data');
  const other = dir.file('other-project');
  for (const d of [join(home, '.ssh'), project, data, other]) await mkdir(d, { recursive: true });
  await writeFile(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  await writeFile(join(project, 'readme.txt'), 'mine\n');
  await writeFile(join(other, 'secret.txt'), 'not yours\n');
  return { dir, home, project, data, other };
}

/** What every sandbox here reads: the repository (the fixtures, compiled) and its packages. */
async function codeRead(): Promise<string[]> {
  return [resolve(ROOT), await realpath(NODE_MODULES)];
}

async function writeMcpJson(at: Layout, servers: Record<string, unknown>, top: Record<string, unknown> = {}): Promise<string> {
  const file = join(at.project, '.mcp.json');
  await writeFile(file, JSON.stringify({ ...top, mcpServers: servers }, null, 2));
  return file;
}

const call = async (gw: GatewayProcess, name: string, args: Record<string, unknown>): Promise<string> =>
  textOf(await gw.client.callTool({ name, arguments: args }));

describe('a sandboxed server sees only what its entry grants', { skip: UNAVAILABLE, timeout: 120_000 }, () => {
  let at: Layout;
  let gw: GatewayProcess;
  let allowed: { server: Server; port: number };
  let blocked: { server: Server; port: number };

  before(async () => {
    at = await layout();
    allowed = await greeter('hello-allowed');
    blocked = await greeter('hello-blocked');
    const config = await writeMcpJson(at, {
      probe: {
        command: process.execPath,
        args: [fixture('sandbox-probe-server')],
        cwd: at.project,
        env: { PASSED_ON: 'yes' },
        sandbox: { read: await codeRead(), write: [at.data], network: [`127.0.0.1:${allowed.port}`] },
      },
    });
    gw = await startGateway({ config, env: { HOME: at.home, NOT_PASSED_ON: 'secret-value' } });
  });

  after(async () => {
    await gw?.stop();
    allowed?.server.close();
    blocked?.server.close();
    await at?.dir.remove();
  });

  it('cannot read a file under $HOME/.ssh', async () => {
    assert.match(await call(gw, 'probe__read', { path: join(at.home, '.ssh', 'id_ed25519') }), /^denied ENOENT/);
  });

  it('writes its working directory and granted folder, nothing else', async () => {
    assert.equal(await call(gw, 'probe__write', { path: join(at.project, 'out.txt'), text: 'a' }), 'ok');
    assert.equal(await call(gw, 'probe__write', { path: join(at.data, 'out.txt'), text: 'b' }), 'ok');
    assert.equal(readFileSync(join(at.data, 'out.txt'), 'utf8'), 'b', 'the write reached the real folder');
    assert.match(await call(gw, 'probe__write', { path: join(at.other, 'x.txt'), text: 'c' }), /^denied (ENOENT|EROFS|EACCES)/);
    assert.match(await call(gw, 'probe__write', { path: join(resolve(ROOT), 'x.txt'), text: 'd' }), /^denied (EROFS|EACCES)/);
    assert.match(await call(gw, 'probe__write', { path: join(at.home, 'x.txt'), text: 'e' }), /^ok/, 'its home is a private tmpfs');
    assert.throws(() => readFileSync(join(at.home, 'x.txt')), /ENOENT/, 'and the real home is untouched');
  });

  it('lists its own project, not another', async () => {
    assert.match(await call(gw, 'probe__list', { path: at.project }), /^ok .*readme\.txt/);
    assert.match(await call(gw, 'probe__list', { path: at.other }), /^denied ENOENT/);
    assert.match(await call(gw, 'probe__list', { path: at.dir.path }), /^ok /);
    assert.doesNotMatch(await call(gw, 'probe__list', { path: at.dir.path }), /other-project/);
  });

  it('reaches the listed loopback port through the proxy, and nothing else', async () => {
    assert.equal(await call(gw, 'probe__connect', { host: '127.0.0.1', port: allowed.port, viaProxy: true }), 'ok hello-allowed');
    assert.match(await call(gw, 'probe__connect', { host: '127.0.0.1', port: blocked.port, viaProxy: true }), /^denied HTTP\/1\.1 403/);
    // Its network namespace has only its own loopback: the host's ports are not there, listed or not.
    assert.match(await call(gw, 'probe__connect', { host: '127.0.0.1', port: allowed.port, viaProxy: false }), /^denied ECONNREFUSED/);
    assert.match(await call(gw, 'probe__connect', { host: '127.0.0.1', port: blocked.port, viaProxy: false }), /^denied ECONNREFUSED/);
  });

  it('gets the variables its entry passes, not the others', async () => {
    assert.equal(await call(gw, 'probe__env', { name: 'PASSED_ON' }), 'ok yes');
    assert.equal(await call(gw, 'probe__env', { name: 'NOT_PASSED_ON' }), 'denied unset');
    // Nor can it read them from the gateway's /proc: its /proc shows only its own processes.
    assert.match(await call(gw, 'probe__read', { path: `/proc/${gw.pid}/environ` }), /^denied/);
  });
});

describe('network "none" and "full", and a memory limit', { skip: UNAVAILABLE, timeout: 120_000 }, () => {
  let at: Layout;
  let gw: GatewayProcess;
  let target: { server: Server; port: number };

  before(async () => {
    at = await layout();
    target = await greeter('hello');
    const probe = async (network: string): Promise<Record<string, unknown>> => ({
      command: process.execPath,
      args: [fixture('sandbox-probe-server')],
      cwd: at.project,
      sandbox: { read: await codeRead(), network },
    });
    const small = { ...(await probe('none')), sandbox: { read: await codeRead(), memoryMb: 160 } };
    const config = await writeMcpJson(at, { closed: await probe('none'), open: await probe('full'), small });
    gw = await startGateway({ config, env: { HOME: at.home } });
  });

  after(async () => {
    await gw?.stop();
    target?.server.close();
    await at?.dir.remove();
  });

  it('"none" reaches no host port and has no proxy; "full" reaches it', async () => {
    assert.match(await call(gw, 'closed__connect', { host: '127.0.0.1', port: target.port, viaProxy: false }), /^denied ECONNREFUSED/);
    assert.equal(await call(gw, 'closed__connect', { host: '127.0.0.1', port: target.port, viaProxy: true }), 'denied no-proxy');
    assert.equal(await call(gw, 'open__connect', { host: '127.0.0.1', port: target.port, viaProxy: false }), 'ok hello');
  });

  it('"memoryMb" caps what the server can allocate', async () => {
    assert.equal(await call(gw, 'open__alloc', { mb: 256 }), `ok ${256 * 1024 * 1024}`);
    assert.match(await call(gw, 'small__alloc', { mb: 256 }), /^denied /);
    assert.equal(await call(gw, 'small__alloc', { mb: 8 }), `ok ${8 * 1024 * 1024}`, 'and serves on within it');
  });
});

describe('real servers run sandboxed', { skip: UNAVAILABLE, timeout: 120_000 }, () => {
  let at: Layout;
  let gw: GatewayProcess;
  const python = pythonWithMcp();

  before(async () => {
    at = await layout();
    const read = await codeRead();
    const servers: Record<string, unknown> = {
      files: {
        command: process.execPath,
        args: [join(NODE_MODULES, '@modelcontextprotocol/server-filesystem/dist/index.js'), at.project],
        cwd: at.project,
        sandbox: { read },
      },
      memory: {
        command: process.execPath,
        args: [join(NODE_MODULES, '@modelcontextprotocol/server-memory/dist/index.js')],
        cwd: at.project,
        env: { MEMORY_FILE_PATH: join(at.data, 'memory.jsonl') },
        sandbox: { read, write: [at.data] },
      },
    };
    if (python !== null)
      servers.py = {
        command: python,
        args: [join(ROOT, 'test/fixtures/python-modern-server.py')],
        cwd: at.project,
        sandbox: { read: [resolve(ROOT, 'test/fixtures')] },
      };
    gw = await startGateway({ config: await writeMcpJson(at, servers), env: { HOME: at.home } });
  });

  after(async () => {
    await gw?.stop();
    await at?.dir.remove();
  });

  it('the filesystem server lists its folder and is refused another', async () => {
    const { tools } = await gw.client.listTools();
    assert.ok(tools.some((t) => t.name === 'files__list_directory'));
    assert.match(await call(gw, 'files__list_directory', { path: at.project }), /readme\.txt/);
    const refused = await gw.client.callTool({ name: 'files__read_text_file', arguments: { path: join(at.other, 'secret.txt') } });
    assert.equal(refused.isError, true);
  });

  it('the memory server keeps its graph in its granted folder', async () => {
    await call(gw, 'memory__create_entities', { entities: [{ name: 'sandbox', entityType: 'thing', observations: ['works'] }] });
    assert.match(await call(gw, 'memory__read_graph', {}), /sandbox/);
    assert.match(readFileSync(join(at.data, 'memory.jsonl'), 'utf8'), /sandbox/);
  });

  it('a Python SDK server answers', { skip: python === null ? 'no .venv-mcp' : false }, async () => {
    // Python starts slowly on a loaded machine: wait for its tools rather than for the first settle.
    const listed = async (): Promise<boolean> => (await gw.client.listTools()).tools.some((t) => t.name === 'py__echo');
    assert.ok(await until(listed, 60_000), 'the Python server is listed');
    assert.equal(await call(gw, 'py__echo', { text: 'from python' }), 'from python');
  });
});

describe('no sandboxed process outlives the gateway', { skip: UNAVAILABLE, timeout: 120_000 }, () => {
  for (const how of ['shutdown', 'SIGKILL'] as const) {
    it(`${how}: every process of every sandbox is gone, children included`, async () => {
      const at = await layout();
      try {
        const read = await codeRead();
        const entry = (args: string[]): Record<string, unknown> => ({
          command: process.execPath,
          args: [fixture('sandbox-probe-server'), ...args],
          cwd: at.project,
          sandbox: { read },
        });
        const config = await writeMcpJson(at, { calm: entry([]), stubborn: entry(['--stubborn']) });
        const gw = await startGateway({ config, env: { HOME: at.home } });
        await call(gw, 'calm__spawn', {});
        await call(gw, 'stubborn__spawn', {});
        const leaders = childrenOf(gw.pid).filter((pid) => groupMembers(pid).length > 0);
        const members = leaders.flatMap(groupMembers);
        // Each sandbox: bwrap, its namespace's first process, the server, the server's child.
        assert.ok(members.length >= 2 * 3, `the sandboxes' processes are found: ${members.join(' ')}`);
        if (how === 'shutdown') {
          const exit = await gw.stop();
          assert.equal(exit.code, 0);
        } else {
          process.kill(gw.pid, 'SIGKILL');
          await until(() => gone(gw.pid), 5_000);
        }
        assert.deepEqual(await survivors(members, 10_000), []);
      } finally {
        await at.dir.remove();
      }
    });
  }
});

describe('a sandbox that cannot hold the server says why', { skip: UNAVAILABLE, timeout: 120_000 }, () => {
  it('a missing granted path fails the start, and status names the rule', async () => {
    const at = await layout();
    try {
      const config = await writeMcpJson(at, {
        probe: {
          command: process.execPath,
          args: [fixture('sandbox-probe-server')],
          cwd: at.project,
          sandbox: { read: [...(await codeRead()), join(at.dir.path, 'missing')] },
        },
      });
      const gw = await startGateway({ config, env: { HOME: at.home }, args: ['--debug', '--mode', 'discovery'] });
      try {
        let status: { servers: { name: string; sandbox?: { hint?: string; network?: unknown } }[] } | undefined;
        await until(async () => {
          status = JSON.parse(textOf(await gw.client.callTool({ name: 'get_gateway_status', arguments: {} }))) as typeof status;
          return status?.servers[0]?.sandbox?.hint !== undefined;
        }, 15_000);
        const sandbox = status?.servers[0]?.sandbox;
        assert.equal(sandbox?.network, 'none');
        assert.match(sandbox?.hint ?? '', /bubblewrap could not make the sandbox.*missing/);
      } finally {
        await gw.stop();
      }
    } finally {
      await at.dir.remove();
    }
  });
});
