// `mcpgate import` against sample configurations in each client's own format (test/fixtures/clients/,
// written after the clients' public docs), placed where each client keeps them under a temporary
// HOME and project: what is imported, how variables and secrets are carried, clashes, --force,
// --dry-run, --from, the lines that point each client at mcpgate, and that `mcpgate check` loads
// the result. Also the help and the "did you mean" of every command.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/main.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { ROOT } from '../helpers/gateway.js';

const SAMPLES = path.join(ROOT, 'test', 'fixtures', 'clients');

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  let out = '';
  let err = '';
  const code = await main(argv, env, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

type Config = { mcpServers: Record<string, Record<string, unknown>> };

void describe('mcpgate import', { timeout: 30_000 }, () => {
  let dir = '';
  let home = '';
  let project = '';
  let env: NodeJS.ProcessEnv = {};

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-import-'));
    home = path.join(dir, 'home');
    project = path.join(dir, 'project');
    await mkdir(path.join(home, '.config', 'Claude'), { recursive: true });
    await mkdir(path.join(home, '.cursor'), { recursive: true });
    await mkdir(path.join(project, '.vscode'), { recursive: true });
    await cp(path.join(SAMPLES, 'claude_desktop_config.json'), path.join(home, '.config', 'Claude', 'claude_desktop_config.json'));
    const claude = (await readFile(path.join(SAMPLES, 'claude.json'), 'utf8')).replace('"PROJECT"', JSON.stringify(project));
    await writeFile(path.join(home, '.claude.json'), claude);
    await cp(path.join(SAMPLES, 'cursor-mcp.json'), path.join(home, '.cursor', 'mcp.json'));
    await cp(path.join(SAMPLES, 'vscode-mcp.json'), path.join(project, '.vscode', 'mcp.json'));
    env = { HOME: home, PATH: process.env.PATH };
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it("imports every client's servers into a new .mcp.json that mcpgate check loads", async () => {
    const out = path.join(dir, 'a', '.mcp.json');
    await mkdir(path.dirname(out));
    const r = await run(['import', '--project', project, '--config', out], env);
    assert.equal(r.code, 0, r.err);
    const config = JSON.parse(await readFile(out, 'utf8')) as Config;
    assert.deepEqual(Object.keys(config.mcpServers).sort(), [
      'db',
      'devserver',
      'files',
      'github',
      'linear',
      'notes',
      'perplexity',
      'remote',
      'sentry',
    ]);
    // Claude Desktop: the literal token moved to .mcp.env (0600), referred to by name.
    assert.deepEqual(config.mcpServers.github!.env, { GITHUB_PERSONAL_ACCESS_TOKEN: '${GITHUB_PERSONAL_ACCESS_TOKEN}' });
    const secrets = path.join(dir, 'a', '.mcp.env');
    assert.equal((await stat(secrets)).mode & 0o777, 0o600);
    const envText = await readFile(secrets, 'utf8');
    assert.match(envText, /^GITHUB_PERSONAL_ACCESS_TOKEN='ghp_desktopLiteralSecret0123456789'$/m);
    assert.match(envText, /^LINEAR_TOKEN='lin_api_cursorLiteral42'$/m);
    // Cursor: "Bearer <literal>" keeps its scheme, the token moves; ${userHome}, ${workspaceFolder}, ${env:X} translated.
    assert.deepEqual(config.mcpServers.linear!.headers, { Authorization: 'Bearer ${LINEAR_TOKEN}' });
    assert.deepEqual(config.mcpServers.notes!.args, [`${project}/tools/notes-server.js`]);
    assert.deepEqual(config.mcpServers.notes!.env, { NOTES_DIR: `${home}/notes`, API_KEY: '${NOTES_API_KEY}' });
    assert.equal(config.mcpServers.notes!.envFile, '${workspaceFolder}/.env', 'an unknown field is kept as written');
    // Claude Code: ${VAR} and ${VAR:-default} are mcpgate's own; user and project (local) scope both read.
    assert.deepEqual(config.mcpServers.sentry!.headers, { Authorization: 'Bearer ${SENTRY_TOKEN}' });
    assert.equal((config.mcpServers.db!.args as string[])[3], '${DATABASE_URL:-postgres://localhost/dev}');
    // VS Code: ${input:…} becomes a variable to set, ${env:…} a reference, `dev` is kept.
    assert.deepEqual(config.mcpServers.perplexity!.env, { PERPLEXITY_API_KEY: '${PERPLEXITY_KEY}' });
    assert.equal(config.mcpServers.remote!.url, '${REMOTE_BASE}/mcp');
    assert.deepEqual(config.mcpServers.devserver!.dev, { watch: 'build/**/*.js' });
    // Each stdio server gets a proposed sandbox, shown before the file is written: no network but
    // its launcher's registry, or all of it for a server known to work over the network.
    assert.deepEqual(config.mcpServers.files!.sandbox, { network: ['registry.npmjs.org:443'] });
    assert.deepEqual(config.mcpServers.github!.sandbox, { network: 'full' });
    assert.deepEqual(config.mcpServers.notes!.sandbox, { network: 'none' });
    assert.equal(config.mcpServers.remote!.sandbox, undefined, 'a remote server runs nowhere here');
    assert.match(r.out, /files: sandboxed: network only registry\.npmjs\.org:443/);

    // Nothing secret on the terminal or in the config; everything not carried is reported.
    assert.doesNotMatch(r.out + r.err + JSON.stringify(config), /ghp_desktop|lin_api_cursor/);
    assert.match(r.err, /"picker" command: \$\{command:pickServer\} has no mcpgate equivalent: not imported/);
    assert.match(r.err, /unknown key "envFile" in server "notes" is ignored \(kept as written\)/);
    assert.match(r.err, /unknown key "dev" in server "devserver" is ignored \(kept as written\)/);
    assert.match(r.err, /2 literal secret\(s\) moved to .*\.mcp\.env \(mode 0600\): GITHUB_PERSONAL_ACCESS_TOKEN, LINEAR_TOKEN/);
    assert.match(r.err, /set PERPLEXITY_KEY in the environment/);
    // The line that points each client at mcpgate.
    const serve = `serve --config ${out} --env-file ${secrets}`;
    assert.ok(r.out.includes(`claude mcp add --scope user mcpgate -- mcpgate ${serve}\n`), r.out);
    assert.ok(r.out.includes(JSON.stringify({ mcpServers: { mcpgate: { command: 'mcpgate', args: serve.split(' ') } } })), r.out);
    assert.ok(
      r.out.includes(`code --add-mcp '${JSON.stringify({ name: 'mcpgate', type: 'stdio', command: 'mcpgate', args: serve.split(' ') })}'`),
      r.out,
    );
    assert.match(r.out, /Wrote .*: 9 added \(/);

    // The result is a config mcpgate loads, its secrets from the env file, the rest from the environment.
    const vars = { SENTRY_TOKEN: 't', NOTES_API_KEY: 'k', PERPLEXITY_KEY: 'p', REMOTE_BASE: 'https://remote.test' };
    const check = await run(['check', '--config', out, '--env-file', secrets], { ...env, ...vars });
    assert.equal(check.code, 0, check.err);
    assert.match(check.out, /OK, 9 server\(s\)/);
    const missing = await run(['check', '--config', out], { ...env, ...vars });
    assert.equal(missing.code, 2, 'without the env file the moved secrets are unset');
    assert.match(missing.err, /GITHUB_PERSONAL_ACCESS_TOKEN is not set/);
  });

  void it('never replaces an entry the config has without --force, and says so', async () => {
    const out = path.join(dir, 'b', '.mcp.json');
    await mkdir(path.dirname(out));
    await writeFile(out, JSON.stringify({ limits: { maxTools: 50 }, mcpServers: { files: { command: 'mine' }, own: { command: 'own' } } }));
    const r = await run(['import', '--client', 'claude-desktop', '--config', out], env);
    assert.equal(r.code, 0, r.err);
    let config = JSON.parse(await readFile(out, 'utf8')) as Config & { limits: unknown };
    assert.deepEqual(config.mcpServers.files, { command: 'mine' });
    assert.deepEqual(config.mcpServers.own, { command: 'own' });
    assert.deepEqual(config.limits, { maxTools: 50 }, 'the rest of the file is kept');
    assert.ok(config.mcpServers.github !== undefined);
    assert.match(r.err, /"files" is already in .* with another definition: kept; --force replaces it/);
    // Importing again adds nothing and moves no secret twice.
    const again = await run(['import', '--client', 'claude-desktop', '--config', out], env);
    assert.match(again.out, /0 added, 0 replaced, 1 already there/);
    assert.doesNotMatch(again.err, /moved/);
    const forced = await run(['import', '--client', 'claude-desktop', '--config', out, '--force'], env);
    assert.equal(forced.code, 0, forced.err);
    config = JSON.parse(await readFile(out, 'utf8')) as Config & { limits: unknown };
    assert.equal(config.mcpServers.files!.command, 'npx');
    assert.match(forced.out, /1 replaced \(files\)/);
  });

  void it("--from reads one file in any client's format; --dry-run writes nothing", async () => {
    const out = path.join(dir, 'c', '.mcp.json');
    await mkdir(path.dirname(out));
    const r = await run(
      ['import', '--from', path.join(SAMPLES, 'vscode-mcp.json'), '--project', project, '--config', out, '--dry-run'],
      env,
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /Would write .*\.mcp\.json:\n\{\n {2}"mcpServers": \{\n {4}"perplexity"/);
    await assert.rejects(stat(out), { code: 'ENOENT' });
    const none = await run(['import', '--client', 'cursor', '--project', project, '--config', out], { HOME: path.join(dir, 'nobody') });
    assert.equal(none.code, 2);
    assert.match(none.err, /no MCP servers found in:\n.*\.cursor\/mcp\.json/);
    assert.equal((await run(['import', '--client', 'cursr'], env)).code, 2);
  });
});

void describe('mcpgate --help and mistyped words', { timeout: 10_000 }, () => {
  void it("every command's --help lists each of its options", async () => {
    for (const [name, spec] of Object.entries(COMMANDS)) {
      for (const argv of [
        [name, '--help'],
        ['help', name],
      ]) {
        const r = await run(argv, {});
        assert.equal(r.code, 0, `${argv.join(' ')}: ${r.err}`);
        assert.ok(r.out.startsWith(`Usage: mcpgate ${name}`), r.out);
        for (const option of Object.keys(spec.options))
          assert.match(r.out, new RegExp(`^ {2}--${option}\\b`, 'm'), `${name} --help lists --${option}`);
      }
    }
  });

  void it('a mistyped command or option says what was not understood and what is close', async () => {
    const hint = "Run 'mcpgate --help' for usage.\n";
    assert.deepEqual(await run(['serv'], {}), {
      code: 2,
      out: '',
      err: `mcpgate: unknown command "serv" (did you mean "serve"?)\n${hint}`,
    });
    assert.deepEqual(await run(['improt'], {}), {
      code: 2,
      out: '',
      err: `mcpgate: unknown command "improt" (did you mean "import"?)\n${hint}`,
    });
    assert.deepEqual(await run(['check', '--confg', 'x'], {}), {
      code: 2,
      out: '',
      err: `mcpgate: Unknown option '--confg' for check; did you mean --config?\n${hint}`,
    });
    assert.deepEqual(await run(['check', '--http', '1'], {}), {
      code: 2,
      out: '',
      err: `mcpgate: Unknown option '--http' for check (it is an option of serve)\n${hint}`,
    });
    assert.deepEqual(await run(['status', '--workrs', '2'], {}), {
      code: 2,
      out: '',
      err: `mcpgate: Unknown option '--workrs' for status; did you mean --workers (an option of serve)?\n${hint}`,
    });
    assert.deepEqual(await run(['help', 'chek'], {}), {
      code: 2,
      out: '',
      err: `mcpgate: unknown command "chek" (did you mean "check"?)\n${hint}`,
    });
  });
});
