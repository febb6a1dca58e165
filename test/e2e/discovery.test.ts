// Discovery mode (`--mode discovery`, agent-mcp-gateway compatible, with its status tool): agents see
// only list_servers, get_server_tools and execute_tool (and get_gateway_status with --debug). Each goes
// through the same rules and pins as the aggregate catalog: list_servers shows what the agent may use,
// get_server_tools filters by names, glob and a token budget, execute_tool calls through the normal
// path (rules, pins, timeout_ms that cancels the call on the server). `agent_id` picks the rules only
// when the gateway has no configured identity (neither --agent nor MCPGATE_AGENT); get_gateway_status
// reports reload status per file, the policy in force, the servers and the config paths.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promisify } from 'node:util';
import {
  CLI,
  fixtureServer,
  jsonOf,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  type GatewayProcess,
  type RpcError,
  type TempDir,
} from '../helpers/gateway.js';

type Json = Record<string, unknown>;
const run = promisify(execFile);

const RULES = {
  agents: {
    alice: { allow: { servers: ['web', 'dyn'], tools: { dyn: ['echo'] } }, deny: { tools: { web: ['env'] } } },
    bob: { allow: { servers: ['db'] } },
    open: { allow: { servers: ['*'] } },
  },
};

const META = ['list_servers', 'get_server_tools', 'execute_tool'];

let dir: TempDir;
let rulesFile: string;
let configA: string;
let configB: string;
/** alice by --agent, with --debug and tofu pins, over web, db and dyn. */
let a: GatewayProcess | undefined;
/** No configured identity, no --debug, over web and db. */
let b: GatewayProcess | undefined;
/** Identity from MCPGATE_AGENT=alice (no --agent), over web and db. */
let c: GatewayProcess | undefined;
/** The kitchen-sink's tool names, as an agent with every server allowed sees them. */
let SINK: string[] = [];

const meta = async (gw: GatewayProcess, name: string, args: Json = {}): Promise<unknown> =>
  jsonOf(await gw.client.callTool({ name, arguments: args }));
const serversOf = async (gw: GatewayProcess, args: Json = {}): Promise<Json[]> =>
  ((await meta(gw, 'list_servers', args)) as { servers: Json[] }).servers;
const toolsOf = async (
  gw: GatewayProcess,
  args: Json,
): Promise<{ server: string; tools: { name: string; description: string; inputSchema: Json }[]; omitted_for_budget?: string[] }> =>
  (await meta(gw, 'get_server_tools', args)) as {
    server: string;
    tools: { name: string; description: string; inputSchema: Json }[];
    omitted_for_budget?: string[];
  };
const execute = (gw: GatewayProcess, args: Json): Promise<unknown> => gw.client.callTool({ name: 'execute_tool', arguments: args });

