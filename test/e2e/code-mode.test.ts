// Code mode end to end: real gateways (stdio and Streamable HTTP) in front of real child-process
// servers, driven by the official SDK clients — TypeScript, and Python of both eras. An agent whose
// rules say `"mode": "code"` sees search_tools, describe_tools and run_code; a program's calls are the
// agent's own: the same refusal for a denied, unknown, held or over-limit tool and an approval that
// expires, an audit line per inner call naming its run and one per run with the program's digest,
// progress per finished call, an elicitation during a call reaching the agent, writes only where
// `code.allow` says, and a cancel of run_code cancelling the inner call on its server.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import {
  CLI,
  cli,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { NO_PYTHON_MCP, pythonWithMcp } from '../helpers/python.js';

const TIMEOUT = 120_000;

interface RunOutcome {
  value?: unknown;
  error?: { code: string; message: string; line?: number; column?: number };
  calls: { name: string; ok: boolean; code?: string; ms: number }[];
  run: string;
}

async function run(client: Pick<Client, 'callTool'>, code: string, options: Parameters<Client['callTool']>[1] = {}): Promise<RunOutcome> {
  const result = await client.callTool({ name: 'run_code', arguments: { code } }, options);
  return result.structuredContent as RunOutcome;
}

/** The MCPG_* code a direct call is refused with. */
async function directCode(client: Pick<Client, 'callTool'>, name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  return (await rpcError(client.callTool({ name, arguments: args }))).data.code;
}

/** The code a program's call is refused with (the error it throws carries it). */
async function codeCode(client: Pick<Client, 'callTool'>, name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const out = await run(
    client,
    `try { await tools.call(${JSON.stringify(name)}, ${JSON.stringify(args)}); return 'made'; } catch (e) { return e.code; }`,
  );
  return out.value;
}

function rulesFor(): Record<string, unknown> {
  return {
    agents: {
      coder: {
        allow: { servers: ['store', 'gh'] },
        deny: { tools: { gh: ['delete_repository'] } },
        mode: 'code',
        approve: { store: [{ tool: 'delete_note', timeoutSeconds: 1 }] },
        limits: { tools: { store: { get_item: { calls: 2, per: '1h' } } } },
        code: { allow: { store: ['write_note', 'delete_note'], gh: ['retitle'] }, limits: { runsInFlight: 4 } },
      },
    },
  };
}

