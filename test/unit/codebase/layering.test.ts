// The layering (docs/architecture.md): eslint.config.js forbids an arrow between rooms that
// its ROOMS table does not allow, and the file system in the rooms that read no files (PURE; checked
// here by linting probe imports with those blocks); this test forbids what a per-file rule cannot see, an import cycle
// — inside a room or across rooms, type-only imports included. It reads src/ as text: no build needed.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Linter } from 'eslint';

const SRC = fileURLToPath(new URL('../../../../src/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every relative `import … from` / `export … from` of each file, resolved to a file under src/. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pattern = /^\s*(?:import|export)\s[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gm;
  for (const file of sources(root)) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const match of text.matchAll(pattern)) deps.push(relative(root, resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts'))));
    graph.set(relative(root, file), deps);
  }
  return graph;
}

/** The strongly connected components with more than one file (Tarjan): each is an import cycle. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

void describe('layering', () => {
  void it('src/ has no import cycle, inside a room or across rooms (type-only imports count)', { timeout: 10_000 }, () => {
    const graph = importGraph(SRC);
    assert.ok(graph.size > 50, `read ${graph.size} files under ${SRC}`);
    assert.deepEqual(cycles(graph), []);
  });

  void it('the check finds a cycle when there is one', { timeout: 5000 }, () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    assert.deepEqual(cycles(graph), [['a.ts', 'b.ts', 'c.ts']]);
  });

  void it(
    'the rooms that read no files (rules, wire, catalog) may not import node:fs, and their room arrows still hold',
    { timeout: 20_000 },
    async () => {
      // Lints probe imports with every block of eslint.config.js that sets no-restricted-imports, in
      // order, as eslint merges them: a second block for a room's files would replace the room's
      // patterns rather than add to them, and this would fail.
      const { default: all } = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as { default: Linter.Config[] };
      const blocks = all.filter((block) => block.rules?.['no-restricted-imports'] !== undefined);
      assert.ok(blocks.length >= 10, `${blocks.length} blocks`);
      const linter = new Linter({ configType: 'flat', cwd: ROOT });
      const errors = (room: string, line: string): string[] =>
        linter.verify(line, blocks, { filename: join(ROOT, 'src', room, 'probe.ts') }).map((m) => `${m.ruleId}: ${m.message}`);
      for (const room of ['rules', 'wire', 'catalog']) {
        for (const name of ['node:fs', 'node:fs/promises', 'fs']) {
          const [message, ...more] = errors(room, `import { readFile } from '${name}';`);
          assert.match(
            message ?? '',
            new RegExp(`^no-restricted-imports: '${name}' import is restricted from being used\\. src/${room} reads no files`),
            room,
          );
          assert.deepEqual(more, []);
        }
        assert.match(
          errors(room, "import { Gateway } from '../gateway/gateway.js';")[0] ?? '',
          new RegExp(`src/${room} may not import from src/gateway`),
        );
      }
      // A file in a room's sub-folder is held to its room's arrows, however deep it sits.
      assert.match(
        errors('servers/transports/http', "import { Gateway } from '../../../gateway/gateway.js';")[0] ?? '',
        /src\/servers may not import from src\/gateway/,
      );
      assert.match(
        errors('front/http', "import { parseRules } from '../../rules/load.js';")[0] ?? '',
        /src\/front may not import from src\/rules/,
      );
      assert.deepEqual(errors('front/http', "import { Gateway } from '../../gateway/gateway.js';"), []);
      assert.deepEqual(errors('rules', "import { tryExpand } from '../config/expand.js';"), []);
      assert.deepEqual(errors('config', "import { readFile } from 'node:fs/promises';"), [], 'config/ reads files');
    },
  );

  void it('a comment in src/ that cites a tracker number is a lint error; the reason itself is not', { timeout: 10_000 }, async () => {
    const { default: all } = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as { default: Linter.Config[] };
    const blocks = all.filter((block) => block.rules?.['mcpgate/no-tracker-references'] !== undefined);
    assert.equal(blocks.length, 1);
    const linter = new Linter({ configType: 'flat', cwd: ROOT });
    const cited = (text: string): string[] =>
      linter
        .verify(text, blocks, { filename: join(ROOT, 'src', 'gateway', 'probe.ts') })
        .map((m) => m.message.replace(/^comment cites "([^"]*)".*$/, '$1'));
    // The samples write a citation's spaces as '·' so that this file cites nothing itself.
    const cite = (text: string): string => text.replaceAll('·', ' ');
    assert.deepEqual(cited(cite('// Kept listed (issue·15).\nconst a = 1;\n')), [cite('issue·15')]);
    assert.deepEqual(cited(cite('/* see issue·#12 */ const b = 2;')), [cite('issue·#12')]);
    assert.deepEqual(cited(cite('/**\n * Stop sequence (seed·000).\n */\nfunction c() {}\n')), [cite('seed·000')]);
    assert.deepEqual(
      cited(cite('// Bounded (hardening·§4, audit·#5).\n')),
      [cite('hardening·§4')],
      'one report per comment, its first citation',
    );
    assert.deepEqual(cited(cite('// No prototype (audit·#12).\n')), [cite('audit·#12')]);
    assert.deepEqual(cited(cite('// The watchdog (hardening·issue·§1).\n')), [cite('hardening·issue·§1')]);
    assert.deepEqual(
      cited(cite('// Kept listed: a restart is no list change (RFC 6750 §3, PKCS #8).\nconst s = "issue·15";\n')),
      [],
      'a string is not a comment',
    );
  });
});
