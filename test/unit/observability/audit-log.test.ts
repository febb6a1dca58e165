// The audit log's bounds: a file is rotated to FILE.1 once it passes its size limit, is
// reopened at its path after an external rotator moved it (SIGHUP), and holds argument values only
// when asked (names always).

import { readFile, rename } from 'node:fs/promises';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../../src/observability/audit.js';

type Line = Record<string, unknown>;

async function lines(file: string): Promise<Line[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

describe('audit: bounded files', { timeout: 20_000 }, () => {
  it('rotates to FILE.1 past its size, reopens after an external move, and writes values only when asked', async () => {
    const path = await mkdtemp(join(tmpdir(), 'mcpgate-audit-'));
    const dir = { file: (name: string) => join(path, name), remove: () => rm(path, { recursive: true, force: true }) };
    try {
      const file = dir.file('audit.log');
      const audit = new AuditLog({ target: file, maxBytes: 600, includeArguments: true });
      const call = {
        event: 'call',
        agent: 'a',
        session: 's',
        method: 'tools/call',
        tool: 'x__y',
        decision: 'allowed',
        outcome: 'ok',
      } as const;
      for (let i = 0; i < 5; i++) audit.record({ ...call, ...audit.argumentsOf({ n: i }) });
      for (let i = 5; i < 10; i++) audit.record({ ...call, ...audit.argumentsOf({ n: i }) });
      await rename(file, dir.file('moved.log'));
      audit.reopen();
      audit.record({ ...call, ...audit.argumentsOf({ n: 99 }) });
      await audit.close();
      const rotated = await lines(`${file}.1`);
      const moved = await lines(dir.file('moved.log'));
      const current = await lines(file);
      assert.ok((await readFile(`${file}.1`)).length <= 600 + 200, 'the rotated file grew past its limit');
      assert.deepEqual(
        current.map((l) => (l.arguments as { n: number }).n),
        [99],
      );
      // Two rotations (one old file is kept): FILE.1 holds the second four lines, the moved file the rest.
      const ns = (ls: Line[]): number[] => ls.map((l) => (l.arguments as { n: number }).n);
      assert.deepEqual(ns(rotated), [4, 5, 6, 7]);
      assert.deepEqual(ns(moved), [8, 9]);
      assert.deepEqual(current[0]?.argumentNames, ['n']);
    } finally {
      await dir.remove();
    }
  });
});
