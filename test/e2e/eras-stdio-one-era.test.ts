// A server of both eras written the usual way with the Python SDK (test/fixtures/python-dual-server.py)
// behind a plain stdio entry runs as one process, spoken to in the era it answered first
// (2026-07-28): a 2026-07-28 agent (the Python SDK's client) gets what it gets directly; a 2025-era
// agent gets the input-required tool as an elicitation it answers, and a clear error from the tools
// that ask mid-call the 2025 way, which no modern link carries (docs/configuration.md: `"era":
// "2025"` or `"both"` keep them).

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLI, ROOT, tempDir, writeConfig, type TempDir } from '../helpers/gateway.js';
import { NO_PYTHON_MCP, pythonWithMcp } from '../helpers/python.js';

const python = pythonWithMcp();
const SERVER = join(ROOT, 'test', 'fixtures', 'python-dual-server.py');
const AGENT = join(ROOT, 'test', 'fixtures', 'python-tools-agent.py');
const MODERN = '2026-07-28';

describe(
  'a Python SDK server of both eras behind a plain stdio entry: one process, one era',
  { timeout: 120_000, skip: python === null && NO_PYTHON_MCP },
  () => {
    let dir: TempDir;
    let config: string;

    before(async () => {
      dir = await tempDir();
      config = await writeConfig(dir, { py: { command: python, args: [SERVER] } });
    });

    after(async () => {
      await dir?.remove();
    });

    const agent = async (args: string[]): Promise<Record<string, string>> => {
      const { stdout } = await promisify(execFile)(python!, [AGENT, ...args], { timeout: 60_000 });
      return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, string>;
    };
    const throughMcpgate = (mode: string): Promise<Record<string, string>> =>
      agent([mode, 'py__', process.execPath, CLI, 'serve', '--config', config, '--pins', 'off', '--agent', 'py']);

    it('a 2026-07-28 agent gets what it gets directly', { timeout: 60_000 }, async () => {
      assert.deepEqual(await throughMcpgate(MODERN), await agent([MODERN, '', python!, SERVER]));
    });

    it(
      'a 2025-era agent gets the input-required tool, and a clear error from the tools that ask mid-call',
      { timeout: 60_000 },
      async () => {
        const legacy = await throughMcpgate('legacy');
        assert.equal(legacy.ask, 'accept:zed', 'the input-required result becomes an elicitation the agent answers');
        assert.equal(legacy.era, MODERN, 'the one link speaks 2026-07-28');
        for (const tool of ['greet', 'sample', 'roots'] as const) assert.match(legacy[tool]!, /^error: .*no back-channel/, tool);
      },
    );
  },
);
