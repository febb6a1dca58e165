// The README and the docs/ pages link to each other by relative paths and heading anchors; a page split
// or a renamed heading breaks them silently on GitHub. Every relative link of README.md and docs/*.md must
// name a file that exists and, with a `#anchor`, a heading of that file (GitHub's slugs). The README stays
// a front door: short, and linking every page of docs/.

import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// From dist/test/unit/<room>/ back to the repository root.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const README_MAX_LINES = 250;

/** A heading's anchor as GitHub makes it: the text without markup, lowercased, punctuation dropped, spaces → `-`. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Lines outside fenced code blocks, with inline code spans blanked (a link in code is not a link). */
function prose(text: string): string[] {
  const out: string[] = [];
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      fence = !fence;
      out.push('');
      continue;
    }
    out.push(fence ? '' : line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length)));
  }
  return out;
}

/** Every heading's anchor, a repeated heading getting `-1`, `-2`… as on GitHub. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const m = fence ? null : /^#{1,6} (.*)$/.exec(line);
    if (m === null) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of a markdown text, with their line numbers. */
export function relativeLinks(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  prose(text).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:…
      out.push({ line: i + 1, target });
    }
  });
  return out;
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** What is wrong with the relative links of the markdown file at `file` (absolute), one line each. */
export async function brokenLinks(file: string, text: string, read: (path: string) => Promise<string>): Promise<string[]> {
  const wrong: string[] = [];
  for (const { line, target } of relativeLinks(text)) {
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const at = `${relative(ROOT, file)}:${line}: ${target}`;
    const path = pathPart === '' ? file : join(dirname(file), pathPart);
    if (pathPart !== '' && !(await exists(path))) {
      wrong.push(`${at}: no file ${relative(ROOT, path)}`);
      continue;
    }
    if (anchor === null || !path.endsWith('.md')) continue;
    if (!anchors(await read(path)).has(anchor)) wrong.push(`${at}: ${relative(ROOT, path)} has no heading #${anchor}`);
  }
  return wrong;
}

void describe('links of README.md and docs/*.md', { timeout: 10000 }, () => {
  const texts = new Map<string, string>();
  const read = async (path: string): Promise<string> => {
    let text = texts.get(path);
    if (text === undefined) {
      text = await readFile(path, 'utf8');
      texts.set(path, text);
    }
    return text;
  };
  let files: string[] = [];

  before(async () => {
    const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).sort();
    files = [join(ROOT, 'README.md'), ...docs.map((f) => join(ROOT, 'docs', f))];
  });

  void it('makes anchors as GitHub does', { timeout: 5000 }, () => {
    assert.equal(slug('`.mcp.json` — the servers'), 'mcpjson--the-servers');
    assert.equal(slug('`gateway-rules.json` — what each agent may use'), 'gateway-rulesjson--what-each-agent-may-use');
    assert.equal(slug('MCPG_RATE_LIMITED'), 'mcpg_rate_limited');
    assert.equal(slug("The operator's console (`/ui`)"), 'the-operators-console-ui');
    assert.deepEqual([...anchors('# A\n```\n# not a heading\n```\n## A\n## B\n')], ['a', 'a-1', 'b']);
  });

  void it('finds a broken link, a missing anchor and ignores code and absolute URLs', { timeout: 5000 }, async () => {
    const file = join(ROOT, 'docs', 'example.md');
    const text = [
      '# Here',
      '[ok](#here) [ok](errors.md) [ok](../README.md#development) [web](https://example.test/x.md)',
      '[gone](no-such-page.md) [anchor](errors.md#no-such-heading) [self](#nowhere)',
      '`[code](not-a-link.md)`',
      '```',
      '[fenced](not-a-link-either.md)',
      '```',
    ].join('\n');
    const wrong = await brokenLinks(file, text, (path) => (path === file ? Promise.resolve(text) : read(path)));
    assert.deepEqual(wrong, [
      'docs/example.md:3: no-such-page.md: no file docs/no-such-page.md',
      'docs/example.md:3: errors.md#no-such-heading: docs/errors.md has no heading #no-such-heading',
      'docs/example.md:3: #nowhere: docs/example.md has no heading #nowhere',
    ]);
  });

  void it('resolves every relative link to a file and every anchor to a heading', { timeout: 5000 }, async () => {
    const wrong: string[] = [];
    for (const file of files) wrong.push(...(await brokenLinks(file, await read(file), read)));
    assert.deepEqual(wrong, []);
  });

  void it(`keeps the README a front door: at most ${README_MAX_LINES} lines, linking every docs/ page`, { timeout: 5000 }, async () => {
    const readme = await read(join(ROOT, 'README.md'));
    const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; the manual belongs in docs/`);
    const linked = new Set(relativeLinks(readme).map(({ target }) => target.split('#')[0]));
    const unlinked = files
      .slice(1)
      .map((f) => relative(ROOT, f))
      .filter((f) => !linked.has(f));
    assert.deepEqual(unlinked, []);
  });
});
