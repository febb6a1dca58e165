// A server entry's "era": `mcpgate check`'s refusals, a pinned era that does not match,
// the default "auto" probe for stdio entries (a strict 2026-07-28 server, 2025-era servers of both
// SDK lines, a server that never answers the probe and one that dies of it), and the cache hints of a
// 2026-07-28 server's lists skipping re-listing on a reconnect. Split from eras-servers.test.ts so
// each file stays well within the per-file timeout on a loaded machine.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cli,
  fixtureServer,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

describe("cache hints of modern servers' lists", { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      cached: fixtureServer('modern-server', ['--ttl', '600000', '--count', dir.file('cached.txt')], { era: '2026-07-28' }),
      plain: fixtureServer('modern-server', ['--count', dir.file('plain.txt')], { era: '2026-07-28' }),
    });
    gw = await startGateway({ config, args: ['--pins', 'off', '--backoff-cap', '50'] });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  const listed = async (server: string): Promise<number> => {
    const { readFile } = await import('node:fs/promises');
    return (await readFile(dir.file(`${server}.txt`), 'utf8')).split('\n').filter((l) => l === 'tools/list').length;
  };
  const shows = async (tool: string): Promise<boolean> => (await gw.client.listTools()).tools.some((t) => t.name === tool);

  it(
    'a reconnect takes a list still fresh by its hint from what was kept, without asking; a list with no hint is asked again',
    { timeout: 30_000 },
    async () => {
      assert.ok((await shows('cached__echo')) && (await shows('plain__echo')));
      const before = { cached: await listed('cached'), plain: await listed('plain') };
      assert.ok(before.cached >= 1 && before.plain >= 1);
      for (const server of ['cached', 'plain']) {
        assert.equal(textOf(await gw.client.callTool({ name: `${server}__exit`, arguments: {} })), 'bye');
        await gw.waitForLog((l) => l.msg === `server "${server}" is back`);
        assert.ok(await until(() => shows(`${server}__echo`)), `${server}'s tools never came back`);
      }
      assert.equal(await listed('cached'), before.cached, 'the fresh list was asked for again');
      assert.equal(await listed('plain'), before.plain + 1, 'the list without a hint was not asked for again');
      assert.equal(textOf(await gw.client.callTool({ name: 'cached__echo', arguments: { text: 'still here' } })), 'still here');
    },
  );

  it('a list change on the listen stream fetches the list again, fresh hint or not', { timeout: 30_000 }, async () => {
    const before = await listed('cached');
    assert.equal(textOf(await gw.client.callTool({ name: 'cached__grow', arguments: {} })), 'grown 1');
    assert.ok(await until(() => shows('cached__grown_1')), 'the grown tool never appeared');
    assert.equal(await listed('cached'), before + 1);
  });
});

