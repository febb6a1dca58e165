// Names as the user chooses, in-process (test/helpers/in-process.ts) over in-memory
// servers: `"prefix": false` keeps a server's tool, prompt and resource names; `"prefix": "d2"`
// replaces the server name; a clash between two unprefixed servers withholds the later server's tool
// with ONE warning naming both (also after a tools/list_changed), while its other tools stay; a rule
// denying an unprefixed server's tool answers "unknown tool", exactly as for a made-up name.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DYNAMIC_CALCULATOR, dynamicEcho, dynamicServer, kitchenSink, type FakeServer } from '../../helpers/fake-server.js';
import { stdioFront, until, type InProcessStdio } from '../../helpers/in-process.js';

const clashWarning = (line: Record<string, unknown>): boolean =>
  typeof line.msg === 'string' && line.msg.startsWith('catalog: tool "echo" of server "dyn" is withheld');

/** The text of a result's first block (fails unless it is text). */
function textOf(result: Record<string, unknown>): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`expected a text result, got ${JSON.stringify(result)}`);
  return first.text;
}

describe('names: prefix false, a prefix of its own, clashes', { timeout: 30_000 }, () => {
  let r: InProcessStdio;
  let dyn: FakeServer;
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> =>
    r.agent.result('tools/call', { name, arguments: args });
  const toolNames = async (): Promise<string[]> => ((await r.agent.result('tools/list')).tools as { name: string }[]).map((t) => t.name);
  const listChanges = (): number => r.agent.all.filter((m) => m.method === 'notifications/tools/list_changed').length;

  before(async () => {
    dyn = dynamicServer('dyn');
    r = await stdioFront({
      servers: [kitchenSink('sink'), dyn, dynamicServer('other')],
      config: { sink: { prefix: false }, dyn: { prefix: false }, other: { prefix: 'd2' } },
      rules: { agents: { tester: { allow: { servers: ['sink', 'dyn', 'other'] }, deny: { tools: { sink: ['fail'] } } } } },
    });
    await r.agent.initialize();
  });

  after(async () => {
    await r?.close();
  });

  it('unprefixed tools keep their names, a prefixed server uses its prefix; the clash is withheld, not shadowed', async () => {
    const names = await toolNames();
    assert.ok(names.includes('echo') && names.includes('structured'), names.join(','));
    assert.ok(names.includes('d2__echo'), names.join(','));
    assert.ok(!names.some((n) => n.startsWith('other__') || n.startsWith('sink__') || n.startsWith('dyn__')), names.join(','));
    assert.equal(names.filter((n) => n === 'echo').length, 1);
    // sink is earlier in .mcp.json: its echo is the one called.
    assert.equal(textOf(await call('echo', { text: 'hi' })), 'hi');
    assert.deepEqual(JSON.parse(textOf(await call('d2__echo', { message: 'm' }))), { echo_message: 'm' });
    assert.ok(await until(() => r.lines.some(clashWarning)), 'no clash warning');
    const warning = r.lines.find(clashWarning)!;
    assert.match(
      String(warning.msg),
      /server "sink" \(earlier in \.mcp\.json\) already exposes tool "echo"; give server "dyn" a prefix in \.mcp\.json/,
    );
  });

  it('prompts and resources keep their own names and URIs, templates included', async () => {
    const prompts = ((await r.agent.result('prompts/list')).prompts as { name: string }[]).map((p) => p.name);
    assert.ok(prompts.includes('greet'), prompts.join(','));
    const uris = ((await r.agent.result('resources/list')).resources as { uri: string }[]).map((x) => x.uri);
    assert.ok(uris.includes('sink://blob/1'), uris.join(','));
    const templates = ((await r.agent.result('resources/templates/list')).resourceTemplates as { uriTemplate: string }[]).map(
      (t) => t.uriTemplate,
    );
    assert.deepEqual(templates, ['sink://item/{id}']);
    const read = await r.agent.result('resources/read', { uri: 'sink://item/7' });
    assert.equal((read.contents as { uri: string }[])[0]?.uri, 'sink://item/7');
  });

  it('a list change that adds a tool shows it under its own name and does not repeat the clash warning', async () => {
    const before = listChanges();
    dyn.setTools([dynamicEcho(), DYNAMIC_CALCULATOR]);
    assert.ok(await until(() => listChanges() >= before + 1), 'no tools/list_changed reached the agent');
    assert.deepEqual(JSON.parse(textOf(await call('calculator', { a: 2, b: 3, operation: 'add' }))), { result: 5 });
    assert.equal(r.lines.filter(clashWarning).length, 1);
  });

  it('a denied tool of an unprefixed server is answered as unknown, like a made-up name', async () => {
    const denied = await r.agent.error('tools/call', { name: 'fail', arguments: {} });
    const madeUp = await r.agent.error('tools/call', { name: 'no_such_tool', arguments: {} });
    assert.match(denied.message, /unknown tool: fail/);
    assert.match(madeUp.message, /unknown tool: no_such_tool/);
    assert.ok(!(await toolNames()).includes('fail'));
  });
});
