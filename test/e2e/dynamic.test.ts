// Seed 001 (dynamic catalogs) through the gateway: the dynamic server starts with `echo` (or N tools
// from --toolcount-file) and adds calculator, counter, echo4… on each SIGHUP with tools/list_changed.
// The agent must see each change: a list_changed notification, then the new tool in tools/list and
// callable as `dyn__NAME`. Plus the gateway's own part: a burst of notifications is debounced without
// losing the last change, prompts/resources changes are relayed too, and other servers keep working.

import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  jsonOf,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
  Notifications,
} from '../helpers/gateway.js';

interface Rig {
  dir: TempDir;
  gw: GatewayProcess;
  seen: Notifications;
  /** The dynamic server's pid (from its --pidfile). */
  dynPid: number;
}

/** A gateway over `dyn` (dynamic-server, optionally starting with `toolCount` tools) and `sink` (kitchen-sink). */
async function open(toolCount?: number): Promise<Rig> {
  const dir = await tempDir();
  const args = ['--pidfile', dir.file('dyn.pid')];
  if (toolCount !== undefined) {
    await writeFile(dir.file('count'), `${toolCount}\n`);
    args.push('--toolcount-file', dir.file('count'));
  }
  const config = await writeConfig(dir, { dyn: fixtureServer('dynamic-server', args), sink: fixtureServer('kitchen-sink-server') });
  // Pins off: this is about the catalog following the server; pins.test.ts covers what tofu holds.
  const gw = await startGateway({ config, args: ['--pins', 'off'] }).catch(async (err: unknown) => {
    await dir.remove();
    throw err;
  });
  return { dir, gw, seen: new Notifications(gw), dynPid: Number.parseInt(readFileSync(dir.file('dyn.pid'), 'utf8'), 10) };
}

async function close(r: Rig | undefined): Promise<void> {
  if (r === undefined) return;
  if (r.gw.child.exitCode === null) await r.gw.stop();
  await r.dir.remove();
}

/** The agent's view of one server's tools: names without the `SERVER__` prefix, sorted. */
async function toolsOf(gw: GatewayProcess, server: string): Promise<string[]> {
  const { tools } = await gw.client.listTools();
  return tools
    .filter((t) => t.name.startsWith(`${server}__`))
    .map((t) => t.name.slice(server.length + 2))
    .sort();
}

const call = async (gw: GatewayProcess, name: string, args: Record<string, unknown> = {}): Promise<unknown> =>
  jsonOf(await gw.client.callTool({ name, arguments: args }));

/** SIGHUP to the dynamic server, then the agent's n-th tools/list_changed. */
async function sighup(r: Rig, n: number): Promise<void> {
  process.kill(r.dynPid, 'SIGHUP');
  await r.seen.until('tools', n);
}

/** The other server still answers (a change on one server never disturbs the others). */
async function sinkWorks(gw: GatewayProcess): Promise<void> {
  assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'unaffected' } })), 'unaffected');
}

const refreshes = (gw: GatewayProcess, server: string): number =>
  gw.logs.filter((l) => l.msg === 'catalog refreshed' && l.server === server).length;

