// The capability directory in the gateway's instructions, in process over the real stdio front and
// Gateway: an agent in search (or code) mode is told, one line per server it may use, what the
// server is for — its instructions' first sentence, else a few tool names — in initialize (2025) and
// server/discover (2026-07-28); a server it may not use is not named; the rules turn it off
// (`"capabilityDirectory": false`) or on in another mode; it is bounded, with a note when cut.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer, toolsServer } from '../../helpers/fake-server.js';
import { stdioFront, type InProcessStdio } from '../../helpers/in-process.js';
import { GatewayError } from '../../../src/errors.js';
import { parseRules } from '../../../src/rules/load.js';

const TIMEOUT = 30_000;
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADER = 'Servers you can use (name, how many tools you may call, what it is for):';
const MAX_DIRECTORY_CHARS = 2_000;

function serversOf(): FakeServer[] {
  const notes = new FakeServer('notes', {
    instructions: 'Keeps the team\'s notes and searches them. Use "notes__find" first.\nMore words.',
    tools: [
      { name: 'find', description: 'Finds a note.' },
      { name: 'write', description: 'Writes a note.' },
    ],
  });
  const secret = new FakeServer('vault', { tools: [{ name: 'open', description: 'Opens the vault.' }] });
  return [toolsServer('github', 'github'), notes, secret];
}

async function instructionsOf(r: InProcessStdio, era: 'legacy' | 'modern'): Promise<string | undefined> {
  const result =
    era === 'legacy'
      ? await r.agent.result('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } })
      : await r.agent.result('server/discover', { _meta: ENVELOPE });
  return result.instructions as string | undefined;
}

describe('the capability directory in the instructions', { timeout: TIMEOUT }, () => {
  const fronts: InProcessStdio[] = [];
  const front = async (agent: Record<string, unknown>, mode?: 'search' | 'aggregate'): Promise<InProcessStdio> => {
    const r = await stdioFront({
      servers: serversOf(),
      agent: 'ann',
      rules: { agents: { ann: { allow: { servers: ['github', 'notes'] }, deny: { tools: { notes: ['write'] } }, ...agent } } },
      ...(mode !== undefined && { gateway: { mode } }),
    });
    fronts.push(r);
    return r;
  };
  let search: InProcessStdio;

  before(async () => {
    search = await front({ mode: 'search' });
  });

  after(async () => {
    for (const r of fronts) await r.close();
  });

  for (const era of ['legacy', 'modern'] as const)
    it(`${era}: a search-mode agent is told each server it may use and what it is for`, async () => {
      const text = await instructionsOf(search, era);
      assert.ok(text !== undefined);
      const directory = text.slice(text.indexOf(HEADER));
      assert.equal(directory.split('\n')[0], HEADER);
      assert.match(directory, /^- notes \(1 tools\): Keeps the team's notes and searches them\.$/m, 'the denied tool is not counted');
      assert.match(directory, /^- github \(\d+ tools\): tools (such as )?create_issue, /m);
      assert.ok(!text.includes('vault'), 'a server the agent may not use is not named');
    });

  it('the rules read capabilityDirectory as true or false, and refuse anything else naming its path', () => {
    const parse = (value: unknown) =>
      parseRules(JSON.stringify({ agents: { ann: { allow: { servers: ['*'] }, capabilityDirectory: value } } }), '/rules.json', ['notes']);
    assert.equal(parse(false).agents.get('ann')?.modeSettings?.capabilityDirectory, false);
    assert.equal(parse(true).agents.get('ann')?.modeSettings?.capabilityDirectory, true);
    assert.throws(
      () => parse('no'),
      (err: unknown) =>
        err instanceof GatewayError &&
        (err.detail as { issues: { path: string; message: string }[] }).issues.some(
          (i) => i.path.includes('capabilityDirectory') && /expected true or false/.test(i.message),
        ),
    );
  });

  it('is not given in aggregate mode, unless the rules turn it on; the rules turn it off in search mode', async () => {
    const aggregate = await front({}, 'aggregate');
    assert.ok(!((await instructionsOf(aggregate, 'legacy')) ?? '').includes(HEADER));
    const on = await front({ capabilityDirectory: true }, 'aggregate');
    assert.ok(((await instructionsOf(on, 'legacy')) ?? '').includes(HEADER));
    const off = await front({ mode: 'search', capabilityDirectory: false });
    for (const era of ['legacy', 'modern'] as const) assert.ok(!((await instructionsOf(off, era)) ?? '').includes(HEADER), era);
  });

  it(`is at most ${MAX_DIRECTORY_CHARS} characters, and says how many servers it left out`, async () => {
    const servers = Array.from(
      { length: 60 },
      (_, i) =>
        new FakeServer(`s${i}`, {
          instructions: `Server ${i} does many useful things for the team, described at some length here.`,
          tools: [{ name: 'go', description: 'Goes.' }],
        }),
    );
    const r = await stdioFront({ servers, agent: 'ann', rules: { agents: { ann: { allow: { servers: ['*'] }, mode: 'search' } } } });
    fronts.push(r);
    const text = (await instructionsOf(r, 'legacy')) ?? '';
    const directory = text.slice(text.indexOf(HEADER));
    assert.ok(directory.length <= MAX_DIRECTORY_CHARS, String(directory.length));
    const shown = directory.split('\n').filter((l) => l.startsWith('- ')).length;
    assert.ok(shown > 10 && shown < 60, String(shown));
    assert.ok(
      directory.endsWith(`(${60 - shown} more servers not listed here, for room; their tools are found all the same.)`),
      directory.slice(-120),
    );
  });
});
