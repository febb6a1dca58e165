// A file's header says its concept in the first sentence and what a reader needs to use the file, in
// at most HEADER_LINES lines; the design behind it belongs in the room's README or
// docs/architecture.md, where it is read once for the whole room. The header is the leading comment
// block of the file (line comments, or one block comment), as `npm run rooms` reads it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const HEADER_LINES = 12;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The number of lines of a text's leading comment block (after a `#!` line). */
export function headerLines(text: string): number {
  const lines = text.replace(/^#![^\n]*\n/, '').split('\n');
  if (lines[0]?.trimStart().startsWith('/*')) {
    const end = lines.findIndex((l) => l.includes('*/'));
    return end === -1 ? lines.length : end + 1;
  }
  const first = lines.findIndex((l) => !l.startsWith('//'));
  return first === -1 ? lines.length : first;
}

void describe('file headers', () => {
  void it(`every header of src/ is at most ${HEADER_LINES} lines`, { timeout: 10_000 }, () => {
    const long = sources(join(ROOT, 'src'))
      .filter((f) => headerLines(readFileSync(f, 'utf8')) > HEADER_LINES)
      .map((f) => relative(ROOT, f).split('\\').join('/'))
      .sort();
    assert.deepEqual(long, [], `keep the header to what a reader needs to use the file; move the design to the room's README`);
  });

  void it('counts line comments, a block comment and nothing after the header', { timeout: 5000 }, () => {
    assert.equal(headerLines('// a\n// b\n\nimport x from "y";\n// c\n'), 2);
    assert.equal(headerLines('#!/usr/bin/env node\n// a\nconst x = 1;\n'), 1);
    assert.equal(headerLines('/**\n * a\n * b\n */\nexport const x = 1;\n'), 4);
    assert.equal(headerLines('import x from "y";\n'), 0);
  });
});
