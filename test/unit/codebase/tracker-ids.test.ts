// No tracker ids in src/, test/, docs/ or bench/: a comment, a test's name or a document says the behaviour
// itself, because the repository does not explain a number (an issue, a seed or an audit item).
// The pattern is the lint's own (eslint.config.js `TRACKER_REFERENCE`, which checks src/ comments);
// here it applies to every line of every text file, code or prose, with no exceptions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const { TRACKER_REFERENCE } = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as { TRACKER_REFERENCE: RegExp };

/** The text files a person reads: source, documents, fixtures' data and scripts. */
const TEXT = /\.(?:ts|mts|cts|js|mjs|cjs|md|json|ya?ml|py|txt|html|css)$/;

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : TEXT.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Each citation in a text, as `LINE: CITATION`. */
export function citations(text: string): string[] {
  const every = new RegExp(TRACKER_REFERENCE.source, 'g');
  return text.split('\n').flatMap((line, i) => [...line.matchAll(every)].map((m) => `${i + 1}: ${m[0]}`));
}

void describe('no tracker ids', () => {
  void it('no file of src/, test/, docs/ or bench/ cites a tracker number', { timeout: 30_000 }, () => {
    const files = ['src', 'test', 'docs', 'bench'].flatMap((d) => walk(join(ROOT, d)));
    assert.ok(files.length > 300, `read ${files.length} files: the walk missed them`);
    const found = files.flatMap((f) => citations(readFileSync(f, 'utf8')).map((c) => `${relative(ROOT, f)}:${c}`));
    assert.deepEqual(found, [], 'name the behaviour instead of the tracker entry');
  });

  void it('the check finds each kind of citation and passes ordinary numbers', { timeout: 5000 }, () => {
    // A citation's spaces are written '·' here so that this file cites nothing itself.
    const cite = (text: string): string => text.replaceAll('·', ' ');
    const sample = cite(
      [
        '// Kept listed (issue·15).',
        "it('seed·003: a rule naming a missing server loads', …)",
        '# Cluster (Issue·#12)',
        'Bounded (hardening·§4, audit·#5).',
        'RFC 6750 §3, PKCS #8, HTTP 429, 2026-07-28, "issues" and "seeds" are no citations.',
      ].join('\n'),
    );
    assert.deepEqual(citations(sample), [
      cite('1: issue·15'),
      cite('2: seed·003'),
      cite('3: Issue·#12'),
      cite('4: hardening·§4'),
      cite('4: audit·#5'),
    ]);
  });
});
