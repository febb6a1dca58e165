// Benchmark: time from a rules file being replaced (written to a temp file and renamed over the old
// one, as editors save) to the agent seeing the new catalog (its tools/list_changed notification, and
// a tools/list that reflects the change), through mcpgate's watch, debounce, validation and apply.

import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ECHO = join(ROOT, 'dist/test/fixtures/echo-server.js');
const CLI = join(ROOT, 'dist/src/cli/main.js');

const rules = (denyEcho: boolean): string =>
  JSON.stringify({
    agents: { bench: { allow: { servers: ['*'] }, ...(denyEcho ? { deny: { tools: { echo: ['echo'] } } } : {}) } },
  });

/** Milliseconds from each rename to the agent seeing the changed catalog. */
export async function benchReload(rounds = 9): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-'));
  const config = join(dir, '.mcp.json');
  const rulesFile = join(dir, 'gateway-rules.json');
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }));
  await writeFile(rulesFile, rules(false));
  const client = new Client({ name: 'mcpgate-bench', version: '1.0.0' });
  let notified: (() => void) | undefined;
  client.setNotificationHandler('notifications/tools/list_changed', () => notified?.());
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--config', config, '--rules', rulesFile, '--agent', 'bench', '--log-level', 'error'],
      stderr: 'ignore',
    }),
  );
  const samples: number[] = [];
  try {
    await client.listTools();
    for (let r = 0; r < rounds; r++) {
      const deny = r % 2 === 0;
      const seen = new Promise<void>((resolve) => (notified = resolve));
      await writeFile(`${rulesFile}.tmp`, rules(deny));
      const t0 = performance.now();
      await rename(`${rulesFile}.tmp`, rulesFile);
      await seen;
      const { tools } = await client.listTools();
      samples.push(performance.now() - t0);
      if (tools.some((t) => t.name === 'echo__echo') === deny) throw new Error('the catalog did not follow the rules');
    }
    return samples;
  } finally {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }
}
