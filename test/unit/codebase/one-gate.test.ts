// Policy has one gate: the agent session and its modes reach quotas, approvals and the guards only
// through the call gate (policy/call-gate.ts), so none of the session's own files may name a quota
// or an approval. Read as text from src/: no build needed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const GATEWAY = fileURLToPath(new URL('../../../../src/gateway/', import.meta.url));

function sessionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sessionFiles(join(dir, e.name)) : /^session.*\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

void describe('one gate', () => {
  void it('no file of the agent session (src/gateway/**/session*.ts) names a quota or an approval', { timeout: 10_000 }, () => {
    const files = sessionFiles(GATEWAY);
    assert.ok(
      files.some((f) => f.endsWith('session/session.ts')),
      `found ${files.join(', ')}`,
    );
    const named = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/quota|approval/.test(line) ? [`${relative(GATEWAY, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(named, []);
  });
});
