// Two settings of `mcpgate serve` end to end, the real CLI over stdio with the echo fixture: the
// specification draft's rate-limited code is sent only with --draft-rate-limited-code (mcpgate's own
// -31023 otherwise, the same data), and MCPGATE_CLUSTER_SECRET exported in the shell, as the cluster
// docs have it, leaves a plain single-process serve running with a warning.

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, rpcError, startGateway, tempDir, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { writeRules } from '../helpers/http.js';

type Json = Record<string, unknown>;
const message = (line: Json): string => (typeof line.msg === 'string' ? line.msg : '');

describe('serve settings', { timeout: 90_000 }, () => {
  const dirs: TempDir[] = [];
  const gws: GatewayProcess[] = [];
  after(async () => {
    for (const gw of gws) await gw.stop();
    for (const dir of dirs) await dir.remove();
  });

  async function gateway(args: string[], env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
    const dir = await tempDir();
    dirs.push(dir);
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const rules = await writeRules(dir, { agents: { tester: { allow: { servers: ['*'] }, limits: { calls: 1, per: '1h' } } } });
    const gw = await startGateway({ config, args: ['--rules', rules, '--pins', 'off', ...args], env });
    gws.push(gw);
    return gw;
  }

  async function refusedCode(gw: GatewayProcess): Promise<{ code: unknown; data: Json }> {
    await gw.client.callTool({ name: 'echo__echo', arguments: { text: 'one' } });
    return rpcError(gw.client.callTool({ name: 'echo__echo', arguments: { text: 'two' } }));
  }

  it("refuses a call over a limit with mcpgate's own code by default", async () => {
    const err = await refusedCode(await gateway([]));
    assert.equal(err.code, -31023);
    assert.equal(err.data.code, 'MCPG_RATE_LIMITED');
    assert.equal(typeof err.data.retryAfterMs, 'number');
    assert.equal(err.data.limit, 1);
    assert.equal(err.data.remaining, 0);
  });

  it("sends the draft's -32023 with --draft-rate-limited-code, with the same data", async () => {
    const err = await refusedCode(await gateway(['--draft-rate-limited-code']));
    assert.equal(err.code, -32023);
    assert.equal(err.data.code, 'MCPG_RATE_LIMITED');
    assert.equal(err.data.limit, 1);
    assert.equal(err.data.remaining, 0);
  });

  it('runs with MCPGATE_CLUSTER_SECRET exported and no --redis, and warns that it ignores it', async () => {
    const secret = 'an-exported-secret-of-32-characters!';
    const gw = await gateway([], { MCPGATE_CLUSTER_SECRET: secret, MCPGATE_REDIS: '' });
    const warning = await gw.waitForLog((l) => message(l).includes('MCPGATE_CLUSTER_SECRET'));
    assert.equal(warning.level, 'warn');
    assert.ok(!JSON.stringify(gw.logs).includes(secret), 'the secret is never logged');
    const result = await gw.client.callTool({ name: 'echo__echo', arguments: { text: 'still here' } });
    assert.match(JSON.stringify(result), /still here/);
  });
});
