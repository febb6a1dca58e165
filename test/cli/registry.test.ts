// `mcpgate add`, `search-registry` and `outdated`, run as the built CLI against a registry on
// 127.0.0.1 (helpers/mcp-registry.ts) that serves the real server.json documents of
// test/fixtures/registry/ (provenance and licence in its README). npm entries are started and list
// their tools: the reference servers are installed in node_modules, which npx uses before any
// registry (the HOME's .npmrc points npm at a closed port, so nothing leaves 127.0.0.1). Every bad
// input is refused with a clear message and leaves the config and the env file as they were.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { CLI, ROOT, fixture } from '../helpers/gateway.js';
import { startRemote, type Remote } from '../helpers/remote.js';
import { startMcpRegistry, type LocalMcpRegistry } from '../helpers/mcp-registry.js';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'registry');
const INSTALLED = (JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies;
const MEMORY_VERSION = INSTALLED['@modelcontextprotocol/server-memory']!;
const FILESYSTEM_VERSION = INSTALLED['@modelcontextprotocol/server-filesystem']!;
const TOKEN = 'Bearer registry-test-token';

type Doc = Record<string, unknown> & { packages?: Record<string, unknown>[]; remotes?: Record<string, unknown>[] };

async function doc(name: string): Promise<Doc> {
  return JSON.parse(await readFile(path.join(FIXTURES, name), 'utf8')) as Doc;
}

interface Run {
  code: number | null;
  out: string;
  err: string;
}

void describe('mcpgate add / search-registry / outdated', { timeout: 300_000 }, () => {
  let dir = '';
  let project = '';
  let config = '';
  let secrets = '';
  let env: NodeJS.ProcessEnv = {};
  let registry: LocalMcpRegistry;
  let empty: LocalMcpRegistry;
  let remote: Remote;
  let locked: Remote;
  let memoryDoc: Doc;

  /** Runs the built CLI in the project directory. */
  async function cli(args: string[], timeoutMs = 150_000): Promise<Run> {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    return { code, out, err };
  }

  const readConfig = async (): Promise<{ mcpServers: Record<string, Record<string, unknown>> } & Record<string, unknown>> =>
    JSON.parse(await readFile(config, 'utf8')) as never;
  const snapshot = async (): Promise<[string, string | undefined]> => [
    await readFile(config, 'utf8'),
    await readFile(secrets, 'utf8').catch(() => undefined),
  ];
  /** Runs `args` and checks that it failed with `code`, said `pattern`, and changed no file. */
  async function refused(args: string[], code: number, pattern: RegExp): Promise<Run> {
    const beforeFiles = await snapshot();
    const result = await cli(args);
    assert.equal(result.code, code, `${args.join(' ')}\n${result.out}\n${result.err}`);
    assert.match(result.err, pattern);
    assert.deepEqual(await snapshot(), beforeFiles, 'nothing is written');
    return result;
  }

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-registry-'));
    project = path.join(dir, 'project');
    const home = path.join(dir, 'home');
    await mkdir(project);
    await mkdir(home);
    // npx runs an exact version installed in the project's node_modules without asking a registry.
    await symlink(path.join(ROOT, 'node_modules'), path.join(project, 'node_modules'));
    await writeFile(path.join(home, '.npmrc'), `registry=http://127.0.0.1:9/\ncache=${path.join(dir, 'npm-cache')}\n`);
    config = path.join(project, '.mcp.json');
    secrets = path.join(project, '.mcp.env');
    env = { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8' };

    remote = await startRemote(process.execPath, [fixture('remote-server'), '--require-header', `Authorization=${TOKEN}`]);
    locked = await startRemote(process.execPath, [fixture('remote-server'), '--require-header', 'Authorization=Bearer elsewhere']);
    const remoteHost = new URL(remote.url).host;

    // Derived in code from the real documents, so that what they name runs here, offline:
    // brave-search's shape naming the memory reference server at its installed version,
    memoryDoc = { ...(await doc('brave-search.json')), name: 'io.github.modelcontextprotocol/memory', title: 'Memory' };
    memoryDoc.description = 'Knowledge graph memory for agents';
    memoryDoc.version = MEMORY_VERSION;
    memoryDoc.packages = [
      { registryType: 'npm', identifier: '@modelcontextprotocol/server-memory', version: MEMORY_VERSION, transport: { type: 'stdio' } },
    ];
    // filesystem's npm package at its installed version,
    const fs = await doc('filesystem.json');
    const local = {
      ...fs,
      name: 'io.github.modelcontextprotocol/filesystem-local',
      version: FILESYSTEM_VERSION,
      packages: [{ ...fs.packages![0], version: FILESYSTEM_VERSION }, fs.packages![1]],
    };
    // the remote example's endpoint and header on a local remote server,
    const weather = await doc('remote-weather.json');
    const localWeather = {
      ...weather,
      name: 'io.github.user/remote-weather-local',
      remotes: [{ ...weather.remotes![0], url: 'http://{host}/mcp' }],
    };
    // and mcp-fs's header-less endpoint on one that answers 401 (it wants a login).
    const mcpFs = await doc('mcp-fs.json');
    const login = { ...mcpFs, name: 'io.github.example/needs-login', remotes: [{ type: 'streamable-http', url: locked.url }] };
    // A lookalike of memory's namespace (a digit 1 for the l), published after it.
    const lookalike = { ...memoryDoc, name: 'io.github.modelcontextprotoco1/memory' };
    registry = await startMcpRegistry([
      { server: memoryDoc },
      { server: local },
      { server: await doc('brave-search.json') },
      { server: fs },
      { server: await doc('weather-mcp.json') },
      { server: await doc('database-manager.json') },
      { server: mcpFs },
      { server: weather },
      { server: localWeather },
      { server: login },
      { server: lookalike },
      { server: await doc('invalid/package-version-latest.json') },
    ]);
    empty = await startMcpRegistry([]);
    // The user's own config, with an entry of their own that must survive every add.
    await writeFile(
      config,
      `${JSON.stringify({ mcpServers: { mine: { command: 'node', args: ['mine.js'], timeout: 5000 } } }, null, 2)}\n`,
    );
    void remoteHost;
  });
  after(async () => {
    await Promise.all([registry?.close(), empty?.close(), remote?.stop(), locked?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  const reg = (): string[] => ['--registry', registry.url];

  void it('search-registry lists matching servers across pages with version and package types', async () => {
    const result = await cli(['search-registry', 'modelcontextprotocol', ...reg()]);
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /io\.github\.modelcontextprotocol\/memory {2}2026\.8\.31 {2}\(npm\)/);
    assert.match(result.out, /io\.github\.modelcontextprotocol\/filesystem {2}1\.0\.2 {2}\(npm, oci\)/);
    assert.match(result.out, /Knowledge graph memory for agents/);
    // The registry pages by two: more than two results means the cursor was followed.
    assert.ok(
      registry.requests.some((r) => r.includes('cursor=')),
      'the cursor is followed',
    );
    const remotes = await cli(['search-registry', 'mcp-fs', ...reg(), '--json']);
    assert.deepEqual(
      (JSON.parse(remotes.out) as { name: string; types: string[] }[]).map((r) => [r.name, r.types]),
      [['io.modelcontextprotocol.anonymous/mcp-fs', ['remote:streamable-http']]],
    );
  });

  void it('add --dry-run shows what it would run and the entry, and writes nothing', async () => {
    const beforeFiles = await snapshot();
    const result = await cli(['add', 'io.github.modelcontextprotocol/memory', ...reg(), '--dry-run']);
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /publisher: io\.github\.modelcontextprotocol/);
    assert.match(result.out, /active, latest/);
    assert.match(result.out, new RegExp(`runs: npx -y @modelcontextprotocol/server-memory@${MEMORY_VERSION.replace(/\./g, '\\.')}`));
    assert.match(result.out, /npx is on PATH/);
    assert.match(result.out, /Would write "memory"/);
    assert.deepEqual(await snapshot(), beforeFiles);
  });

  void it('add starts an npm server, lists its tools, and writes an entry pinned to the exact version', async () => {
    const result = await cli(['add', 'io.github.modelcontextprotocol/memory', ...reg(), '--yes']);
    assert.equal(result.code, 0, `${result.out}\n${result.err}`);
    assert.match(result.out, /lists \d+ tool\(s\): .*create_entities/);
    const written = await readConfig();
    assert.deepEqual(written.mcpServers.mine, { command: 'node', args: ['mine.js'], timeout: 5000 }, "the user's entry is kept");
    assert.deepEqual(written.mcpServers.memory, {
      command: 'npx',
      args: ['-y', `@modelcontextprotocol/server-memory@${MEMORY_VERSION}`],
      registry: { name: 'io.github.modelcontextprotocol/memory', version: MEMORY_VERSION, url: registry.url },
    });
    // The recorded origin is a documented field: the config loads without warnings.
    const check = await cli(['check', '--config', config]);
    assert.equal(check.code, 0, check.err);
    assert.doesNotMatch(check.err, /unknown key/);
  });

  void it('add passes a required argument to an npm server, which starts and lists its tools', async () => {
    const shared = path.join(dir, 'shared');
    await mkdir(shared);
    const result = await cli([
      'add',
      'io.github.modelcontextprotocol/filesystem-local',
      ...reg(),
      '--yes',
      '--env',
      `TARGET_DIR=${shared}`,
    ]);
    assert.equal(result.code, 0, `${result.out}\n${result.err}`);
    assert.match(result.out, /also offered: oci docker\.io\/mcp\/filesystem:1\.0\.2 — a container image: only with --allow-oci/);
    assert.match(result.out, /lists \d+ tool\(s\): .*read_/);
    const entry = (await readConfig()).mcpServers['filesystem-local']!;
    assert.deepEqual(entry.args, ['-y', `@modelcontextprotocol/server-filesystem@${FILESYSTEM_VERSION}`, shared]);
  });

  void it('add writes a PyPI entry (uvx name==version) with its secret in the env file, mode 0600', async () => {
    const result = await cli([
      'add',
      'io.github.example/weather-mcp',
      ...reg(),
      '--package-type',
      'pypi',
      '--no-check',
      '--yes',
      '--env',
      'WEATHER_API_KEY=wk-secret-value',
      '--env',
      'WEATHER_UNITS=fahrenheit',
    ]);
    assert.equal(result.code, 0, `${result.out}\n${result.err}`);
    const entry = (await readConfig()).mcpServers['weather-mcp']!;
    assert.equal(entry.command, 'uvx');
    assert.deepEqual(entry.args, ['weather-mcp-server==0.5.0']);
    assert.deepEqual(entry.env, { WEATHER_API_KEY: '${WEATHER_API_KEY}', WEATHER_UNITS: 'fahrenheit' });
    assert.doesNotMatch(await readFile(config, 'utf8'), /wk-secret-value/);
    assert.match(await readFile(secrets, 'utf8'), /^WEATHER_API_KEY='wk-secret-value'$/m);
    assert.equal((await stat(secrets)).mode & 0o777, 0o600);
    assert.doesNotMatch(result.out + result.err, /wk-secret-value/, 'the secret is never printed');
  });

  void it('add writes an OCI entry only with --allow-oci: docker run with the image and its templated arguments', async () => {
    await refused(['add', 'io.github.example/database-manager', ...reg(), '--yes', '--no-check'], 2, /container image[\s\S]*--allow-oci/);
    const result = await cli([
      'add',
      'io.github.modelcontextprotocol/filesystem',
      ...reg(),
      '--package-type',
      'oci',
      '--allow-oci',
      '--no-check',
      '--yes',
      '--env',
      'SOURCE_PATH=/srv/data',
    ]);
    assert.equal(result.code, 0, `${result.out}\n${result.err}`);
    const entry = (await readConfig()).mcpServers.filesystem!;
    assert.ok(entry.command === 'docker' || entry.command === 'podman');
    assert.deepEqual(entry.args, [
      'run',
      '-i',
      '--rm',
      '--mount',
      'type=bind,src=/srv/data,dst=/project',
      'docker.io/mcp/filesystem:1.0.2',
      '/project',
    ]);
    // A value outside the declared choices is refused.
    await refused(
      ['add', 'io.github.example/database-manager', ...reg(), '--allow-oci', '--no-check', '--yes', '--env', 'DB_TYPE=oracle'],
      2,
      /DB_TYPE must be one of postgres, mysql, mongodb, redis/,
    );
  });

  void it('add writes a remote entry with its declared header as a ${VAR}, and checks it', async () => {
    const official = await cli(['add', 'io.modelcontextprotocol.anonymous/mcp-fs', ...reg(), '--no-check', '--yes']);
    assert.equal(official.code, 0, official.err);
    assert.deepEqual((await readConfig()).mcpServers['mcp-fs'], {
      type: 'http',
      url: 'https://mcp-fs.anonymous.modelcontextprotocol.io/http',
      registry: { name: 'io.modelcontextprotocol.anonymous/mcp-fs', version: '2.0.0', url: registry.url },
    });
    const result = await cli([
      'add',
      'io.github.user/remote-weather-local',
      ...reg(),
      '--yes',
      '--env',
      `HOST=${new URL(remote.url).host}`,
      '--env',
      `AUTHORIZATION=${TOKEN}`,
    ]);
    assert.equal(result.code, 0, `${result.out}\n${result.err}`);
    assert.match(result.out, /lists \d+ tool\(s\): .*echo/);
    const entry = (await readConfig()).mcpServers['remote-weather-local']!;
    assert.equal(entry.url, `http://${new URL(remote.url).host}/mcp`);
    assert.deepEqual(entry.headers, { Authorization: '${AUTHORIZATION}' });
    assert.match(await readFile(secrets, 'utf8'), /^AUTHORIZATION='Bearer registry-test-token'$/m);
  });

  void it('add sets up a remote that answers 401 for mcpgate login', async () => {
    const result = await cli(['add', 'io.github.example/needs-login', ...reg(), '--yes']);
    assert.equal(result.code, 0, `${result.out}\n${result.err}`);
    assert.match(result.out, /mcpgate login needs-login/);
    assert.equal((await readConfig()).mcpServers['needs-login']!.auth, 'oauth');
  });

  void it('bad input is refused with a clear error and writes nothing', async () => {
    await refused(['add', 'io.github.nobody/nothing', ...reg(), '--yes'], 2, /no server io\.github\.nobody\/nothing/);
    await refused(
      ['add', 'io.github.modelcontextprotocol/memory@9.9.9', ...reg(), '--yes'],
      2,
      new RegExp(`has no version 9\\.9\\.9; the registry has: ${MEMORY_VERSION}`),
    );
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as { port: number }).port;
    closed.close();
    await once(closed, 'close');
    await refused(
      ['add', 'io.github.modelcontextprotocol/memory', '--registry', `http://127.0.0.1:${port}`, '--yes'],
      1,
      /cannot be reached/,
    );
    registry.garbage = true;
    try {
      await refused(['add', 'io.github.modelcontextprotocol/memory', ...reg(), '--yes'], 1, /not JSON/);
    } finally {
      registry.garbage = false;
    }
    await refused(
      ['add', 'io.github.user/bad-version', ...reg(), '--yes'],
      1,
      /fails the server\.json schema: server\.packages\.0\.version: a package version must be exact/,
    );
    await refused(['add', 'io.modelcontextprotocol.anonymous/brave-search', ...reg(), '--yes'], 2, /needs values for:\n {2}BRAVE_API_KEY/);
    await refused(['add', 'io.modelcontextprotocol.anonymous/brave-search', ...reg(), '--env', 'BRAVE_API_KEY=x'], 2, /confirm with --yes/);
    // A name that collides with an entry from elsewhere.
    await refused(
      ['add', 'io.modelcontextprotocol.anonymous/brave-search', ...reg(), '--name', 'mine', '--env', 'BRAVE_API_KEY=x', '--yes'],
      2,
      /"mine" is already in .*--force/,
    );
    // Lookalikes: a homoglyph (Cyrillic а) and another publisher's namespace one glyph away.
    await refused(['add', 'io.github.modelcontextprotocol/mem\u043ery', ...reg(), '--yes'], 2, /"о" \(U\+043E\)/);
    await refused(
      ['add', 'io.github.modelcontextprotoco1/memory', ...reg(), '--yes', '--name', 'other'],
      2,
      /looks like "io\.github\.modelcontextprotocol\/memory"/,
    );
    const allowed = await cli([
      'add',
      'io.github.modelcontextprotoco1/memory',
      ...reg(),
      '--dry-run',
      '--name',
      'other',
      '--allow-lookalike',
    ]);
    assert.equal(allowed.code, 0, allowed.err);
  });

  void it('--force replaces an entry from elsewhere; an answers file gives the values', async () => {
    const answers = path.join(dir, 'answers.env');
    await writeFile(answers, '# for brave-search\nBRAVE_API_KEY=from-answers-file\n');
    const result = await cli([
      'add',
      'io.modelcontextprotocol.anonymous/brave-search',
      ...reg(),
      '--name',
      'mine',
      '--answers',
      answers,
      '--yes',
      '--no-check',
      '--force',
    ]);
    assert.equal(result.code, 0, result.err);
    const entry = (await readConfig()).mcpServers.mine!;
    assert.equal(entry.command, 'npx');
    assert.deepEqual(entry.env, { BRAVE_API_KEY: '${BRAVE_API_KEY}' });
    assert.match(await readFile(secrets, 'utf8'), /^BRAVE_API_KEY='from-answers-file'$/m);
  });

  void it('--oauth sets a remote entry up for mcpgate login without asking it', async () => {
    const result = await cli([
      'add',
      'io.modelcontextprotocol.anonymous/mcp-fs',
      ...reg(),
      '--name',
      'fs-login',
      '--oauth',
      '--no-check',
      '--yes',
    ]);
    assert.equal(result.code, 0, result.err);
    assert.equal((await readConfig()).mcpServers['fs-login']!.auth, 'oauth');
  });

  void it('the config\'s "registries" are asked in order', async () => {
    const written = await readConfig();
    await writeFile(config, `${JSON.stringify({ ...written, registries: [empty.url, registry.url] }, null, 2)}\n`);
    const result = await cli(['add', 'io.github.modelcontextprotocol/memory', '--dry-run', '--name', 'memory2']);
    assert.equal(result.code, 0, result.err);
    assert.ok(
      empty.requests.some((r) => r.includes('/versions/latest')),
      'the first registry was asked',
    );
    assert.match(result.out, new RegExp(`registry: ${registry.url.replace(/\./g, '\\.')}`));
    await writeFile(config, `${JSON.stringify(written, null, 2)}\n`);
  });

  void it('outdated lists entries with a newer registry version; add NAME@NEW updates the one entry', async () => {
    const none = await cli(['outdated', '--config', config]);
    assert.equal(none.code, 0, none.err);
    assert.match(none.out, /are up to date/);
    const config0 = await readConfig();
    config0.mcpServers.memory!.timeout = 9000; // the user's own setting, kept across the update
    await writeFile(config, `${JSON.stringify(config0, null, 2)}\n`);
    registry.publish({ server: { ...memoryDoc, version: '2099.1.0' } });
    const listed = await cli(['outdated', '--config', config]);
    assert.equal(listed.code, 0, listed.err);
    assert.match(
      listed.out,
      new RegExp(`memory {2}io\\.github\\.modelcontextprotocol/memory {2}${MEMORY_VERSION.replace(/\./g, '\\.')} -> 2099\\.1\\.0`),
    );
    assert.match(listed.out, /mcpgate add io\.github\.modelcontextprotocol\/memory@2099\.1\.0/);
    const updated = await cli(['add', 'io.github.modelcontextprotocol/memory@2099.1.0', ...reg(), '--yes', '--no-check']);
    assert.equal(updated.code, 0, updated.err);
    assert.match(updated.out, /Updated "memory"/);
    const entry = (await readConfig()).mcpServers.memory!;
    assert.equal(entry.timeout, 9000);
    assert.deepEqual(entry.registry, { name: 'io.github.modelcontextprotocol/memory', version: '2099.1.0', url: registry.url });
    assert.match((await cli(['outdated', '--config', config])).out, /are up to date/);
  });
});
