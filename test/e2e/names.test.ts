// Names as the user chooses (issue 19), end to end with real servers: `"prefix": false` keeps a
// server's tool, prompt and resource names; `"prefix": "d2"` replaces the server name; a clash between
// two unprefixed servers withholds the later server's tool with ONE warning naming both (also after a
// tools/list_changed), while its other tools stay; a rule denying an unprefixed server's tool answers
// "unknown tool", exactly as for a made-up name.

import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  jsonOf,
  Notifications,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

const clashWarning = (line: Record<string, unknown>): boolean =>
  typeof line.msg === 'string' && line.msg.startsWith('catalog: tool "echo" of server "dyn" is withheld');

describe('names: prefix false, a prefix of its own, clashes', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let seen: Notifications;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      sink: fixtureServer('kitchen-sink-server', [], { prefix: false }),
      dyn: fixtureServer('dynamic-server', ['--pidfile', dir.file('dyn.pid')], { prefix: false }),
      other: fixtureServer('dynamic-server', [], { prefix: 'd2' }),
    });
    await writeFile(
      dir.file('gateway-rules.json'),
      JSON.stringify({ agents: { tester: { allow: { servers: ['sink', 'dyn', 'other'] }, deny: { tools: { sink: ['fail'] } } } } }),
    );
    gw = await startGateway({ config, args: ['--pins', 'off'] });
    seen = new Notifications(gw);
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('unprefixed tools keep their names, a prefixed server uses its prefix; the clash is withheld, not shadowed', async () => {
    const names = (await gw.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('echo') && names.includes('structured'), names.join(','));
    assert.ok(names.includes('d2__echo'), names.join(','));
    assert.ok(!names.some((n) => n.startsWith('other__') || n.startsWith('sink__') || n.startsWith('dyn__')), names.join(','));
    assert.equal(names.filter((n) => n === 'echo').length, 1);
    // sink is earlier in .mcp.json: its echo is the one called.
    assert.equal(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'hi');
    assert.deepEqual(jsonOf(await gw.client.callTool({ name: 'd2__echo', arguments: { message: 'm' } })), { echo_message: 'm' });
    const warning = await gw.waitForLog(clashWarning);
    assert.match(
      String(warning.msg),
      /server "sink" \(earlier in \.mcp\.json\) already exposes tool "echo"; give server "dyn" a prefix in \.mcp\.json/,
    );
  });

  it('prompts and resources keep their own names and URIs, templates included', async () => {
    const prompts = (await gw.client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('greet'), prompts.join(','));
    const uris = (await gw.client.listResources()).resources.map((r) => r.uri);
    assert.ok(uris.includes('sink://blob/1'), uris.join(','));
    const templates = (await gw.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.deepEqual(templates, ['sink://item/{id}']);
    const read = await gw.client.readResource({ uri: 'sink://item/7' });
    assert.equal(read.contents[0]?.uri, 'sink://item/7');
  });

  it('a list change that adds a tool shows it under its own name and does not repeat the clash warning', async () => {
    const before = seen.count.tools;
    process.kill(Number.parseInt(readFileSync(dir.file('dyn.pid'), 'utf8'), 10), 'SIGHUP');
    await seen.until('tools', before + 1);
    assert.deepEqual(jsonOf(await gw.client.callTool({ name: 'calculator', arguments: { a: 2, b: 3, operation: 'add' } })), { result: 5 });
    assert.equal(gw.logs.filter(clashWarning).length, 1);
  });

  it('a denied tool of an unprefixed server is answered as unknown, like a made-up name', async () => {
    const denied = await gw.client.callTool({ name: 'fail', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    const madeUp = await gw.client.callTool({ name: 'no_such_tool', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    assert.match(String(denied?.message), /unknown tool: fail/);
    assert.match(String(madeUp?.message), /unknown tool: no_such_tool/);
    assert.ok(!(await gw.client.listTools()).tools.some((t) => t.name === 'fail'));
  });
});