describe('code mode over stdio: the official TypeScript SDK client', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let client: Client;
  let audit: string;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      store: fixtureServer('code-tools-server', ['--marker-dir', dir.path]),
      gh: fixtureServer('tools-server', ['--set', 'github']),
    });
    const rules = await writeRules(dir, rulesFor());
    audit = dir.file('audit.log');
    gw = await startGateway({
      config,
      agent: 'coder',
      args: ['--rules', rules, '--audit', audit, '--state', dir.file('state')],
      capabilities: { elicitation: {} },
      setup: (c) => c.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'ada' } })),
    });
    client = gw.client;
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('lists search_tools, describe_tools and run_code, small enough (≤ 400 tokens, chars/4, without embedded declarations)', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['search_tools', 'describe_tools', 'run_code'],
    );
    const runCode = tools.find((t) => t.name === 'run_code')!;
    // The catalog is small: its declarations are embedded in run_code's description.
    assert.match(runCode.description ?? '', /tools\.store\.list_items\(args: \{count\?: number/);
    const bare = tools.map((t) => (t.name === 'run_code' ? { ...t, description: (t.description ?? '').split('\nTools:\n')[0] } : t));
    assert.ok(JSON.stringify(bare).length / 4 <= 400, `${JSON.stringify(bare).length / 4} tokens`);
  });

  it('search_tools answers one compact line per hit; describe_tools a declaration stamped with the catalog version', async () => {
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'read one item by id', limit: 3 } });
    const lines = textOf(found).split('\n');
    assert.equal(lines[0], 'store__get_item(id: number, format?: "short"|"long") — Reads one item by its id.');
    const described = await client.callTool({
      name: 'describe_tools',
      arguments: { names: ['store__get_item', 'gh__delete_repository', 'nope'] },
    });
    const text = textOf(described);
    assert.match(text, /^\/\/ catalog v\d+/);
    assert.match(text, /\[read-only\]/);
    assert.match(text, /tools\.store\.get_item\(args: \{id: number; format\?: "short"\|"long"\}\): Promise<CallToolResult>/);
    assert.deepEqual(
      (described.structuredContent as { unknown: string[] }).unknown,
      ['gh__delete_repository', 'nope'],
      'a denied tool is unknown',
    );
  });

  it('runs a program: parallel calls, structured results, the value as JSON text and structured, the calls made', async () => {
    const steps: number[] = [];
    const result = await client.callTool(
      {
        name: 'run_code',
        arguments: {
          code: `const [list, one] = await Promise.all([tools.store.list_items({count: 3}), tools.call('store__get_item', {id: 2})]);
await tools.store.slow({ms: 300});
return { total: list.structuredContent.items.reduce((n, i) => n + i.size, 0), one: one.content[0].text };`,
        },
      },
      { onprogress: (p) => steps.push(p.progress) },
    );
    assert.equal(result.isError, undefined);
    assert.deepEqual(JSON.parse(textOf(result)), { total: 60, one: 'item 2 (short)' });
    const out = result.structuredContent as RunOutcome;
    assert.deepEqual(out.value, { total: 60, one: 'item 2 (short)' });
    assert.deepEqual(out.calls.map((c) => c.name).sort(), ['store__get_item', 'store__list_items', 'store__slow']);
    assert.match(out.run, /^run_[0-9a-f]{12}$/);
    // One progress notification per finished inner call; the SDK client handles notifications after a
    // validation step, so the last one, sent just before the answer, may find the request already done.
    assert.deepEqual(steps.slice(0, 2), [1, 2], 'one progress notification per finished inner call');
  });

  it('an uncaught tool error answers isError with the message, line, column and the calls made', async () => {
    const result = await client.callTool({
      name: 'run_code',
      arguments: { code: `await tools.store.list_items({});\n\nawait tools.store.fail({});` },
    });
    assert.equal(result.isError, true);
    const out = result.structuredContent as RunOutcome;
    assert.equal(out.error?.code, 'MCPG_CODE_ERROR');
    assert.match(out.error?.message ?? '', /the store is on fire/);
    assert.equal(out.error?.line, 3);
    assert.deepEqual(
      out.calls.map((c) => [c.name, c.ok]),
      [
        ['store__list_items', true],
        ['store__fail', false],
      ],
    );
    assert.match(textOf(result), /Inner calls made \(2\)/);
  });

  it('writes only where code.allow says; a read-only tool by default', async () => {
    assert.equal((await run(client, `return (await tools.store.write_note({text: 'x'})).content[0].text;`)).value, 'notes=1');
    assert.equal(await codeCode(client, 'gh__create_issue', { title: 't' }), 'MCPG_CODE_TOOL_FORBIDDEN');
    assert.match(textOf(await client.callTool({ name: 'gh__create_issue', arguments: {} })), /^called create_issue/, 'directly it may');
  });

  it('an elicitation during an inner call reaches the agent', async () => {
    assert.equal((await run(client, `return (await tools.store.ask({})).content[0].text;`)).value, 'hello ada');
  });

  it('parity: denied, unknown, over a limit and an expired approval are refused from code as directly', async () => {
    const refusals: Record<string, string> = {
      gh__delete_repository: 'MCPG_POLICY_DENIED',
      store__nope: 'MCPG_TOOL_NOT_FOUND',
      nobody__nothing: 'MCPG_TOOL_NOT_FOUND',
    };
    for (const [name, expected] of Object.entries(refusals)) {
      const direct = await directCode(client, name);
      assert.equal(direct, expected, name);
      assert.equal(await codeCode(client, name), direct, name);
    }
    // get_item: 2 calls an hour, counted for direct calls and calls from code alike.
    let limited: unknown;
    for (let i = 0; i < 3 && limited === undefined; i++)
      limited = await client.callTool({ name: 'store__get_item', arguments: { id: 1 } }).then(
        () => undefined,
        (err: { data?: { code?: unknown } }) => err.data?.code,
      );
    assert.equal(limited, 'MCPG_RATE_LIMITED');
    assert.equal(await codeCode(client, 'store__get_item', { id: 1 }), limited);
    // delete_note waits for an approval that never comes (1 s).
    const expired = await directCode(client, 'store__delete_note', { index: 0 });
    assert.equal(expired, 'MCPG_APPROVAL_EXPIRED');
    assert.equal(await codeCode(client, 'store__delete_note', { index: 0 }), expired);
  });

  it('parity: a held tool (its definition changed under pins) is refused from code as directly', async () => {
    await run(client, `await tools.gh.retitle({});`);
    assert.ok(await until(async () => (await directCode(client, 'gh__search_code').catch(() => 'made')) === 'MCPG_TOOL_HELD'));
    assert.equal(await codeCode(client, 'gh__search_code'), 'MCPG_TOOL_HELD');
  });

  it('cancelling run_code cancels its inner call on the server', async () => {
    const controller = new AbortController();
    const pending = run(client, `await tools.store.slow({ms: 4321}); return 'finished';`, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await assert.rejects(pending);
    assert.ok(await until(() => existsSync(dir.file('cancelled-4321'))), 'the server saw the cancellation');
    assert.equal((await run(client, 'return 1 + 1;')).value, 2, 'the session goes on');
  });

  it('the audit trail has one line per run (digest, program text) and one per inner call naming its run', async () => {
    const code = `return (await tools.store.list_items({count: 1})).structuredContent.items[0].name;`;
    const out = await run(client, code);
    assert.equal(out.value, 'item-1');
    let lines: Record<string, unknown>[] = [];
    assert.ok(
      await until(() => {
        lines = readFileSync(audit, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        return lines.some((l) => l.event === 'run' && l.run === out.run);
      }),
    );
    const runLine = lines.find((l) => l.event === 'run' && l.run === out.run)!;
    assert.equal(runLine.sha256, createHash('sha256').update(code).digest('hex'));
    assert.equal(runLine.program, code);
    assert.equal(runLine.calls, 1);
    const inner = lines.filter((l) => l.event === 'call' && l.run === out.run);
    assert.deepEqual(
      inner.map((l) => [l.tool, l.outcome, l.agent]),
      [['store__list_items', 'ok', 'coder']],
    );
    // Refusals from code are audited too, naming their run.
    const refused = lines.filter((l) => l.event === 'call' && typeof l.run === 'string' && l.outcome === 'failed');
    assert.ok(refused.some((l) => l.code === 'MCPG_RATE_LIMITED'));
    assert.ok(refused.some((l) => l.code === 'MCPG_CODE_TOOL_FORBIDDEN'));
  });
});

