// Hot reload, end to end: `gateway-rules.json` and `.mcp.json` are rewritten the way editors
// save (a temp file renamed over the original) under a running gateway. A new deny rule reaches the
// agent as tools/list_changed and the tool is gone and denied; a file that fails to parse keeps the
// rules in force (the failure is logged and recorded per file in get_gateway_status) until the next
// good write; rules naming a server .mcp.json lacks load with warnings naming agent and server, which
// clear on the next clean reload; servers added to .mcp.json start, removed ones exit, changed ones
// restart while untouched ones keep their process and their calls in flight; SIGHUP reloads too; an
// agent is told only when its own view changed; and a thousand reloads under 200+ concurrent calls
// never produce anything but a result or MCPG_POLICY_DENIED.

import { rename, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  jsonOf,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  waitGone,
  type GatewayProcess,
  type RpcError,
  type TempDir,
  Notifications,
  closeRig,
} from '../helpers/gateway.js';

type Json = Record<string, unknown>;

/** Saves `value` as JSON the way editors do: write a temp file, then rename it over `file`. */
async function save(file: string, value: unknown): Promise<void> {
  await writeFile(`${file}.tmp`, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  await rename(`${file}.tmp`, file);
}

/** Counts the gateway's log lines that pass `test`, past and future; a test waits for the n-th. */
class LogCounter {
  count = 0;
  readonly lines: Json[] = [];
  private waiters: { n: number; resolve: (line: Json) => void }[] = [];

  constructor(gw: GatewayProcess, test: (line: Json) => boolean) {
    // A predicate that never holds stays registered for every future line: it is our event hook.
    void gw.waitForLog((line) => {
      if (test(line)) {
        this.count += 1;
        this.lines.push(line);
        const due = this.waiters.filter((w) => this.count >= w.n);
        this.waiters = this.waiters.filter((w) => !due.includes(w));
        for (const w of due) w.resolve(this.lines[w.n - 1]!);
      }
      return false;
    });
  }

  /** The n-th matching line (1-based). */
  nth(n: number): Promise<Json> {
    if (this.count >= n) return Promise.resolve(this.lines[n - 1]!);
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** The next matching line after the ones seen so far; call before causing it. */
  next(): Promise<Json> {
    return this.nth(this.count + 1);
  }
}

const message = (line: Json): string => (typeof line.msg === 'string' ? line.msg : '');
const isReloaded = (line: Json): boolean => message(line).startsWith('configuration reloaded (');
const isReloadFailure = (line: Json): boolean =>
  line.level === 'error' && message(line).startsWith('reload failed; the previous configuration stays in force: ');

const sink = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  fixtureServer('kitchen-sink-server', ['--name', name], extra);

interface Rig {
  dir: TempDir;
  config: string;
  rules: string;
  gw: GatewayProcess;
  seen: Notifications;
  reloads: LogCounter;
  /** Reloads caused by SIGHUP. */
  hups: LogCounter;
  failures: LogCounter;
}

/** A gateway (agent `tester`) over `servers`, with `rules` as gateway-rules.json beside .mcp.json (found without --rules). */
async function rig(servers: Record<string, unknown>, rules: unknown, options: { args?: string[]; agent?: string } = {}): Promise<Rig> {
  const dir = await tempDir();
  try {
    const config = dir.file('.mcp.json');
    const rulesFile = dir.file('gateway-rules.json');
    await save(config, { mcpServers: servers });
    await save(rulesFile, rules);
    const gw = await startGateway({ config, agent: options.agent, args: ['--pins', 'off', ...(options.args ?? [])] });
    return {
      dir,
      config,
      rules: rulesFile,
      gw,
      seen: new Notifications(gw),
      reloads: new LogCounter(gw, isReloaded),
      hups: new LogCounter(gw, (l) => message(l) === 'configuration reloaded (SIGHUP)'),
      failures: new LogCounter(gw, isReloadFailure),
    };
  } catch (err) {
    await dir.remove();
    throw err;
  }
}

const close = closeRig;

const toolNames = async (gw: GatewayProcess): Promise<string[]> => (await gw.client.listTools()).tools.map((t) => t.name).sort();
const ofServer = (names: string[], server: string): string[] => names.filter((n) => n.startsWith(`${server}__`));
const echo = async (gw: GatewayProcess, name: string): Promise<string> =>
  textOf(await gw.client.callTool({ name, arguments: { text: 'hi' } }));
const pidOf = async (gw: GatewayProcess, server: string): Promise<number> =>
  Number(textOf(await gw.client.callTool({ name: `${server}__pid`, arguments: {} })));

function assertDenied(err: RpcError, agent: string, server: string, tool: string): void {
  assert.equal(err.code, -31018);
  assert.equal(err.message, `agent "${agent}" may not use tool "${tool}" of server "${server}"`);
  assert.deepEqual(err.data, { code: 'MCPG_POLICY_DENIED', agent, server });
}

/**
 * Proves that no list_changed arrived for what happened before `reloaded` was logged: a ping answered
 * after the log line was read is written after any notification that reload caused (stdout is
 * ordered); the short pause lets the client run notification handlers it reads with the answer.
 */
async function settle(gw: GatewayProcess): Promise<void> {
  await gw.client.ping();
  await sleep(100);
}

const ALL = { allow: { servers: ['*'] } };

/**
 * Reloads by SIGHUP and waits for that reload: it starts after the signal, so it has read what is on
 * disk now (a watcher reload of an earlier save may still be in the logs; this one is unambiguous).
 */
async function hangup(r: Rig): Promise<void> {
  const done = r.hups.next();
  process.kill(r.gw.pid, 'SIGHUP');
  await done;
}

describe('hot reload of gateway-rules.json', { timeout: 60_000 }, () => {
  let r: Rig | undefined;
  const denyWebEcho = { agents: { tester: { ...ALL, deny: { tools: { web: ['echo'] } } }, bystander: { allow: { servers: ['web'] } } } };

  before(async () => {
    r = await rig({ web: sink('web'), db: sink('db') }, { agents: { tester: ALL, bystander: { allow: { servers: ['web'] } } } });
  });
  after(() => close(r));

  it('a deny rule saved by atomic rename reaches the agent: list_changed, the tool is gone and denied', { timeout: 10_000 }, async () => {
    const { gw, seen } = r!;
    assert.ok((await toolNames(gw)).includes('web__echo'));
    assert.equal(await echo(gw, 'web__echo'), 'hi');
    const told = seen.count.tools;
    const started = Date.now();
    await save(r!.rules, denyWebEcho);
    await seen.until('tools', told + 1);
    const latency = Date.now() - started;
    assert.ok(latency < 5_000, `list_changed took ${latency} ms`);
    const names = await toolNames(gw);
    assert.ok(!names.includes('web__echo'));
    assert.ok(names.includes('web__env') && names.includes('db__echo'));
    assertDenied(await rpcError(gw.client.callTool({ name: 'web__echo', arguments: { text: 'hi' } })), 'tester', 'web', 'echo');
    assert.equal(await echo(gw, 'db__echo'), 'hi');
  });

  it('a file that fails to parse keeps the rules in force and logs why; the next good write applies', { timeout: 10_000 }, async () => {
    const { gw, seen } = r!;
    const listed = await toolNames(gw);
    await settle(gw);
    const told = { ...seen.count };
    const failed = r!.failures.next();
    await save(r!.rules, '{ "agents": { "tester": ');
    const line = await failed;
    assert.equal(line.file, r!.rules);
    assert.match(
      message(line),
      new RegExp(
        `^reload failed; the previous configuration stays in force: invalid configuration in ${escape(r!.rules)}: 1 error\\n  \\$: invalid JSON at line 1, column \\d+`,
      ),
    );
    // Nothing changed for the agent: same list, same decisions, no notification.
    await settle(gw);
    assert.deepEqual(seen.count, told);
    assert.deepEqual(await toolNames(gw), listed);
    assertDenied(await rpcError(gw.client.callTool({ name: 'web__echo', arguments: { text: 'hi' } })), 'tester', 'web', 'echo');
    assert.equal(await echo(gw, 'db__echo'), 'hi');

    const reloaded = r!.reloads.next();
    await save(r!.rules, { agents: { tester: ALL, bystander: { allow: { servers: ['web'] } } } });
    await reloaded;
    await seen.until('tools', told.tools + 1);
    assert.equal(await echo(gw, 'web__echo'), 'hi');
  });

  it(
    'rules naming a server .mcp.json lacks load with warnings naming agent and server; a clean reload clears them',
    { timeout: 10_000 },
    async () => {
      const { gw } = r!;
      const warnings = new LogCounter(gw, (l) => l.level === 'warn' && message(l).startsWith('config: '));
      const before_ = warnings.count;
      await save(r!.rules, {
        agents: {
          tester: { allow: { servers: ['web', 'postgres'] } },
          backend: { allow: { servers: ['postgres'], tools: { postgres: ['query'] } } },
        },
      });
      const third = await warnings.nth(before_ + 3);
      assert.deepEqual(
        warnings.lines.slice(before_).map((l) => [message(l), l.file]),
        [
          ['config: $.agents.tester.allow.servers[1]: agent "tester" names server "postgres", which .mcp.json does not define', r!.rules],
          ['config: $.agents.backend.allow.servers[0]: agent "backend" names server "postgres", which .mcp.json does not define', r!.rules],
          [
            'config: $.agents.backend.allow.tools.postgres: agent "backend" names server "postgres", which .mcp.json does not define',
            r!.rules,
          ],
        ],
      );
      // The rules are in force despite the warnings (they are logged just before the reload is applied).
      await gw.waitForLog((l) => isReloaded(l) && gw.logs.indexOf(l) > gw.logs.indexOf(third));
      assert.deepEqual(ofServer(await toolNames(gw), 'db'), []);
      assertDenied(await rpcError(gw.client.callTool({ name: 'db__echo', arguments: { text: 'hi' } })), 'tester', 'db', 'echo');

      await save(r!.rules, { agents: { tester: ALL } });
      const count = warnings.count;
      await hangup(r!);
      assert.equal(warnings.count, count, 'a clean reload logged warnings');
      assert.equal(await echo(gw, 'db__echo'), 'hi');
    },
  );

  it('SIGHUP reloads both files', { timeout: 10_000 }, async () => {
    const { gw } = r!;
    // The watcher sees this write too, but only after its debounce: the SIGHUP reload reads it first.
    await save(r!.rules, { agents: { tester: { allow: { servers: ['web'] } } } });
    await hangup(r!);
    assert.deepEqual(ofServer(await toolNames(gw), 'db'), []);
    assertDenied(await rpcError(gw.client.callTool({ name: 'db__echo', arguments: { text: 'hi' } })), 'tester', 'db', 'echo');
    // With nothing changed on disk SIGHUP still reloads, and the gateway keeps serving.
    await hangup(r!);
    assert.equal(await echo(gw, 'web__echo'), 'hi');
    assert.equal(gw.child.exitCode, null);
  });

  it('an agent is told only when its own view changed', { timeout: 10_000 }, async () => {
    const { gw, seen } = r!;
    await save(r!.rules, { agents: { tester: ALL, bystander: { allow: { servers: ['web'] } } } });
    await seen.until('tools', seen.count.tools + 1);
    // Show the agent every list, so each has a last-seen version to compare against.
    await Promise.all([gw.client.listTools(), gw.client.listResources(), gw.client.listResourceTemplates(), gw.client.listPrompts()]);
    await settle(gw);
    const told = { ...seen.count };
    await save(r!.rules, { agents: { tester: ALL, bystander: { allow: { servers: ['db'] }, deny: { tools: { db: ['echo'] } } } } });
    await hangup(r!);
    await settle(gw);
    assert.deepEqual(seen.count, told, "a change to another agent's rules notified this one");
  });
});

describe('hot reload of .mcp.json: per-server apply', { timeout: 90_000 }, () => {
  let r: Rig | undefined;
  const servers: Record<string, unknown> = { web: sink('web'), db: sink('db') };
  let extraPid = 0;

  before(async () => (r = await rig(servers, { agents: { tester: ALL } })));
  after(() => close(r));

  it('an added server starts: its tools appear and the agent is told', { timeout: 15_000 }, async () => {
    const { gw, seen } = r!;
    const told = seen.count.tools;
    const reloaded = r!.reloads.next();
    servers.extra = sink('extra');
    await save(r!.config, { mcpServers: servers });
    const line = await reloaded;
    assert.deepEqual([line.added, line.removed, line.restarted], [['extra'], [], []]);
    await seen.until('tools', told + 1);
    const names = await toolNames(gw);
    assert.deepEqual(
      ofServer(names, 'extra'),
      ofServer(names, 'web').map((n) => n.replace('web__', 'extra__')),
    );
    assert.equal(await echo(gw, 'extra__echo'), 'hi');
    extraPid = await pidOf(gw, 'extra');
  });

  it(
    'a changed server restarts (new process) while an untouched one keeps its process and its call in flight',
    { timeout: 25_000 },
    async () => {
      const { gw } = r!;
      const [webPid, dbPid] = [await pidOf(gw, 'web'), await pidOf(gw, 'db')];
      assert.equal(textOf(await gw.client.callTool({ name: 'web__env', arguments: { name: 'MCPGATE_TEST_FLAVOUR' } })), '<unset>');
      let slowSettled = false;
      // Long enough to outlast the reload (watch debounce, stop, spawn, initialize) on a loaded machine.
      const slow = gw.client.callTool({ name: 'db__slow', arguments: { ms: 8000 } }).finally(() => (slowSettled = true));
      const reloaded = r!.reloads.next();
      servers.web = sink('web', { env: { MCPGATE_TEST_FLAVOUR: 'restarted' } });
      await save(r!.config, { mcpServers: servers });
      const line = await reloaded;
      assert.deepEqual([line.added, line.removed, line.restarted], [[], [], ['web']]);
      assert.equal(slowSettled, false, 'the slow call was no longer in flight when the reload was applied');
      assert.ok(await waitGone(webPid), 'the old web process is still running');
      const newPid = await pidOf(gw, 'web');
      assert.notEqual(newPid, webPid);
      assert.equal(textOf(await gw.client.callTool({ name: 'web__env', arguments: { name: 'MCPGATE_TEST_FLAVOUR' } })), 'restarted');
      assert.equal(textOf(await slow), 'slept');
      assert.equal(await pidOf(gw, 'db'), dbPid);
      assert.equal(await pidOf(gw, 'extra'), extraPid);
    },
  );

  it('a removed server is shut down: its process exits and its tools vanish', { timeout: 15_000 }, async () => {
    const { gw, seen } = r!;
    const told = seen.count.tools;
    const reloaded = r!.reloads.next();
    delete servers.extra;
    await save(r!.config, { mcpServers: servers });
    const line = await reloaded;
    assert.deepEqual([line.added, line.removed, line.restarted], [[], ['extra'], []]);
    assert.ok(await waitGone(extraPid), 'the removed server is still running');
    await seen.until('tools', told + 1);
    assert.deepEqual(ofServer(await toolNames(gw), 'extra'), []);
    const err = await rpcError(gw.client.callTool({ name: 'extra__echo', arguments: { text: 'hi' } }));
    assert.equal(err.data.code, 'MCPG_TOOL_NOT_FOUND');
    assert.equal(await echo(gw, 'db__echo'), 'hi');
  });

  it('a bad .mcp.json keeps every server running as it was', { timeout: 15_000 }, async () => {
    const { gw } = r!;
    const pids = [await pidOf(gw, 'web'), await pidOf(gw, 'db')];
    const failed = r!.failures.next();
    await save(r!.config, { mcpServers: { web: { args: ['no command'] } } });
    const line = await failed;
    assert.equal(line.file, r!.config);
    assert.match(message(line), /\$\.mcpServers\.web/);
    assert.deepEqual([await pidOf(gw, 'web'), await pidOf(gw, 'db')], pids);
    const reloaded = r!.reloads.next();
    await save(r!.config, { mcpServers: servers });
    const applied = await reloaded;
    assert.deepEqual([applied.added, applied.removed, applied.restarted], [[], [], []]);
    assert.deepEqual([await pidOf(gw, 'web'), await pidOf(gw, 'db')], pids);
  });
});

describe('reload status in get_gateway_status (--mode discovery --debug)', { timeout: 60_000 }, () => {
  let r: Rig | undefined;

  before(async () => (r = await rig({ web: sink('web') }, { agents: { tester: ALL } }, { args: ['--mode', 'discovery', '--debug'] })));
  after(() => close(r));

  interface FileStatus {
    path: string;
    attempts: number;
    successes: number;
    lastAttempt: string | null;
    lastSuccess: string | null;
    lastError: string | null;
    lastWarnings: string[];
  }
  const status = async (): Promise<{ reload: { config: FileStatus; rules: FileStatus }; policy: Json }> =>
    jsonOf(await r!.gw.client.callTool({ name: 'get_gateway_status', arguments: {} })) as {
      reload: { config: FileStatus; rules: FileStatus };
      policy: Json;
    };

  it('records a failed reload against the file that failed, then clears it on the next good write', { timeout: 10_000 }, async () => {
    const first = await status();
    assert.deepEqual(pick(first.reload.rules), { path: r!.rules, attempts: 1, successes: 1, lastError: null, lastWarnings: [] });
    assert.deepEqual(pick(first.reload.config), { path: r!.config, attempts: 1, successes: 1, lastError: null, lastWarnings: [] });

    const failed = r!.failures.next();
    await save(r!.rules, '{ "agents": [ }');
    await failed;
    const bad = await status();
    assert.deepEqual(
      { ...pick(bad.reload.rules), lastError: null },
      { path: r!.rules, attempts: 2, successes: 1, lastError: null, lastWarnings: [] },
    );
    assert.match(
      bad.reload.rules.lastError ?? '',
      new RegExp(`^invalid configuration in ${escape(r!.rules)}: 1 error\\n  \\$: invalid JSON at line 1, column \\d+`),
    );
    assert.ok(bad.reload.rules.lastAttempt! > bad.reload.rules.lastSuccess!);
    // .mcp.json was fine: no error recorded against it, though the pair was not applied.
    assert.deepEqual(pick(bad.reload.config), { path: r!.config, attempts: 2, successes: 1, lastError: null, lastWarnings: [] });
    assert.deepEqual(bad.policy.agent_ids, ['tester']);

    const reloaded = r!.reloads.next();
    await save(r!.rules, { agents: { tester: ALL, backend: { allow: { servers: ['postgres'] } } } });
    await reloaded;
    const warned = await status();
    assert.deepEqual(pick(warned.reload.rules), {
      path: r!.rules,
      attempts: 3,
      successes: 2,
      lastError: null,
      lastWarnings: ['$.agents.backend.allow.servers[0]: agent "backend" names server "postgres", which .mcp.json does not define'],
    });
    assert.deepEqual(warned.policy, {
      file: r!.rules,
      agent_count: 2,
      agent_ids: ['backend', 'tester'],
      defaults: { deny_on_missing_agent: true },
    });

    const clean = r!.reloads.next();
    await save(r!.rules, { agents: { tester: ALL } });
    await clean;
    const cleared = await status();
    assert.deepEqual(pick(cleared.reload.rules), { path: r!.rules, attempts: 4, successes: 3, lastError: null, lastWarnings: [] });
    assert.deepEqual(pick(cleared.reload.config), { path: r!.config, attempts: 4, successes: 3, lastError: null, lastWarnings: [] });
  });
});

function pick(s: { path: string; attempts: number; successes: number; lastError: string | null; lastWarnings: string[] }): Json {
  return { path: s.path, attempts: s.attempts, successes: s.successes, lastError: s.lastError, lastWarnings: s.lastWarnings };
}

const RELOADS_PER_WAVE = 4;

describe('stress: a thousand reloads under concurrent calls', { timeout: 60_000 }, () => {
  let r: Rig | undefined;
  const allowAll = { agents: { tester: ALL } };
  const denyEcho = { agents: { tester: { ...ALL, deny: { tools: { web: ['echo'] } } } } };

  // Info, not debug: a debug line per denied call would cost the test more than the gateway.
  before(async () => (r = await rig({ web: sink('web'), db: sink('db') }, allowAll, { args: ['--log-level', 'info'] })));
  after(() => close(r));

  it('every call succeeds or is denied, never an internal error; the gateway keeps serving', { timeout: 45_000 }, async (t) => {
    const { gw } = r!;
    const hup = new LogCounter(gw, (l) => message(l) === 'configuration reloaded (SIGHUP)');
    const outcomes = { ok: 0, denied: 0 };
    const unexpected: unknown[] = [];
    let reloading = true;
    let stopReloading!: () => void;
    const reloadsOver = new Promise<void>((resolve) => (stopReloading = resolve));
    let wentWrong!: (why: string) => void;
    const problem = new Promise<string>((resolve) => (wentWrong = resolve));

    /** One call: web__echo flips between allowed and denied, db__echo is always allowed. */
    const call = async (name: string): Promise<void> => {
      try {
        const text = await echo(gw, name);
        if (text === 'hi') outcomes.ok += 1;
        else {
          unexpected.push({ name, text });
          wentWrong('a call went wrong');
        }
      } catch (err) {
        const e = err as { code?: unknown; data?: { code?: unknown } };
        if (name === 'web__echo' && e.code === -31018 && e.data?.code === 'MCPG_POLICY_DENIED') outcomes.denied += 1;
        else {
          unexpected.push({ name, error: String(err), data: e.data });
          wentWrong('a call went wrong');
        }
      }
    };
    // Waves of 200 concurrent calls for as long as the reloads go on (and at least two), a new wave
    // every few reloads so that reloads land both while calls are in flight and between waves (calls
    // back to back would make each reload wait behind hundreds of messages: minutes, not seconds).
    // The first unexpected answer ends them.
    const exited = gw.exited.then((exit) => `the gateway exited (${JSON.stringify(exit)})`);
    const calls = (async () => {
      let waves = 0;
      while ((reloading || waves < 2) && unexpected.length === 0) {
        await Promise.all(Array.from({ length: 200 }, (_, i) => call(i % 2 === 0 ? 'web__echo' : 'db__echo')));
        waves += 1;
        if (reloading) await Promise.race([hup.nth(hup.count + RELOADS_PER_WAVE), reloadsOver, exited, problem]);
      }
      return waves;
    })();
    /** Each reload must come, unless the gateway exits or the calls go wrong first. */
    const reloaded = async (line: Promise<unknown>): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('no reload within 10 s'), 10_000)));
      const failed = await Promise.race([line.then(() => undefined), exited, problem, late]).finally(() => clearTimeout(timer));
      if (failed !== undefined) {
        assert.fail(
          `${failed}: ${JSON.stringify(unexpected.slice(0, 3))}\n${gw.logs
            .slice(-20)
            .map((l) => JSON.stringify(l))
            .join('\n')}`,
        );
      }
    };

    try {
      // 300 saves as fast as the disk takes them: the watcher's debounce folds them into a few reloads.
      for (let i = 0; i < 300; i++) await save(r!.rules, i % 2 === 0 ? denyEcho : allowAll);
      // Then 1000 SIGHUP reloads, each after a save that flips the rules, one at a time (a signal that
      // arrives while another is pending is merged by the kernel, so each waits for its reload).
      for (let i = 0; i < 1000; i++) {
        await save(r!.rules, i % 2 === 0 ? denyEcho : allowAll);
        const done = hup.next();
        process.kill(gw.pid, 'SIGHUP');
        await reloaded(done);
      }
    } finally {
      reloading = false;
      stopReloading();
    }
    const waves = await calls;

    t.diagnostic(
      `${hup.count} SIGHUP reloads, ${r!.reloads.count} reloads in all; ${waves} waves of 200 calls: ${outcomes.ok} ok, ${outcomes.denied} denied`,
    );
    assert.deepEqual(unexpected, []);
    assert.equal(outcomes.ok + outcomes.denied, waves * 200);
    assert.ok(outcomes.denied > 0 && outcomes.ok > waves * 100, JSON.stringify(outcomes));
    assert.ok(hup.count >= 1000);
    assert.equal(gw.child.exitCode, null);
    // The last save allowed everything; once the watcher's reload of it lands, the state is that file's.
    assert.equal(await echo(gw, 'web__echo'), 'hi');
    assert.deepEqual(
      gw.logs.filter((l) => l.level === 'error'),
      [],
    );
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
