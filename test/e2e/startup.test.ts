// Startup with real processes: a server that crashes, is missing, hangs in initialize, is disabled or
// is a remote URL nobody answers is reported once (why, in the log) and left out, never blocking or
// breaking the healthy ones; what a server gets at spawn (environment, `${VAR}`, cwd) is what the
// config says; and a server that sends garbage is blamed by name while its neighbours keep working.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CLI,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

/** With --retries 0 a server that fails to start parks at once; its summary line says so. */
const PARKED = '; parked after 1 attempt(s): it tries again every 60 s, or at once on SIGHUP';

const names = async (gw: GatewayProcess): Promise<string[]> => (await gw.client.listTools()).tools.map((t) => t.name);
const echo = async (gw: GatewayProcess, tool: string, text: string): Promise<string> =>
  textOf(await gw.client.callTool({ name: tool, arguments: { text } }));

describe('startup: failing servers are reported and left out, never blocking the others', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  const SERVERS = ['sink', 'crashy', 'missing', 'hung', 'slow', 'off', 'remote'];

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      sink: fixtureServer('kitchen-sink-server'),
      crashy: fixtureServer('crash-at-start'),
      missing: { command: '/nonexistent/cmd', args: ['--flag'] },
      hung: fixtureServer('hang-at-init'),
      slow: fixtureServer('slow-start-server', ['--delay', '800']),
      off: fixtureServer('dynamic-server', ['--pidfile', dir.file('off.pid')], { disabled: true }),
      remote: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
    });
    // 8 s for `hung` to time out: the healthy servers must be ready before it. They start in parallel
    // and share mcpgate's scheduler autogroup (src/servers/transports/stdio/group-launch.ts: no session of their own), so
    // on a busy machine five starting together can take over 4 s; what is checked is the order, not
    // the speed (bench/RESULTS.md; start-up 1.2–1.7× slower at load 12, stops unchanged).
    gw = await startGateway({ config, args: ['--startup-timeout', '8000', '--retries', '0'] });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it("the agent lists the healthy and the slow server's tools only", { timeout: 10_000 }, async () => {
    const servers = new Set((await names(gw)).map((n) => n.split('__')[0]));
    assert.deepEqual([...servers].sort(), ['sink', 'slow']);
    assert.equal(await echo(gw, 'slow__echo', 'late but fine'), 'late but fine');
    assert.equal(await echo(gw, 'sink__echo', 'fine'), 'fine');
  });

  it('the log has exactly one summary line per server, saying why each failure failed', { timeout: 10_000 }, async () => {
    await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('mcpgate ready on stdio'));
    const summary = (server: string): Record<string, unknown>[] =>
      gw.logs.filter((l) => l.server === server && l.level !== 'debug' && l.msg !== 'server stderr');
    for (const server of SERVERS) assert.equal(summary(server).length, 1, `${server}: ${JSON.stringify(summary(server))}`);
    const line = (server: string): { level: unknown; msg: string } => {
      const [l] = summary(server);
      return { level: l!.level, msg: l!.msg as string };
    };
    assert.equal(line('sink').level, 'info');
    assert.match(line('sink').msg, /^server "sink" ready: \d+ tools, \d+ resources, \d+ prompts$/);
    assert.deepEqual(line('slow'), { level: 'info', msg: 'server "slow" ready: 1 tools, 0 resources, 0 prompts' });
    assert.equal(line('crashy').level, 'warn');
    assert.match(line('crashy').msg, /exited with code 3/);
    // What the server printed is the operator's (its own log lines, /status), not part of the reason agents see.
    assert.doesNotMatch(line('crashy').msg, /fatal: cannot start/);
    assert.deepEqual(line('missing'), { level: 'warn', msg: `server "missing": command not found: /nonexistent/cmd${PARKED}` });
    // A stdio entry's era is "auto": the probe (server/discover) takes part of the startup time, initialize the rest.
    assert.deepEqual(line('hung'), {
      level: 'warn',
      msg: `server "hung" did not answer server/discover or initialize within 8000 ms${PARKED}`,
    });
    assert.deepEqual(line('off'), { level: 'info', msg: 'server "off" disabled in config' });
    assert.equal(line('remote').level, 'warn');
    assert.match(
      line('remote').msg,
      /^server "remote" at http:\/\/127\.0\.0\.1:9\/mcp is unreachable: ECONNREFUSED \(before completing server\/discover\); parked/,
    );
    const ready = `mcpgate ready on stdio: 2 of ${SERVERS.length} servers, ${(await names(gw)).length} tools`;
    assert.ok(
      gw.logs.some((l) => l.msg === ready),
      ready,
    );
  });

  it('a hung server does not delay the others: they are ready before its timeout', { timeout: 10_000 }, async () => {
    const hung = await gw.waitForLog((l) => l.server === 'hung' && l.level === 'warn');
    const at = (server: string): number =>
      gw.logs.findIndex((l) => l.server === server && (l.msg as string).startsWith(`server "${server}" ready`));
    for (const server of ['sink', 'slow']) {
      assert.ok(at(server) >= 0 && at(server) < gw.logs.indexOf(hung), `${server} was not ready before hung timed out`);
    }
  });

  it('a disabled server is never started', { timeout: 10_000 }, () => {
    assert.equal(existsSync(dir.file('off.pid')), false);
  });

  it("server stderr reaches the log under the server's name (at warn: the line says something failed)", { timeout: 10_000 }, async () => {
    const line = await gw.waitForLog((l) => l.msg === 'server stderr' && l.server === 'crashy');
    assert.equal(line.stderr, 'fatal: cannot start (fixture)');
    assert.equal(line.level, 'warn');
  });

  it("calling a failed server's tool is MCPG_TOOL_NOT_FOUND (its tools were never listed)", { timeout: 10_000 }, async () => {
    for (const tool of ['crashy__echo', 'hung__echo', 'missing__anything', 'off__echo']) {
      const err = await rpcError(gw.client.callTool({ name: tool, arguments: {} }));
      assert.equal(err.code, -32602, tool);
      assert.equal(err.data.code, 'MCPG_TOOL_NOT_FOUND', tool);
    }
    assert.equal(await echo(gw, 'sink__echo', 'still fine'), 'still fine');
  });
});