describe('code mode over Streamable HTTP: TypeScript and Python SDK agents of both eras', { timeout: TIMEOUT }, () => {
  const python = pythonWithMcp();
  let dir: TempDir;
  let gate: HttpGateway;
  let config: string;
  let rules: string;
  const clients: Client[] = [];

  const SCRIPT = `
import json, sys, anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    mode = sys.argv[1]
    target = sys.argv[2]
    server = target if target.startswith('http') else StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
    code = sys.stdin.read() or "const r = await tools.store.list_items({count: 4}); return r.structuredContent.items.map(i => i.name);"
    async with Client(server, mode=mode) as client:
        tools = await client.list_tools()
        result = await client.call_tool("run_code", {"code": code})
        print(json.dumps({"tools": [t.name for t in tools.tools], "text": result.content[0].text, "structured": result.structured_content}))

anyio.run(main)
`;

  before(async () => {
    dir = await tempDir();
    config = await writeConfig(dir, { store: fixtureServer('code-tools-server'), gh: fixtureServer('tools-server', ['--set', 'github']) });
    rules = await writeRules(dir, {
      agents: { default: { allow: { servers: ['store', 'gh'] }, mode: 'code' } },
      views: { two: { tools: { store: { list_items: { params: { count: { value: 2 } } }, get_item: {} } } } },
    });
    await writeFile(dir.file('agent.py'), SCRIPT);
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--rules', rules] });
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gate?.stop();
    await dir?.remove();
  });

  it('a TypeScript SDK agent runs a program; status and /metrics show the runs', async () => {
    const { client } = await connectAgent(gate.url);
    clients.push(client);
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      ['search_tools', 'describe_tools', 'run_code'],
    );
    // The first run starts a sandbox worker (the engine compiled); the timing below is of a warm one.
    assert.equal((await run(client, 'return 0;')).value, 0);
    const started = Date.now();
    const out = await run(client, `return (await Promise.all([1, 2, 3].map((i) => tools.store.slow({ms: 600})))).length;`);
    assert.equal(out.value, 3);
    assert.ok(Date.now() - started < 1700, 'the three calls ran in parallel');
    const status = (await (await fetch(`${gate.base}/status`)).json()) as { code?: { runs: number; inner_calls: { ok: number } } };
    assert.ok((status.code?.runs ?? 0) >= 1, JSON.stringify(status.code));
    assert.ok((status.code?.inner_calls.ok ?? 0) >= 3);
    const metrics = await (await fetch(`${gate.base}/metrics`)).text();
    assert.match(metrics, /mcpgate_code_runs_total\{outcome="ok"\} [1-9]/);
    assert.match(metrics, /mcpgate_code_inner_calls_total\{outcome="ok"\} [3-9]/);
    const cliStatus = await cli(['status', '--url', gate.base]);
    assert.match(cliStatus.out, /^code: [1-9]\d* runs \([1-9]\d* ok\), 0 running; inner calls [3-9]\d* ok, 0 tool errors, 0 refused$/m);
  });

  for (const mode of ['legacy', '2026-07-28']) {
    for (const via of ['http', 'stdio'] as const) {
      it(`the Python SDK (${mode}) over ${via}`, { skip: python === null && NO_PYTHON_MCP }, async () => {
        const target = via === 'http' ? [gate.url] : stdioTarget();
        const out = await pythonAgent(mode, target);
        assert.deepEqual(out.tools, ['search_tools', 'describe_tools', 'run_code']);
        assert.deepEqual(JSON.parse(out.text), ['item-1', 'item-2', 'item-3', 'item-4']);
        assert.deepEqual(out.structured.value, ['item-1', 'item-2', 'item-3', 'item-4']);
      });

      it(
        `the Python SDK (${mode}) over ${via}, on a curated view: the view's tools and its fixed value`,
        { skip: python === null && NO_PYTHON_MCP },
        async () => {
          const target = via === 'http' ? [gate.url.replace(/\/mcp$/, '/mcp/v/two')] : stdioTarget('--view', 'two');
          // The view fixes count at 2: left out it is sent as 2, sent different the call is refused, as directly.
          const code = `const items = (await tools.store.list_items({})).structuredContent.items.map((i) => i.name);
let refused; try { await tools.store.list_items({ count: 3 }); } catch (e) { refused = e.code; }
let hidden; try { await tools.call('store__slow', { ms: 1 }); } catch (e) { hidden = e.code; }
return { items, refused, hidden };`;
          const out = await pythonAgent(mode, target, code);
          assert.deepEqual(out.tools, ['search_tools', 'describe_tools', 'run_code']);
          assert.deepEqual(out.structured.value, {
            items: ['item-1', 'item-2'],
            refused: 'MCPG_INVALID_PARAMS',
            hidden: 'MCPG_TOOL_NOT_FOUND',
          });
        },
      );
    }
  }

  /** The Python agent's way to a gateway over stdio: `mcpgate serve` as its child. */
  function stdioTarget(...extra: string[]): string[] {
    return ['stdio', process.execPath, CLI, 'serve', '--config', config, '--pins', 'off', '--rules', rules, '--agent', 'py', ...extra];
  }

  /** The Python SDK agent's one run_code (the default program, or `code` on its stdin). */
  async function pythonAgent(
    mode: string,
    target: string[],
    code = '',
  ): Promise<{ tools: string[]; text: string; structured: { value: unknown } }> {
    const child = execFile(python!, [dir.file('agent.py'), mode, ...target], { timeout: 45_000 });
    child.stdin!.end(code);
    const stdout = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += String(chunk)));
      child.stderr!.on('data', (chunk: Buffer) => (err = (err + String(chunk)).slice(-4000)));
      child.once('error', reject);
      child.once('close', (status) => (status === 0 ? resolve(out) : reject(new Error(`the Python agent exited ${status}: ${err}`))));
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as { tools: string[]; text: string; structured: { value: unknown } };
  }
});

