// Methods mcpgate does not know, from an SDK v1 agent over stdio, to two SDK servers that answer any
// method (the custom-method fixture): each is routed to the server its params name (a tool's name, a
// resource's URI) or whose capabilities declare its namespace, re-addressed to that server's names;
// one that belongs nowhere is refused with -32601 naming the method — never dropped.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as z from 'zod';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { fixtureServer, startGateway, tempDir, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';

const Answer = z.object({ server: z.string(), method: z.string(), params: z.record(z.string(), z.unknown()) });

describe('methods mcpgate does not know', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      a: fixtureServer('custom-method-server', ['--name', 'alpha', '--namespace', 'widgets']),
      b: fixtureServer('custom-method-server', ['--name', 'beta', '--namespace', 'gadgets']),
    });
    gw = await startGateway({ config, sdk: 'v1' });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  const ask = (method: string, params: Record<string, unknown> = {}) => gw.clientV1.request({ method, params }, Answer);

  it('goes to the one server whose capabilities declare its namespace', { timeout: 20_000 }, async () => {
    assert.deepEqual(await ask('widgets/spin', { speed: 3 }), { server: 'alpha', method: 'widgets/spin', params: { speed: 3 } });
    assert.deepEqual(await ask('gadgets/spin'), { server: 'beta', method: 'gadgets/spin', params: {} });
  });

  it("goes to the server its params name, under that server's own name or URI", { timeout: 20_000 }, async () => {
    assert.deepEqual(await ask('x/describe', { name: 'b__info' }), { server: 'beta', method: 'x/describe', params: { name: 'info' } });
    assert.deepEqual(await ask('x/peek', { uri: 'mcpgate://a/custom://note' }), {
      server: 'alpha',
      method: 'x/peek',
      params: { uri: 'custom://note' },
    });
  });

  it('is refused with -32601 naming the method when it belongs nowhere', { timeout: 20_000 }, async () => {
    let error: McpError | undefined;
    try {
      await ask('nowhere/thing');
    } catch (err) {
      error = err as McpError;
    }
    assert.equal(error?.code, -32601);
    assert.match(error.message, /method not found: nowhere\/thing .*no server declares "nowhere"/);
  });
});
