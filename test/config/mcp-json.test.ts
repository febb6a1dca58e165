// Validation of `.mcp.json` (src/config/mcp-json.ts via parseServersConfig): entry kinds, defaults,
// `${VAR}` expansion in every expandable field, errors with exact JSON paths, warnings, deep freeze.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseServersConfig } from '../../src/config/load.js';
import { DEFAULT_HEALTH_CHECK, DEFAULT_LIMITS, DEFAULT_POOL, DEFAULT_TIMEOUT_MS } from '../../src/config/types.js';
import { byPath, failure } from '../helpers/config.js';

const FILE = '/srv/project/.mcp.json';
const parse = (value: unknown, env: NodeJS.ProcessEnv = {}) => parseServersConfig(JSON.stringify(value), FILE, env);

void describe('parseServersConfig: valid files', () => {
  void it('reads stdio, http and sse entries with their defaults, in file order', { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: {
        files: { command: 'npx', args: ['-y', 'server-filesystem', '.'] },
        remote: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer x' } },
        legacy: { type: 'sse', url: 'http://127.0.0.1:8080/sse', disabled: true, timeout: 1500, sessions: 'shared' },
      },
    });
    assert.equal(config.file, FILE);
    assert.deepEqual(config.warnings, []);
    assert.deepEqual(config.servers, [
      {
        type: 'stdio',
        name: 'files',
        command: 'npx',
        args: ['-y', 'server-filesystem', '.'],
        env: {},
        cwd: '/srv/project',
        disabled: false,
        timeout: DEFAULT_TIMEOUT_MS,
        sessions: 'shared',
        limits: DEFAULT_LIMITS,
      },
      {
        type: 'http',
        name: 'remote',
        url: 'https://example.test/mcp',
        headers: { Authorization: 'Bearer x' },
        disabled: false,
        timeout: DEFAULT_TIMEOUT_MS,
        sessions: 'shared',
        limits: DEFAULT_LIMITS,
      },
      {
        type: 'sse',
        name: 'legacy',
        url: 'http://127.0.0.1:8080/sse',
        headers: {},
        disabled: true,
        timeout: 1500,
        sessions: 'shared',
        limits: DEFAULT_LIMITS,
      },
    ]);
  });

  void it('accepts type "stdio" explicitly and resolves relative cwd against the file\'s directory', { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: {
        a: { type: 'stdio', command: 'node', cwd: 'tools/a' },
        b: { command: 'node', cwd: '../other' },
        c: { command: 'node', cwd: '/abs/dir' },
      },
    });
    assert.deepEqual(
      config.servers.map((s) => (s.type === 'stdio' ? s.cwd : '')),
      ['/srv/project/tools/a', '/srv/other', '/abs/dir'],
    );
  });

  void it('treats an entry with url and no type as http (as Claude Code does)', { timeout: 5000 }, () => {
    const [server] = parse({ mcpServers: { r: { url: 'https://example.test/mcp' } } }).servers;
    assert.equal(server?.type, 'http');
  });

  void it('accepts "streamable-http" and "streamableHttp" as http', { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: { a: { type: 'streamable-http', url: 'http://a.test/' }, b: { type: 'streamableHttp', url: 'http://b.test/' } },
    });
    assert.deepEqual(
      config.servers.map((s) => s.type),
      ['http', 'http'],
    );
  });

  void it('accepts an empty mcpServers with a warning', { timeout: 5000 }, () => {
    const config = parse({ mcpServers: {} });
    assert.deepEqual(config.servers, []);
    assert.deepEqual(config.warnings, [{ file: FILE, path: '$.mcpServers', message: 'no servers configured' }]);
  });
});

