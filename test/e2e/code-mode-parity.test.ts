// Code mode's parity with direct calls, end to end (a real gateway over stdio, its console on HTTP for
// the approvals, real child-process servers, the official TypeScript SDK client): for every refusal —
// a denied tool, an unknown one (of a known server and of none), a held one, one over its quota, a
// call waiting for approval that is then approved, denied or left to expire, and arguments that are
// not an object — a program's call ends as the same agent's direct call does (the same MCPG_* code,
// the same answer when it runs), and the audit trail has a line for every inner call each run made,
// refusals and unknown names included, naming the run. On a curated view a code-mode agent's tools
// see the view's tools by its names, and a program's call goes through the view as a direct call
// does: a fixed parameter set otherwise is refused alike, a hidden one set, a left-out tool unknown
// (over stdio with `serve --view`, and over HTTP at /mcp/v/NAME to SDK agents of both eras).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
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
import { connectAgent, makeToken, raw, writeRules } from '../helpers/http.js';

const TIMEOUT = 120_000;
/** The run's own wall time: shorter than the wait on a person below, which it must not count. */
const WALL_MS = 1500;

interface RunOutcome {
  value?: unknown;
  error?: { code: string; message: string };
  calls: { name: string; ok: boolean; code?: string }[];
  run: string;
}

interface Refusal {
  code: unknown;
  message: string;
}

/** A refusal's message with its approval id (a new one per call) left out. */
function comparable(refusal: Refusal): Refusal {
  return { code: refusal.code, message: refusal.message.replace(/\(approval [0-9a-f-]+\)/, '(approval …)') };
}

/** The audit trail's inner calls of runs (run, tool, ok or failed, the code) and how many run lines it holds. */
function auditedRuns(file: string): { inner: unknown[][]; runs: number } {
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const inner = lines
    .filter((l) => l.event === 'call' && typeof l.run === 'string')
    .map((l) => [l.run, l.tool, l.outcome === 'ok' ? 'ok' : 'failed', l.outcome === 'ok' ? undefined : l.code]);
  return { inner, runs: lines.filter((l) => l.event === 'run').length };
}

