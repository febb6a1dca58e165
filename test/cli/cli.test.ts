// The `mcpgate` command (src/cli/main.ts): exit codes (0 ok, 2 usage or invalid configuration),
// usage and version output, and `check` printing `error:`/`warning:` lines as `<file>: <path>: <message>`.
// `main` is driven in-process with a fake io; the built bin is spawned once to prove it runs.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';

const BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));
const PACKAGE = new URL('../../../package.json', import.meta.url);
const UNSET = 'MCPGATE_TEST_SURELY_UNSET_VAR';
const NO_RULES = 'warning: no rules file (gateway-rules.json): every agent may use every server; nothing is restricted\n';
const HINT = "Run 'mcpgate --help' for usage.\n";

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let out = '';
  let err = '';
  const code = await main(argv, env, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

void describe('mcpgate CLI', { timeout: 10000 }, () => {
  let dir = '';
  let valid = '';
  let warned = '';
  let invalid = '';
  let expanding = '';

  before(async () => {
    assert.equal(process.env[UNSET], undefined);
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-cli-'));
    const write = async (name: string, value: unknown): Promise<string> => {
      const file = path.join(dir, name);
      await writeFile(file, JSON.stringify(value, null, 2));
      return file;
    };
    valid = await write('valid.json', {
      mcpServers: { fs: { command: 'node', args: ['fs.js'] }, web: { url: 'https://x.test/mcp' }, off: { command: 'x', disabled: true } },
    });
    warned = await write('warned.json', { extra: true, mcpServers: { fs: { command: 'node', colour: 'red' } } });
    invalid = await write('invalid.json', { mcpServers: { fs: { command: 'node', args: 'fs.js' }, web: { url: `\${${UNSET}}` } } });
    expanding = await write('expanding.json', { mcpServers: { fs: { command: '${MCPGATE_TEST_CMD}' } } });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('--help prints usage on stdout and exits 0', { timeout: 5000 }, async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const r = await run([flag]);
      assert.equal(r.code, 0);
      assert.match(r.out, /^mcpgate \d+\.\d+\.\d+ — one MCP server in front of many\n\nUsage:\n {2}mcpgate serve /);
      assert.ok(r.out.includes('  mcpgate check [--config .mcp.json] [--rules gateway-rules.json] [--env-file FILE]\n'));
      assert.equal(r.err, '');
    }
  });

  void it('no arguments prints usage on stderr and exits 2', { timeout: 5000 }, async () => {
    const r = await run([]);
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.match(r.err, /^mcpgate .*\n\nUsage:\n/);
  });

  void it('--version prints the package version', { timeout: 5000 }, async () => {
    const { version } = JSON.parse(await readFile(PACKAGE, 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) assert.deepEqual(await run([flag]), { code: 0, out: `${version}\n`, err: '' });
  });

  void it('an unknown command exits 2 with a message', { timeout: 5000 }, async () => {
    assert.deepEqual(await run(['frobnicate']), { code: 2, out: '', err: `mcpgate: unknown command "frobnicate"\n${HINT}` });
  });

  void it('an unknown flag or a positional argument exits 2', { timeout: 5000 }, async () => {
    const r = await run(['check', '--bogus']);
    assert.equal(r.code, 2);
    assert.ok(r.err.startsWith("mcpgate: Unknown option '--bogus'"), r.err);
    assert.ok(r.err.endsWith(HINT));
    const p = await run(['check', 'extra.json']);
    assert.equal(p.code, 2);
    assert.ok(p.err.startsWith('mcpgate: ') && p.err.includes('extra.json') && p.err.endsWith(HINT), p.err);
  });

  void it('a bad --log-level (flag or MCPGATE_LOG_LEVEL) exits 2', { timeout: 5000 }, async () => {
    const message = (level: string): string =>
      `mcpgate: --log-level must be one of debug, info, warn, error, silent (got "${level}")\n${HINT}`;
    assert.deepEqual(await run(['serve', '--config', valid, '--log-level', 'loud']), { code: 2, out: '', err: message('loud') });
    assert.deepEqual(await run(['serve', '--config', valid], { MCPGATE_LOG_LEVEL: 'trace' }), { code: 2, out: '', err: message('trace') });
  });

  void it('a bad --log-format (flag or MCPGATE_LOG_FORMAT) exits 2', { timeout: 5000 }, async () => {
    const message = (format: string): string => `mcpgate: --log-format must be json or pretty (got "${format}")\n${HINT}`;
    assert.deepEqual(await run(['serve', '--config', valid, '--log-format', 'text']), { code: 2, out: '', err: message('text') });
    assert.deepEqual(await run(['serve', '--config', valid], { MCPGATE_LOG_FORMAT: 'xml' }), { code: 2, out: '', err: message('xml') });
  });

  void it('serve rejects bad flags with exit 2 before starting anything', { timeout: 5000 }, async () => {
    const cases: [string[], string][] = [
      [['--http', 'nowhere'], '--http must be [HOST:]PORT, e.g. 8080, :8080 or 0.0.0.0:8080 (got "nowhere")'],
      [['--http', ':70000'], '--http must be [HOST:]PORT, e.g. 8080, :8080 or 0.0.0.0:8080 (got ":70000")'],
      [
        ['--http', '0.0.0.0:8080', '--no-auth'],
        '--no-auth is allowed only on a loopback address (127.0.0.1, ::1, localhost), not on 0.0.0.0: anyone who can reach the port would be any agent',
      ],
      [
        ['--http', ':8080', '--stdio', '--workers', '2'],
        '--stdio with --http is one process for one stdio agent: it takes no --workers or --redis',
      ],
      [['--http', ':8080', '--max-sessions', '0'], '--max-sessions must be a positive whole number (got "0")'],
      [['--separator', '::'], '--separator must be 1–8 characters from [A-Za-z0-9_-]'],
      [['--startup-timeout', '0'], '--startup-timeout must be a positive whole number of milliseconds (got "0")'],
      [['--startup-timeout', '1.5'], '--startup-timeout must be a positive whole number of milliseconds (got "1.5")'],
      [['--max-inflight', 'lots'], '--max-inflight must be a positive whole number (got "lots")'],
    ];
    for (const [flags, message] of cases) {
      assert.deepEqual(await run(['serve', '--config', valid, ...flags]), { code: 2, out: '', err: `mcpgate: ${message}\n${HINT}` });
    }
  });

  void it('check on a valid config exits 0 and names the enabled servers', { timeout: 5000 }, async () => {
    assert.deepEqual(await run(['check', '--config', valid]), {
      code: 0,
      out: `${valid}: OK, 3 server(s): fs, web\n  fs: environment (inheritEnv safe): inherited (none); own (none)\n`,
      err: NO_RULES,
    });
  });

  void it(
    "check shows which variable names each stdio server will get, never values and never mcpgate's own",
    { timeout: 5000 },
    async () => {
      const file = path.join(dir, 'env.json');
      await writeFile(
        file,
        JSON.stringify({
          inheritEnv: ['PATH', 'APP_*', 'MCPGATE_TOKEN'],
          mcpServers: { a: { command: 'node', env: { OWN: 'own-value' } }, b: { command: 'node', inheritEnv: true } },
        }),
      );
      const r = await run(['check', '--config', file], {
        PATH: '/bin',
        APP_KEY: 'app-secret-value',
        OTHER: 'other-value',
        MCPGATE_TOKEN: 'tok-value',
      });
      assert.equal(r.code, 0, r.err);
      assert.equal(
        r.out,
        `${file}: OK, 2 server(s): a, b\n` +
          '  a: environment (inheritEnv listed): inherited APP_KEY PATH; own OWN\n' +
          '  b: environment (inheritEnv all): inherited APP_KEY OTHER PATH; own (none)\n',
      );
      assert.doesNotMatch(r.out + r.err, /value/);
    },
  );

  void it('check finds the config through MCPGATE_CONFIG', { timeout: 5000 }, async () => {
    assert.deepEqual(await run(['check'], { MCPGATE_CONFIG: valid }), {
      code: 0,
      out: `${valid}: OK, 3 server(s): fs, web\n  fs: environment (inheritEnv safe): inherited (none); own (none)\n`,
      err: NO_RULES,
    });
  });

  void it('check with warnings exits 0 and prints warning: lines on stderr', { timeout: 5000 }, async () => {
    assert.deepEqual(await run(['check', '--config', warned]), {
      code: 0,
      out: `${warned}: OK, 1 server(s): fs, 2 warning(s)\n  fs: environment (inheritEnv safe): inherited (none); own (none)\n`,
      err:
        `warning: ${warned}: $.extra: unknown top-level key "extra" is ignored\n` +
        `warning: ${warned}: $.mcpServers.fs.colour: unknown key "colour" in server "fs" is ignored\n` +
        NO_RULES,
    });
  });

  void it('check on an invalid config exits 2 with one error: line per problem', { timeout: 5000 }, async () => {
    assert.deepEqual(await run(['check', '--config', invalid]), {
      code: 2,
      out: '',
      err:
        `error: ${invalid}: $.mcpServers.fs.args: expected an array of strings, got a string\n` +
        `error: ${invalid}: $.mcpServers.web.url: environment variable ${UNSET} is not set (server "web")\n`,
    });
  });

  void it('check expands ${VAR} from the environment main was given', { timeout: 5000 }, async () => {
    assert.deepEqual(await run(['check', '--config', expanding], { MCPGATE_TEST_CMD: 'node' }), {
      code: 0,
      out: `${expanding}: OK, 1 server(s): fs\n  fs: environment (inheritEnv safe): inherited (none); own (none)\n`,
      err: NO_RULES,
    });
    const r = await run(['check', '--config', expanding], {});
    assert.equal(r.code, 2);
    assert.equal(r.err, `error: ${expanding}: $.mcpServers.fs.command: environment variable MCPGATE_TEST_CMD is not set (server "fs")\n`);
  });

  void it('check on a missing file exits 2 naming the file', { timeout: 5000 }, async () => {
    const missing = path.join(dir, 'nope.json');
    assert.deepEqual(await run(['check', '--config', missing]), { code: 2, out: '', err: `error: ${missing}: $: file not found\n` });
  });

  void it('the built bin runs and exits 2 on an invalid config', { timeout: 10000 }, async () => {
    const child = spawn(process.execPath, [BIN, 'check', '--config', invalid], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (c, s) => resolve([c, s])),
    );
    assert.deepEqual({ code, signal, stdout }, { code: 2, signal: null, stdout: '' });
    assert.equal(
      stderr,
      `error: ${invalid}: $.mcpServers.fs.args: expected an array of strings, got a string\n` +
        `error: ${invalid}: $.mcpServers.web.url: environment variable ${UNSET} is not set (server "web")\n`,
    );
  });
});
