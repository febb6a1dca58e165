// One name, one meaning (docs/architecture.md's vocabulary): no two files of src/ declare and export
// the same name; no file name is used in two rooms (unless the rooms hold parallel kinds of one thing,
// listed below with the reason); no room keeps a private interface shaped like another room's export
// (it restates that contract instead of importing it); and each word of the vocabulary is defined in
// exactly one row. A re-export (`export type { X } from './x.js'`) names the same thing, so it is not
// a second meaning; two declarations are, even when their shapes happen to agree.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = fileURLToPath(new URL('../../../../src/', import.meta.url));
const ARCHITECTURE = fileURLToPath(new URL('../../../../docs/architecture.md', import.meta.url));

/**
 * File names that several rooms use for parallel kinds of one thing, each with the rooms allowed and
 * why the shared name means one idea. Any other file name is in one room only.
 */
const PARALLEL: Readonly<Record<string, { rooms: readonly string[]; reason: string }>> = {
  'load.ts': { rooms: ['config', 'rules'], reason: 'each room’s reader of its own file (.mcp.json, gateway-rules.json)' },
  'store.ts': { rooms: ['oauth', 'pins'], reason: 'each room’s state in the state directory (server logins, pins)' },
  'types.ts': { rooms: ['catalog', 'config'], reason: 'each room’s plain data shapes, with no behaviour' },
  'login.ts': { rooms: ['cli', 'oauth'], reason: 'cli/ names a command’s file for the command (`mcpgate login` runs oauth/’s login)' },
  'status.ts': {
    rooms: ['cli', 'gateway'],
    reason: 'cli/ names a command’s file for the command (`mcpgate status` reads the gateway’s status)',
  },
};

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

/** The room of a file of src/: its first folder, or `(root)` for the composition files at the top. */
function roomOf(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts.length > 1 ? parts[0]! : '(root)';
}

/** File names used in more than one room, with the rooms, unless PARALLEL lists them for those rooms. */
export function sharedBasenames(files: readonly string[], parallel: typeof PARALLEL = PARALLEL): string[] {
  const rooms = new Map<string, Set<string>>();
  for (const f of files) {
    const name = basename(f);
    (rooms.get(name) ?? rooms.set(name, new Set()).get(name)!).add(roomOf(f));
  }
  return [...rooms]
    .filter(([name, in_]) => in_.size > 1 && ![...in_].every((r) => parallel[name]?.rooms.includes(r)))
    .map(([name, in_]) => `${name}: ${[...in_].sort().join(', ')}`)
    .sort();
}

interface Shape {
  readonly file: string;
  readonly name: string;
  readonly exported: boolean;
  /** The property and method names, sorted and joined: two shapes with the same key restate each other. */
  readonly key: string;
}

/** The interfaces and object-literal type aliases of a file, with their member names. */
function shapes(file: string, text: string): Shape[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2023, false);
  const found: Shape[] = [];
  const memberNames = (members: ts.NodeArray<ts.TypeElement>): string[] =>
    members.flatMap((m) => (m.name !== undefined && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) ? [m.name.text] : []));
  for (const st of sf.statements) {
    const exported =
      (ts.canHaveModifiers(st) ? ts.getModifiers(st) : undefined)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
    let names: string[] | undefined;
    if (ts.isInterfaceDeclaration(st) && st.heritageClauses === undefined) names = memberNames(st.members);
    else if (ts.isTypeAliasDeclaration(st) && ts.isTypeLiteralNode(st.type)) names = memberNames(st.type.members);
    if (names === undefined || ts.isClassDeclaration(st)) continue;
    const name = (st as ts.InterfaceDeclaration | ts.TypeAliasDeclaration).name.text;
    found.push({ file, name, exported, key: [...new Set(names)].sort().join(',') });
  }
  return found;
}

/**
 * Private interfaces (or object type aliases) of one room with the same member names as an export of
 * another room: a contract restated by shape instead of imported. Shapes of fewer than two members
 * say too little to be a contract.
 */
export function restatedShapes(files: ReadonlyMap<string, string>): string[] {
  const all = [...files].flatMap(([file, text]) => shapes(file, text)).filter((s) => s.key.split(',').length >= 2);
  const exportsByKey = new Map<string, Shape[]>();
  for (const s of all) if (s.exported) (exportsByKey.get(s.key) ?? exportsByKey.set(s.key, []).get(s.key)!).push(s);
  const found: string[] = [];
  for (const s of all) {
    if (s.exported) continue;
    for (const e of exportsByKey.get(s.key) ?? [])
      if (roomOf(e.file) !== roomOf(s.file)) found.push(`${s.file} ${s.name} restates ${e.file} ${e.name} {${s.key}}`);
  }
  return found.sort();
}