describe('code mode beside aggregate mode ("codeMode": true), over stdio', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let onView: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { store: fixtureServer('code-tools-server') });
    const rules = await writeRules(dir, {
      agents: { side: { allow: { servers: ['store'] }, codeMode: true } },
      views: { one: { tools: { store: { list_items: { params: { count: { value: 1 } } } } } } },
    });
    [gw, onView] = await Promise.all([
      startGateway({ config, agent: 'side', args: ['--rules', rules, '--pins', 'off'] }),
      startGateway({ config, agent: 'side', args: ['--rules', rules, '--pins', 'off', '--view', 'one'] }),
    ]);
  });

  after(async () => {
    await gw?.stop();
    await onView?.stop();
    await dir?.remove();
  });

  it('on a curated view: the view’s tools, then describe_tools and run_code, whose calls go through the view', async () => {
    const names = (await onView.client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ['store__list_items', 'describe_tools', 'run_code']);
    assert.equal((await run(onView.client, `return (await tools.store.list_items({})).structuredContent.items.length;`)).value, 1);
    const refused = await run(onView.client, `try { await tools.call('store__get_item', {id: 1}); } catch (e) { return e.code; }`);
    assert.equal(refused.value, 'MCPG_TOOL_NOT_FOUND');
    const fixed = await run(onView.client, `try { await tools.store.list_items({count: 3}); } catch (e) { return e.code; }`);
    assert.equal(fixed.value, 'MCPG_INVALID_PARAMS');
  });

  it('lists the catalog, then describe_tools and run_code; both answer; the catalog tools are called directly', async () => {
    const names = (await gw.client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names.slice(-2), ['describe_tools', 'run_code']);
    assert.ok(names.includes('store__list_items') && !names.includes('search_tools'), JSON.stringify(names));
    assert.equal((await run(gw.client, `return (await tools.store.list_items({count: 2})).structuredContent.items.length;`)).value, 2);
    assert.match(textOf(await gw.client.callTool({ name: 'describe_tools', arguments: { names: ['store__slow'] } })), /tools\.store\.slow/);
    assert.equal(textOf(await gw.client.callTool({ name: 'store__get_item', arguments: { id: 7 } })), 'item 7 (short)');
  });
});
