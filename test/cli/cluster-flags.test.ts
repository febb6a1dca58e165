// The cluster flags of `mcpgate serve` refuse what would run a silently broken cluster,
// with a clear message and exit code 2, before anything starts; a Redis password is never echoed.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await main(argv, env, { out: () => undefined, err: (t) => (err += t) });
  return { code, err };
}

void describe('mcpgate serve: cluster flags', { timeout: 10_000 }, () => {
  void it('--redis off loopback needs a cluster secret', { timeout: 5000 }, async () => {
    const r = await run(['serve', '--http', '127.0.0.1:0', '--redis', 'redis://:hunter2-password@redis.internal:6379/0']);
    assert.equal(r.code, 2);
    assert.match(r.err, /needs --cluster-secret/);
    assert.doesNotMatch(r.err, /hunter2/);
    const env = await run(['serve', '--http', '127.0.0.1:0'], { MCPGATE_REDIS: 'rediss://10.0.0.5:6380' });
    assert.equal(env.code, 2);
    assert.match(env.err, /needs --cluster-secret/);
  });

  void it('--redis needs --http, a redis:// URL, and a secret of 16+ characters', { timeout: 5000 }, async () => {
    assert.match((await run(['serve', '--stdio', '--redis', 'redis://127.0.0.1:6379'])).err, /--redis needs --http/);
    const bad = await run(['serve', '--http', '0', '--redis', 'http://:pw-secret@127.0.0.1:6379']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /redis:\/\/ or rediss:\/\//);
    assert.doesNotMatch(bad.err, /pw-secret/);
    assert.match(
      (await run(['serve', '--http', '0', '--redis', 'redis://127.0.0.1:6379', '--cluster-secret', 'short'])).err,
      /at least 16/,
    );
    assert.match((await run(['serve', '--http', '0', '--cluster-secret', 'x'.repeat(20)])).err, /need --redis/);
  });

  void it('--workers N>1 needs --http and --redis (sessions would break without shared owners)', { timeout: 5000 }, async () => {
    const r = await run(['serve', '--http', '0', '--workers', '2']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--workers 2 needs --redis URL \(or MCPGATE_REDIS\)/);
    const stdio = await run(['serve', '--stdio', '--workers', '2', '--redis', 'redis://127.0.0.1:6379']);
    assert.equal(stdio.code, 2);
    assert.match(stdio.err, /--workers 2 needs --http HOST:PORT/);
    assert.match((await run(['serve', '--http', '0', '--workers', 'x'])).err, /--workers must be a positive whole number/);
    assert.match(
      (await run(['serve', '--http', '0', '--workers', '65', '--redis', 'redis://127.0.0.1:6379'])).err,
      /--workers must be at most 64/,
    );
  });
});
