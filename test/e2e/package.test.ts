// Installing mcpgate like any CLI, offline: `npm pack` on a clean copy of the checkout (no dist/)
// builds first and packs only what runs (dist/src, the docs' text, README, LICENSE, package.json);
// `npm install -g` of that tarball into a temporary prefix, and `npx --package` of it, give a
// `mcpgate` that prints its version, checks a config, serves a real server to the official SDK client
// and stops on SIGTERM with no server left. The runtime dependencies come from a registry on
// 127.0.0.1 that serves the npm cache's copies of the lockfile's versions (helpers/npm-registry.ts).

import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, stat, symlink, realpath, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  ROOT,
  fixtureServer,
  startGateway,
  survivors,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { runtimePackages, startRuntimeRegistry, type LocalRegistry } from '../helpers/npm-registry.js';

const execFileAsync = promisify(execFile);

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

interface Ran {
  code: number;
  out: string;
  err: string;
}

/** Runs a command; resolves with its exit code and output (never rejects on a non-zero exit). */
async function run(command: string, args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<Ran> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { ...options, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, out: stdout, err: stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: e.stdout ?? '', err: e.stderr ?? e.message };
  }
}

/** This process's environment without what an enclosing `npm test` put there (npm_config_*, npm_lifecycle_*…). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.toLowerCase().startsWith('npm_')) env[key] = value;
  // `#!/usr/bin/env node` in the installed bin must find the node running this test.
  env.PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  return env;
}

/** The checkout's files as git sees them (tracked, and new ones not ignored), copied without dist/ or node_modules. */
async function cleanCopy(to: string): Promise<void> {
  const { stdout } = await execFileAsync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of stdout.split('\0')) {
    if (file === '' || /^(node_modules|dist|\.venv-mcp)(\/|$)/.test(file)) continue;
    const info = await stat(join(ROOT, file)).catch(() => undefined); // deleted but still tracked
    if (info?.isFile() !== true) continue;
    await mkdir(dirname(join(to, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(to, file));
  }
  await symlink(await realpath(join(ROOT, 'node_modules')), join(to, 'node_modules'), 'dir');
}

const LIFECYCLE = /> mcpgate@\S+ (preinstall|install|postinstall|prepare|prepack)\b/;

void describe('the package: npm pack, npm install -g, npx', { timeout: 420_000 }, () => {
  let work: TempDir;
  let packed: Packed;
  let tarball = '';
  let registry: LocalRegistry | undefined;
  let env: NodeJS.ProcessEnv = {};
  let config = '';
  let version = '';
  const gateways: GatewayProcess[] = [];

  before(
    async () => {
      work = await tempDir('mcpgate-package-');
      version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
      const checkout = work.file('checkout');
      await cleanCopy(checkout);
      const base = cleanEnv();
      const pack = await run('npm', ['pack', '--json', '--pack-destination', work.path], { cwd: checkout, env: base });
      assert.equal(pack.code, 0, `npm pack failed:\n${pack.err}\n${pack.out}`);
      packed = (JSON.parse(pack.out) as Packed[])[0]!;
      tarball = work.file(packed.filename);
      // The npm cache of this machine holds the dependencies' tarballs (npm ci put them there).
      const cacheEnv = { ...base, ...(process.env.npm_config_cache !== undefined && { npm_config_cache: process.env.npm_config_cache }) };
      registry = await startRuntimeRegistry(ROOT, work.file('registry'), cacheEnv);
      await writeFile(work.file('npmrc'), '');
      env = {
        ...base,
        npm_config_registry: registry.url,
        npm_config_cache: work.file('npm-cache'),
        npm_config_userconfig: work.file('npmrc'),
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
      };
      await mkdir(work.file('app'));
      config = await writeConfig({ ...work, file: (name) => join(work.path, 'app', name) }, { sink: fixtureServer('kitchen-sink-server') });
    },
    { timeout: 300_000 },
  );

  /**
   * Serves the config through `command`, calls the server through it, SIGTERMs it: mcpgate shuts down
   * cleanly and no server is left. `npmExec`: npm exec forwards the signal to mcpgate and, once mcpgate
   * has exited, may end by the same signal itself rather than with mcpgate's code.
   */
  async function serveAndStop(command: readonly [string, ...string[]], npmExec = false): Promise<void> {
    const gw = await startGateway({ config, bin: command, env });
    gateways.push(gw);
    const tools = await gw.client.listTools();
    assert.ok(
      tools.tools.some((t) => t.name === 'sink__echo'),
      tools.tools.map((t) => t.name).join(', '),
    );
    const serverPid = Number(textOf(await gw.client.callTool({ name: 'sink__pid', arguments: {} })));
    assert.ok(serverPid > 0);
    gw.child.kill('SIGTERM');
    const exit = await gw.exited;
    if (!(npmExec && exit.signal === 'SIGTERM')) assert.deepEqual(exit, { code: 0, signal: null });
    // Under npm exec, mcpgate's last lines may come after npm itself has exited (they share the pipe).
    await gw.waitForLog((l) => l.msg === 'shut down cleanly');
    assert.deepEqual(await survivors([serverPid], 5000), [], 'the server is gone after mcpgate exits');
  }

  after(async () => {
    for (const gw of gateways) if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await registry?.close();
    await work?.remove();
  });

  void it('npm pack on a clean checkout builds first and packs only what the CLI runs', { timeout: 30_000 }, async (t) => {
    t.diagnostic(`${packed.filename}: ${packed.size} bytes, ${packed.unpackedSize} unpacked, ${packed.files.length} files`);
    const sources = (await readdir(join(ROOT, 'src'), { recursive: true }))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `dist/src/${f.replace(/\.ts$/, '.js')}`);
    const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    const expected = ['LICENSE', 'README.md', 'package.json', ...docs, ...sources].sort();
    assert.deepEqual(packed.files.map((f) => f.path).sort(), expected);
    // The README states the size a user downloads; it stays within a quarter of the truth.
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const stated = /The package is about (\d+) kB \(([\d.]+) MB unpacked\)/.exec(readme);
    assert.ok(stated !== null, 'README.md states the package size as "The package is about N kB (M MB unpacked)"');
    const near = (actual: number, said: number): boolean => Math.abs(actual - said) / said < 0.25;
    assert.ok(near(packed.size, Number(stated[1]) * 1000), `packed ${packed.size} bytes; README says ${stated[1]} kB`);
    assert.ok(near(packed.unpackedSize, Number(stated[2]) * 1e6), `unpacked ${packed.unpackedSize} bytes; README says ${stated[2]} MB`);
  });

  void it(
    'npm install -g of the tarball gives a mcpgate that runs --version, check and serve, and stops cleanly',
    { timeout: 120_000 },
    async () => {
      const prefix = work.file('prefix');
      const install = await run('npm', ['install', '--global', '--prefix', prefix, '--foreground-scripts', tarball], { env });
      assert.equal(install.code, 0, `npm install -g failed:\n${install.err}\n${install.out}`);
      // No lifecycle script of mcpgate ran (prepare needs the checkout's scripts/, which the package lacks).
      assert.doesNotMatch(install.out + install.err, LIFECYCLE);
      assert.deepEqual(registry!.missing, [], 'npm asked the registry only for runtime dependencies');
      const runtime = new Set((await runtimePackages(ROOT)).map((p) => p.name));
      const installed = join(prefix, 'lib', 'node_modules', 'mcpgate');
      const modules = join(installed, 'node_modules');
      for (const entry of await readdir(modules)) {
        if (entry.startsWith('.')) continue;
        const names = entry.startsWith('@') ? (await readdir(join(modules, entry))).map((n) => `${entry}/${n}`) : [entry];
        for (const name of names) assert.ok(runtime.has(name), `installed ${name}, which is no runtime dependency`);
      }
      const bin = join(prefix, 'bin', 'mcpgate');

      assert.deepEqual(await run(bin, ['--version'], { env }), { code: 0, out: `${version}\n`, err: '' });
      const check = await run(bin, ['check', '--config', config], { env });
      assert.equal(check.code, 0, check.err);
      assert.match(check.out, /: OK, 1 server\(s\): sink\n/);

      await serveAndStop([bin]);
    },
  );

  void it('npx --package of the tarball runs the same mcpgate', { timeout: 120_000 }, async () => {
    const npx = ['--yes', '--package', tarball, '--', 'mcpgate'];
    const versionRun = await run('npx', [...npx, '--version'], { env });
    assert.equal(versionRun.code, 0, versionRun.err);
    assert.equal(versionRun.out, `${version}\n`);
    assert.doesNotMatch(versionRun.err, LIFECYCLE);
    const check = await run('npx', [...npx, 'check', '--config', config], { env });
    assert.equal(check.code, 0, check.err);
    assert.match(check.out, /: OK, 1 server\(s\): sink\n/);
    // serve under npx: the agent talks to mcpgate through npm exec, whose SIGTERM reaches mcpgate.
    await serveAndStop(['npx', ...npx], true);
  });
});
