// The audit trail: `--audit FILE` writes one JSON line per decision — an allowed call with
// its outcome and duration, a call denied by the rules, a call to a held tool — and a `released` line
// when `mcpgate approve` releases a held tool; argument values stay out unless --audit-arguments.
// Rotation and reopening: test/unit/observability/audit-log.test.ts.

import { readFile, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cli,
  closeRig,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';

type Line = Record<string, unknown>;

async function lines(file: string): Promise<Line[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

describe('audit: one line per decision', { timeout: 60_000 }, () => {
  let r: { dir: TempDir; gw: GatewayProcess } | undefined;
  const SECRET = 'value-that-must-not-be-logged';

  before(async () => {
    const dir = await tempDir();
    const config = await writeConfig(dir, { web: fixtureServer('kitchen-sink-server', ['--name', 'web']) });
    const rules = dir.file('rules.json');
    await writeFile(rules, JSON.stringify({ agents: { tester: { allow: { servers: ['web'] }, deny: { tools: { web: ['env'] } } } } }));
    const gw = await startGateway({
      config,
      args: ['--rules', rules, '--pins', 'strict', '--state', dir.file('state'), '--audit', dir.file('audit.log')],
    });
    r = { dir, gw };
  });
  after(() => closeRig(r));

  it('records held, denied and allowed calls, and the release, without argument values', { timeout: 40_000 }, async () => {
    const { dir, gw } = r!;
    const file = dir.file('audit.log');
    const held = await rpcError(gw.client.callTool({ name: 'web__echo', arguments: { text: SECRET } }));
    assert.equal((held.data as { code: string }).code, 'MCPG_TOOL_HELD');
    const denied = await rpcError(gw.client.callTool({ name: 'web__env', arguments: { name: SECRET } }));
    assert.equal((denied.data as { code: string }).code, 'MCPG_POLICY_DENIED');
    const approved = await cli(['approve', 'web', 'echo', '--state', dir.file('state')]);
    assert.equal(approved.code, 0, approved.err);
    assert.ok(await until(async () => (await lines(file)).some((l) => l.event === 'released')), 'no released line');
    assert.equal(textOf(await gw.client.callTool({ name: 'web__echo', arguments: { text: SECRET } })), SECRET);
    assert.ok(await until(async () => (await lines(file)).some((l) => l.decision === 'allowed')), 'no allowed line');

    const all = await lines(file);
    const heldLine = all.find((l) => l.decision === 'held');
    assert.deepEqual(
      { ...heldLine, time: undefined },
      {
        time: undefined,
        event: 'call',
        agent: 'tester',
        session: heldLine?.session,
        method: 'tools/call',
        server: 'web',
        tool: 'web__echo',
        argumentNames: ['text'],
        decision: 'held',
        outcome: 'failed',
        code: 'MCPG_TOOL_HELD',
      },
    );
    assert.match(String(heldLine?.time), /^\d{4}-\d\d-\d\dT/);
    const deniedLine = all.find((l) => l.decision === 'denied');
    assert.equal(deniedLine?.tool, 'web__env');
    assert.equal(deniedLine?.code, 'MCPG_POLICY_DENIED');
    const released = all.find((l) => l.event === 'released');
    assert.equal(released?.server, 'web');
    assert.equal(released?.tool, 'echo');
    assert.equal(released?.by, 'operator');
    assert.match(String(released?.digest), /^sha256:/);
    const allowed = all.find((l) => l.decision === 'allowed');
    assert.equal(allowed?.outcome, 'ok');
    assert.equal(allowed?.tool, 'web__echo');
    assert.equal(typeof allowed?.durationMs, 'number');
    assert.equal(allowed?.session, heldLine?.session);
    assert.ok(!(await readFile(file, 'utf8')).includes(SECRET), 'an argument value reached the audit file');
  });
});
