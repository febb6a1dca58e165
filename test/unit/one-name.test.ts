// One name, one meaning (docs/architecture.md's vocabulary): no two files of src/ declare and export
// the same name. A re-export (`export type { X } from './x.js'`) names the same thing, so it is not a
// second meaning; two declarations are, even when their shapes happen to agree.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The names each file declares with `export`, mapped to the files that declare them. */
export function exportedNames(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const declared =
    /^export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:interface|class|function\*?|const|let|var|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
  const byName = new Map<string, string[]>();
  for (const [file, text] of files) {
    for (const match of text.matchAll(declared)) {
      const name = match[1]!;
      const where = byName.get(name) ?? [];
      if (!where.includes(file)) where.push(file);
      byName.set(name, where);
    }
  }
  return byName;
}

export function duplicates(files: ReadonlyMap<string, string>): string[] {
  return [...exportedNames(files)]
    .filter(([, where]) => where.length > 1)
    .map(([name, where]) => `${name}: ${where.sort().join(', ')}`)
    .sort();
}

void describe('one name, one meaning', () => {
  void it('no two files of src/ export a declaration of the same name', { timeout: 10_000 }, () => {
    const files = new Map(sources(SRC).map((f) => [relative(SRC, f), readFileSync(f, 'utf8')] as const));
    assert.ok(files.size > 50, `read ${files.size} files under ${SRC}`);
    assert.deepEqual(duplicates(files), []);
  });

  void it('the check finds a name declared twice, and lets a re-export pass', { timeout: 5000 }, () => {
    const files = new Map([
      ['a/x.ts', 'export interface Call { id: number }\nexport const ONLY_A = 1;\n'],
      ['b/y.ts', "export type Call = string;\nexport type { ONLY_A } from '../a/x.js';\nexport { ONLY_A as A } from '../a/x.js';\n"],
    ]);
    assert.deepEqual(duplicates(files), ['Call: a/x.ts, b/y.ts']);
  });
});
