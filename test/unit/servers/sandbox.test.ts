// Sandboxed stdio servers without starting one: the `sandbox` keys of `.mcp.json` (the file's default,
// an entry's own over it, "required"), the bubblewrap command line an entry gets, the network
// allow-list's proxy (real, on a unix socket, to loopback listeners), the hint for a server that
// failed under its sandbox, and what `mcpgate import` proposes. test/e2e/sandbox.test.ts runs real ones.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../../../src/errors.js';
import { parseServersConfig } from '../../../src/config/load.js';
import type { SandboxSettings, StdioServerConfig } from '../../../src/config/types.js';

import { sandboxLaunch } from '../../../src/servers/transports/stdio/sandbox-launch.js';
import { SandboxProxy } from '../../../src/servers/transports/stdio/network-proxy.js';
import { sandboxHint } from '../../../src/servers/transports/stdio/sandbox-hints.js';
import { proposeSandbox } from '../../../src/cli/import/sandbox-proposal.js';
import { runCheck } from '../../../src/cli/check.js';
import { sandboxUnavailable } from '../../../src/config/sandbox-mechanism.js';
import { writeFileSync } from 'node:fs';

const ENV = { HOME: '/home/me', PATH: '/usr/bin:/bin' };
const load = (json: unknown): StdioServerConfig[] =>
  parseServersConfig(JSON.stringify(json), '/work/project/.mcp.json', ENV).servers as StdioServerConfig[];
const issues = (json: unknown): string[] => {
  try {
    load(json);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return ((err.detail?.issues as { path: string; message: string }[]) ?? []).map((i) => `${i.path}: ${i.message}`);
  }
  return [];
};

/** One entry of a sandbox's `network` list as .mcp.json compiles it, or undefined when it is refused as no host. */
function parseSandboxHost(text: string): unknown {
  const found = issues({ mcpServers: { a: { command: 'node', sandbox: { network: [text] } } } });
  if (found.length > 0) {
    assert.deepEqual(
      // An empty text is refused by the shape of `sandbox`, any other by the host parser.
      found.map(
        (i) =>
          i.startsWith('$.mcpServers.a.sandbox.network[0]: expected a host, host:port, [IPv6]:port or *.domain') ||
          (text === '' && i.startsWith('$.mcpServers.a.sandbox: ') && i.includes('network')),
      ),
      [true],
      found.join('\n'),
    );
    return undefined;
  }
  const network = load({ mcpServers: { a: { command: 'node', sandbox: { network: [text] } } } })[0]!.sandbox!.network;
  assert.ok(Array.isArray(network));
  return network[0];
}

/** The preset a sandboxed entry gets from its command when it names none. */
const presetFor = (command: string): string | undefined => load({ mcpServers: { a: { command, sandbox: {} } } })[0]!.sandbox?.preset;