describe('startup: what a server gets at spawn', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    await mkdir(dir.file('work'));
    const config = await writeConfig(dir, {
      sink: fixtureServer('kitchen-sink-server', [], {
        env: { MCPG_T_OVERRIDE: 'from-entry', MCPG_T_EXPANDED: 'pre-${MCPG_T_SOURCE}-post' },
        cwd: 'work', // relative: to the config file's directory
      }),
      plain: fixtureServer('kitchen-sink-server', [], { inheritEnv: true }),
      listed: fixtureServer('kitchen-sink-server', [], { inheritEnv: ['MCPG_T_INH*', 'MCPG_T_JWT', 'MCPGATE_T_OWN'] }),
      handed: fixtureServer('kitchen-sink-server', [], { env: { MCPGATE_T_OWN: '${MCPGATE_T_OWN}' } }),
    });
    await writeFile(
      dir.file('rules.json'),
      JSON.stringify({ auth: { jwt: { secret: '${MCPG_T_JWT}' } }, agents: { tester: { allow: { servers: ['*'] } } } }),
    );
    const env = {
      MCPG_T_INHERITED: 'from-gateway',
      MCPG_T_OVERRIDE: 'from-gateway',
      MCPG_T_SOURCE: 'expanded',
      MCPG_T_JWT: 'j'.repeat(40),
      MCPGATE_T_OWN: 'gateway-secret',
    };
    gw = await startGateway({ config, env, args: ['--rules', dir.file('rules.json')] });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  const env = async (server: string, name: string): Promise<string> =>
    textOf(await gw.client.callTool({ name: `${server}__env`, arguments: { name } }));

  it('by default a server inherits only the safe list (PATH, HOME…) plus its env entries, which win', { timeout: 10_000 }, async () => {
    assert.equal(await env('sink', 'MCPG_T_INHERITED'), '<unset>');
    assert.equal(await env('sink', 'PATH'), process.env.PATH);
    assert.equal(await env('sink', 'MCPG_T_OVERRIDE'), 'from-entry');
    assert.equal(await env('sink', 'MCPG_T_NEVER_SET'), '<unset>');
  });

  it('"inheritEnv": true inherits the rest, and a list inherits just those names', { timeout: 10_000 }, async () => {
    assert.equal(await env('plain', 'MCPG_T_INHERITED'), 'from-gateway');
    assert.equal(await env('plain', 'MCPG_T_OVERRIDE'), 'from-gateway', "one server's env entries are its own");
    assert.equal(await env('listed', 'MCPG_T_INHERITED'), 'from-gateway');
    assert.equal(await env('listed', 'MCPG_T_OVERRIDE'), '<unset>');
    assert.equal(await env('listed', 'PATH'), '<unset>');
  });

  it(
    "mcpgate's own secrets (MCPGATE_*, the rules' auth ${VAR}s) never reach a server unless its env names them",
    { timeout: 10_000 },
    async () => {
      for (const server of ['plain', 'listed']) {
        assert.equal(await env(server, 'MCPG_T_JWT'), '<unset>', server);
        assert.equal(await env(server, 'MCPGATE_T_OWN'), '<unset>', server);
      }
      assert.equal(await env('handed', 'MCPGATE_T_OWN'), 'gateway-secret');
    },
  );

  it("${VAR} in an env entry is expanded from the gateway's environment", { timeout: 10_000 }, async () => {
    assert.equal(await env('sink', 'MCPG_T_EXPANDED'), 'pre-expanded-post');
  });

  it("cwd is honoured (relative to the config file), and defaults to the config file's directory", { timeout: 10_000 }, async () => {
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__cwd', arguments: {} })), await realpath(dir.file('work')));
    assert.equal(textOf(await gw.client.callTool({ name: 'plain__cwd', arguments: {} })), await realpath(dir.path));
  });

  it(
    'a missing ${VAR} makes `mcpgate serve` exit 2, naming the variable and the server, before spawning anything',
    { timeout: 10_000 },
    async () => {
      const config = await writeConfig(
        dir,
        {
          good: fixtureServer('dynamic-server', ['--pidfile', dir.file('good.pid')]),
          needy: fixtureServer('kitchen-sink-server', [], { env: { TOKEN_ISH: '${MCPG_T_DEFINITELY_MISSING}' } }),
        },
        'missing-var.json',
      );
      const env = { ...process.env };
      delete env.MCPG_T_DEFINITELY_MISSING;
      const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      try {
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const [code] = (await once(child, 'close')) as [number | null];
        assert.equal(code, 2, stderr);
        assert.match(stderr, /MCPG_T_DEFINITELY_MISSING/);
        assert.match(stderr, /"needy"/);
        assert.equal(existsSync(dir.file('good.pid')), false, 'no server was started');
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );
});

describe('startup and after: a server that sends garbage is blamed, the others keep working', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      garbage: fixtureServer('garbage-server'),
      junk: fixtureServer('garbage-server', ['--mode', 'listgarbage']),
      sink: fixtureServer('kitchen-sink-server'),
    });
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it(
    'a result that is not an object → MCPG_SERVER_BAD_RESPONSE naming the server; its other tool still works',
    { timeout: 10_000 },
    async () => {
      const err = await rpcError(gw.client.callTool({ name: 'garbage__bad', arguments: {} }));
      assert.equal(err.data.code, 'MCPG_SERVER_BAD_RESPONSE');
      assert.equal(err.data.server, 'garbage');
      assert.equal(textOf(await gw.client.callTool({ name: 'garbage__ok', arguments: {} })), 'ok');
      assert.equal(await echo(gw, 'sink__echo', 'unaffected'), 'unaffected');
    },
  );

  it('a server whose tools/list is garbage is reported and left out; the others are listed', { timeout: 10_000 }, async () => {
    const line = await gw.waitForLog((l) => l.server === 'junk' && l.level === 'warn');
    assert.match(line.msg as string, /^server "junk" sent an invalid tools\/list result/);
    const listed = await names(gw);
    assert.ok(!listed.some((n) => n.startsWith('junk__')), listed.join(','));
    assert.ok(listed.includes('garbage__ok') && listed.includes('sink__echo'), listed.join(','));
  });

  it("a non-JSON line on a server's stdout is logged as a warning and the call still completes", { timeout: 10_000 }, async () => {
    assert.equal(textOf(await gw.client.callTool({ name: 'sink__garbage', arguments: {} })), 'after garbage');
    const warn = await gw.waitForLog(
      (l) => l.server === 'sink' && l.level === 'warn' && l.msg === 'server sent an invalid message; ignored',
    );
    assert.match(warn.line as string, /this is not json/);
    assert.equal(await echo(gw, 'sink__echo', 'still fine'), 'still fine');
  });
});

