// docs/errors.md and src/errors.ts in step (STYLE.md "Errors"): every MCPG code has a `## MCPG_…`
// section, every section names a code that exists, and each section states the code's JSON-RPC code
// (except CLI-only codes, which never reach the wire).

import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { errorRegistry } from '../../helpers/error-registry.js';

// From dist/test/unit/<room>/ back to the repository root.
const DOC = new URL('../../../../docs/errors.md', import.meta.url);
// Codes only the command line reports; their sections need not state a JSON-RPC code.
const CLI_ONLY: ReadonlySet<string> = new Set(['MCPG_USAGE']);

void describe('docs/errors.md', { timeout: 5000 }, () => {
  let sections = new Map<string, string>();
  let headings: string[] = [];

  before(async () => {
    const text = await readFile(DOC, 'utf8');
    headings = [...text.matchAll(/^## (\S+)/gm)].map((m) => m[1]!);
    sections = new Map(
      text
        .split(/^## /m)
        .slice(1)
        .map((part) => [part.split(/\s/, 1)[0]!, part]),
    );
  });

  void it('has a section for every code of the registry', { timeout: 5000 }, () => {
    const missing = errorRegistry()
      .map((entry) => entry.code)
      .filter((code) => !headings.includes(code));
    assert.deepEqual(missing, []);
  });

  void it('documents no code that does not exist, and none twice', { timeout: 5000 }, () => {
    const unknown = headings.filter((h) => h.startsWith('MCPG_') && !errorRegistry().some((entry) => entry.code === h));
    assert.deepEqual(unknown, []);
    const codeHeadings = headings.filter((h) => h.startsWith('MCPG_'));
    assert.equal(new Set(codeHeadings).size, codeHeadings.length, 'duplicate headings');
  });

  void it("states each code's JSON-RPC code as the registry does", { timeout: 5000 }, () => {
    const wrong: string[] = [];
    for (const { code, rpc } of errorRegistry()) {
      const documented = /JSON-RPC `(-?\d+)`/.exec(sections.get(code) ?? '')?.[1];
      if (documented === undefined && CLI_ONLY.has(code)) continue;
      if (documented !== String(rpc)) wrong.push(`${code}: doc says ${documented ?? 'nothing'}, registry ${rpc}`);
    }
    assert.deepEqual(wrong, []);
  });
});