describe('sandbox settings in .mcp.json', () => {
  it('an entry without "sandbox" (and no default) runs unsandboxed: its snapshot is unchanged', () => {
    assert.equal(load({ mcpServers: { a: { command: 'node' } } })[0]!.sandbox, undefined);
  });

  it('"sandbox": true gives the defaults: network none, the preset by the command, paths resolved', () => {
    const [a, b] = load({
      mcpServers: {
        a: { command: 'npx', args: ['-y', 'x'], sandbox: true },
        b: { command: '/opt/py/bin/python3.12', sandbox: { read: ['~/ref', 'docs'], write: ['${HOME}/out'], network: 'full' } },
      },
    });
    assert.deepEqual(a!.sandbox, { preset: 'npx', read: [], write: [], network: 'none' });
    assert.deepEqual(b!.sandbox, {
      preset: 'python',
      read: ['/home/me/ref', '/work/project/docs'],
      write: ['/home/me/out'],
      network: 'full',
    });
  });

  it("the file's default applies to every entry, an entry's fields go over it one by one", () => {
    const [a, b, c] = load({
      sandbox: { network: ['registry.npmjs.org:443'], memoryMb: 512 },
      mcpServers: {
        a: { command: 'node' },
        b: { command: 'node', sandbox: { network: 'none', processes: 32 } },
        c: { command: 'x', sandbox: false },
      },
    });
    assert.deepEqual(a!.sandbox?.network, [{ host: 'registry.npmjs.org', port: 443 }]);
    assert.equal(a!.sandbox?.memoryMb, 512);
    assert.equal(b!.sandbox?.network, 'none');
    assert.equal(b!.sandbox?.processes, 32);
    assert.equal(b!.sandbox?.memoryMb, 512);
    assert.equal(c!.sandbox, undefined, '"sandbox": false opts out when the default is not required');
  });

  it('"required" refuses an entry that would run unsandboxed, and sandboxes the rest', () => {
    assert.deepEqual(
      issues({ sandbox: 'required', mcpServers: { a: { command: 'x', sandbox: false } } }).map((l) => l.split(': ')[0]),
      ['$.mcpServers.a.sandbox'],
    );
    assert.match(issues({ sandbox: 'required', mcpServers: { a: { command: 'x', sandbox: false } } })[0]!, /would run unsandboxed/);
    assert.equal(load({ sandbox: 'required', mcpServers: { a: { command: 'x' } } })[0]!.sandbox?.network, 'none');
    assert.equal(load({ sandbox: { required: true }, mcpServers: { a: { command: 'x' } } })[0]!.sandbox?.preset, 'none');
    assert.deepEqual(
      issues({ sandbox: { required: true, network: 'none' }, mcpServers: { a: { command: 'x', sandbox: false } } }).length,
      1,
    );
  });

  it('wrong values are errors at their path; granting all of home is a warning', () => {
    assert.match(
      issues({ mcpServers: { a: { command: 'x', sandbox: { network: 'some' } } } })[0]!,
      /^\$\.mcpServers\.a\.sandbox: expected/,
    );
    assert.match(
      issues({ mcpServers: { a: { command: 'x', sandbox: { network: ['bad host!'] } } } })[0]!,
      /sandbox\.network\[0\]: expected a host/,
    );
    assert.match(issues({ mcpServers: { a: { command: 'x', sandbox: { readonly: [] } } } })[0]!, /sandbox/);
    assert.match(issues({ sandbox: 'yes', mcpServers: { a: { command: 'x' } } })[0]!, /^\$\.sandbox: expected true, false, "required"/);
    const config = parseServersConfig(
      JSON.stringify({ mcpServers: { a: { command: 'x', sandbox: { read: ['~'] } } } }),
      '/work/project/.mcp.json',
      ENV,
    );
    assert.match(config.warnings[0]!.message, /the whole home directory/);
  });

  it('hosts: names, addresses, ports, IPv6 in brackets, *.domain', () => {
    assert.deepEqual(parseSandboxHost('Example.com'), { host: 'example.com' });
    assert.deepEqual(parseSandboxHost('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseSandboxHost('[::1]:443'), { host: '::1', port: 443 });
    assert.deepEqual(parseSandboxHost('*.github.com'), { host: '*.github.com' });
    for (const bad of ['a b', 'host:0', 'host:99999', 'host:x', 'http://x', '']) assert.equal(parseSandboxHost(bad), undefined, bad);
    assert.equal(presetFor('/usr/bin/npx'), 'npx');
    assert.equal(presetFor('uvx'), 'uvx');
    assert.equal(presetFor('python3'), 'python');
    assert.equal(presetFor('docker'), 'none');
  });
});

describe('the sandbox command line', () => {
  const settings = (over: Partial<SandboxSettings> = {}): SandboxSettings => ({
    preset: 'none',
    read: [],
    write: [],
    network: 'none',
    ...over,
  });
  const flagsOf = (args: readonly string[], flag: string): string[] =>
    args.flatMap((a, i) =>
      a === flag ? [`${args[i + 1]!}${flag.includes('bind') || flag === '--symlink' ? ` ${args[i + 2]!}` : ''}`] : [],
    );

  it('starts from nothing: system read-only, a private /tmp and home, the working directory writable, no network', () => {
    const home = mkdtempSync(join(tmpdir(), 'mcpgate-box-'));
    try {
      const launch = sandboxLaunch(
        settings({ read: ['/srv/ref'], write: ['/srv/out'] }),
        'tool',
        ['--x'],
        { HOME: home, PATH: '/usr/bin' },
        '/srv/project',
      );
      const args = launch.args;
      assert.ok(args.includes('--unshare-net') && args.includes('--unshare-pid') && args.includes('--die-with-parent'));
      assert.ok(!args.includes('--new-session'), 'the sandbox stays in the server process group');
      assert.deepEqual(flagsOf(args, '--cap-drop'), ['ALL']);
      assert.deepEqual(flagsOf(args, '--tmpfs'), ['/tmp', home]);
      assert.deepEqual(flagsOf(args, '--bind'), ['/srv/project /srv/project', '/srv/out /srv/out']);
      assert.deepEqual(flagsOf(args, '--ro-bind'), ['/dev/null /dev/tty', '/srv/ref /srv/ref']);
      assert.deepEqual(args.slice(args.indexOf('--')), ['--', 'tool', '--x']);
      assert.ok(args.indexOf('--tmpfs') < args.indexOf('--bind'), 'the private home is mounted before what is granted in it');
      assert.deepEqual(launch.visible.write, ['/srv/project', '/srv/out']);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('"full" keeps the network; limits go through prlimit (processes, data memory)', () => {
    const launch = sandboxLaunch(settings({ network: 'full', processes: 64, memoryMb: 256 }), 'tool', [], { PATH: '/usr/bin' }, '/srv/p');
    assert.ok(!launch.args.includes('--unshare-net'));
    assert.match(launch.command, /prlimit$/);
    assert.deepEqual(launch.args.slice(0, 3), ['--nproc=64', `--data=${256 * 1024 * 1024}`, '--']);
  });

  it("a preset's caches are granted only if they exist (-try), a declared path always", () => {
    const launch = sandboxLaunch(
      settings({ preset: 'npx', read: ['/srv/ref'] }),
      'tool',
      [],
      { HOME: '/home/nobody-here', PATH: '/usr/bin' },
      '/srv/p',
    );
    assert.deepEqual(flagsOf(launch.args, '--bind-try'), ['/home/nobody-here/.npm /home/nobody-here/.npm']);
    assert.deepEqual(flagsOf(launch.args, '--ro-bind').slice(-1), ['/srv/ref /srv/ref']);
  });

  it('an allow-list runs the bridge first, with the proxy folder bound in', () => {
    const launch = sandboxLaunch(settings({ network: [{ host: 'x.org', port: 443 }] }), 'tool', ['a'], { PATH: '/usr/bin' }, '/srv/p', {
      folder: '/tmp/mcpgate-net-1',
      bridge: '/opt/mcpgate/bridge.js',
    });
    assert.ok(launch.args.includes('--unshare-net'));
    assert.deepEqual(flagsOf(launch.args, '--ro-bind').slice(-2), [
      '/opt/mcpgate/bridge.js /run/mcpgate/bridge.mjs',
      '/tmp/mcpgate-net-1 /run/mcpgate/net',
    ]);
    assert.deepEqual(launch.args.slice(launch.args.indexOf('--') + 2), [
      '/run/mcpgate/bridge.mjs',
      '/run/mcpgate/net/proxy.sock',
      'tool',
      'a',
    ]);
  });
});

describe('the network allow-list proxy', () => {
  const listeners: Server[] = [];
  after(() => {
    for (const l of listeners) l.close();
  });
  const greeter = async (line: string): Promise<number> => {
    const server = createServer((s) => s.end(`${line}\n`));
    listeners.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as { port: number }).port;
  };
  const ask = (socket: string, request: string): Promise<string> =>
    new Promise((resolve) => {
      const s = connect(socket, () => s.write(request));
      let got = '';
      s.on('data', (c) => (got += c.toString()));
      s.on('close', () => resolve(got));
      s.on('error', () => resolve(got));
    });

  it('matches host and port as listed, *.domain for subdomains only, a name in any case', async () => {
    const yes = await greeter('yes');
    // The proxy resolves a name it lets through, so a wildcard is tried on an address, which needs no
    // resolver: `*.0.0.1` covers 127.0.0.1 as `*.example.org` covers a.example.org.
    const proxy = SandboxProxy.open([{ host: 'localhost', port: yes }, { host: '*.0.0.1' }, { host: '*.example.org' }]);
    const through = (target: string): Promise<string> => ask(proxy.socket, `CONNECT ${target} HTTP/1.1\r\n\r\n`);
    try {
      await new Promise((r) => setTimeout(r, 50));
      assert.match(await through(`LOCALHOST:${yes}`), /^HTTP\/1\.1 200 [^]*\r\n\r\nyes\n$/);
      assert.match(await through(`localhost:${yes + 1}`), /^HTTP\/1\.1 403 /, 'another port than the listed one');
      assert.match(await through(`127.0.0.1:${yes}`), /^HTTP\/1\.1 200 [^]*\r\n\r\nyes\n$/, 'a subdomain of the wildcard');
      assert.match(await through('example.org:1'), /^HTTP\/1\.1 403 /, 'the wildcard is for subdomains only');
      assert.match(await through('evilexample.org:1'), /^HTTP\/1\.1 403 /);
      assert.deepEqual(proxy.denials, [`localhost:${yes + 1}`, 'example.org:1', 'evilexample.org:1']);
    } finally {
      proxy.close();
    }
  });

  it('tunnels CONNECT and forwards one absolute-form request to a listed port; refuses the rest and remembers it', async () => {
    const yes = await greeter('yes');
    const no = await greeter('no');
    const denied: string[] = [];
    const proxy = SandboxProxy.open([{ host: '127.0.0.1', port: yes }], (t) => denied.push(t));
    try {
      await new Promise((r) => setTimeout(r, 50));
      assert.match(await ask(proxy.socket, `CONNECT 127.0.0.1:${yes} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 200 [^]*\r\n\r\nyes\n$/);
      assert.match(await ask(proxy.socket, `CONNECT 127.0.0.1:${no} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 403 /);
      assert.match(await ask(proxy.socket, `GET http://127.0.0.1:${no}/ HTTP/1.1\r\nHost: x\r\n\r\n`), /^HTTP\/1\.1 403 /);
      assert.match(await ask(proxy.socket, `GET http://127.0.0.1:${yes}/ HTTP/1.1\r\nHost: x\r\n\r\n`), /^yes\n$/);
      assert.match(await ask(proxy.socket, `GET /relative HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 400 /);
      assert.deepEqual(denied, [`127.0.0.1:${no}`, `127.0.0.1:${no}`]);
      assert.deepEqual(proxy.denials, denied);
    } finally {
      proxy.close();
    }
  });
});

describe('the hint for a server that failed under its sandbox', () => {
  const box: SandboxSettings = { preset: 'none', read: ['/srv/ref'], write: [], network: 'none' };
  const visible = { read: ['/srv/ref', '/usr'], write: ['/srv/p'] };
  it('names the rule and how to allow it', () => {
    assert.match(
      sandboxHint(box, ["Error: ENOENT: no such file or directory, open '/home/me/.config/x.json'"], [], visible)!,
      /\/home\/me\/\.config\/x\.json is outside the sandbox.*"read"/,
    );
    assert.match(sandboxHint(box, ["EROFS: read-only file system, open '/srv/ref/out'"], [], visible)!, /read-only.*"write"/);
    assert.match(sandboxHint(box, ['getaddrinfo ENOTFOUND registry.npmjs.org'], [], visible)!, /network is "none"/);
    assert.match(sandboxHint(box, [], ['api.x.com:443'], visible)!, /refused api\.x\.com:443.*"network"/);
    assert.match(
      sandboxHint(box, ["bwrap: Can't find source path /srv/gone: No such file or directory"], [], visible)!,
      /bubblewrap could not make the sandbox/,
    );
    assert.equal(sandboxHint(box, ['TypeError: x is not a function'], [], visible), undefined);
  });
});

describe('mcpgate import proposes a sandbox', () => {
  it('none for a local server, the registry for a launcher, full for a networked server, nothing for a remote one', () => {
    assert.deepEqual(proposeSandbox({ command: 'node', args: ['server.js'] })?.sandbox, { network: 'none' });
    assert.deepEqual(proposeSandbox({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] })?.sandbox, {
      network: ['registry.npmjs.org:443'],
    });
    assert.deepEqual(proposeSandbox({ command: 'uvx', args: ['mcp-server-fetch'] })?.sandbox, { network: 'full' });
    assert.equal(proposeSandbox({ url: 'https://x' }), undefined);
    assert.equal(proposeSandbox({ command: 'node', sandbox: false }), undefined, 'its own setting is kept');
  });
});

describe('mcpgate check shows each sandbox and whether bubblewrap is at hand', () => {
  it('prints the sandbox of each server, then the mechanism (or a warning that they will not start)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgate-check-'));
    try {
      const file = join(dir, '.mcp.json');
      writeFileSync(
        file,
        JSON.stringify({
          mcpServers: { a: { command: 'node', sandbox: { network: ['x.org:443'], write: ['out'], memoryMb: 64 } }, b: { command: 'node' } },
        }),
      );
      let out = '';
      let err = '';
      const code = await runCheck(file, { out: (t) => (out += t), err: (t) => (err += t) }, { PATH: process.env.PATH, HOME: dir });
      assert.equal(code, 0, err);
      assert.match(
        out,
        new RegExp(
          `a: sandbox \\(preset node\\): network x\\.org:443; write ${dir} ${join(dir, 'out')}; read \\(system only\\); memory 64 MiB`,
        ),
      );
      assert.doesNotMatch(out, /b: sandbox/);
      if (sandboxUnavailable() === undefined) assert.match(out, /sandbox: bubblewrap at \S+, 1 sandboxed server/);
      else assert.match(err, /warning: sandbox unavailable: .*; a will not start/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
