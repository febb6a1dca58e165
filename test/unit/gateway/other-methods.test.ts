// Methods mcpgate does not know, from an agent over stdio (in-process, test/helpers/in-process.ts),
// to two in-memory servers that answer any method (as test/fixtures/custom-method-server.ts does):
// each is routed to the server its params name (a tool's name, a resource's URI) or whose
// capabilities declare its namespace, re-addressed to that server's names; one that belongs nowhere
// is refused with -32601 naming the method — never dropped.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer } from '../../helpers/fake-server.js';
import { stdioFront, type InProcessStdio } from '../../helpers/in-process.js';

/** custom-method-server: a tool `info`, a resource `custom://note`, `experimental: { NAMESPACE: {} }`, and any method answered. */
function customMethodServer(name: string, label: string, namespace: string): FakeServer {
  return new FakeServer(name, {
    tools: [{ name: 'info', description: 'Says which server this is', text: () => label }],
    resources: [{ uri: 'custom://note', name: 'note', text: label }],
    capabilities: { resources: {}, experimental: { [namespace]: {} } },
    // A 2025-era server: the modern revision's `server/discover` is a method it does not know.
    fallback: (method, params) => (method === 'server/discover' ? undefined : { server: label, method, params }),
  });
}

describe('methods mcpgate does not know', { timeout: 30_000 }, () => {
  let r: InProcessStdio;

  before(async () => {
    r = await stdioFront({ servers: [customMethodServer('a', 'alpha', 'widgets'), customMethodServer('b', 'beta', 'gadgets')] });
    await r.agent.initialize();
  });

  after(async () => {
    await r?.close();
  });

  const ask = (method: string, params: Record<string, unknown> = {}) => r.agent.result(method, params);

  it('goes to the one server whose capabilities declare its namespace', async () => {
    assert.deepEqual(await ask('widgets/spin', { speed: 3 }), { server: 'alpha', method: 'widgets/spin', params: { speed: 3 } });
    assert.deepEqual(await ask('gadgets/spin'), { server: 'beta', method: 'gadgets/spin', params: {} });
  });

  it("goes to the server its params name, under that server's own name or URI", async () => {
    assert.deepEqual(await ask('x/describe', { name: 'b__info' }), { server: 'beta', method: 'x/describe', params: { name: 'info' } });
    assert.deepEqual(await ask('x/peek', { uri: 'mcpgate://a/custom://note' }), {
      server: 'alpha',
      method: 'x/peek',
      params: { uri: 'custom://note' },
    });
  });

  it('is refused with -32601 naming the method when it belongs nowhere', async () => {
    const error = await r.agent.error('nowhere/thing', {});
    assert.equal(error.code, -32601);
    assert.match(error.message, /method not found: nowhere\/thing .*no server declares "nowhere"/);
  });
});
