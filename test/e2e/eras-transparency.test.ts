// What an agent gets through mcpgate is what it gets from the server directly, in either era:
// - a server written the usual way with the Python SDK (test/fixtures/python-dual-server.py) serves
//   each era its own way (tools that ask the client mid-call only in a 2025 session, an
//   input-required tool only in a 2026-07-28 one); behind a plain HTTP entry and a stdio entry with
//   `"era": "both"`, the Python SDK's own client in either era gets exactly what it gets directly;
// - a 2026-07-28 agent's notifications/cancelled over stdio without the envelope reaches the server;
// - over Streamable HTTP, a 2025-era agent's cancelled call has its POST answered at once (an empty
//   event stream), and the Python client logs nothing about it.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLI, fixtureServer, GatewayProcess, ROOT, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { JSON_HEADERS, raw, rawSession, startHttpGateway, type HttpGateway } from '../helpers/http.js';
import { NO_PYTHON_MCP, pythonWithMcp } from '../helpers/python.js';
import { startRemote, type Remote } from '../helpers/remote.js';

const python = pythonWithMcp();
const SERVER = join(ROOT, 'test', 'fixtures', 'python-dual-server.py');
const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** The Python SDK's client in one era: calls each tool of the fixture and prints what it got. */
const AGENT = join(ROOT, 'test', 'fixtures', 'python-tools-agent.py');

describe(
  'a Python SDK server of both eras behind a plain entry, for the Python SDK client in either era',
  { timeout: 180_000, skip: python === null && NO_PYTHON_MCP },
  () => {
    let dir: TempDir;
    let remote: Remote;
    let config: string;

    before(async () => {
      dir = await tempDir();
      remote = await startRemote(python!, [SERVER, '--http']);
      // The HTTP entry has no "era": mcpgate's default, a 2025 session beside the modern one on the same
      // server. A stdio server's second session is a second process, so there it is the opt-in "both"
      // (the default, one process in one era, is in eras-one-process.test.ts).
      config = await writeConfig(dir, {
        pystdio: { command: python, args: [SERVER], era: 'both' },
        pyhttp: { type: 'http', url: remote.url },
      });
    });

    after(async () => {
      await remote?.stop();
      await dir?.remove();
    });

    const agent = async (args: string[]): Promise<Record<string, string>> => {
      const { stdout } = await promisify(execFile)(python!, [AGENT, ...args], { timeout: 60_000 });
      return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, string>;
    };
    const throughMcpgate = (mode: string, server: string): Promise<Record<string, string>> =>
      agent([mode, `${server}__`, process.execPath, CLI, 'serve', '--config', config, '--pins', 'off', '--agent', 'py']);

    for (const mode of ['legacy', MODERN]) {
      it(
        `a ${mode === 'legacy' ? '2025-era' : '2026-07-28'} agent gets through mcpgate what it gets directly, from the stdio and the HTTP server`,
        { timeout: 120_000 },
        async () => {
          const direct = await agent([mode, '', python!, SERVER]);
          // The fixture's era split, seen directly: the evidence mcpgate must keep.
          if (mode === 'legacy') {
            assert.deepEqual([direct.greet, direct.sample, direct.roots], ['accept:zed', 'sampled:words', 'file:///py/root']);
            assert.match(direct.ask!, /^error: /);
          } else {
            assert.equal(direct.ask, 'accept:zed');
            assert.match(direct.greet!, /no back-channel/);
          }
          assert.deepEqual(await throughMcpgate(mode, 'pystdio'), direct);
          assert.deepEqual(await throughMcpgate(mode, 'pyhttp'), direct);
        },
      );
    }
  },
);

describe("a 2026-07-28 agent's notifications/cancelled over stdio, without the envelope", { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server', ['--marker-dir', dir.path]) });
    gw = new GatewayProcess({ config, args: ['--pins', 'off'] });
    await gw.waitForLog((l) => String(l.msg).startsWith('mcpgate ready'));
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('reaches the server by the request id it names', async () => {
    const tag = `bare-${process.pid}`;
    gw.transport.sendRaw(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'sink__slow', arguments: { ms: 30_000, tag }, _meta: ENVELOPE },
      }),
    );
    // The revision lets a cancellation go without _meta: only the request id says which call it ends.
    gw.transport.sendRaw(
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'changed my mind' } }),
    );
    assert.ok(await until(() => existsSync(dir.file(`cancelled-${tag}`)), 20_000), 'the server never saw the cancellation');
  });
});

describe("a 2025-era agent's cancelled call over Streamable HTTP", { timeout: 90_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server', ['--marker-dir', dir.path]) });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  it('has its POST answered at once with an empty event stream, and the server sees the cancellation', async () => {
    const session = await rawSession(gate.url);
    const headers = { ...JSON_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    const tag = `http-${process.pid}`;
    const started = performance.now();
    const call = raw(gate.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'sink__slow', arguments: { ms: 60_000, tag } } }),
    });
    // Cancelled once it is in flight on the server.
    assert.ok(
      await until(async () =>
        (await raw(`${gate.base}/metrics`, { method: 'GET' })).body.includes('mcpgate_calls_in_flight{server="sink"} 1'),
      ),
    );
    const cancel = await raw(gate.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'no longer needed' } }),
    });
    assert.equal(cancel.status, 202);
    const answered = await call;
    assert.ok(performance.now() - started < 30_000, "the cancelled call's POST stayed open");
    assert.equal(answered.status, 200);
    assert.match(String(answered.headers['content-type']), /^text\/event-stream/);
    assert.doesNotMatch(answered.body, /"id":3/, 'a cancelled request gets no answer');
    assert.ok(await until(() => existsSync(dir.file(`cancelled-${tag}`)), 20_000), 'the server never saw the cancellation');
  });

  it('leaves the Python client nothing to complain about', { skip: python === null && NO_PYTHON_MCP, timeout: 60_000 }, async () => {
    const script = `
import sys, anyio
from mcp.client.client import Client

async def main():
    async with Client(sys.argv[1], mode="legacy") as client:
        with anyio.move_on_after(1.5):
            await client.call_tool("sink__slow", {"ms": 60000, "tag": sys.argv[2]})
        print((await client.call_tool("sink__echo", {"text": "after"})).content[0].text)

anyio.run(main)
`;
    await writeFile(dir.file('cancel.py'), script);
    const tag = `py-${process.pid}`;
    const { stdout, stderr } = await promisify(execFile)(python!, [dir.file('cancel.py'), gate.url, tag], { timeout: 45_000 });
    assert.equal(stdout.trim(), 'after');
    assert.doesNotMatch(stderr, /Unexpected content type/);
    assert.ok(await until(() => existsSync(dir.file(`cancelled-${tag}`)), 20_000), 'the server never saw the cancellation');
  });
});
