// The bundled example (what `npm start` serves): the real reference servers from npm —
// server-everything, -memory and -filesystem, started through `npx` as users configure them — all
// come up behind mcpgate, each answers a call, and shutdown leaves none of their processes behind.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readFile, realpath } from 'node:fs/promises';
import { GatewayProcess, ROOT, startGateway, tempDir, textOf, until, type TempDir } from '../helpers/gateway.js';
import { connectAgent } from '../helpers/http.js';

/** Pids of every process whose command line mentions the reference servers. */
function referenceServers(): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => /server-(everything|memory|filesystem)/.test(l) && !l.includes('ps -eo'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

describe('examples/.mcp.json: the reference servers behind mcpgate', { timeout: 90_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let before_: number[];

  before(async () => {
    dir = await tempDir();
    before_ = referenceServers();
    // TMPDIR keeps the memory server's file inside this test's directory.
    // The agent offers a root; server-filesystem asks for roots as soon as it is initialized (before
    // the agent may be), and the gateway must hold that request until the agent is ready.
    gw = await startGateway({
      config: join(ROOT, 'examples/.mcp.json'),
      env: { TMPDIR: dir.path },
      agent: 'example',
      args: ['--startup-timeout', '60000', '--state', dir.path],
      capabilities: { roots: { listChanged: true } },
      setup: (client) => client.setRequestHandler('roots/list', () => ({ roots: [{ uri: `file://${dir.path}`, name: 'test root' }] })),
    });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('lists the tools of all three servers, namespaced', { timeout: 60_000 }, async () => {
    const names = (await gw.client.listTools()).tools.map((t) => t.name);
    for (const name of ['everything__echo', 'memory__read_graph', 'files__list_allowed_directories'])
      assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`);
  });

  it('calls a tool on each server', { timeout: 30_000 }, async () => {
    assert.equal(textOf(await gw.client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } })), 'Echo: hi');
    assert.equal(textOf(await gw.client.callTool({ name: 'everything__echo', arguments: { message: 'again' } })), 'Echo: again');
    const graph = await gw.client.callTool({ name: 'memory__read_graph', arguments: {} });
    assert.notEqual(graph.isError, true);
  });

  it("relays server-filesystem's early roots/list to the agent once it is initialized", { timeout: 30_000 }, async () => {
    const real = await realpath(dir.path);
    assert.ok(
      await until(async () => textOf(await gw.client.callTool({ name: 'files__list_allowed_directories', arguments: {} })).includes(real)),
      "server-filesystem never adopted the agent's root",
    );
  });

  it('reads a resource of server-everything through its namespaced URI', { timeout: 30_000 }, async () => {
    const { resources } = await gw.client.listResources();
    const first = resources.find((r) => r.uri.startsWith('mcpgate://everything/'));
    assert.ok(first !== undefined, 'no resource of server-everything listed');
    const read = await gw.client.readResource({ uri: first.uri });
    assert.equal(read.contents[0]?.uri, first.uri);
  });

  it('exits 0 and leaves no reference server (nor npx wrapper) running', { timeout: 30_000 }, async () => {
    assert.deepEqual(await gw.stop(), { code: 0, signal: null });
    const left = referenceServers().filter((pid) => !before_.includes(pid));
    assert.deepEqual(left, []);
  });
});

describe('npm start: the example over HTTP, as package.json runs it', { timeout: 90_000 }, () => {
  it('serves the example on 127.0.0.1, says where, and an HTTP agent can use it', { timeout: 80_000 }, async () => {
    const dir = await tempDir();
    const scripts = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const words = scripts.start!.split(' ');
    assert.deepEqual(words.slice(0, 3), ['node', 'dist/src/cli/main.js', 'serve']);
    const http = words.indexOf('--http');
    assert.match(words[http + 1]!, /^127\.0\.0\.1:\d+$/, 'npm start binds to loopback');
    // The same flags on a free port, so the test never collides with a gateway the user runs.
    const args = words.slice(3).map((w, i) => (i + 3 === http + 1 ? '127.0.0.1:0' : w));
    const gate = new GatewayProcess({
      config: join(ROOT, 'examples/.mcp.json'),
      agent: null,
      args: [...args, '--state', dir.path, '--startup-timeout', '60000'],
      env: { TMPDIR: dir.path },
    });
    try {
      const line = await gate.waitForLog((l) => String(l.msg).startsWith('mcpgate listening on http://127.0.0.1:'));
      const agent = await connectAgent(line.url as string);
      try {
        assert.equal(
          textOf(await agent.client.callTool({ name: 'everything__echo', arguments: { message: 'over http' } })),
          'Echo: over http',
        );
        const denied = await agent.client.callTool({ name: 'files__write_file', arguments: { path: 'x', content: 'y' } }).then(
          () => 'allowed',
          (err: Error) => err.message,
        );
        assert.match(denied, /agent "example" may not use tool "write_file"/, 'the example rules apply to the agent "example"');
      } finally {
        await agent.client.close();
      }
      gate.child.kill('SIGTERM');
      assert.deepEqual(await gate.exited, { code: 0, signal: null });
    } finally {
      if (gate.child.exitCode === null) gate.child.kill('SIGKILL');
      await dir.remove();
    }
  });
});