describe('the "era" of a server entry', { timeout: 90_000 }, () => {
  let dir: TempDir;
  before(async () => (dir = await tempDir()));
  after(async () => dir?.remove());

  it('mcpgate check refuses an unknown era and a modern era for an SSE server, naming the path', { timeout: 10_000 }, async () => {
    const config = await writeConfig(dir, {
      a: { ...fixtureServer('echo-server'), era: '2027' },
      b: { type: 'sse', url: 'http://127.0.0.1:9/sse', era: '2026-07-28' },
    });
    const { code, out, err } = await cli(['check', '--config', config]);
    assert.equal(code, 2, out + err);
    assert.match(out + err, /mcpServers\.a\.era.*"2025", "2026-07-28", "auto" or "both"/);
    assert.match(out + err, /mcpServers\.b\.era.*no 2026-07-28 form/);
  });

  it('a 2025-era server pinned to 2026-07-28 fails to start with a message that says why', { timeout: 40_000 }, async () => {
    const config = await writeConfig(dir, {
      old: fixtureServer('echo-server', [], { era: '2026-07-28' }),
      modern: fixtureServer('modern-server', [], { era: '2025' }),
    });
    const gw = await startGateway({ config });
    try {
      const old = await gw.waitForLog(
        (l) => typeof l.msg === 'string' && l.msg.startsWith('server "old"') && /server\/discover/.test(l.msg),
      );
      assert.match(String(old.msg), /before completing server\/discover; the entry's "era" is "2026-07-28"/);
      const modern = await gw.waitForLog(
        (l) => typeof l.msg === 'string' && l.msg.startsWith('server "modern"') && /initialize/.test(l.msg),
      );
      assert.match(String(modern.msg), /Unsupported protocol version/);
    } finally {
      await gw.stop();
    }
  });

  it(
    'a stdio entry without "era" is probed: a modern server is spoken to in 2026-07-28, 2025-era ones are initialized',
    { timeout: 40_000 },
    async () => {
      // The modern fixture refuses initialize: it works only if the default probe found its era.
      const config = await writeConfig(dir, {
        modern: fixtureServer('modern-server'),
        sink: fixtureServer('kitchen-sink-server'),
        v1: fixtureServer('echo-server-v1'),
      });
      const gw = await startGateway({ config });
      try {
        assert.equal(textOf(await gw.client.callTool({ name: 'modern__echo', arguments: { text: 'probed' } })), 'probed');
        assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'legacy' } })), 'legacy');
        assert.equal(textOf(await gw.client.callTool({ name: 'v1__echo', arguments: { text: 'v1' } })), 'v1');
      } finally {
        await gw.stop();
      }
    },
  );

  it('a server that never answers the probe is initialized within the startup time', { timeout: 40_000 }, async () => {
    const config = await writeConfig(dir, { quiet: fixtureServer('probe-averse-server', ['--on-probe', 'silent']) });
    const gw = await startGateway({ config, args: ['--startup-timeout', '2000'] });
    try {
      assert.equal(textOf(await gw.client.callTool({ name: 'quiet__echo', arguments: { text: 'after the probe' } })), 'after the probe');
      await gw.waitForLog((l) => l.server === 'quiet' && l.msg === 'server/discover went unanswered; falling back to initialize');
    } finally {
      await gw.stop();
    }
  });

  it(
    'a server that dies of the probe is initialized without it on the next start, and the finding is kept',
    { timeout: 40_000 },
    async () => {
      const starts = dir.file('starts.txt');
      const config = await writeConfig(dir, { fragile: fixtureServer('probe-averse-server', ['--on-probe', 'crash', '--starts', starts]) });
      const gw = await startGateway({ config, args: ['--backoff-cap', '50'] });
      try {
        assert.ok(
          await until(async () => (await gw.client.listTools()).tools.some((t) => t.name === 'fragile__echo')),
          'the server never came up',
        );
        assert.equal(textOf(await gw.client.callTool({ name: 'fragile__echo', arguments: { text: 'second start' } })), 'second start');
        const failed = await gw.waitForLog(
          (l) => l.server === 'fragile' && typeof l.msg === 'string' && /before completing server\/discover/.test(l.msg),
        );
        assert.match(String(failed.msg), /the probe for its era: it is initialized next time/);
        const { readFile } = await import('node:fs/promises');
        assert.equal(
          (await readFile(starts, 'utf8')).trim().split('\n').length,
          2,
          'one start died of the probe, the next was initialized',
        );
      } finally {
        await gw.stop();
      }
    },
  );

  it('"auto" falls back to initialize for a 2025-era server', { timeout: 40_000 }, async () => {
    const config = await writeConfig(dir, { old: fixtureServer('echo-server', [], { era: 'auto' }) });
    const gw = await startGateway({ config });
    try {
      assert.equal(textOf(await gw.client.callTool({ name: 'old__echo', arguments: { text: 'fell back' } })), 'fell back');
    } finally {
      await gw.stop();
    }
  });
});
