// What `mcpgate import` must not do with a person's private servers and secrets, as a security audit
// planted them: ten literal secrets in a Claude Code project file (a connection string in args,
// `--token X`, `--api-key=X`, `?api_key=` in a URL, a URL's password, a Cookie header, OPENAI_KEY,
// GITHUB_PAT, DATABASE_URL, SENTRY_DSN) all move to the env file as ${VAR}, none stays literal in the
// config; both files are created 0600; a symlinked .mcp.env is not written through; and without
// --config the project's shared .mcp.json is never the target.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/main.js';

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, env, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const PLANTED = {
  connection: 'pl4nted-pg-pass',
  token: 'pl4nted-flag-token',
  apiKeyFlag: 'pl4nted-eq-key',
  query: 'pl4nted-query-key',
  urlPassword: 'pl4nted-url-pass',
  cookie: 'pl4nted-cookie',
  openai: 'sk-pl4ntedopenaikey',
  pat: 'github_pat_pl4ntedpat',
  database: 'pl4nted-db-pass',
  sentry: 'pl4ntedsentrykey',
};

const SERVERS = {
  postgres: {
    command: 'npx',
    args: ['-y', '@modelcontextprotocol/server-postgres', `postgresql://admin:${PLANTED.connection}@db.internal:5432/prod`],
  },
  github: { command: 'gh-mcp', args: ['--token', PLANTED.token, `--api-key=${PLANTED.apiKeyFlag}`, '--verbose'] },
  search: { type: 'http', url: `https://search.example.com/mcp?region=eu&api_key=${PLANTED.query}` },
  private: {
    type: 'http',
    url: `https://ada:${PLANTED.urlPassword}@private.example.com/mcp`,
    headers: { Cookie: `session=${PLANTED.cookie}` },
  },
  tools: {
    command: 'tools-mcp',
    env: {
      OPENAI_KEY: PLANTED.openai,
      GITHUB_PAT: PLANTED.pat,
      DATABASE_URL: `postgres://app:${PLANTED.database}@db.internal/app`,
      SENTRY_DSN: `https://${PLANTED.sentry}@o1.ingest.sentry.io/42`,
      LOG_LEVEL: 'debug',
    },
  },
};

describe('mcpgate import and secrets', { timeout: 30_000 }, () => {
  let dir = '';
  let home = '';
  let project = '';
  let env: NodeJS.ProcessEnv = {};
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-import-secrets-'));
    home = path.join(dir, 'home');
    project = path.join(dir, 'project');
    await mkdir(home, { recursive: true });
    await mkdir(project, { recursive: true });
    // The project's shared file (Claude Code's project scope), the one teams commit.
    await writeFile(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: SERVERS }, null, 2));
    env = { HOME: home, PATH: process.env.PATH };
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('moves every planted secret to the env file as ${VAR}; the config keeps none; both files 0600', async () => {
    const out = path.join(dir, 'mine', '.mcp.json');
    const r = await run(['import', '--client', 'claude-code', '--project', project, '--config', out], env);
    assert.equal(r.code, 0, r.err);
    const config = await readFile(out, 'utf8');
    const secrets = await readFile(path.join(dir, 'mine', '.mcp.env'), 'utf8');
    for (const [what, value] of Object.entries(PLANTED)) {
      assert.ok(!config.includes(value), `${what} stayed literal in the config:\n${config}`);
      assert.ok(secrets.includes(value), `${what} is not in the env file`);
      assert.ok(r.err.includes('literal secret(s) moved'), r.err);
    }
    assert.match(config, /"--verbose"/, 'other args stay as they were');
    assert.match(config, /region=eu/);
    assert.match(config, /"LOG_LEVEL": "debug"/);
    assert.equal((await stat(out)).mode & 0o777, 0o600);
    assert.equal((await stat(path.join(dir, 'mine', '.mcp.env'))).mode & 0o777, 0o600);
    const check = await run(['check', '--config', out, '--env-file', path.join(dir, 'mine', '.mcp.env')], env);
    assert.equal(check.code, 0, check.out + check.err);
  });

  it('does not write secrets through a symlinked .mcp.env, nor the config', async () => {
    const target = path.join(dir, 'elsewhere.txt');
    await writeFile(target, 'untouched\n');
    const outDir = path.join(dir, 'linked');
    await mkdir(outDir);
    await symlink(target, path.join(outDir, '.mcp.env'));
    const r = await run(['import', '--client', 'claude-code', '--project', project, '--config', path.join(outDir, '.mcp.json')], env);
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(r.err, /symbolic link/);
    assert.equal(await readFile(target, 'utf8'), 'untouched\n');
    assert.ok(!existsSync(path.join(outDir, '.mcp.json')), 'nothing written');
  });

  it("never targets the project's shared .mcp.json unless --config names it", async () => {
    const before = await readFile(path.join(project, '.mcp.json'), 'utf8');
    const cwd = process.cwd();
    process.chdir(project);
    try {
      const r = await run(['import', '--client', 'claude-code', '--project', project], env);
      assert.equal(r.code, 0, r.err);
      const mine = path.join(home, '.config', 'mcpgate', '.mcp.json');
      assert.ok(existsSync(mine), r.out);
      assert.match(r.out, new RegExp(`--config ${mine.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      assert.equal(await readFile(path.join(project, '.mcp.json'), 'utf8'), before, 'the shared file is untouched');
      assert.equal((await stat(mine)).mode & 0o777, 0o600);
    } finally {
      process.chdir(cwd);
    }
  });
});
