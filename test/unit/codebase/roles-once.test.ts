// Each file's role is written once, in its own header comment: every source file of src/ opens with
// one (`npm run rooms` prints their first sentences as the index of a room), and the room READMEs and
// docs/architecture.md say how files fit together without describing them one by one. A list item
// that opens with a file's name and goes on to say what the file is or does is such a description,
// written a second time where nothing keeps it in step with the file.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

interface RoomsScript {
  header: (text: string) => string | undefined;
  firstSentence: (text: string) => string;
}
const { header, firstSentence } = (await import(pathToFileURL(join(ROOT, 'scripts', 'rooms.mjs')).href)) as RoomsScript;
/** The lint's pattern for a tracker number in a comment of src/ (eslint.config.js), applied to the room READMEs too. */
const { TRACKER_REFERENCE } = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as { TRACKER_REFERENCE: RegExp };

/**
 * Role bullets still allowed, by document: the files another change is merging or renaming right now,
 * whose headers cannot be edited until it lands. Each entry is the file name exactly as the bullet
 * writes it. Remove an entry once its facts are in the file's header.
 */
const PENDING: Readonly<Record<string, readonly string[]>> = {};

function walk(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : [],
  );
}

/**
 * The file a list item describes, if it is a role bullet: a list item (`-`, `*`, `+` or `1.`, at any
 * depth, outside fenced code) whose text opens with a source file's name in backticks (bold or not)
 * and goes on with anything but another code span — "- `calls.ts` — …", "- `x.ts` is …",
 * "- `a.ts`, `b.ts`: …". A step of a path ("1. `front/stdio.ts` `serveStdio`: …") names a function
 * next and is no role; neither is a bare list of names.
 */
export function roleBullets(markdown: string): { line: number; file: string; text: string }[] {
  const found: { line: number; file: string; text: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    if (fenced) return;
    const m = /^\s*(?:[-*+]|\d+[.)])\s+(\*\*)?`((?:\.\.?\/)?(?:[\w.-]+\/)*[\w.-]+\.(?:ts|mts|cts|js|mjs|cjs))`(?:\*\*)?(.*)$/.exec(text);
    if (m === null) return;
    const rest = m[3]!.trim();
    if (rest === '' || rest.startsWith('`')) return;
    found.push({ line: i + 1, file: m[2]!, text });
  });
  return found;
}

void describe('each file’s role is written once', () => {
  void it('every source file opens with a header comment whose first sentence says what it holds', { timeout: 30_000 }, () => {
    const files = walk(join(ROOT, 'src'), (n) => n.endsWith('.ts'));
    assert.ok(files.length > 100, `src/ holds ${files.length} .ts files: the walk missed them`);
    const bare: string[] = [];
    for (const f of files) {
      const h = header(readFileSync(f, 'utf8'));
      if (h === undefined || firstSentence(h).split(' ').length < 2) bare.push(relative(ROOT, f));
    }
    assert.deepEqual(bare, [], 'add a header comment: what the file holds and why, in the code’s own terms');
  });

  void it('no room README cites a tracker number (it says the reason itself)', { timeout: 30_000 }, () => {
    const readmes = walk(join(ROOT, 'src'), (n) => n === 'README.md');
    assert.ok(readmes.length >= 12, `found ${readmes.length} room READMEs`);
    assert.ok(TRACKER_REFERENCE.test(['stopped (seed', '000)'].join(' ')), 'the pattern catches a seed number');
    const cited: string[] = [];
    for (const file of readmes)
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const found = TRACKER_REFERENCE.exec(line);
          if (found !== null) cited.push(`${relative(ROOT, file)}:${i + 1}: ${found[0]}`);
        });
    assert.deepEqual(cited, []);
  });

  void it('no room README and not docs/architecture.md describes a file one bullet at a time', { timeout: 30_000 }, () => {
    const docs = [...walk(join(ROOT, 'src'), (n) => n === 'README.md'), join(ROOT, 'docs', 'architecture.md')];
    assert.ok(docs.length >= 13, `found ${docs.length} documents: the room READMEs are missing`);
    const bullets: string[] = [];
    for (const doc of docs) {
      const rel = relative(ROOT, doc).split('\\').join('/');
      for (const b of roleBullets(readFileSync(doc, 'utf8')))
        if (!(PENDING[rel] ?? []).includes(b.file)) bullets.push(`${rel}:${b.line}: ${b.text.slice(0, 100)}`);
    }
    assert.deepEqual(bullets, [], 'move the bullet’s facts into the file’s header (or into the README as an idea several files share)');
  });

  void it('the checks catch what they are for and pass what they are not', { timeout: 5000 }, () => {
    const sample = [
      '# room',
      '- `calls.ts` — one agent’s calls in flight.',
      '- `x.ts` is one thing.',
      '  - `http/options.ts`: the options.',
      '* **`../wire/sanitize.ts`** (in `wire/`): the sanitizer.',
      '- `a.ts`, `b.ts`, `c.ts` — one concern each.',
      '3. `tool-index.ts` (`ToolIndex`) keeps the index.',
      '1. `front/stdio.ts` `serveStdio`: a step of the walk.',
      '- `x.ts`',
      '- the catalog (`catalog.ts`) is one idea.',
      'Prose naming `y.ts` is not a list item.',
      '```',
      '- `fenced.ts` is code.',
      '```',
    ].join('\n');
    assert.deepEqual(
      roleBullets(sample).map((b) => `${b.line}:${b.file}`),
      ['2:calls.ts', '3:x.ts', '4:http/options.ts', '5:../wire/sanitize.ts', '6:a.ts', '7:tool-index.ts'],
    );
    assert.equal(header('import x from "y";\n// late comment\n'), undefined);
    assert.equal(header('#!/usr/bin/env node\n// The primary: it forks.\n// More.\nconst a = 1;\n'), 'The primary: it forks. More.');
    assert.equal(header('/**\n * One catalog (e.g. `a.b`).\n * Two.\n */\nexport {};\n'), 'One catalog (e.g. `a.b`). Two.');
    assert.equal(firstSentence('One catalog (e.g. `a. b`). Two.'), 'One catalog (e.g. `a. b`).');
    assert.equal(firstSentence('No period at all'), 'No period at all');
  });
});
