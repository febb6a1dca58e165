// The built-in guards and the result cap end to end, with the leaky fixture server (real child
// process) behind a real gateway. With the default settings, none of the 50+ generated secrets of
// test/helpers/secret-corpus.ts reaches the agent — in a tool result (text, structuredContent, an
// embedded resource), an error, a resource read or a prompt — nor the server through arguments
// (blocked with MCPG_GUARD_BLOCKED; the server's own record of what it got proves it), over stdio
// (through discovery's execute_tool) and over Streamable HTTP with a 2025 agent and a 2026-07-28
// agent. A result over the rules' cap reaches its agent cut with a note; the kept result read page
// by page is the original's bytes; another agent cannot read it; it expires. The audit trail never
// holds a secret.

import { readFile, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { secretCorpus } from '../helpers/secret-corpus.js';

const corpus = secretCorpus();
const MODERN = '2026-07-28';

/** Throws when any generated secret appears in `text`, naming its format (never printing it). */
function assertNoSecret(text: string, where: string): void {
  for (const sample of corpus) assert.ok(!text.includes(sample.value), `a ${sample.format} reached ${where}`);
}

interface Agent {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  readResource(params: { uri: string }): Promise<unknown>;
  getPrompt(params: { name: string }): Promise<unknown>;
  listResources(): Promise<{ resources: { uri: string }[] }>;
}

/** Every sample through every place an answer holds text, and through the arguments of a call. */
async function leakEverything(
  agent: Agent,
  call: (tool: string, args: Record<string, unknown>) => Promise<unknown>,
  who: string,
): Promise<void> {
  for (let n = 0; n < corpus.length; n++) {
    const result = JSON.stringify(await call('leak', { n }));
    assertNoSecret(result, `${who} through a result`);
    assert.match(result, /\[redacted: [a-z ]+\]/, `${who}: sample ${n} (${corpus[n]!.format}) has no marker`);
    const failed = await rpcError(call('leak_error', { n }));
    assertNoSecret(JSON.stringify(failed), `${who} through an error`);
    const blocked = await rpcError(call('echo', { payload: corpus[n]!.text }));
    assert.equal(blocked.data?.code, 'MCPG_GUARD_BLOCKED', `${who}: sample ${n} (${corpus[n]!.format}) was not blocked`);
    assertNoSecret(JSON.stringify(blocked), `${who} through a blocked call's error`);
  }
  const { resources } = await agent.listResources();
  const all = resources.find((r) => r.uri.includes('leak'))!;
  assertNoSecret(JSON.stringify(await agent.readResource({ uri: all.uri })), `${who} through a resource`);
  assertNoSecret(JSON.stringify(await agent.getPrompt({ name: 'leaky__leak' })), `${who} through a prompt`);
}

describe('guards: no generated secret passes with the default settings', { timeout: 240_000 }, () => {
  let dir: TempDir;
  let received: string;
  let audit: string;
  let stdio: GatewayProcess;
  let http: HttpGateway;
  const alice = makeToken();
  const bob = makeToken();

  before(async () => {
    dir = await tempDir();
    received = dir.file('received.jsonl');
    audit = dir.file('audit.jsonl');
    await writeFile(received, '');
    const config = await writeConfig(dir, { leaky: fixtureServer('leaky-server', ['--received', received]) });
    stdio = await startGateway({ config, args: ['--pins', 'off', '--mode', 'discovery', '--audit', audit, '--audit-arguments'] });
    const rules = await writeRules(dir, {
      agents: {
        alice: { tokens: [alice.hash], allow: { servers: ['*'] } },
        bob: { tokens: [bob.hash], allow: { servers: ['*'] } },
      },
      guards: { where: [{ tools: 'big', maxResultBytes: 8192 }], keepResults: { seconds: 3, maxBytes: 1048576 } },
    });
    http = await startHttpGateway({ config, agent: null, args: ['--pins', 'off', '--rules', rules] });
  });
  after(async () => {
    await stdio?.stop();
    await http?.stop();
    await dir?.remove();
  });

  it('over stdio, through discovery execute_tool', async () => {
    const agent = stdio.client as unknown as Agent;
    await leakEverything(
      {
        ...agent,
        getPrompt: (p) => stdio.client.getPrompt(p),
        listResources: () => stdio.client.listResources(),
        readResource: (p) => stdio.client.readResource(p),
      },
      (tool, args) => stdio.client.callTool({ name: 'execute_tool', arguments: { server: 'leaky', tool, args } }),
      'a stdio agent',
    );
  });

  it('over Streamable HTTP, a 2025 agent (direct calls)', async () => {
    const { client } = await connectAgent(http.url, { token: alice.token });
    try {
      await leakEverything(client, (tool, args) => client.callTool({ name: `leaky__${tool}`, arguments: args }), 'a 2025 HTTP agent');
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP, a 2026-07-28 agent (direct calls)', async () => {
    const client = new Client(
      { name: 'mcpgate-modern-test', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { authorization: `Bearer ${bob.token}` } } }),
    );
    try {
      await leakEverything(client, (tool, args) => client.callTool({ name: `leaky__${tool}`, arguments: args }), 'a 2026-07-28 HTTP agent');
    } finally {
      await client.close();
    }
  });

  it('no blocked argument reached the server; the audit trail holds no secret, only markers and detectors', async () => {
    const got = await readFile(received, 'utf8');
    assert.ok(got.includes('"tool":"leak"'), 'the server recorded the calls it got');
    assert.ok(!got.includes('"tool":"echo"'), 'no blocked call reached the server');
    assertNoSecret(got, 'the server');
    const trail = await readFile(audit, 'utf8');
    assertNoSecret(trail, 'the audit trail');
    assert.match(trail, /"event":"guard".*"direction":"arguments".*"outcome":"blocked"/);
    assert.match(trail, /"event":"guard".*"direction":"result".*"outcome":"redacted"/);
  });

  it('a result over its cap: cut with a note; its pages are the original bytes; another agent cannot read it; it expires', async () => {
    const a = await connectAgent(http.url, { token: alice.token });
    const b = await connectAgent(http.url, { token: bob.token });
    try {
      const result = (await a.client.callTool({ name: 'leaky__big', arguments: { bytes: 50_000 } })) as {
        content: { type: string; text?: string }[];
      };
      assert.ok(Buffer.byteLength(JSON.stringify(result)) <= 8192, 'the agent got at most the cap');
      assert.equal(result.content[0]!.text, 'head of the big result');
      assert.ok(!result.content.some((c) => c.type === 'image'), 'the image is not inlined past the cap');
      const note = result.content[result.content.length - 1]!.text!;
      assert.match(note, /over the cap of 8192 bytes/);
      const uri = /(mcpgate:\/\/results\/[A-Za-z0-9_-]+)/.exec(note)![1]!;
      // The server's result as its SDK writes it (an image's keys in the schema's order): what the pages must join into.
      const line = 'ok é€😀 line of the big result\n';
      const expected = JSON.stringify({
        content: [
          { type: 'text', text: 'head of the big result' },
          { type: 'image', data: Buffer.alloc(Math.ceil(50_000 / 4)).toString('base64'), mimeType: 'image/png' },
          { type: 'text', text: line.repeat(Math.ceil(50_000 / Buffer.byteLength(line))) },
        ],
      });
      let joined = '';
      let next: string | undefined = uri;
      let pages = 0;
      while (next !== undefined) {
        const page = (await a.client.readResource({ uri: next })) as { contents: { text: string }[]; _meta?: Record<string, unknown> };
        joined += page.contents[0]!.text;
        next = page._meta?.['mcpgate/next'] as string | undefined;
        pages++;
      }
      assert.ok(pages > 1);
      assert.equal(Buffer.compare(Buffer.from(joined), Buffer.from(expected)), 0, 'the pages joined are the original bytes');
      // Not found, as an unknown or expired one: nothing says it exists (MCP's resource not found, -32602 in the current revision).
      const notFound = (e: { code: unknown; message: string }): boolean => e.message.includes('no kept result');
      const other = await rpcError(b.client.readResource({ uri }));
      assert.ok(notFound(other), JSON.stringify(other));
      const metrics = await (await fetch(`${http.base}/metrics`)).text();
      assert.match(metrics, /mcpgate_result_bytes_total\{[^}]*agent="alice",server="leaky",tool="big"[^}]*\} \d+/);
      assert.match(metrics, /mcpgate_results_cut_total\{[^}]*server="leaky"[^}]*\} 1/);
      assert.ok(
        await until(async () => {
          const read = await rpcError(a.client.readResource({ uri })).catch(() => undefined);
          return read !== undefined && notFound(read);
        }, 10_000),
        'the kept result expires',
      );
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});
