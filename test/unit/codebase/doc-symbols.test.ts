// A `Type.member` named in the docs (docs/, the README, a room's README) is a claim about the code, like
// a file name (comment-paths.test.ts checks those): the type — a class, interface, type, const,
// function or enum — is declared in src/, and the member is named in a file that declares it. A
// method renamed or moved to another concept then fails here instead of sending a reader to look for
// it. JavaScript's own globals (`JSON.parse`) and placeholders in capitals (`SERVER.issuer`) are not
// the tree's. Read as text: no build needed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function walk(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Each type declared in src/ → the text of every file that declares it. */
function declarations(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of walk(join(ROOT, 'src'), (name) => name.endsWith('.ts'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\b(?:class|interface|type|const|function|enum)\s+([A-Z][A-Za-z0-9_]*)/g)) {
      const texts = found.get(m[1]!) ?? [];
      if (!texts.includes(text)) texts.push(text);
      found.set(m[1]!, texts);
    }
  }
  return found;
}

/** The `Type.member` mentions of one document that the tree does not bear out. */
export function unfounded(doc: string, declared: ReadonlyMap<string, readonly string[]>): string[] {
  const wrong = new Set<string>();
  for (const m of doc.matchAll(/`([A-Z][A-Za-z0-9_]*)\.([a-z_][A-Za-z0-9_]*)(?:\(\))?`/g)) {
    const type = m[1]!;
    const member = m[2]!;
    if (/^(?:ts|js|mjs|md|json|py|ya?ml)$/.test(member)) continue; // a file name
    const texts = declared.get(type);
    if (texts === undefined) {
      if (type in globalThis || /^[A-Z_]+$/.test(type)) continue;
      wrong.add(`${type}.${member}: no ${type} in src/`);
      continue;
    }
    const named = new RegExp(`\\b${member}\\b`);
    if (!texts.some((text) => named.test(text))) wrong.add(`${type}.${member}: no ${member} where ${type} is declared`);
  }
  return [...wrong];
}

void describe('symbols named in the docs', () => {
  void it("every `Type.member` in docs/, the README and the rooms' READMEs is in src/", { timeout: 30_000 }, () => {
    const declared = declarations();
    const docs = [
      join(ROOT, 'README.md'),
      ...walk(join(ROOT, 'docs'), (name) => name.endsWith('.md')),
      ...walk(join(ROOT, 'src'), (name) => name === 'README.md'),
    ];
    const wrong = docs.flatMap((file) => unfounded(readFileSync(file, 'utf8'), declared).map((w) => `${relative(ROOT, file)}: ${w}`));
    assert.deepEqual(wrong, []);
  });

  void it('a method that is not where its type is declared is reported', { timeout: 5_000 }, () => {
    const declared = new Map([['AgentSession', ['export class AgentSession { handleLine() {} }']]]);
    assert.deepEqual(unfounded('`AgentSession.handleLine` and `AgentSession.awaitApproval()`', declared), [
      'AgentSession.awaitApproval: no awaitApproval where AgentSession is declared',
    ]);
    assert.deepEqual(unfounded('`Gone.away`, `JSON.parse`, `SERVER.issuer`, `config.json`', declared), ['Gone.away: no Gone in src/']);
  });
});