void describe('parseServersConfig: ${VAR} expansion', () => {
  const env = { BIN: '/usr/bin/node', HOME: '/home/u', TOKEN: 't0k', HOST: 'api.test' };

  void it('expands command, args, env values and cwd of a stdio server, not keys', { timeout: 5000 }, () => {
    const [server] = parse(
      {
        mcpServers: {
          s: {
            command: '${BIN}',
            args: ['--home=${HOME}', '${LEVEL:-info}', '$literal'],
            env: { LOG: '${HOME}/x', MODE: '${MODE:-dev}', '${KEY}': 'v' },
            cwd: '${WORK:-work}',
          },
        },
      },
      env,
    ).servers;
    assert.ok(server?.type === 'stdio');
    assert.equal(server.command, '/usr/bin/node');
    assert.deepEqual(server.args, ['--home=/home/u', 'info', '$literal']);
    assert.deepEqual(server.env, { LOG: '/home/u/x', MODE: 'dev', '${KEY}': 'v' });
    assert.equal(server.cwd, '/srv/project/work');
  });

  void it('expands url and header values of a remote server', { timeout: 5000 }, () => {
    const [server] = parse(
      {
        mcpServers: {
          r: {
            type: 'http',
            url: 'https://${HOST}/${PATH:-mcp}',
            headers: { Authorization: 'Bearer ${TOKEN}', 'X-Env': '${STAGE:-prod}' },
          },
        },
      },
      env,
    ).servers;
    assert.ok(server?.type === 'http');
    assert.equal(server.url, 'https://api.test/mcp');
    assert.deepEqual(server.headers, { Authorization: 'Bearer t0k', 'X-Env': 'prod' });
  });

  void it('names the variable, the server and the path of every missing variable', { timeout: 5000 }, async () => {
    const { message, issues } = await failure(() =>
      parse({
        mcpServers: {
          files: { command: 'npx', args: ['a', '${ROOT}'], env: { K: '${KEY}' }, cwd: '${DIR}' },
          remote: { type: 'http', url: 'https://x.test/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
          other: { url: '${BASE_URL}' },
        },
      }),
    );
    assert.deepEqual(byPath(issues), {
      '$.mcpServers.files.args[1]': 'environment variable ROOT is not set (server "files")',
      '$.mcpServers.files.env.K': 'environment variable KEY is not set (server "files")',
      '$.mcpServers.files.cwd': 'environment variable DIR is not set (server "files")',
      '$.mcpServers.remote.headers.Authorization': 'environment variable TOKEN is not set (server "remote")',
      '$.mcpServers.other.url': 'environment variable BASE_URL is not set (server "other")',
    });
    assert.equal(message.split('\n')[0], `invalid configuration in ${FILE}: 5 errors`);
    assert.ok(message.includes('\n  $.mcpServers.remote.headers.Authorization: environment variable TOKEN is not set (server "remote")'));
  });

  void it('checks url and command after expansion', { timeout: 5000 }, async () => {
    const { issues } = await failure(() =>
      parse({ mcpServers: { r: { url: '${U}' }, s: { command: '${EMPTY}' } } }, { U: 'file:///etc/passwd', EMPTY: '' }),
    );
    assert.deepEqual(byPath(issues), {
      '$.mcpServers.r.url': 'expected an http or https URL, got a "file:" URL (server "r")',
      '$.mcpServers.s.command': 'expected a non-empty string, got "" after ${VAR} expansion (server "s")',
    });
  });
});

void describe('parseServersConfig: errors and warnings', () => {
  void it('collects every type error with its exact JSON path', { timeout: 5000 }, async () => {
    const { message, issues } = await failure(() =>
      parse({
        mcpServers: {
          files: { command: 'npx', args: ['-y', 7, null], env: { PORT: 8080 }, timeout: 1.5, sessions: 'sometimes', disabled: 'yes' },
          remote: { type: 'http', headers: ['x'] },
          empty: { command: '' },
          neg: { command: 'x', timeout: -1, args: 'one two' },
          web: { type: 'sse', url: 'not a url' },
        },
      }),
    );
    const timeout = 'a positive integer number of milliseconds (at most 2147483647)';
    assert.deepEqual(byPath(issues), {
      '$.mcpServers.files.args[1]': 'expected a string, got 7',
      '$.mcpServers.files.args[2]': 'expected a string, got null',
      '$.mcpServers.files.env.PORT': 'expected a string, got 8080',
      '$.mcpServers.files.timeout': `expected ${timeout}, got 1.5`,
      '$.mcpServers.files.sessions': 'expected "shared", "per-agent" or "per-session", got "sometimes"',
      '$.mcpServers.files.disabled': 'expected true or false, got a string',
      '$.mcpServers.remote.url': 'missing; expected a string (an http or https URL)',
      '$.mcpServers.remote.headers': 'expected an object whose values are strings, got an array',
      '$.mcpServers.empty.command': 'expected a non-empty string, got ""',
      '$.mcpServers.neg.args': 'expected an array of strings, got a string',
      '$.mcpServers.neg.timeout': `expected ${timeout}, got -1`,
      '$.mcpServers.web.url': 'expected an http or https URL, got a string that is not a URL (server "web")',
    });
    assert.equal(issues.length, 12);
    assert.ok(issues.every((i) => i.file === FILE));
    assert.equal(message.split('\n').length, 13);
  });

  void it('rejects bad roots, bad entries and unknown types', { timeout: 5000 }, async () => {
    assert.deepEqual(byPath((await failure(() => parse([]))).issues), { $: 'expected an object with a "mcpServers" key, got an array' });
    assert.deepEqual(byPath((await failure(() => parse({ servers: {} }))).issues), {
      '$.mcpServers': 'missing; expected an object mapping server names to servers',
    });
    assert.deepEqual(byPath((await failure(() => parse({ mcpServers: [] }))).issues), {
      '$.mcpServers': 'expected an object mapping server names to servers, got an array',
    });
    const { issues } = await failure(() =>
      parse({ mcpServers: { a: 'npx', b: {}, c: { type: 'websocket', url: 'ws://x' }, d: { type: 3 }, '': { command: 'x' } } }),
    );
    assert.deepEqual(byPath(issues), {
      '$.mcpServers.a': 'expected an object describing server "a", got a string',
      '$.mcpServers.b': 'server "b" has neither "command" (a stdio server) nor "url" (a remote server)',
      '$.mcpServers.c.type': 'expected "stdio", "http" or "sse" (or "streamable-http"), got "websocket"',
      '$.mcpServers.d.type': 'expected "stdio", "http" or "sse" (or "streamable-http"), got 3',
      '$.mcpServers[""]': 'a server name must not be empty',
    });
  });

  void it('rejects a "__proto__" key in env or headers instead of dropping it', { timeout: 5000 }, async () => {
    const text =
      '{"mcpServers":{"s":{"command":"x","env":{"__proto__":"v","A":"b"}},"r":{"url":"http://r.test","headers":{"__proto__":"v"}}}}';
    const { issues } = await failure(() => parseServersConfig(text, FILE, {}));
    assert.deepEqual(byPath(issues), {
      '$.mcpServers.s.env.__proto__': 'the key "__proto__" is not allowed',
      '$.mcpServers.r.headers.__proto__': 'the key "__proto__" is not allowed',
    });
  });

  void it('warns about unknown keys and unsafe server names, and keeps the warnings on failure too', { timeout: 5000 }, async () => {
    const config = parse({
      $schema: 'x',
      mcpServers: { 'my server': { command: 'x', autoApprove: [] } },
    });
    assert.deepEqual(config.warnings, [
      { file: FILE, path: '$["$schema"]', message: 'unknown top-level key "$schema" is ignored' },
      {
        file: FILE,
        path: '$.mcpServers["my server"]',
        message: 'server name "my server" has characters other than A-Z a-z 0-9 _ -; its tool names will use a sanitized form',
      },
      { file: FILE, path: '$.mcpServers["my server"].autoApprove', message: 'unknown key "autoApprove" in server "my server" is ignored' },
    ]);
    // command wins over url when type is absent, so url is the unknown key here
    const withUrl = parse({ mcpServers: { s: { command: 'x', url: 'http://r.test' } } });
    assert.equal(withUrl.servers[0]?.type, 'stdio');
    assert.deepEqual(byPath(withUrl.warnings), { '$.mcpServers.s.url': 'unknown key "url" in server "s" is ignored' });

    const { warnings } = await failure(() => parse({ extra: 1, mcpServers: { s: { command: 1 } } }));
    assert.deepEqual(byPath(warnings), { '$.extra': 'unknown top-level key "extra" is ignored' });
  });
});

void describe('parseServersConfig: limits', () => {
  void it('takes per-server limits over the top-level ones over the defaults', { timeout: 5000 }, () => {
    const config = parse({
      limits: { maxTools: 50, maxCallMs: 60_000 },
      mcpServers: { a: { command: 'x' }, b: { command: 'x', limits: { maxTools: 5, maxSchemaBytes: 1024 } } },
    });
    assert.deepEqual(config.warnings, []);
    assert.deepEqual(
      config.servers.map((s) => s.limits),
      [
        { ...DEFAULT_LIMITS, maxTools: 50, maxCallMs: 60_000 },
        { ...DEFAULT_LIMITS, maxTools: 5, maxCallMs: 60_000, maxSchemaBytes: 1024 },
      ],
    );
  });

  void it('names every bad limit with its path; an unknown one is a warning', { timeout: 5000 }, async () => {
    const { issues, warnings } = await failure(() =>
      parse({
        limits: 'lots',
        mcpServers: { a: { command: 'x', limits: { maxTools: -1, maxSchemaBytes: 0, maxCallMs: 1.5, maxTool: 3 } } },
      }),
    );
    assert.deepEqual(byPath(issues), {
      '$.limits': 'expected an object such as {"maxTools": 1000, "maxSchemaBytes": 262144}, got a string',
      '$.mcpServers.a.limits.maxTools': 'expected a whole number of tools, 0 or more, got -1',
      '$.mcpServers.a.limits.maxSchemaBytes': 'expected a positive whole number of bytes, got 0',
      '$.mcpServers.a.limits.maxCallMs': 'expected a positive integer number of milliseconds (at most 2147483647), got 1.5',
    });
    assert.deepEqual(byPath(warnings), {
      '$.mcpServers.a.limits.maxTool':
        'unknown limit "maxTool" is ignored (known: maxTools, maxResources, maxPrompts, maxSchemaBytes, maxCallMs)',
    });
  });
});

void describe('parseServersConfig: sessions and pool', () => {
  void it("accepts per-agent and per-session with the pool defaults, or the entry's own settings", { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: {
        a: { command: 'x', sessions: 'per-agent' },
        b: { url: 'http://b.test/', sessions: 'per-session', pool: { idleMs: 1000, max: 3 } },
        c: { command: 'x' },
      },
    });
    assert.deepEqual(
      config.servers.map((s) => [s.sessions, s.pool]),
      [
        ['per-agent', DEFAULT_POOL],
        ['per-session', { ...DEFAULT_POOL, idleMs: 1000, max: 3 }],
        ['shared', undefined],
      ],
    );
  });

  void it(
    'names every bad pool setting with its path; an unknown one, or a pool on a shared server, is a warning',
    { timeout: 5000 },
    async () => {
      const { issues, warnings } = await failure(() =>
        parse({
          mcpServers: {
            a: { command: 'x', sessions: 'per-agent', pool: { idleMs: 0, ttlMs: 'long', max: 1.5, size: 3 } },
            b: { command: 'x', sessions: 'per-session', pool: [] },
            c: { command: 'x', pool: { max: 2 } },
          },
        }),
      );
      assert.deepEqual(byPath(issues), {
        '$.mcpServers.a.pool.idleMs': 'expected a positive integer number of milliseconds (at most 2147483647), got 0',
        '$.mcpServers.a.pool.ttlMs': 'expected a positive integer number of milliseconds (at most 2147483647), got a string',
        '$.mcpServers.a.pool.max': 'expected a whole number of connections from 1 to 10000, got 1.5',
        '$.mcpServers.b.pool': 'expected an object such as {"idleMs": 600000, "ttlMs": 86400000, "max": 32}, got an array',
      });
      assert.deepEqual(byPath(warnings), {
        '$.mcpServers.a.pool.size': 'unknown pool setting "size" is ignored (known: idleMs, ttlMs, max, healthCheck)',
        '$.mcpServers.c.pool':
          '"pool" is ignored: server "c" has one shared session (set "sessions" to "per-agent" or "per-session" to pool them)',
      });
    },
  );
});