/** 'ok', or the error's data.code. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    return (err as { data?: { code?: unknown } }).data?.code;
  }
}

function assertToolDenied(err: RpcError, agent: string, server: string, tool: string): void {
  assert.equal(err.code, -31018);
  assert.equal(err.message, `agent "${agent}" may not use tool "${tool}" of server "${server}"`);
  assert.deepEqual(err.data, { code: 'MCPG_POLICY_DENIED', agent, server });
}

function assertServerDenied(err: RpcError, agent: string, server: string): void {
  assert.equal(err.code, -31018);
  assert.equal(err.message, `agent "${agent}" may not use server "${server}"`);
  assert.deepEqual(err.data, { code: 'MCPG_POLICY_DENIED', agent, server });
}

before(async () => {
  dir = await tempDir();
  rulesFile = dir.file('gateway-rules.json');
  await writeFile(rulesFile, JSON.stringify(RULES, null, 2));
  const web = fixtureServer('kitchen-sink-server', ['--name', 'web', '--marker-dir', dir.path]);
  const db = fixtureServer('kitchen-sink-server', ['--name', 'db']);
  configA = dir.file('.mcp.json');
  await writeFile(
    configA,
    JSON.stringify({ mcpServers: { web, db, dyn: fixtureServer('dynamic-server', ['--pidfile', dir.file('dyn.pid')]) } }),
  );
  configB = dir.file('other.mcp.json');
  await writeFile(configB, JSON.stringify({ mcpServers: { web, db } }));
  const rules = ['--rules', rulesFile];
  const started = await Promise.allSettled([
    startGateway({
      config: configA,
      agent: 'alice',
      args: ['--mode', 'discovery', '--debug', '--pins', 'tofu', '--state', dir.file('state-a')],
    }),
    startGateway({ config: configB, agent: null, args: ['--mode', 'discovery', '--pins', 'off', ...rules] }),
    startGateway({
      config: configB,
      agent: null,
      env: { MCPGATE_AGENT: 'alice' },
      args: ['--mode', 'discovery', '--pins', 'off', ...rules],
    }),
  ]);
  [a, b, c] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  SINK = (await toolsOf(b!, { server: 'web', agent_id: 'open' })).tools.map((t) => t.name);
  for (const tool of ['echo', 'elicit', 'env', 'pid', 'slow']) assert.ok(SINK.includes(tool), `kitchen-sink has no ${tool}`);
});

after(async () => {
  await Promise.all([a, b, c].filter((gw) => gw !== undefined && gw.child.exitCode === null).map((gw) => gw!.stop()));
  await dir?.remove();
});

describe('discovery: the meta-tools', { timeout: 30_000 }, () => {
  it('tools/list is exactly the three meta-tools, plus get_gateway_status with --debug', { timeout: 10_000 }, async () => {
    assert.deepEqual(
      (await b!.client.listTools()).tools.map((t) => t.name),
      META,
    );
    assert.deepEqual(
      (await a!.client.listTools()).tools.map((t) => t.name),
      [...META, 'get_gateway_status'],
    );
    const err = await rpcError(b!.client.callTool({ name: 'get_gateway_status', arguments: {} }));
    assert.deepEqual(
      [err.code, err.message, err.data],
      [-32602, 'unknown tool: get_gateway_status', { code: 'MCPG_TOOL_NOT_FOUND', tool: 'get_gateway_status' }],
    );
  });

  it('list_servers shows the servers the agent may use, with state and how many tools it may call', { timeout: 10_000 }, async () => {
    assert.deepEqual(await serversOf(a!), [
      { name: 'web', state: 'ready', tools: SINK.length - 1, description: 'web' }, // env is denied
      { name: 'dyn', state: 'ready', tools: 1, description: 'dynamic-server' }, // only echo is allowed
    ]);
  });

  it('get_server_tools filters by names (denied and unknown names are left out)', { timeout: 10_000 }, async () => {
    assert.deepEqual(await toolsOf(a!, { server: 'web', names: ['pid', 'echo', 'env', 'no_such_tool'] }), {
      server: 'web',
      tools: [
        {
          name: 'echo',
          description: 'Echoes the text back',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
        { name: 'pid', description: 'Reports the process id', inputSchema: { type: 'object', properties: {}, required: [] } },
      ],
    });
  });

  it('get_server_tools filters by a glob pattern', { timeout: 10_000 }, async () => {
    const e = SINK.filter((t) => t.startsWith('e') && t !== 'env');
    assert.deepEqual(
      (await toolsOf(a!, { server: 'web', pattern: 'e*' })).tools.map((t) => t.name),
      e,
    );
    assert.deepEqual((await toolsOf(a!, { server: 'web', pattern: 'e?v' })).tools, []); // env matches, but is denied
    assert.deepEqual(
      (await toolsOf(a!, { server: 'dyn', pattern: '*' })).tools.map((t) => t.name),
      ['echo'],
    );
  });

  it('get_server_tools with a small max_schema_tokens lists the rest by name only', { timeout: 10_000 }, async () => {
    const all = (await toolsOf(a!, { server: 'web' })).tools;
    assert.equal(all.length, SINK.length - 1);
    const budget = 150;
    const capped = await toolsOf(a!, { server: 'web', max_schema_tokens: budget });
    const omitted = capped.omitted_for_budget ?? [];
    assert.ok(capped.tools.length > 0 && omitted.length > 0, JSON.stringify({ shown: capped.tools.length, omitted: omitted.length }));
    // Nothing is lost: every tool is either shown in full (as without a budget) or named as omitted.
    assert.deepEqual([...capped.tools.map((t) => t.name), ...omitted].sort(), all.map((t) => t.name).sort());
    for (const tool of capped.tools)
      assert.deepEqual(
        tool,
        all.find((t) => t.name === tool.name),
      );
    // What is shown fits the budget (about four characters a token).
    const size = capped.tools.reduce((sum, t) => sum + Math.ceil(JSON.stringify(t).length / 4), 0);
    assert.ok(size <= budget, `${size} tokens shown for a budget of ${budget}`);
    assert.deepEqual(await toolsOf(a!, { server: 'web', names: ['echo', 'pid'], max_schema_tokens: 1 }), {
      server: 'web',
      tools: [],
      omitted_for_budget: ['echo', 'pid'],
    });
  });

  it('get_server_tools refuses a server the agent may not use, and a made-up one, alike', { timeout: 10_000 }, async () => {
    assertServerDenied(await rpcError(a!.client.callTool({ name: 'get_server_tools', arguments: { server: 'db' } })), 'alice', 'db');
    assertServerDenied(
      await rpcError(a!.client.callTool({ name: 'get_server_tools', arguments: { server: 'no-such-server' } })),
      'alice',
      'no-such-server',
    );
  });

  it("execute_tool calls the server's tool and returns its result", { timeout: 10_000 }, async () => {
    const result = await execute(a!, { server: 'web', tool: 'echo', args: { text: 'hello' } });
    assert.deepEqual(result, { content: [{ type: 'text', text: 'hello' }] });
    assert.deepEqual(jsonOf(await execute(a!, { server: 'dyn', tool: 'echo', args: { message: 'hi' } })), { echo_message: 'hi' });
    const structured = await execute(a!, { server: 'web', tool: 'structured', args: { a: 2, b: 3 } });
    assert.deepEqual(structured, { content: [{ type: 'text', text: '{"sum":5}' }], structuredContent: { sum: 5 } });
  });

  it('execute_tool honours the rules: denied tools and servers, existing or not, get the same error', { timeout: 10_000 }, async () => {
    assertToolDenied(await rpcError(execute(a!, { server: 'web', tool: 'env', args: { name: 'HOME' } })), 'alice', 'web', 'env');
    assertToolDenied(await rpcError(execute(a!, { server: 'db', tool: 'echo', args: { text: 'x' } })), 'alice', 'db', 'echo');
    assertToolDenied(await rpcError(execute(a!, { server: 'db', tool: 'no_such_tool' })), 'alice', 'db', 'no_such_tool');
    assertToolDenied(await rpcError(execute(a!, { server: 'dyn', tool: 'calculator', args: {} })), 'alice', 'dyn', 'calculator');
    const missing = await rpcError(execute(a!, { server: 'web', tool: 'no_such_tool' }));
    assert.deepEqual([missing.code, missing.data], [-32602, { code: 'MCPG_TOOL_NOT_FOUND', tool: 'web__no_such_tool' }]);
    const bad = await rpcError(execute(a!, { server: 'web', tool: 'echo', args: ['not', 'an', 'object'] }));
    assert.deepEqual([bad.code, bad.message, bad.data], [-32602, 'execute_tool "args" must be an object', { code: 'MCPG_INVALID_PARAMS' }]);
  });

  it('execute_tool timeout_ms cuts a slow call with MCPG_SERVER_TIMEOUT and cancels it on the server', { timeout: 10_000 }, async () => {
    const started = Date.now();
    const err = await rpcError(execute(a!, { server: 'web', tool: 'slow', args: { ms: 8000, tag: 'cut' }, timeout_ms: 300 }));
    const took = Date.now() - started;
    assert.equal(err.code, -31012);
    assert.equal(err.message, 'server "web" did not answer tools/call within 300 ms; the request was cancelled');
    assert.deepEqual(err.data, { code: 'MCPG_SERVER_TIMEOUT', server: 'web', timeoutMs: 300 });
    assert.ok(took >= 300 && took < 3000, `took ${took} ms`);
    assert.ok(await until(() => existsSync(dir.file('cancelled-cut'))), 'the server never saw the cancellation');
    assert.equal(textOf(await execute(a!, { server: 'web', tool: 'slow', args: { ms: 10 }, timeout_ms: 5000 })), 'slept');
  });

  it("timeouts an agent chooses with timeout_ms never open the server's circuit breaker for everyone", { timeout: 15_000 }, async () => {
    // The breaker opens after 3 consecutive failures by default; these are the agent's choice, not the server's fault.
    for (let i = 0; i < 4; i++) {
      const err = await rpcError(execute(a!, { server: 'web', tool: 'slow', args: { ms: 2000, tag: `short${i}` }, timeout_ms: 1 }));
      assert.equal(err.data.code, 'MCPG_SERVER_TIMEOUT');
    }
    assert.equal(textOf(await execute(a!, { server: 'web', tool: 'echo', args: { text: 'still reachable' } })), 'still reachable');
  });

  it("with --agent, an agent_id argument is ignored: the configured identity's rules apply", { timeout: 10_000 }, async () => {
    assert.deepEqual(
      (await serversOf(a!, { agent_id: 'bob' })).map((s) => s.name),
      ['web', 'dyn'],
    );
    assertToolDenied(
      await rpcError(execute(a!, { server: 'db', tool: 'echo', args: { text: 'x' }, agent_id: 'bob' })),
      'alice',
      'db',
      'echo',
    );
    assertServerDenied(
      await rpcError(a!.client.callTool({ name: 'get_server_tools', arguments: { server: 'db', agent_id: 'open' } })),
      'alice',
      'db',
    );
  });

  it('with MCPGATE_AGENT, an agent_id argument is ignored too', { timeout: 10_000 }, async () => {
    assert.deepEqual(
      (await serversOf(c!, { agent_id: 'bob' })).map((s) => s.name),
      ['web'],
    );
    assertToolDenied(
      await rpcError(execute(c!, { server: 'db', tool: 'echo', args: { text: 'x' }, agent_id: 'open' })),
      'alice',
      'db',
      'echo',
    );
  });

  it('without any identity, agent_id selects the rules', { timeout: 10_000 }, async () => {
    assert.deepEqual(
      (await serversOf(b!, { agent_id: 'bob' })).map((s) => s.name),
      ['db'],
    );
    assert.deepEqual(
      (await serversOf(b!, { agent_id: 'open' })).map((s) => [s.name, s.tools]),
      [
        ['web', SINK.length],
        ['db', SINK.length],
      ],
    );
    assert.deepEqual(
      (await serversOf(b!, { agent_id: 'alice' })).map((s) => [s.name, s.tools]),
      [['web', SINK.length - 1]],
    );
    // No agent_id and no identity: an agent the rules do not list (deny_on_missing_agent is true).
    assert.deepEqual(await serversOf(b!), []);
    assert.equal(textOf(await execute(b!, { server: 'db', tool: 'echo', args: { text: 'as bob' }, agent_id: 'bob' })), 'as bob');
    assertToolDenied(
      await rpcError(execute(b!, { server: 'web', tool: 'echo', args: { text: 'x' }, agent_id: 'bob' })),
      'bob',
      'web',
      'echo',
    );
    assertToolDenied(
      await rpcError(execute(b!, { server: 'web', tool: 'env', args: { name: 'HOME' }, agent_id: 'alice' })),
      'alice',
      'web',
      'env',
    );
    assert.deepEqual(
      (await toolsOf(b!, { server: 'db', agent_id: 'bob', names: ['echo'] })).tools.map((t) => t.name),
      ['echo'],
    );
    assertServerDenied(
      await rpcError(b!.client.callTool({ name: 'get_server_tools', arguments: { server: 'db', agent_id: 'alice' } })),
      'alice',
      'db',
    );
  });
});

describe('discovery: get_gateway_status (--debug)', { timeout: 30_000 }, () => {
  it(
    'reports reload status per file, the policy in force, the servers with their states and the config paths',
    { timeout: 10_000 },
    async () => {
      const status = (await meta(a!, 'get_gateway_status')) as Json & { reload: Record<'config' | 'rules', Json> };
      const initial = status.reload.config.lastAttempt;
      assert.match(String(initial), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      for (const file of ['config', 'rules'] as const) {
        assert.equal(status.reload[file].lastAttempt, initial);
        assert.equal(status.reload[file].lastSuccess, initial);
      }
      // A connection's attempts count back to 0 once its session has proved itself (a call answered, or
      // up for a while): 1 or 0 here, depending on timing.
      const servers = status.servers as Json[];
      for (const s of servers) assert.ok(s.attempts === 0 || s.attempts === 1, `${String(s.name)}: ${String(s.attempts)} attempts`);
      const server = (name: string, tools: number): Json => ({
        name,
        state: 'ready',
        tools,
        held: 0,
        limited: null,
        attempts: servers.find((s) => s.name === name)?.attempts,
        breaker: 'closed',
        last_error: null,
        last_stderr: null,
        next_attempt_at: null,
      });
      const { sessions, config_version: version, ...rest } = status;
      assert.deepEqual((sessions as Json).by_transport, { stdio: 1 }, 'this agent is the one session');
      // A digest of the loaded .mcp.json, rules and pins (workers of a cluster compare it).
      assert.match(String(version), /^[0-9a-f]{12}$/);
      assert.deepEqual(rest, {
        reload: {
          config: {
            path: configA,
            attempts: 1,
            successes: 1,
            lastAttempt: initial,
            lastSuccess: initial,
            lastError: null,
            lastWarnings: [],
          },
          rules: {
            path: rulesFile,
            attempts: 1,
            successes: 1,
            lastAttempt: initial,
            lastSuccess: initial,
            lastError: null,
            lastWarnings: [],
          },
        },
        policy: { file: rulesFile, agent_count: 3, agent_ids: ['alice', 'bob', 'open'], defaults: { deny_on_missing_agent: true } },
        servers: [server('web', SINK.length), server('db', SINK.length), server('dyn', 1)],
        config_paths: { mcp_json: configA, rules: rulesFile, state: dir.file('state-a') },
        mode: 'discovery',
        pins: 'tofu',
      });
    },
  );
});

describe('discovery: pins', { timeout: 30_000 }, () => {
  const dynPid = (): number => Number(readFileSync(dir.file('dyn.pid'), 'utf8').trim());

  it('execute_tool refuses a tool whose definition changed (held) and get_server_tools hides it', { timeout: 15_000 }, async () => {
    process.kill(dynPid(), 'SIGUSR1'); // echo's description changes: held under tofu
    assert.ok(
      await until(async () => (await outcome(execute(a!, { server: 'dyn', tool: 'echo', args: { message: 'x' } }))) === 'MCPG_TOOL_HELD'),
      'echo never held',
    );
    const err = await rpcError(execute(a!, { server: 'dyn', tool: 'echo', args: { message: 'x' } }));
    assert.equal(err.code, -31017);
    assert.deepEqual(err.data.changes, ['description']);
    assert.equal(err.data.approve, `mcpgate approve dyn echo --state ${dir.file('state-a')}`);
    assert.deepEqual(await toolsOf(a!, { server: 'dyn' }), { server: 'dyn', tools: [] });
    assert.deepEqual(
      (await serversOf(a!)).find((s) => s.name === 'dyn'),
      { name: 'dyn', state: 'ready', tools: 0, description: 'dynamic-server' },
    );
  });

  it('list_servers counts only the held tools the agent could otherwise call', { timeout: 15_000 }, async () => {
    // calculator is new (held under tofu) and not allowed to alice anyway; echo stays held.
    process.kill(dynPid(), 'SIGHUP');
    assert.ok(
      await until(
        async () => ((await meta(a!, 'get_gateway_status')) as { servers: Json[] }).servers.find((s) => s.name === 'dyn')?.held === 2,
      ),
      'calculator never held',
    );
    assert.deepEqual(
      (await serversOf(a!)).find((s) => s.name === 'dyn'),
      { name: 'dyn', state: 'ready', tools: 0, description: 'dynamic-server' },
    );
    assertToolDenied(
      await rpcError(execute(a!, { server: 'dyn', tool: 'calculator', args: { a: 1, b: 2, operation: 'add' } })),
      'alice',
      'dyn',
      'calculator',
    );
    // Approving echo's new definition releases it: one tool again, while calculator stays held.
    const approved = await run(process.execPath, [CLI, 'approve', 'dyn', 'echo', '--state', dir.file('state-a')]);
    assert.match(approved.stdout, /approved echo of server "dyn"/);
    assert.ok(
      await until(async () => (await outcome(execute(a!, { server: 'dyn', tool: 'echo', args: { message: 'x' } }))) === 'ok'),
      'echo never released',
    );
    assert.deepEqual(
      (await serversOf(a!)).find((s) => s.name === 'dyn'),
      { name: 'dyn', state: 'ready', tools: 1, description: 'dynamic-server' },
    );
    assert.deepEqual(
      (await toolsOf(a!, { server: 'dyn' })).tools.map((t) => [t.name, t.description]),
      [['echo', 'Echoes the message back as JSON (revised 1)']],
    );
  });
});
