// A file named in a comment of src/, in a room's README or in docs/ is a claim about the tree: this
// test checks each one, so a move or a rename that leaves one behind fails here rather than misleading
// a reader. A mention resolves when the file exists: `src/…` from the root; `room/file.ts` under src/
// (or under the mentioning file's room); a bare `file.ts` in the mentioning file's room, or as the one
// file of that name in src/, test/ or bench/.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function walk(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === 'node_modules' || e.name.startsWith('.')
      ? []
      : e.isDirectory()
        ? walk(join(dir, e.name), keep)
        : keep(e.name)
          ? [join(dir, e.name)]
          : [],
  );
}

/** The comments of a TypeScript text, as [start, end) ranges, found by the compiler's own scanner. */
export function comments(text: string): string[] {
  const sf = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false);
  const seen = new Map<number, string>();
  const at = (pos: number): void => {
    for (const r of [...(ts.getLeadingCommentRanges(text, pos) ?? []), ...(ts.getTrailingCommentRanges(text, pos) ?? [])])
      seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node): void => {
    at(node.pos);
    at(node.end);
    ts.forEachChild(node, visit);
  };
  at(0);
  visit(sf);
  return [...seen].sort((a, b) => a[0] - b[0]).map(([, text]) => text);
}

/** Mentions of a source file: `src/a/b.ts`, `a/b.ts`, `b.ts` (not a URL, not a glob, not `*.d.ts`). */
export function mentions(text: string): string[] {
  return [...text.matchAll(/(?<![\w./*:@-])((?:src\/)?(?:[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.ts)(?![\w/-])/g)]
    .map((m) => m[1]!)
    .filter((m) => !m.endsWith('.d.ts'));
}

export interface Tree {
  /** Paths relative to the root, '/'-separated. */
  readonly files: ReadonlySet<string>;
}

/** Whether a mention made in `from` (a root-relative path) names a file of the tree. */
export function resolves(tree: Tree, from: string, mention: string, rooms: readonly string[] = []): boolean {
  if (mention.startsWith('src/')) return tree.files.has(mention);
  const room = from.startsWith('src/') ? from.split('/').slice(0, 2).join('/') : undefined;
  if (mention.includes('/')) {
    return tree.files.has(`src/${mention}`) || tree.files.has(mention) || (room !== undefined && tree.files.has(`${room}/${mention}`));
  }
  const named = [...tree.files].filter((f) => basename(f) === mention);
  if (room !== undefined && named.some((f) => f.startsWith(`${room}/`))) return true;
  if (rooms.some((r) => named.includes(`src/${r}/${mention}`))) return true;
  const inSrc = named.filter((f) => f.startsWith('src/'));
  return inSrc.length === 1 || (inSrc.length === 0 && named.length === 1);
}

/** The mentions of every checked file that name no file: `file: mention`. */
export function staleMentions(root: string): string[] {
  const rel = (f: string): string => relative(root, f).split('\\').join('/');
  const files = new Set(
    [...walk(join(root, 'src'), () => true), ...walk(join(root, 'test'), () => true), ...walk(join(root, 'bench'), () => true)].map(rel),
  );
  const tree: Tree = { files };
  const checked: [string, string[]][] = [
    ...walk(join(root, 'src'), (n) => n.endsWith('.ts')).map((f) => [rel(f), comments(readFileSync(f, 'utf8'))] as [string, string[]]),
    ...[...walk(join(root, 'src'), (n) => n === 'README.md'), ...walk(join(root, 'docs'), (n) => n.endsWith('.md'))].map(
      (f) => [rel(f), [readFileSync(f, 'utf8')]] as [string, string[]],
    ),
  ];
  const stale: string[] = [];
  for (const [file, texts] of checked) {
    // In markdown a line that names a room (`gateway/`, `src/gateway/…`) speaks of that room's files.
    const lines = file.endsWith('.md') ? texts.flatMap((t) => t.split('\n')) : texts;
    for (const text of lines) {
      const rooms = file.endsWith('.md') ? [...text.matchAll(/`(?:src\/)?([\w-]+)\//g)].map((m) => m[1]!) : [];
      for (const m of mentions(text)) if (!resolves(tree, file, m, rooms)) stale.push(`${file}: ${m}`);
    }
  }
  return [...new Set(stale)].sort();
}

void describe('file paths in comments and docs', () => {
  void it('every source file named in a comment of src/, a room README or docs/ exists', { timeout: 30_000 }, () => {
    assert.deepEqual(staleMentions(ROOT), []);
  });

  void it('the check finds a stale mention and accepts the forms that resolve', { timeout: 5000 }, () => {
    const tree: Tree = {
      files: new Set([
        'src/gateway/session/session.ts',
        'src/servers/transports/stdio/process.ts',
        'src/errors.ts',
        'src/a/x.ts',
        'src/b/x.ts',
      ]),
    };
    assert.equal(resolves(tree, 'src/gateway/routing/router.ts', 'session.ts'), true);
    assert.equal(resolves(tree, 'docs/architecture.md', 'gateway/session/session.ts'), true);
    assert.equal(resolves(tree, 'docs/architecture.md', 'src/errors.ts'), true);
    assert.equal(resolves(tree, 'src/servers/pool.ts', 'transports/stdio/process.ts'), true);
    assert.equal(resolves(tree, 'docs/architecture.md', 'x.ts'), false, 'two files of that name: the mention must say which');
    assert.equal(resolves(tree, 'src/a/y.ts', 'x.ts'), true, "in its own room a bare name is its room's file");
    assert.equal(resolves(tree, 'docs/architecture.md', 'config/types.ts'), false);
    assert.equal(resolves(tree, 'docs/architecture.md', 'x.ts', ['b']), true, 'a docs line that names the room `b/`');
    assert.deepEqual(mentions('see `gateway/session/session.ts` and https://example.com/a.ts, *.ts, x.d.ts'), [
      'gateway/session/session.ts',
    ]);
    assert.deepEqual(comments('const a = 1; // one.ts\n/* two.ts */ const b = `// not.ts`;\n').map(mentions).flat(), ['one.ts', 'two.ts']);
  });
});