void describe('parseServersConfig: pool.healthCheck (opt-in)', () => {
  void it('off unless asked: true takes the defaults, an object its own settings, false is off', { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: {
        a: { command: 'x', sessions: 'per-agent', pool: { healthCheck: true } },
        b: { command: 'x', sessions: 'per-agent', pool: { healthCheck: { idleMs: 0, timeoutMs: 500 } } },
        c: { command: 'x', sessions: 'per-agent', pool: { healthCheck: false } },
        d: { command: 'x', sessions: 'per-agent' },
      },
    });
    assert.deepEqual(
      config.servers.map((s) => s.pool?.healthCheck),
      [DEFAULT_HEALTH_CHECK, { idleMs: 0, timeoutMs: 500 }, undefined, undefined],
    );
    assert.deepEqual(DEFAULT_HEALTH_CHECK, { idleMs: 30_000, timeoutMs: 2000 });
  });

  void it('names every bad health check setting with its path; an unknown one is a warning', { timeout: 5000 }, async () => {
    const { issues, warnings } = await failure(() =>
      parse({
        mcpServers: {
          a: { command: 'x', sessions: 'per-agent', pool: { healthCheck: { idleMs: -1, timeoutMs: 0, every: 3 } } },
          b: { command: 'x', sessions: 'per-session', pool: { healthCheck: 'yes' } },
        },
      }),
    );
    assert.deepEqual(byPath(issues), {
      '$.mcpServers.a.pool.healthCheck.idleMs':
        'expected a whole number of milliseconds from 0 (check before every reuse) to 2147483647, got -1',
      '$.mcpServers.a.pool.healthCheck.timeoutMs': 'expected a positive whole number of milliseconds (at most 2147483647), got 0',
      '$.mcpServers.b.pool.healthCheck': 'expected true, false or an object such as {"idleMs": 30000, "timeoutMs": 2000}, got a string',
    });
    assert.deepEqual(byPath(warnings), {
      '$.mcpServers.a.pool.healthCheck.every': 'unknown health check setting "every" is ignored (known: idleMs, timeoutMs)',
    });
  });
});

