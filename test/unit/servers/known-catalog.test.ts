// An on-demand server's last known catalog (src/servers/known-catalog.ts): written when what the
// live server lists changes (and not when it does not), read back only after every list passes the
// checks a server's answer passes; anything else is a warning and "unknown".

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StdioServerConfig } from '../../../src/config/types.js';
import { DEFAULT_LIMITS } from '../../../src/config/types.js';
import { Logger, silentLogger } from '../../../src/observability/logger.js';
import { KnownCatalogs } from '../../../src/servers/known-catalog.js';
import type { Tool } from '../../../src/wire/protocol.js';

const config: StdioServerConfig = {
  type: 'stdio',
  name: 'srv',
  command: 'x',
  args: [],
  env: {},
  cwd: '/',
  disabled: false,
  timeout: 1000,
  sessions: 'shared',
  start: 'on-demand',
  limits: { ...DEFAULT_LIMITS, maxTools: 3 },
};
const tool = (name: string): Tool => ({
  name,
  description: `does ${name}`,
  inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
});

async function rig() {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgate-known-'));
  const warnings: string[] = [];
  const log = new Logger('warn', (line) => void warnings.push(String((JSON.parse(line) as { msg: string }).msg)));
  const known = new KnownCatalogs(join(dir, 'catalogs'), log);
  return { dir, warnings, known, remove: () => rm(dir, { recursive: true, force: true }) };
}

void describe('KnownCatalogs', () => {
  void it(
    'round-trips what the live server listed; an unchanged catalog is not written again; a refresh of one list is merged',
    { timeout: 5000 },
    async () => {
      const r = await rig();
      try {
        assert.equal(await r.known.load(config), undefined, 'none kept yet: unknown, silently');
        r.known.record('srv', { tools: [tool('a')], resources: [], resourceTemplates: [], prompts: [] }, 'use a', false);
        await r.known.flush();
        const file = r.known.fileOf('srv');
        const first = await stat(file);
        assert.equal(first.mode & 0o777, 0o600);
        r.known.record('srv', { tools: [tool('a')], resources: [], resourceTemplates: [], prompts: [] }, 'use a', false);
        await r.known.flush();
        assert.equal((await stat(file)).mtimeMs, first.mtimeMs, 'unchanged: not rewritten');
        r.known.record('srv', { prompts: [{ name: 'p' }] }, 'use a', false);
        await r.known.flush();
        const other = new KnownCatalogs(r.known.dir, silentLogger);
        const loaded = await other.load(config);
        assert.deepEqual(
          loaded?.lists.tools.map((t) => t.name),
          ['a'],
        );
        assert.deepEqual(
          loaded?.lists.prompts.map((p) => p.name),
          ['p'],
        );
        assert.equal(loaded?.instructions, 'use a');
        assert.deepEqual(r.warnings, []);
      } finally {
        await r.remove();
      }
    },
  );

  void it(
    "a file that is not JSON, names another server, breaks a list's schema or passes the limits is a warning and unknown",
    { timeout: 5000 },
    async () => {
      const r = await rig();
      try {
        await mkdir(r.known.dir, { recursive: true });
        const base = { format: 1, server: 'srv', modern: false, tools: [tool('a')], resources: [], resourceTemplates: [], prompts: [] };
        const cases: [string, string][] = [
          ['{"format": 1, "server": "srv"', 'not JSON'],
          [JSON.stringify([]), 'not a JSON object'],
          [JSON.stringify({ ...base, format: 2 }), 'format 2 is not 1'],
          [JSON.stringify({ ...base, server: 'other' }), 'it names another server'],
          [JSON.stringify({ ...base, tools: [{ name: 42, inputSchema: { type: 'object' } }] }), 'invalid tools at tools.0.name'],
          [JSON.stringify({ ...base, tools: [tool('a'), tool('b'), tool('c'), tool('d')] }), 'tools has 4 items, more than the limit of 3'],
          [JSON.stringify({ ...base, resources: {} }), 'resources is not an array'],
          [JSON.stringify({ ...base, instructions: 7 }), '"instructions" is not a string'],
        ];
        for (const [text, why] of cases) {
          r.warnings.length = 0;
          await writeFile(r.known.fileOf('srv'), text);
          assert.equal(await r.known.load(config), undefined, why);
          assert.equal(r.warnings.length, 1, why);
          assert.ok(
            r.warnings[0]!.includes('the last known catalog of server "srv"') &&
              r.warnings[0]!.includes(why) &&
              r.warnings[0]!.includes('treated as unknown'),
            `${why}: ${r.warnings[0]}`,
          );
        }
      } finally {
        await r.remove();
      }
    },
  );

  void it('a server name with any characters gets a file of its own inside the directory', { timeout: 5000 }, async () => {
    const r = await rig();
    try {
      r.known.record('../evil name', { tools: [], resources: [], resourceTemplates: [], prompts: [] }, undefined, false);
      await r.known.flush();
      const file = r.known.fileOf('../evil name');
      assert.equal(join(r.known.dir, '..%2Fevil%20name.json'), file);
      assert.equal((JSON.parse(await readFile(file, 'utf8')) as { server: string }).server, '../evil name');
    } finally {
      await r.remove();
    }
  });
});
