// Interceptor servers end to end: a real gateway process with `.mcp.json`'s `interceptors` section
// naming real interceptor server processes (test/fixtures/interceptor-server.ts, written with the
// MCP SDK), bound to agents by the rules' `interceptors` section. A validator refuses a call
// (MCPG_INTERCEPTOR_DENIED) and a result; a mutator rewrites a call's arguments before the server
// gets them and a result before the agent does; `audit` mode never blocks; an interceptor that hangs
// fails its own agent's call at its timeout (closed, or open when the rules say so) while another
// agent's calls are answered at once; one whose process dies fails closed. Every decision is in the
// audit trail, never the payload. Over stdio, discovery's execute_tool and code mode's inner calls
// pass the same gate; an interceptor server over Streamable HTTP works as a stdio one does.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixture,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

/** One audit line of an interceptor decision (the fields these tests read). */
interface AuditLine {
  event?: string;
  agent?: string;
  decision?: string;
  mutated?: boolean;
  verdicts: { interceptor: string; host: string; outcome: string; mode: string }[];
}

/** One invocation as the fixture server recorded it. */
interface InvokedLine {
  phase: string;
  context: { principal: { id: string } };
  meta: Record<string, string>;
}

type Spec = { name: string; type: 'validation' | 'mutation'; behavior: string; events: string[]; phases: 'request' | 'response' | 'both' };

function interceptorServer(specs: Spec[], extra: string[] = []): Record<string, unknown> {
  return fixtureServer('interceptor-server', ['--spec', JSON.stringify(specs), ...extra]);
}

const validator: Spec = { name: 'words/no-forbidden', type: 'validation', behavior: 'deny-word', events: ['tools/call'], phases: 'both' };
const resultValidator: Spec = {
  name: 'words/no-forbidden-result',
  type: 'validation',
  behavior: 'deny-word',
  events: ['tools/call'],
  phases: 'response',
};
const upperRequest: Spec = {
  name: 'text/upper-request',
  type: 'mutation',
  behavior: 'uppercase-text',
  events: ['tools/call'],
  phases: 'request',
};
const upperResult: Spec = {
  name: 'text/upper-result',
  type: 'mutation',
  behavior: 'uppercase-text',
  events: ['tools/*'],
  phases: 'response',
};
const hang: Spec = { name: 'slow/hang', type: 'validation', behavior: 'hang', events: ['*'], phases: 'request' };
const exit: Spec = { name: 'fragile/exit', type: 'validation', behavior: 'exit', events: ['tools/call'], phases: 'request' };

async function writeMcpJson(dir: TempDir, interceptors: Record<string, unknown>): Promise<string> {
  const file = dir.file('.mcp.json');
  await writeFile(
    file,
    JSON.stringify({ mcpServers: { echo: fixtureServer('echo-server'), leaky: fixtureServer('leaky-server') }, interceptors }, null, 2),
  );
  return file;
}

