// Benchmark: time from a server's death (SIGKILL) to its first successful call after the gateway
// respawned it, measured by an SDK v2 agent calling through mcpgate as fast as the gateway answers.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SINK = join(ROOT, 'dist/test/fixtures/kitchen-sink-server.js');
const CLI = join(ROOT, 'dist/src/cli/main.js');

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]?.text ?? '';
}

/** Milliseconds from each kill to the first successful call, one sample per round. */
export async function benchRespawn(rounds = 7): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-bench-'));
  const config = join(dir, '.mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { sink: { command: process.execPath, args: [SINK] } } }));
  const client = new Client({ name: 'mcpgate-bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--config', config, '--log-level', 'error', '--pins', 'off'],
      stderr: 'ignore',
    }),
  );
  const samples: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      // A successful call first: the session has proven itself, as a healthy server's would have.
      const pid = Number(text(await client.callTool({ name: 'sink__pid', arguments: {} })));
      const killedAt = performance.now();
      process.kill(pid, 'SIGKILL');
      for (let i = 0; ; i++) {
        if (i > 20_000) throw new Error('the server was not respawned');
        try {
          const now = Number(text(await client.callTool({ name: 'sink__pid', arguments: {} })));
          if (now !== pid) break;
        } catch {
          // unavailable (or not listed yet) while it restarts: try again
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      samples.push(performance.now() - killedAt);
    }
    return samples;
  } finally {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }
}