describe('code mode: every refusal from code equals the direct call’s, and the audit shows every inner call', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let client: Client;
  let base: string;
  let admin: string;
  let audit: string;
  const runs: RunOutcome[] = [];
  const seen = new Set<string>();

  async function run(code: string): Promise<RunOutcome> {
    const result = await client.callTool({ name: 'run_code', arguments: { code } });
    const out = result.structuredContent as RunOutcome;
    runs.push(out);
    return out;
  }

  async function direct(name: string, args?: unknown): Promise<Refusal> {
    const err = await rpcError(client.callTool({ name, arguments: args as Record<string, unknown> }));
    return comparable({ code: err.data.code, message: err.message });
  }

  /** The refusal a program's call of `name` throws: its code and message. */
  async function fromCode(name: string, args?: unknown): Promise<Refusal> {
    const out = await run(
      `try { await tools.call(${JSON.stringify(name)}, ${JSON.stringify(args ?? {})}); return 'made'; } catch (e) { return { code: e.code, message: e.message }; }`,
    );
    return comparable(out.value as Refusal);
  }

  /** The next call to start waiting for an approval, from the gateway's log. */
  async function nextPending(): Promise<string> {
    const line = await gw.waitForLog(
      (l) => typeof l.approval === 'string' && /waits for an admin's approval/.test(String(l.msg)) && !seen.has(l.approval),
    );
    const id = String(line.approval);
    seen.add(id);
    return id;
  }

  async function pending(): Promise<{ id: string; tool: string; arguments: unknown }[]> {
    const res = await raw(`${base}/approvals`, { method: 'GET', headers: { authorization: `Bearer ${admin}` } });
    assert.equal(res.status, 200, res.body);
    return (JSON.parse(res.body) as { approvals: { id: string; tool: string; arguments: unknown }[] }).approvals;
  }

  function decide(id: string, ...more: string[]): Promise<{ code: number; out: string; err: string }> {
    return cli(['approve-call', id, '--url', base, '--token', admin, ...more]);
  }

  before(async () => {
    dir = await tempDir();
    const adminToken = makeToken();
    admin = adminToken.token;
    const config = await writeConfig(dir, {
      store: fixtureServer('code-tools-server'),
      gh: fixtureServer('tools-server', ['--set', 'github']),
    });
    const rules = await writeRules(dir, {
      agents: {
        coder: {
          allow: { servers: ['store', 'gh'] },
          deny: { tools: { gh: ['delete_repository'] } },
          mode: 'code',
          approve: { store: ['delete_note', { tool: 'write_note', when: { args: { text: 'late-*' } }, timeoutSeconds: 1 }] },
          limits: { tools: { store: { get_item: { calls: 2, per: '1h' } } } },
          code: { allow: { store: ['write_note', 'delete_note'], gh: ['retitle'] }, limits: { wallMs: WALL_MS } },
        },
      },
      admins: { alice: { tokens: [adminToken.hash] } },
    });
    audit = dir.file('audit.log');
    gw = await startGateway({
      config,
      agent: 'coder',
      args: ['--rules', rules, '--audit', audit, '--state', dir.file('state'), '--stdio', '--http', '127.0.0.1:0'],
    });
    client = gw.client;
    const listening = await gw.waitForLog((l) => String(l.msg).startsWith('mcpgate listening on'));
    base = String(listening.url).replace(/\/mcp$/, '');
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('denied and unknown (of a known server, of none, a made-up name): the same code and message', async () => {
    for (const name of ['gh__delete_repository', 'store__nope', 'nobody__nothing', 'plainly_unknown']) {
      const d = await direct(name);
      assert.match(String(d.code), /^MCPG_(POLICY_DENIED|TOOL_NOT_FOUND)$/, name);
      assert.deepEqual(await fromCode(name), d, name);
    }
    assert.equal((await direct('gh__delete_repository')).code, 'MCPG_POLICY_DENIED');
    assert.equal((await direct('store__nope')).code, 'MCPG_TOOL_NOT_FOUND');
  });

  it('arguments that are not an object: the same code', async () => {
    const d = await rpcError(client.request({ method: 'tools/call', params: { name: 'store__echo', arguments: [1, 2] } } as never));
    const c = await fromCode('store__echo', [1, 2]);
    assert.equal(d.data.code, 'MCPG_INVALID_PARAMS');
    assert.equal(c.code, d.data.code);
  });

  it('over its quota: counted for both, refused alike', async () => {
    // get_item: 2 calls an hour — one direct, one from code, then both refused.
    assert.equal(textOf(await client.callTool({ name: 'store__get_item', arguments: { id: 1 } })), 'item 1 (short)');
    assert.equal((await run(`return (await tools.store.get_item({id: 1})).content[0].text;`)).value, 'item 1 (short)');
    const d = await direct('store__get_item', { id: 1 });
    assert.equal(d.code, 'MCPG_RATE_LIMITED');
    assert.deepEqual((await fromCode('store__get_item', { id: 1 })).code, d.code);
  });

  it('approval required then approved: both wait unsent with the same pending entry and end with the same answer', async () => {
    const directCall = client.callTool({ name: 'store__write_note', arguments: { text: 'a' } }).then(async () => {
      const answer = client.callTool({ name: 'store__delete_note', arguments: { index: 0 } });
      return answer;
    });
    const directId = await nextPending();
    const [directEntry] = (await pending()).filter((p) => p.id === directId);
    assert.equal((await decide(directId)).code, 0);
    const directText = textOf(await directCall);

    const started = Date.now();
    const fromRun = run(`await tools.store.write_note({text: 'a'}); return (await tools.store.delete_note({index: 0})).content[0].text;`);
    const codeId = await nextPending();
    const [codeEntry] = (await pending()).filter((p) => p.id === codeId);
    assert.deepEqual([codeEntry?.tool, codeEntry?.arguments], [directEntry?.tool, directEntry?.arguments]);
    // The person takes longer than the run's wall time: the wait does not count against it.
    await new Promise((resolve) => setTimeout(resolve, WALL_MS + 300));
    assert.equal((await decide(codeId)).code, 0);
    const out = await fromRun;
    assert.ok(Date.now() - started > WALL_MS);
    assert.equal(out.error, undefined, JSON.stringify(out.error));
    assert.equal(out.value, directText);
    assert.equal(directText, 'notes=0');
  });

  it('approval denied: the same code and message', async () => {
    const directCall = direct('store__delete_note', { index: 5 });
    const directId = await nextPending();
    assert.equal((await decide(directId, '--deny', '--reason', 'not today')).code, 0);
    const d = await directCall;
    assert.equal(d.code, 'MCPG_CALL_DENIED');
    const codeCall = fromCode('store__delete_note', { index: 5 });
    const codeId = await nextPending();
    assert.equal((await decide(codeId, '--deny', '--reason', 'not today')).code, 0);
    assert.deepEqual(await codeCall, d);
  });

  it('approval expired: the same code and message', async () => {
    const d = await direct('store__write_note', { text: 'late-1' });
    assert.equal(d.code, 'MCPG_APPROVAL_EXPIRED');
    assert.deepEqual(await fromCode('store__write_note', { text: 'late-1' }), d);
    assert.equal((await pending()).length, 0);
  });

  it('held (its definition changed under pins): the same code and message', async () => {
    await run(`await tools.gh.retitle({});`);
    assert.ok(
      await until(async () => (await direct('gh__search_code', { q: 'x' }).catch(() => ({ code: 'made' }))).code === 'MCPG_TOOL_HELD'),
    );
    const d = await direct('gh__search_code', { q: 'x' });
    assert.deepEqual(await fromCode('gh__search_code', { q: 'x' }), d);
  });

  it('the audit trail has a line for every inner call of every run, with its outcome and code', async () => {
    const expected = runs.flatMap((r) => r.calls.map((c) => [r.run, c.name, c.ok ? 'ok' : 'failed', c.ok ? undefined : c.code]));
    const codes = new Set(expected.map((e) => e[3]));
    for (const code of [
      'MCPG_POLICY_DENIED',
      'MCPG_TOOL_NOT_FOUND',
      'MCPG_RATE_LIMITED',
      'MCPG_CALL_DENIED',
      'MCPG_APPROVAL_EXPIRED',
      'MCPG_TOOL_HELD',
    ])
      assert.ok(codes.has(code), `a run met ${code}: ${JSON.stringify([...codes])}`);
    let inner: unknown[][] = [];
    assert.ok(
      await until(() => {
        const read = auditedRuns(audit);
        inner = read.inner;
        return inner.length >= expected.length && read.runs >= runs.length;
      }),
      `audited ${inner.length} of ${expected.length} inner calls: ${JSON.stringify(inner)} of ${JSON.stringify(expected)}`,
    );
    const key = (e: unknown[]): string => JSON.stringify(e);
    assert.deepEqual(inner.map(key).sort(), expected.map(key).sort());
  });
});

/** The agent of the curated view's tests: code mode, one tool denied, one write code may call. */
const CODER = {
  allow: { servers: ['store'] },
  deny: { tools: { store: ['slow'] } },
  mode: 'code',
  code: { allow: { store: ['write_note'] } },
};

describe(
  'code mode on a curated view: the view’s tools by its names, every call through the view as a direct one',
  { timeout: TIMEOUT },
  () => {
    let dir: TempDir;
    let onView: GatewayProcess;
    let plain: GatewayProcess;
    let audit: string;
    let viewUrl: string;
    const runs: RunOutcome[] = [];

    async function run(code: string): Promise<RunOutcome> {
      const out = (await onView.client.callTool({ name: 'run_code', arguments: { code } })).structuredContent as RunOutcome;
      runs.push(out);
      return out;
    }

    /** What the same agent's direct call on the view ends with: its refusal, or its structured answer. */
    async function direct(name: string, args: unknown): Promise<unknown> {
      try {
        const result = await onView.client.request({ method: 'tools/call', params: { name, arguments: args } } as never);
        return { answer: (result as { structuredContent?: unknown }).structuredContent };
      } catch (err) {
        const e = err as { message: string; data?: { code?: unknown } };
        return { code: e.data?.code, message: e.message };
      }
    }

    /** What a program's call of the same name and arguments ends with, in the same terms. */
    async function fromCode(name: string, args: unknown): Promise<unknown> {
      const out = await run(
        `try { return { answer: (await tools.call(${JSON.stringify(name)}, ${JSON.stringify(args)})).structuredContent }; } catch (e) { return { code: e.code, message: e.message }; }`,
      );
      assert.equal(out.error, undefined, JSON.stringify(out.error));
      return out.value;
    }

    before(async () => {
      dir = await tempDir();
      const config = await writeConfig(dir, { store: fixtureServer('code-tools-server') });
      const rules = await writeRules(dir, {
        // The stdio agent, and over HTTP with --no-auth the same --agent.
        agents: { coder: CODER },
        views: {
          two: {
            tools: {
              store: {
                list_items: { params: { count: { value: 2 } } },
                echo: { name: 'echo_tagged', description: 'Echoes, tagged by the view.', params: { tag: { value: 'view', hidden: true } } },
                write_note: { name: 'note', params: { text: { value: 'fixed' } } },
                slow: {},
              },
            },
          },
        },
      });
      audit = dir.file('audit.log');
      const args = ['--rules', rules, '--pins', 'off'];
      [onView, plain] = await Promise.all([
        startGateway({ config, agent: 'coder', args: [...args, '--view', 'two', '--mode', 'code', '--audit', audit] }),
        startGateway({ config, agent: 'coder', args: [...args, '--stdio', '--http', '127.0.0.1:0', '--no-auth'] }),
      ]);
      const listening = await plain.waitForLog((l) => String(l.msg).startsWith('mcpgate listening on'));
      viewUrl = String(listening.url).replace(/\/mcp$/, '/mcp/v/two');
    });

    after(async () => {
      await onView?.stop();
      await plain?.stop();
      await dir?.remove();
    });

    it('a code-mode agent on a view is listed code mode’s tools, which see only the view’s tools, by its names', async () => {
      const listed = (await onView.client.listTools()).tools;
      assert.deepEqual(
        listed.map((t) => t.name),
        ['search_tools', 'describe_tools', 'run_code'],
      );
      // The declarations embedded in run_code's description: the view's tools, fixed parameters not offered.
      const embedded = String(listed.find((t) => t.name === 'run_code')?.description);
      assert.match(embedded, /\ntools\.store\.list_items\(args: [^\n]*\): Promise<\{items: /);
      assert.match(embedded, /Echoes, tagged by the view\.[^\n]*\n\s*tools\.store\.echo_tagged\(/);
      assert.match(embedded, /\ntools\.store\.note\(args: /);
      assert.doesNotMatch(embedded, /get_item|write_note|count|\btag\b|slow/);

      const described = await onView.client.callTool({
        name: 'describe_tools',
        arguments: { names: ['store__list_items', 'echo_tagged', 'store__echo', 'store__get_item', 'store__slow'] },
      });
      const { tools, unknown } = described.structuredContent as { tools: { name: string; declaration: string }[]; unknown: string[] };
      assert.deepEqual(
        tools.map((t) => t.name),
        ['store__list_items', 'echo_tagged'],
      );
      assert.doesNotMatch(tools[0]!.declaration, /count/);
      assert.deepEqual(unknown, ['store__echo', 'store__get_item', 'store__slow']);

      const found = (await onView.client.callTool({ name: 'search_tools', arguments: { query: 'items echo note read', limit: 50 } }))
        .structuredContent as { tools: { name: string }[] };
      assert.deepEqual(found.tools.map((t) => t.name).sort(), ['echo_tagged', 'note', 'store__list_items']);

      const names = await run(`return Object.keys(tools).map((s) => s + ':' + Object.keys(tools[s]).sort().join(',')).sort();`);
      // slow is denied by the rules but named on the view: a program names it to be refused as a direct call is.
      assert.deepEqual(names.value, ['call:', 'store:echo_tagged,list_items,note,slow']);
    });

    it('every call from code ends as the same direct call on the view: fixed, hidden, renamed, left out, denied, forbidden', async () => {
      const cases: [string, unknown][] = [
        ['store__list_items', {}], // the fixed value is set
        ['store__list_items', { count: 2 }], // the fixed value itself may be sent
        ['store__list_items', { count: 5 }], // another value is refused: MCPG_INVALID_PARAMS
        ['echo_tagged', { tag: 'mine', x: 1 }], // a hidden parameter is set whatever was sent
        ['store__echo', {}], // a renamed tool's public name is not on the view
        ['store__get_item', { id: 1 }], // a tool the view leaves out
        ['store__slow', { ms: 1 }], // on the view, denied by the rules
        ['note', { text: 'other' }], // a write code.allow names, its fixed parameter set to another value
        ['store__list_items', [1, 2]], // arguments that are not an object
      ];
      const seenCodes = new Set<unknown>();
      for (const [name, args] of cases) {
        const d = await direct(name, args);
        seenCodes.add((d as { code?: unknown }).code);
        assert.deepEqual(await fromCode(name, args), d, `${name} ${JSON.stringify(args)}`);
      }
      for (const code of ['MCPG_INVALID_PARAMS', 'MCPG_TOOL_NOT_FOUND', 'MCPG_POLICY_DENIED'])
        assert.ok(seenCodes.has(code), `a case met ${code}: ${JSON.stringify([...seenCodes])}`);
      const listed = (await fromCode('store__list_items', { count: 2 })) as { answer: { items: unknown[] } };
      assert.equal(listed.answer.items.length, 2);
      const echoed = (await fromCode('echo_tagged', { tag: 'mine' })) as { answer: Record<string, unknown> };
      assert.equal(JSON.stringify(echoed.answer).includes('"tag":"view"'), true, JSON.stringify(echoed.answer));
    });

    it('the audit trail has a line for every inner call made on the view, refusals by the view included', async () => {
      // A call the view let through is audited by the tool's real (public) name, as a direct one on the view is.
      const real = (name: string): string => (name === 'echo_tagged' ? 'store__echo' : name);
      const expected = runs.flatMap((r) =>
        r.calls.map((c) => [r.run, c.ok ? real(c.name) : c.name, c.ok ? 'ok' : 'failed', c.ok ? undefined : c.code]),
      );
      assert.ok(expected.some((e) => e[3] === 'MCPG_INVALID_PARAMS'));
      let inner: unknown[][] = [];
      assert.ok(
        await until(() => {
          inner = auditedRuns(audit).inner;
          return inner.length >= expected.length;
        }),
        `audited ${inner.length} of ${expected.length} inner calls: ${JSON.stringify(inner)} of ${JSON.stringify(expected)}`,
      );
      const key = (e: unknown[]): string => JSON.stringify(e);
      assert.deepEqual(inner.map(key).sort(), expected.map(key).sort());
    });

    it('over HTTP at /mcp/v/NAME, SDK agents of both eras get code mode over the view, its fixed parameter held', async () => {
      const program =
        'const two = (await tools.store.list_items({})).structuredContent.items.length;' +
        " try { await tools.store.list_items({count: 5}); return [two, 'made']; } catch (e) { return [two, e.code]; }";
      for (const era of ['2025', '2026-07-28'] as const) {
        const client =
          era === '2025'
            ? (await connectAgent(viewUrl)).client
            : new Client({ name: 'mcpgate-code-view-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
        if (era !== '2025') await client.connect(new StreamableHTTPClientTransport(new URL(viewUrl)));
        try {
          assert.deepEqual(
            (await client.listTools()).tools.map((t) => t.name),
            ['search_tools', 'describe_tools', 'run_code'],
            era,
          );
          const out = (await client.callTool({ name: 'run_code', arguments: { code: program } })).structuredContent as RunOutcome;
          assert.deepEqual(out.value, [2, 'MCPG_INVALID_PARAMS'], era);
        } finally {
          await client.close();
        }
      }
    });

    it('off the view (no fixed parameter) a program gets what a direct call gets', async () => {
      const direct = await plain.client.callTool({ name: 'store__list_items', arguments: { count: 5 } });
      const out = (
        await plain.client.callTool({
          name: 'run_code',
          arguments: { code: `return (await tools.store.list_items({count: 5})).structuredContent;` },
        })
      ).structuredContent as RunOutcome;
      assert.deepEqual(out.value, direct.structuredContent);
    });
  },
);