describe('interceptors: interceptor servers judge calls at the gate', { timeout: 240_000 }, () => {
  let dir: TempDir;
  let http: HttpGateway;
  let audit: string;
  let invoked: string;
  const agents = Object.fromEntries(['alice', 'bob', 'carol', 'dave', 'erin', 'frank'].map((a) => [a, makeToken()]));

  before(async () => {
    dir = await tempDir();
    audit = dir.file('audit.jsonl');
    invoked = dir.file('invoked.jsonl');
    await writeFile(invoked, '');
    const config = await writeMcpJson(dir, {
      words: interceptorServer([validator], ['--invoked', invoked]),
      upper: interceptorServer([upperRequest]),
      wordsResult: interceptorServer([resultValidator]),
      result: interceptorServer([upperResult]),
      slow: interceptorServer([hang]),
      fragile: interceptorServer([exit]),
    });
    const rules = await writeRules(dir, {
      agents: Object.fromEntries(Object.entries(agents).map(([id, t]) => [id, { tokens: [t.hash], allow: { servers: ['*'] } }])),
      guards: false,
      interceptors: [
        { use: 'words', agents: 'alice' },
        { use: 'wordsResult', agents: 'carol' },
        { use: 'upper', agents: 'alice', servers: 'echo' },
        { use: 'result', agents: 'carol' },
        { use: 'slow', agents: 'bob', timeoutMs: 1000 },
        { use: 'slow', agents: 'dave', timeoutMs: 1000, failOpen: true },
        { use: 'words', agents: 'erin', mode: 'audit' },
        { use: 'fragile', agents: 'frank' },
      ],
    });
    http = await startHttpGateway({ config, agent: null, args: ['--pins', 'off', '--rules', rules, '--audit', audit] });
  });
  after(async () => {
    await http?.stop();
    await dir?.remove();
  });

  async function agent(name: string): Promise<Awaited<ReturnType<typeof connectAgent>>['client']> {
    return (await connectAgent(http.url, { token: agents[name]!.token })).client;
  }

  it('a validator refuses a call the server never gets, and lets a clean one through (mutated before it goes)', async () => {
    const alice = await agent('alice');
    try {
      const denied = await rpcError(alice.callTool({ name: 'echo__echo', arguments: { text: 'a forbidden word' } }));
      assert.equal(denied.data?.code, 'MCPG_INTERCEPTOR_DENIED');
      assert.match(denied.message, /words\/no-forbidden/);
      assert.match(denied.message, /the word "forbidden" is not allowed/);
      // Request phase: mutations first, then validations; the echo server got the mutated text.
      assert.equal(textOf(await alice.callTool({ name: 'echo__echo', arguments: { text: 'hello there' } })), 'HELLO THERE');
      const lines = (await readFile(invoked, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as InvokedLine);
      const seen = lines.find((l) => l.phase === 'request');
      assert.equal(seen?.context.principal.id, 'alice');
      assert.equal(seen?.meta['io.mcpgate/server'], 'echo');
    } finally {
      await alice.close();
    }
  });

  it('a validator refuses a result, and a result mutator rewrites one before the agent gets it', async () => {
    const carol = await agent('carol');
    try {
      assert.equal(textOf(await carol.callTool({ name: 'echo__echo', arguments: { text: 'quiet words' } })), 'QUIET WORDS');
      // Response phase: validations first, on the server's own answer (the mutator never ran).
      const denied = await rpcError(carol.callTool({ name: 'echo__echo', arguments: { text: 'forbidden fruit' } }));
      assert.equal(denied.data?.code, 'MCPG_INTERCEPTOR_DENIED');
      assert.equal(denied.data?.phase, 'response');
      assert.match(denied.message, /was not passed on/);
    } finally {
      await carol.close();
    }
  });

  it('audit mode never blocks: the verdict is audited, the call goes', async () => {
    const erin = await agent('erin');
    try {
      assert.equal(
        textOf(await erin.callTool({ name: 'echo__echo', arguments: { text: 'forbidden but audited' } })),
        'forbidden but audited',
      );
    } finally {
      await erin.close();
    }
    assert.ok(
      await until(async () => {
        const records = (await readFile(audit, 'utf8').catch(() => ''))
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as AuditLine);
        return records.some(
          (r) =>
            r.event === 'interceptor' &&
            r.agent === 'erin' &&
            r.decision === 'allow' &&
            r.verdicts[0]?.outcome === 'invalid' &&
            r.verdicts[0]?.mode === 'audit',
        );
      }),
    );
  });

  it('a hanging interceptor fails its agent at its timeout (closed, or open) without delaying another agent', async () => {
    const bob = await agent('bob');
    const dave = await agent('dave');
    const alice = await agent('alice');
    try {
      const start = performance.now();
      const bobs = rpcError(bob.callTool({ name: 'echo__echo', arguments: { text: 'waits' } }));
      const daves = dave.callTool({ name: 'echo__echo', arguments: { text: 'goes on' } });
      // Meanwhile another agent is answered at once.
      const quick = performance.now();
      assert.equal(textOf(await alice.callTool({ name: 'echo__echo', arguments: { text: 'quick' } })), 'QUICK');
      assert.ok(performance.now() - quick < 900, 'another agent waited for the hanging interceptor');
      const failed = await bobs;
      assert.equal(failed.data?.code, 'MCPG_INTERCEPTOR_FAILED');
      assert.match(failed.message, /no answer within 1000 ms/);
      const waited = performance.now() - start;
      assert.ok(waited >= 900 && waited < 10_000, `the hanging interceptor took ${Math.round(waited)} ms to fail`);
      assert.equal(textOf(await daves), 'goes on', 'a fail-open interceptor that times out lets the call go');
    } finally {
      await Promise.all([bob.close(), dave.close(), alice.close()]);
    }
  });

  it('an interceptor whose process dies fails closed', async () => {
    const frank = await agent('frank');
    try {
      const first = await rpcError(frank.callTool({ name: 'echo__echo', arguments: { text: 'one' } }));
      assert.equal(first.data?.code, 'MCPG_INTERCEPTOR_FAILED');
      const again = await rpcError(frank.callTool({ name: 'echo__echo', arguments: { text: 'two' } }));
      assert.equal(again.data?.code, 'MCPG_INTERCEPTOR_FAILED');
    } finally {
      await frank.close();
    }
  });

  it('the audit trail holds every decision, never the payload', async () => {
    const text = await readFile(audit, 'utf8');
    const records = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditLine);
    const denied = records.find((r) => r.event === 'interceptor' && r.agent === 'alice' && r.decision === 'deny');
    // The request's chain: the mutator ran first, then the validator that refused it.
    assert.deepEqual(
      denied?.verdicts.map((v) => [v.interceptor, v.host, v.outcome]),
      [
        ['text/upper-request', 'upper', 'modified'],
        ['words/no-forbidden', 'words', 'invalid'],
      ],
    );
    assert.ok(records.some((r) => r.event === 'interceptor' && r.agent === 'alice' && r.mutated === true));
    assert.ok(records.some((r) => r.event === 'interceptor' && r.agent === 'bob' && r.verdicts[0]?.outcome === 'failed'));
    for (const r of records.filter((x) => x.event === 'interceptor')) assert.ok(!JSON.stringify(r).includes('a forbidden word'));
  });
});