void describe('parseServersConfig: roots', () => {
  void it('keeps file:// roots (${VAR} expanded) on stdio and remote entries; absent stays absent', { timeout: 5000 }, () => {
    const config = parse(
      {
        mcpServers: {
          a: { command: 'x', roots: ['file:///srv/a', 'file://${HOME_DIR}/b'] },
          b: { url: 'http://b.test/', sessions: 'per-agent', roots: [] },
          c: { command: 'x' },
        },
      },
      { HOME_DIR: '/home/me' },
    );
    assert.deepEqual(
      config.servers.map((s) => s.roots),
      [['file:///srv/a', 'file:///home/me/b'], [], undefined],
    );
    assert.ok(Object.isFrozen(config.servers[0]!.roots));
    assert.ok(!('roots' in config.servers[2]!));
  });

  void it('names every bad root with its path; a repeated one is a warning; the count is bounded', { timeout: 5000 }, async () => {
    const { issues, warnings } = await failure(() =>
      parse({
        mcpServers: {
          a: { command: 'x', roots: ['https://x.test/', 'not a uri', 7, 'file:///ok', 'file:///ok', '${UNSET_ROOT}'] },
          b: { command: 'x', roots: 'file:///srv' },
          c: { command: 'x', roots: Array.from({ length: 65 }, (_, i) => `file:///r${i}`) },
        },
      }),
    );
    const found = byPath(issues);
    assert.match(found['$.mcpServers.a.roots[0]']!, /expected a file:\/\/ URI \(MCP roots are file:\/\/ URIs\), got a "https:" URI/);
    assert.match(found['$.mcpServers.a.roots[1]']!, /expected a file:\/\/ URI of at most 4096 characters, got "not a uri"/);
    assert.match(found['$.mcpServers.a.roots[2]']!, /expected a file:\/\/ URI, got 7/);
    assert.match(found['$.mcpServers.a.roots[5]']!, /UNSET_ROOT is not set/);
    assert.match(found['$.mcpServers.b.roots']!, /expected an array of file:\/\/ URIs/);
    assert.match(found['$.mcpServers.c.roots']!, /65 roots: at most 64/);
    assert.match(byPath(warnings)['$.mcpServers.a.roots[4]']!, /listed twice/);
  });
});

