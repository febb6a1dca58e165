// An agent that closes mcpgate's stderr (mcporter does: it reads stdout only) must not take the
// gateway down: the real CLI over stdio, its stderr pipe closed by the agent's side as soon as the
// first log line comes, then calls that log (debug) on a stderr that is gone. The gateway answers
// every one, stays up, and exits 0 when the agent closes stdin.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLI, fixtureServer, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';

describe('a closed stderr', { timeout: 60_000 }, () => {
  let dir: TempDir;
  after(async () => {
    await dir?.remove();
  });

  it('does not end the gateway: calls made after it are answered, and it exits 0 at the end', async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--config', config, '--agent', 'tester', '--log-level', 'debug', '--pins', 'off'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    let gone: unknown;
    void exited.then((e) => (gone = e));
    child.stderr.once('data', () => child.stderr.destroy());
    const answers = new Map<unknown, Record<string, unknown>>();
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (msg.id !== undefined) answers.set(msg.id, msg);
      }
    });
    const send = (msg: unknown): boolean => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    assert.ok(await until(() => answers.has(0) || gone !== undefined), 'initialize is answered');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    for (let id = 1; id <= 20; id++)
      send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: `t${id}` } } });
    assert.ok(
      await until(() => answers.size === 21 || gone !== undefined, 20_000),
      `answers: ${answers.size}, exit: ${JSON.stringify(gone)}`,
    );
    assert.equal(gone, undefined, 'the gateway is still up');
    for (let id = 1; id <= 20; id++) assert.match(JSON.stringify(answers.get(id)?.result), new RegExp(`t${id}`));
    child.stdin.end();
    const [code] = await exited;
    assert.equal(code, 0);
  });
});