describe('dynamic catalogs reach the agent', { timeout: 180_000 }, () => {
  it('starts with echo only, and echo answers exactly {"echo_message": …}', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open();
      assert.deepEqual(await toolsOf(r.gw, 'dyn'), ['echo']);
      const result = await r.gw.client.callTool({ name: 'dyn__echo', arguments: { message: 'Hello, dynamic server!' } });
      assert.equal((result.content as unknown[]).length, 1);
      assert.deepEqual(jsonOf(result), { echo_message: 'Hello, dynamic server!' });
    } finally {
      await close(r);
    }
  });

  it('--toolcount-file 3 starts with echo, calculator and counter, all working', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open(3);
      assert.deepEqual(await toolsOf(r.gw, 'dyn'), ['calculator', 'counter', 'echo']);
      assert.deepEqual(await call(r.gw, 'dyn__echo', { message: 'Hello, preconfigured server!' }), {
        echo_message: 'Hello, preconfigured server!',
      });
      assert.deepEqual(await call(r.gw, 'dyn__calculator', { a: 5, b: 7, operation: 'add' }), { result: 12 });
      assert.deepEqual(await call(r.gw, 'dyn__counter'), { count: 3 });
    } finally {
      await close(r);
    }
  });

  it('SIGHUP adds calculator; the agent is notified, then lists and calls it', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open();
      await sighup(r, 1);
      assert.deepEqual(await toolsOf(r.gw, 'dyn'), ['calculator', 'echo']);
      assert.deepEqual(await call(r.gw, 'dyn__calculator', { a: 10, b: 5, operation: 'add' }), { result: 15 });
      assert.deepEqual(await call(r.gw, 'dyn__calculator', { a: 10, b: 5, operation: 'multiply' }), { result: 50 });
      await sinkWorks(r.gw);
    } finally {
      await close(r);
    }
  });

  it('no notification before SIGHUP, exactly one per SIGHUP after; counter arrives second', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open();
      await r.gw.client.ping(); // a round trip: anything sent at start would have arrived by now
      assert.equal(r.seen.count.tools, 0);
      await sighup(r, 1);
      assert.ok((await toolsOf(r.gw, 'dyn')).includes('calculator'));
      await sighup(r, 2);
      assert.deepEqual(await toolsOf(r.gw, 'dyn'), ['calculator', 'counter', 'echo']);
      await r.gw.client.ping();
      assert.equal(r.seen.count.tools, 2);
      assert.equal(refreshes(r.gw, 'dyn'), 2, 'one catalog refresh per change');
      assert.deepEqual(r.seen.count, { tools: 2, resources: 0, prompts: 0 }, 'only the tools list changed');
    } finally {
      await close(r);
    }
  });

  it('--toolcount-file 2 then SIGHUPs add counter ({count: 3}) and echo4 ({…, tool_number: 4})', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open(2);
      assert.deepEqual(await toolsOf(r.gw, 'dyn'), ['calculator', 'echo']);
      await sighup(r, 1);
      assert.deepEqual(await toolsOf(r.gw, 'dyn'), ['calculator', 'counter', 'echo']);
      assert.deepEqual(await call(r.gw, 'dyn__counter'), { count: 3 });
      await sighup(r, 2);
      assert.deepEqual(await toolsOf(r.gw, 'dyn'), ['calculator', 'counter', 'echo', 'echo4']);
      assert.deepEqual(await call(r.gw, 'dyn__echo4', { message: 'Testing echo4' }), { echo_message: 'Testing echo4', tool_number: 4 });
    } finally {
      await close(r);
    }
  });

  it('three SIGHUPs in sequence → notifications 1, 2, 3 and calculator, counter, echo4 in order', { timeout: 15_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open();
      const expected = [
        ['calculator', 'echo'],
        ['calculator', 'counter', 'echo'],
        ['calculator', 'counter', 'echo', 'echo4'],
      ];
      for (const [i, names] of expected.entries()) {
        await sighup(r, i + 1);
        assert.equal(r.seen.count.tools, i + 1);
        assert.deepEqual(await toolsOf(r.gw, 'dyn'), names);
        if (i === 1) assert.deepEqual(await call(r.gw, 'dyn__counter'), { count: 3 });
        await sinkWorks(r.gw);
      }
      assert.deepEqual(await call(r.gw, 'dyn__echo', { message: 'still' }), { echo_message: 'still' });
    } finally {
      await close(r);
    }
  });

  it('debounce: a burst of 10 list_changed loses no tool and reaches the agent as a few notifications', { timeout: 15_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open();
      const burst = Array.from({ length: 10 }, (_, i) => `burst${i}`);
      // The other server is called while the burst is being refreshed.
      const [answer] = await Promise.all([
        r.gw.client.callTool({ name: 'sink__burst', arguments: { n: 10 } }),
        call(r.gw, 'dyn__echo', { message: 'during' }).then((res) => assert.deepEqual(res, { echo_message: 'during' })),
      ]);
      assert.equal(textOf(answer), 'burst');
      // The server sent all 10 notifications before its answer. After each notification, look: a lost
      // last change would leave the loop waiting for one more (the test's timeout fails it).
      let names: string[] = [];
      for (let n = 1; !burst.every((b) => names.includes(b)); n++) {
        await r.seen.until('tools', n);
        names = await toolsOf(r.gw, 'sink');
      }
      await r.gw.client.ping();
      const notified = r.seen.count.tools;
      assert.ok(notified >= 1 && notified <= 3, `expected 1–3 tools/list_changed for a burst of 10, got ${notified}`);
      assert.equal(refreshes(r.gw, 'sink'), notified, 'one notification per refresh that changed something');
      assert.equal(textOf(await r.gw.client.callTool({ name: 'sink__burst9', arguments: {} })), 'burst9');
      assert.deepEqual(await call(r.gw, 'dyn__echo', { message: 'after' }), { echo_message: 'after' });
    } finally {
      await close(r);
    }
  });

  it('for prompts and resources: their list_changed updates the lists and is relayed per kind', { timeout: 30_000 }, async () => {
    let r: Rig | undefined;
    try {
      r = await open();
      const before = await r.gw.client.listResources();
      assert.ok(!before.resources.some((res) => res.uri.endsWith('sink://added/1')));
      assert.equal(textOf(await r.gw.client.callTool({ name: 'sink__change', arguments: {} })), 'changed');
      await Promise.all([r.seen.until('tools', 1), r.seen.until('resources', 1), r.seen.until('prompts', 1)]);
      const { prompts } = await r.gw.client.listPrompts();
      assert.ok(
        prompts.some((p) => p.name === 'sink__added1'),
        prompts.map((p) => p.name).join(','),
      );
      const { resources } = await r.gw.client.listResources();
      const added = resources.find((res) => res.uri === 'mcpgate://sink/sink://added/1');
      assert.ok(added !== undefined, resources.map((res) => res.uri).join(','));
      const read = await r.gw.client.readResource({ uri: added.uri });
      assert.equal((read.contents[0] as { text?: string }).text, 'added 1');
      const prompt = await r.gw.client.getPrompt({ name: 'sink__added1', arguments: {} });
      assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'added prompt 1' });
      assert.ok((await toolsOf(r.gw, 'sink')).includes('added1'));
      assert.deepEqual(await call(r.gw, 'dyn__echo', { message: 'ok' }), { echo_message: 'ok' });
    } finally {
      await close(r);
    }
  });
});