void describe('parseServersConfig: immutability', () => {
  void it('returns a deeply frozen snapshot (mutation throws in strict mode)', { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: { s: { command: 'x', args: ['a'], env: { A: 'b' } }, r: { url: 'http://r.test', headers: { H: 'v' } } },
      other: true,
    });
    const [s, r] = config.servers;
    assert.ok(s?.type === 'stdio' && r?.type === 'http');
    assert.throws(() => ((config as { file: string }).file = 'x'), TypeError);
    assert.throws(() => (config.servers as unknown[]).push({}), TypeError);
    assert.throws(() => ((s as { command: string }).command = 'rm'), TypeError);
    assert.throws(() => (s.args as string[]).push('b'), TypeError);
    assert.throws(() => ((s.env as Record<string, string>).A = 'c'), TypeError);
    assert.throws(() => ((r.headers as Record<string, string>).H = 'w'), TypeError);
    assert.throws(() => (config.warnings as unknown[]).pop(), TypeError);
    assert.throws(() => ((config.warnings[0] as { message: string }).message = ''), TypeError);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(s) && Object.isFrozen(r));
  });
});

void describe('parseServersConfig: prefix', () => {
  void it('keeps a prefix or false, and leaves entries without it unchanged', { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: {
        github: { command: 'gh-mcp', prefix: 'gh' },
        all: { url: 'http://127.0.0.1:1/mcp', prefix: false },
        fs: { command: 'fs' },
      },
    });
    assert.deepEqual(
      config.servers.map((s) => [s.name, s.prefix]),
      [
        ['github', 'gh'],
        ['all', false],
        ['fs', undefined],
      ],
    );
    assert.equal(Object.hasOwn(config.servers[2]!, 'prefix'), false);
  });

  void it('refuses a prefix that is not client-safe, true, or shared by two servers', { timeout: 5000 }, async () => {
    const { issues } = await failure(() =>
      parse({
        mcpServers: {
          a: { command: 'a', prefix: 'g h' },
          b: { command: 'b', prefix: true },
          c: { command: 'c', prefix: 'fs' },
          fs: { command: 'fs' },
          d: { command: 'd', prefix: false },
          e: { command: 'e', prefix: false },
        },
      }),
    );
    const paths = byPath(issues);
    assert.match(paths['$.mcpServers.a.prefix']!, /expected a prefix of 1 to 32 letters, digits, _ or - \(or false for none\), got "g h"/);
    assert.match(paths['$.mcpServers.b.prefix']!, /expected a prefix .* or false/);
    assert.equal(
      paths['$.mcpServers.fs.prefix'],
      'servers "c" and "fs" would both use the prefix "fs" (a server without "prefix" uses its name); give "fs" another "prefix"',
    );
    assert.equal(issues.length, 3);
  });
});