/** The words of docs/architecture.md's vocabulary table(s) that head more than one row. */
export function wordsInSeveralRows(markdown: string): string[] {
  const rows = new Map<string, number>();
  for (const line of markdown.split('\n')) {
    const head = /^\|\s*\*\*([^*]+)\*\*\s*\|/.exec(line)?.[1];
    if (head === undefined) continue;
    for (const word of head.split(' / ').map((w) => w.trim().toLowerCase())) rows.set(word, (rows.get(word) ?? 0) + 1);
  }
  return [...rows].filter(([, n]) => n > 1).map(([word, n]) => `${word}: ${n} rows`);
}

void describe('one name, one meaning', () => {
  void it('no two files of src/ export a declaration of the same name', { timeout: 10_000 }, () => {
    const files = new Map(sources(SRC).map((f) => [relative(SRC, f), readFileSync(f, 'utf8')] as const));
    assert.ok(files.size > 50, `read ${files.size} files under ${SRC}`);
    assert.deepEqual(duplicates(files), []);
  });

  void it('no file name is used in two rooms unless they hold parallel kinds of one thing', { timeout: 10_000 }, () => {
    const files = sources(SRC).map((f) => relative(SRC, f));
    const shared = sharedBasenames(files);
    assert.deepEqual(
      shared,
      [],
      `name each file for its own concept (or list a true parallel kind in PARALLEL with why):\n${shared.join('\n')}`,
    );
  });

  void it('no room keeps a private interface shaped like another room’s export', { timeout: 30_000 }, () => {
    const files = new Map(sources(SRC).map((f) => [relative(SRC, f), readFileSync(f, 'utf8')] as const));
    const restated = restatedShapes(files);
    assert.deepEqual(restated, [], `import the other room’s contract instead of restating it:\n${restated.join('\n')}`);
  });

  void it('each word of the vocabulary is defined in exactly one row', { timeout: 5000 }, () => {
    const text = readFileSync(ARCHITECTURE, 'utf8');
    assert.ok(/^\| \*\*agent session\*\* \|/m.test(text), 'the vocabulary table is where this test looks');
    assert.deepEqual(wordsInSeveralRows(text), []);
  });

  void it('the naming checks find what they are for', { timeout: 5000 }, () => {
    assert.deepEqual(sharedBasenames(['a/load.ts', 'b/load.ts', 'a/x/transport.ts', 'c/transport.ts', 'a/only.ts', 'top.ts', 'b/top.ts']), [
      'load.ts: a, b',
      'top.ts: (root), b',
      'transport.ts: a, c',
    ]);
    assert.deepEqual(sharedBasenames(['a/load.ts', 'b/load.ts'], { 'load.ts': { rooms: ['a', 'b'], reason: 'parallel' } }), []);
    const files = new Map([
      ['policy/gate.ts', 'export interface Ask { agent: string; tool: string; at(): number }\nexport interface One { x: 1 }\n'],
      ['cluster/board.ts', 'interface Asked { tool: string; at(): number; agent: string }\ninterface Other { agent: string }\n'],
      ['policy/local.ts', 'interface Same { agent: string; tool: string; at(): number }\n'],
    ]);
    assert.deepEqual(restatedShapes(files), ['cluster/board.ts Asked restates policy/gate.ts Ask {agent,at,tool}']);
    const table = '| word | meaning |\n|---|---|\n| **era** | one |\n| **worker** | w |\n| **request / era** | two |\n';
    assert.deepEqual(wordsInSeveralRows(table), ['era: 2 rows']);
  });

  void it('the check finds a name declared twice, and lets a re-export pass', { timeout: 5000 }, () => {
    const files = new Map([
      ['a/x.ts', 'export interface Call { id: number }\nexport const ONLY_A = 1;\n'],
      ['b/y.ts', "export type Call = string;\nexport type { ONLY_A } from '../a/x.js';\nexport { ONLY_A as A } from '../a/x.js';\n"],
    ]);
    assert.deepEqual(duplicates(files), ['Call: a/x.ts, b/y.ts']);
  });
});