describe("startup: a server that never answers does not hold an agent's first list", { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let changes = 0;
  let changed: (() => void) | undefined;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      fast: fixtureServer('echo-server'),
      // Ready well after the grace: it must arrive later, announced by list_changed.
      late: fixtureServer('slow-start-server', ['--delay', '6000']),
      hung: fixtureServer('hang-at-init'),
    });
    // The start-up timeout is far beyond this test's own: a first list that waited for `hung` fails it.
    gw = await startGateway({
      config,
      args: ['--startup-timeout', '120000', '--list-wait', '1000'],
      setup: (client) =>
        client.setNotificationHandler('notifications/tools/list_changed', () => {
          changes += 1;
          changed?.();
        }),
    });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it(
    "the first tools/list answers within the grace with the ready server's tools; the late one arrives with list_changed",
    { timeout: 40_000 },
    async () => {
      const first = await names(gw);
      assert.ok(first.length > 0 && first.every((n) => n.startsWith('fast__')), `first list: ${first.join(', ')}`);
      // Listed again on each list_changed until `late` is there: only a notification ends each wait.
      let later: string[];
      for (;;) {
        const next = new Promise<void>((resolve) => (changed = resolve));
        later = await names(gw);
        if (later.includes('late__echo')) break;
        await next;
      }
      assert.ok(changes > 0);
      assert.ok(!later.some((n) => n.startsWith('hung__')));
      assert.equal(await echo(gw, 'late__echo', 'arrived'), 'arrived');
    },
  );
});