void describe('parseServersConfig: "auth" (OAuth to remote servers)', () => {
  void it('reads "oauth" and the object form, expanding the client secret', { timeout: 5000 }, () => {
    const config = parse(
      {
        mcpServers: {
          a: { type: 'http', url: 'https://a.test/mcp', auth: 'oauth' },
          b: {
            url: 'https://b.test/mcp',
            auth: { type: 'oauth', grant: 'client_credentials', clientId: 'gw', clientSecret: '${SECRET}', scope: 'mcp' },
          },
        },
      },
      { SECRET: 's3cret' },
    );
    assert.deepEqual(
      config.servers.map((s) => (s.type === 'stdio' ? undefined : s.auth)),
      [{ grant: 'authorization_code' }, { grant: 'client_credentials', clientId: 'gw', clientSecret: 's3cret', scope: 'mcp' }],
    );
  });

  void it('refuses what it cannot honour, naming the path', { timeout: 5000 }, async () => {
    const { issues } = await failure(() =>
      parse({
        mcpServers: {
          a: { url: 'https://a.test/mcp', auth: 'basic' },
          b: { type: 'sse', url: 'https://b.test/sse', auth: 'oauth' },
          c: { url: 'https://c.test/mcp', headers: { authorization: 'Bearer x' }, auth: 'oauth' },
          d: { url: 'https://d.test/mcp', auth: { type: 'oauth', grant: 'client_credentials', clientId: 'x' } },
          e: { url: 'https://e.test/mcp', auth: { type: 'oauth', clientSecret: 'x' } },
          f: { url: 'https://f.test/mcp', auth: { type: 'oauth', audience: 'x' } },
        },
      }),
    );
    const found = byPath(issues);
    assert.match(found['$.mcpServers.a.auth']!, /expected "oauth" or/);
    assert.match(found['$.mcpServers.b.auth']!, /Streamable HTTP servers only/);
    assert.match(found['$.mcpServers.c.auth']!, /both "auth" and an Authorization header/);
    assert.match(found['$.mcpServers.d.auth.grant']!, /needs "clientId" and "clientSecret"/);
    assert.match(found['$.mcpServers.e.auth.clientSecret']!, /needs its "clientId"/);
    assert.match(found['$.mcpServers.f.auth']!, /audience/);
    assert.equal(issues.length, 6);
  });

  void it('reads a client ID metadata document URL (https, with a path), and refuses any other', { timeout: 5000 }, async () => {
    const config = parse(
      { mcpServers: { a: { url: 'https://a.test/mcp', auth: { type: 'oauth', clientMetadataUrl: 'https://gw.example/${DOC}' } } } },
      { DOC: 'mcpgate/client.json' },
    );
    assert.deepEqual(config.servers[0]?.type === 'http' ? config.servers[0].auth : undefined, {
      grant: 'authorization_code',
      clientMetadataUrl: 'https://gw.example/mcpgate/client.json',
    });
    const { issues } = await failure(() =>
      parse({
        mcpServers: {
          a: { url: 'https://a.test/mcp', auth: { type: 'oauth', clientMetadataUrl: 'http://gw.example/client.json' } },
          b: { url: 'https://b.test/mcp', auth: { type: 'oauth', clientMetadataUrl: 'https://gw.example/' } },
          c: { url: 'https://c.test/mcp', auth: { type: 'oauth', clientMetadataUrl: 'not a url' } },
          d: {
            url: 'https://d.test/mcp',
            auth: {
              type: 'oauth',
              grant: 'client_credentials',
              clientId: 'x',
              clientSecret: 'y',
              clientMetadataUrl: 'https://gw.example/c.json',
            },
          },
        },
      }),
    );
    const found = byPath(issues);
    for (const name of ['a', 'b', 'c'])
      assert.match(found[`$.mcpServers.${name}.auth.clientMetadataUrl`]!, /must be an https URL with a path/, name);
    assert.match(found['$.mcpServers.d.auth.clientMetadataUrl']!, /"client_credentials" uses "clientId" and "clientSecret"/);
    assert.equal(issues.length, 4);
  });

  void it(
    'reads a private_key_jwt key (PEM, from a variable) and refuses one without its client, beside a secret, or not PEM',
    { timeout: 5000 },
    async () => {
      const pem = '-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n';
      const config = parse(
        {
          mcpServers: {
            a: {
              url: 'https://a.test/mcp',
              auth: { type: 'oauth', grant: 'client_credentials', clientId: 'robot', privateKey: '${KEY}', signingAlgorithm: 'ES384' },
            },
          },
        },
        { KEY: pem },
      );
      assert.deepEqual(config.servers[0]?.type === 'http' ? config.servers[0].auth : undefined, {
        grant: 'client_credentials',
        clientId: 'robot',
        privateKey: pem,
        signingAlgorithm: 'ES384',
      });
      const { issues } = await failure(() =>
        parse({
          mcpServers: {
            a: { url: 'https://a.test/mcp', auth: { type: 'oauth', privateKey: pem } },
            b: { url: 'https://b.test/mcp', auth: { type: 'oauth', clientId: 'x', clientSecret: 'y', privateKey: pem } },
            c: { url: 'https://c.test/mcp', auth: { type: 'oauth', clientId: 'x', privateKey: 'secret words' } },
            d: { url: 'https://d.test/mcp', auth: { type: 'oauth', clientId: 'x', signingAlgorithm: 'ES256' } },
          },
        }),
      );
      const found = byPath(issues);
      assert.match(found['$.mcpServers.a.auth.privateKey']!, /needs its "clientId"/);
      assert.match(found['$.mcpServers.b.auth.privateKey']!, /not both/);
      assert.match(found['$.mcpServers.c.auth.privateKey']!, /must be a PEM PKCS #8 private key/);
      assert.match(found['$.mcpServers.d.auth.signingAlgorithm']!, /"privateKey", which is missing/);
      assert.equal(issues.length, 4);
    },
  );

  void it(
    'reads a jwt_bearer entry (workload identity: the assertion file) and refuses one without it, or the file on another grant',
    { timeout: 5000 },
    async () => {
      const config = parse(
        {
          mcpServers: {
            a: {
              url: 'https://a.test/mcp',
              auth: { type: 'oauth', grant: 'jwt_bearer', clientId: 'workload', assertionFile: '${TOKEN_DIR}/token' },
            },
          },
        },
        { TOKEN_DIR: '/var/run/secrets/tokens' },
      );
      assert.deepEqual(config.servers[0]?.type === 'http' ? config.servers[0].auth : undefined, {
        grant: 'jwt_bearer',
        clientId: 'workload',
        assertionFile: '/var/run/secrets/tokens/token',
      });
      const { issues } = await failure(() =>
        parse({
          mcpServers: {
            a: { url: 'https://a.test/mcp', auth: { type: 'oauth', grant: 'jwt_bearer', clientId: 'workload' } },
            b: { url: 'https://b.test/mcp', auth: { type: 'oauth', assertionFile: '/t' } },
          },
        }),
      );
      const found = byPath(issues);
      assert.match(found['$.mcpServers.a.auth.grant']!, /"jwt_bearer" needs "clientId" and "assertionFile"/);
      assert.match(found['$.mcpServers.b.auth.assertionFile']!, /the assertion of the "jwt_bearer" grant/);
      assert.equal(issues.length, 2);
    },
  );

  void it(
    'reads an id_jag entry (enterprise-managed authorization: the IdP, the ID token file) and refuses one missing a key, a bad endpoint, or its keys on another grant',
    { timeout: 5000 },
    async () => {
      const config = parse(
        {
          mcpServers: {
            a: {
              url: 'https://a.test/mcp',
              auth: {
                type: 'oauth',
                grant: 'id_jag',
                clientId: 'mcp-client',
                clientSecret: '${AS_SECRET}',
                idpTokenEndpoint: 'https://idp.test/oauth2/token',
                idpClientId: 'idp-client',
                idpClientSecret: '${IDP_SECRET}',
                idTokenFile: '${HOME}/.idp/id-token',
              },
            },
          },
        },
        { AS_SECRET: 's1', IDP_SECRET: 's2', HOME: '/home/p' },
      );
      assert.deepEqual(config.servers[0]?.type === 'http' ? config.servers[0].auth : undefined, {
        grant: 'id_jag',
        clientId: 'mcp-client',
        clientSecret: 's1',
        idpTokenEndpoint: 'https://idp.test/oauth2/token',
        idpClientId: 'idp-client',
        idpClientSecret: 's2',
        idTokenFile: '/home/p/.idp/id-token',
      });
      const { issues } = await failure(() =>
        parse({
          mcpServers: {
            a: {
              url: 'https://a.test/mcp',
              auth: { type: 'oauth', grant: 'id_jag', clientId: 'mcp-client', idpTokenEndpoint: 'https://idp.test/token' },
            },
            b: {
              url: 'https://b.test/mcp',
              auth: {
                type: 'oauth',
                grant: 'id_jag',
                clientId: 'c',
                idpTokenEndpoint: 'idp.test/token',
                idpClientId: 'i',
                idTokenFile: '/t',
              },
            },
            c: {
              url: 'https://c.test/mcp',
              auth: { type: 'oauth', grant: 'jwt_bearer', clientId: 'w', assertionFile: '/t', idTokenFile: '/t' },
            },
            d: { url: 'https://d.test/mcp', auth: { type: 'oauth', idpClientSecret: 'x' } },
            e: {
              url: 'https://e.test/mcp',
              auth: {
                type: 'oauth',
                grant: 'id_jag',
                clientId: 'c',
                idpTokenEndpoint: 'https://idp.test/token',
                idpClientId: 'i',
                idTokenFile: 42,
              },
            },
          },
        }),
      );
      const found = byPath(issues);
      assert.match(found['$.mcpServers.a.auth.grant']!, /"id_jag" needs .*; missing "idpClientId", "idTokenFile"/);
      assert.match(found['$.mcpServers.b.auth.idpTokenEndpoint']!, /must be the IdP's token endpoint, an http\(s\) URL/);
      assert.match(found['$.mcpServers.c.auth.idTokenFile']!, /"idTokenFile" belongs to the "id_jag" grant/);
      assert.match(found['$.mcpServers.d.auth.idpClientSecret']!, /"idpClientSecret" belongs to the "id_jag" grant/);
      assert.match(found['$.mcpServers.e.auth']!, /"idTokenFile"/);
      assert.equal(issues.length, 5);
    },
  );
});

void describe('parseServersConfig: "start" and "idleStop" (servers on demand)', () => {
  void it('takes "always" and "on-demand" (with idleStop); absent, the snapshot has neither field', { timeout: 5000 }, () => {
    const config = parse({
      mcpServers: {
        a: { command: 'x', start: 'on-demand', idleStop: 60000 },
        b: { url: 'http://b.test/', start: 'on-demand' },
        c: { command: 'x', start: 'always' },
        d: { command: 'x' },
      },
    });
    assert.deepEqual(
      config.servers.map((s) => [s.start, s.idleStop]),
      [
        ['on-demand', 60000],
        ['on-demand', undefined],
        ['always', undefined],
        [undefined, undefined],
      ],
    );
    assert.equal(Object.hasOwn(config.servers[3]!, 'start'), false);
    assert.equal(Object.hasOwn(config.servers[3]!, 'idleStop'), false);
  });

  void it(
    'names an unknown start mode with the allowed ones, a bad idleStop, idleStop without on-demand, and on-demand on a pooled server',
    { timeout: 5000 },
    async () => {
      const { issues } = await failure(() =>
        parse({
          mcpServers: {
            a: { command: 'x', start: 'lazy' },
            b: { command: 'x', start: 'on-demand', idleStop: 0 },
            c: { command: 'x', start: 'on-demand', idleStop: 1.5 },
            d: { url: 'http://d.test/', start: 'on-demand', idleStop: '10s' },
            e: { command: 'x', idleStop: 1000 },
            f: { command: 'x', start: 'always', idleStop: 1000 },
            g: { command: 'x', start: 'on-demand', sessions: 'per-agent' },
            h: { command: 'x', start: true },
          },
        }),
      );
      assert.deepEqual(byPath(issues), {
        '$.mcpServers.a.start': 'expected "always" or "on-demand", got "lazy" (server "a")',
        '$.mcpServers.b.idleStop': 'expected a positive integer number of milliseconds (at most 2147483647), got 0 (server "b")',
        '$.mcpServers.c.idleStop': 'expected a positive integer number of milliseconds (at most 2147483647), got 1.5 (server "c")',
        '$.mcpServers.d.idleStop': 'expected a positive integer number of milliseconds (at most 2147483647), got a string (server "d")',
        '$.mcpServers.e.idleStop':
          '"idleStop" applies only to a server with "start": "on-demand" (server "e" is started always); add "start": "on-demand" or remove "idleStop"',
        '$.mcpServers.f.idleStop':
          '"idleStop" applies only to a server with "start": "on-demand" (server "f" is started always); add "start": "on-demand" or remove "idleStop"',
        '$.mcpServers.g.start':
          '"on-demand" is for servers with one shared session; server "g" is "per-agent", whose connections already start on an agent\'s first call and stop after "pool": {"idleMs"}',
        '$.mcpServers.h.start': 'expected "always" or "on-demand", got true (server "h")',
      });
    },
  );
});