describe('interceptors over stdio: discovery execute_tool passes the same gate', { timeout: 120_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let invoked: string;
  const reads: Spec = {
    name: 'reads/judge',
    type: 'validation',
    behavior: 'allow-all',
    events: ['resources/read', 'prompts/get'],
    phases: 'both',
  };

  before(async () => {
    dir = await tempDir();
    invoked = dir.file('invoked.jsonl');
    await writeFile(invoked, '');
    const config = await writeMcpJson(dir, {
      words: interceptorServer([validator]),
      upper: interceptorServer([upperRequest]),
      reads: interceptorServer([reads], ['--invoked', invoked]),
    });
    gw = await startGateway({ config, args: ['--pins', 'off', '--mode', 'discovery'] });
  });
  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('without an interceptors section in the rules, every interceptor server judges every call', async () => {
    const call = (text: string): Promise<unknown> =>
      gw.client.callTool({ name: 'execute_tool', arguments: { server: 'echo', tool: 'echo', args: { text } } });
    const denied = await rpcError(call('forbidden'));
    assert.equal(denied.data?.code, 'MCPG_INTERCEPTOR_DENIED');
    assert.equal(textOf(await call('shout')), 'SHOUT');
  });

  it('a resource read and a prompt are judged on the way in and on the way out', async () => {
    const { resources } = await gw.client.listResources();
    await gw.client.readResource({ uri: resources[0]!.uri });
    await gw.client.getPrompt({ name: 'leaky__leak' });
    const seen = (await readFile(invoked, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; phase: string })
      .map((l) => `${l.event} ${l.phase}`);
    assert.deepEqual(seen, ['resources/read request', 'resources/read response', 'prompts/get request', 'prompts/get response']);
  });
});

describe('interceptors in code mode: the inner calls of a program pass the same gate', { timeout: 120_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeMcpJson(dir, { words: interceptorServer([validator]), upper: interceptorServer([upperRequest]) });
    const rules = await writeRules(dir, {
      agents: { coder: { allow: { servers: ['*'] }, mode: 'code', code: { allow: { echo: ['echo'] } } } },
      guards: false,
    });
    gw = await startGateway({ config, agent: 'coder', args: ['--pins', 'off', '--rules', rules, '--state', dir.file('state')] });
  });
  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('refuses and rewrites an inner call as it would a direct one', async () => {
    const run = async (code: string): Promise<unknown> =>
      ((await gw.client.callTool({ name: 'run_code', arguments: { code } })).structuredContent as { value?: unknown }).value;
    assert.equal(
      await run(`try { await tools.call('echo__echo', { text: 'forbidden' }); return 'made'; } catch (e) { return e.code; }`),
      'MCPG_INTERCEPTOR_DENIED',
    );
    assert.match(JSON.stringify(await run(`return await tools.call('echo__echo', { text: 'shout' });`)), /SHOUT/);
  });
});

describe('interceptors: an interceptor server over Streamable HTTP', { timeout: 120_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let remote: ChildProcess;

  before(async () => {
    dir = await tempDir();
    remote = spawn(process.execPath, [fixture('interceptor-server'), '--http', '--spec', JSON.stringify([validator, upperRequest])], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: remote.stdout! }), 'line')) as [string];
    const { url } = JSON.parse(line) as { url: string };
    const config = await writeMcpJson(dir, { remote: { url } });
    gw = await startGateway({ config, args: ['--pins', 'off'] });
  });
  after(async () => {
    await gw?.stop();
    remote?.kill();
    await dir?.remove();
  });

  it('refuses and rewrites calls as a stdio one does', async () => {
    const denied = await rpcError(gw.client.callTool({ name: 'echo__echo', arguments: { text: 'forbidden' } }));
    assert.equal(denied.data?.code, 'MCPG_INTERCEPTOR_DENIED', denied.message);
    assert.match(denied.message, /\(remote\)/);
    assert.equal(textOf(await gw.client.callTool({ name: 'echo__echo', arguments: { text: 'over http' } })), 'OVER HTTP');
  });
});
