// `"roots"` in a `.mcp.json` entry: the real @modelcontextprotocol/server-filesystem,
// started with no directory arguments, asks `roots/list` the moment it is initialized and serves
// only the roots it is given. A shared server asks at start-up, when no agent can be asked: it is
// answered from the entry's list. A per-agent server's question goes to its own agent — its roots
// win — and falls back to the list for an agent without the roots capability.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { ROOT, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 90_000;
const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

async function allowed(client: Client, server: string): Promise<string> {
  return textOf(await client.callTool({ name: `${server}__list_allowed_directories`, arguments: {} }));
}

describe('"roots" in .mcp.json answer a server\'s roots/list', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let configured = '';
  let agentRoot = '';
  const clients: Client[] = [];

  before(async () => {
    dir = await tempDir();
    configured = await realpath(dir.path).then(async (real) => (await mkdir(join(real, 'configured')), join(real, 'configured')));
    agentRoot = join(await realpath(dir.path), 'agent-own');
    await mkdir(agentRoot);
    const entry = { command: process.execPath, args: [FILESYSTEM], roots: [pathToFileURL(configured).href], timeout: 30_000 };
    const config = await writeConfig(dir, { files: entry, mine: { ...entry, sessions: 'per-agent' } });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--startup-timeout', '30000'] });
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gate?.stop();
    await dir?.remove();
  });

  it('a shared server that asks at start-up, with no agent to ask, gets the configured roots', async () => {
    await gate.gw.waitForLog((l) => String(l.msg).startsWith('answered roots/list from the entry') && l.server === 'files');
    const a = await connectAgent(gate.url, { headers: { 'x-mcpgate-agent': 'plain' } });
    clients.push(a.client);
    assert.ok(await until(async () => (await allowed(a.client, 'files')).includes(configured)), await allowed(a.client, 'files'));
  });

  it('a per-agent server asks its own agent; an agent without the roots capability gets the configured roots', async () => {
    const withRoots = await connectAgent(gate.url, {
      headers: { 'x-mcpgate-agent': 'ann' },
      capabilities: { roots: {} },
      setup: (c) => c.setRequestHandler('roots/list', () => ({ roots: [{ uri: pathToFileURL(agentRoot).href, name: 'ann' }] })),
    });
    const without = await connectAgent(gate.url, { headers: { 'x-mcpgate-agent': 'ben' } });
    clients.push(withRoots.client, without.client);
    assert.ok(await until(async () => (await allowed(withRoots.client, 'mine')).includes(agentRoot)), "ann's own roots were not used");
    assert.ok(!(await allowed(withRoots.client, 'mine')).includes(configured), "the configured roots replaced ann's own");
    assert.ok(await until(async () => (await allowed(without.client, 'mine')).includes(configured)), await allowed(without.client, 'mine'));
    assert.ok(!(await allowed(without.client, 'mine')).includes(agentRoot), "ann's roots reached ben's server");
  });
});

describe(
  'behind the HTTP front, a shared server that asks roots/list at start-up gets the first agent that has roots',
  { timeout: TIMEOUT },
  () => {
    let dir: TempDir;
    let gate: HttpGateway;
    let client: Client | undefined;

    before(async () => {
      dir = await tempDir();
      const config = await writeConfig(dir, { files: { command: process.execPath, args: [FILESYSTEM], timeout: 30_000 } });
      gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--startup-timeout', '30000'] });
    });

    after(async () => {
      await client?.close().catch(() => undefined);
      await gate?.stop();
      await dir?.remove();
    });

    it("answered with no roots at start-up, it is told once an agent with roots is ready, asks again and serves the agent's roots", async () => {
      await gate.gw.waitForLog((l) => String(l.msg).startsWith('answered roots/list with no roots') && l.server === 'files');
      const agentRoot = join(await realpath(dir.path), 'agent-own');
      await mkdir(agentRoot);
      ({ client } = await connectAgent(gate.url, {
        capabilities: { roots: { listChanged: true } },
        setup: (c) => c.setRequestHandler('roots/list', () => ({ roots: [{ uri: pathToFileURL(agentRoot).href, name: 'own' }] })),
      }));
      assert.ok(await until(async () => (await allowed(client!, 'files')).includes(agentRoot)), await allowed(client, 'files'));
    });
  },
);
