// test/unit/ mirrors the rooms of src/: a unit test is test/unit/ROOM/NAME.test.ts, where ROOM is a
// folder of src/, a file at the top of src/ (errors for src/errors.ts) or `codebase` for the checks of
// the whole tree. `npm run test:unit` runs the plain glob dist/test/unit/*/*.test.js, so a test at
// the top of test/unit/, one folder too deep or under a name that is no room would never run, or
// would run where a reader does not look for it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// From dist/test/unit/<room>/ back to the repository root.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

/** The names a folder of test/unit/ may have: the rooms of src/, its top-level files, `codebase`. */
function rooms(src: string): Set<string> {
  const entries = readdirSync(src, { withFileTypes: true });
  return new Set([
    ...entries.filter((e) => e.isDirectory()).map((e) => e.name),
    ...entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => basename(e.name, '.ts')),
    'codebase',
  ]);
}

/** The paths (relative to test/unit/) that are not ROOM/NAME.test.ts with ROOM one of `allowed`. */
export function misplaced(paths: readonly string[], allowed: ReadonlySet<string>): string[] {
  return paths.filter((p) => {
    const parts = p.split('/');
    return parts.length !== 2 || !allowed.has(parts[0]!) || !parts[1]!.endsWith('.test.ts');
  });
}

void describe('unit tests by room', () => {
  void it('every file of test/unit/ is ROOM/NAME.test.ts for a room of src/ or codebase', { timeout: 10_000 }, () => {
    const unit = join(ROOT, 'test', 'unit');
    const paths = files(unit).map((f) => relative(unit, f).split('\\').join('/'));
    assert.ok(paths.length > 80, `read ${paths.length} files under ${unit}`);
    assert.deepEqual(misplaced(paths, rooms(join(ROOT, 'src'))), [], 'move each into test/unit/<room>/');
  });

  void it('test:unit runs every room folder by the plain glob', { timeout: 5000 }, () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.match(pkg.scripts['test:unit'] ?? '', / dist\/test\/unit\/\*\/\*\.test\.js /);
    assert.match(pkg.scripts.test ?? '', / dist\/test\/unit\/\*\/\*\.test\.js /);
  });

  void it('the check finds a test at the top, one too deep, in no room and a file that is no test', { timeout: 5000 }, () => {
    const allowed = new Set(['wire', 'errors', 'codebase']);
    assert.deepEqual(
      misplaced(
        ['wire/sse.test.ts', 'errors/errors.test.ts', 'top.test.ts', 'wire/deep/x.test.ts', 'nowhere/x.test.ts', 'wire/helper.ts'],
        allowed,
      ),
      ['top.test.ts', 'wire/deep/x.test.ts', 'nowhere/x.test.ts', 'wire/helper.ts'],
    );
  });
});
