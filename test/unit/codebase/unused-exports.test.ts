// An export of a src/ file says "another part of mcpgate uses this". One that nothing else imports is
// dead code or a name that should be private, and it misleads a reader about what the file offers.
// An export is used when another file of src/, bench/ or scripts/ (the repository's programs)
// imports it, directly, through a re-export, or by `import * as` or `import()` of its module; a test's
// import does not count, because a test exercises what the program uses and adds nothing to it.
// The public API — what the package's entry points (package.json `main` and `exports`) export — is
// used by definition; the package has only a `bin` today, so it has none. The program is read with
// the TypeScript compiler API, so a name is followed to its declaration the way the compiler does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') || e.name.endsWith('.mjs') ? [join(dir, e.name)] : [],
  );
}

/** The src/ files that package.json `main` and `exports` name (as built under dist/src). */
function publicFiles(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main?: string; exports?: unknown };
  const targets: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') targets.push(v);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(collect);
  };
  collect(pkg.main);
  collect(pkg.exports);
  return targets.map((t) => resolve(root, t.replace(/^(\.\/)?dist\//, '').replace(/\.js$/, '.ts')));
}

export interface Unused {
  /** `src/…/file.ts: Name`. */
  readonly what: string;
  /** Whether a test imports it (so the test, not the program, is what keeps it). */
  readonly byTests: boolean;
}

/**
 * The exports of `files` under `srcDir` that no other program file imports. `programFiles` are the
 * importers that count; `testFiles` only label an export as kept by tests.
 */
export function unusedExports(
  srcDir: string,
  programFiles: readonly string[],
  testFiles: readonly string[],
  publicApi: readonly string[],
): Unused[] {
  const program = ts.createProgram([...programFiles], {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowJs: true,
    noEmit: true,
    skipLibCheck: true,
    noLib: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const inSrc = (f: string): boolean => resolve(f).startsWith(resolve(srcDir) + '/');
  const key = (file: string, name: string): string => `${resolve(file)}#${name}`;
  const byProgram = new Set<string>();
  const byTests = new Set<string>();

  /** Marks `name` of the module `moduleFile` and every hop of the re-exports behind it. */
  const mark = (into: Set<string>, moduleSymbol: ts.Symbol, name: string): void => {
    let file = moduleSymbol.valueDeclaration?.getSourceFile().fileName;
    let symbol = checker.tryGetMemberInModuleExports(name, moduleSymbol);
    for (let hops = 0; file !== undefined && symbol !== undefined && hops < 20; hops++) {
      into.add(key(file, symbol.name === 'default' ? 'default' : name));
      if ((symbol.flags & ts.SymbolFlags.Alias) === 0) break;
      const next = checker.getImmediateAliasedSymbol(symbol);
      if (next === undefined) break;
      const declaration = next.declarations?.[0];
      file = declaration?.getSourceFile().fileName;
      name = next.name;
      symbol = next;
    }
  };
  const markAll = (into: Set<string>, moduleSymbol: ts.Symbol): void => {
    for (const s of checker.getExportsOfModule(moduleSymbol)) mark(into, moduleSymbol, s.name);
  };
  const moduleOf = (specifier: ts.Expression): ts.Symbol | undefined => checker.getSymbolAtLocation(specifier);

  // A test only labels what it imports (read without the type checker, which would double the time).
  for (const file of testFiles) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2023, false);
    for (const st of sf.statements) {
      if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier) || !st.moduleSpecifier.text.startsWith('.')) continue;
      const target = resolve(file, '..', st.moduleSpecifier.text.replace(/\.js$/, '.ts'));
      const bindings = st.importClause?.namedBindings;
      if (bindings !== undefined && ts.isNamedImports(bindings))
        bindings.elements.forEach((e) => byTests.add(key(target, (e.propertyName ?? e.name).text)));
    }
  }
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) continue;
    const into = byProgram;
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
        const target = node.moduleSpecifier === undefined ? undefined : moduleOf(node.moduleSpecifier);
        if (target !== undefined) {
          if (ts.isImportDeclaration(node)) {
            const clause = node.importClause;
            if (clause?.name !== undefined) mark(into, target, 'default');
            const bindings = clause?.namedBindings;
            if (bindings !== undefined && ts.isNamespaceImport(bindings)) markAll(into, target);
            else bindings?.elements.forEach((e) => mark(into, target, (e.propertyName ?? e.name).text));
          } else if (node.exportClause === undefined) {
            // `export * from`: the names pass through; whoever imports them from here marks them.
          } else if (ts.isNamespaceExport(node.exportClause)) markAll(into, target);
          else node.exportClause.elements.forEach((e) => mark(into, target, (e.propertyName ?? e.name).text));
        }
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] !== undefined) {
        const target = moduleOf(node.arguments[0]);
        if (target !== undefined) markAll(into, target);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
        const target = moduleOf(node.argument.literal);
        if (target !== undefined) {
          if (node.qualifier === undefined) markAll(into, target);
          else mark(into, target, ts.isIdentifier(node.qualifier) ? node.qualifier.text : leftmost(node.qualifier));
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  const unused: Unused[] = [];
  for (const sf of program.getSourceFiles()) {
    if (!inSrc(sf.fileName) || publicApi.includes(resolve(sf.fileName))) continue;
    const moduleSymbol = checker.getSymbolAtLocation(sf);
    if (moduleSymbol === undefined) continue;
    for (const s of checker.getExportsOfModule(moduleSymbol)) {
      const k = key(sf.fileName, s.name);
      if (byProgram.has(k)) continue;
      // An `export *` passes on names declared elsewhere; they are judged in their own file.
      if (s.declarations?.every((d) => resolve(d.getSourceFile().fileName) !== resolve(sf.fileName))) {
        if ((s.flags & ts.SymbolFlags.Alias) === 0) continue;
      }
      unused.push({ what: `${relative(ROOT, sf.fileName)}: ${s.name}`, byTests: byTests.has(k) });
    }
  }
  return unused.sort((a, b) => a.what.localeCompare(b.what));
}

function leftmost(name: ts.EntityName): string {
  return ts.isIdentifier(name) ? name.text : leftmost(name.left);
}

void describe('every export of src/ is used by another part of mcpgate', () => {
  void it('no export of src/ is imported by no other program file, and none only by tests', { timeout: 120_000 }, () => {
    const src = join(ROOT, 'src');
    const program = [src, join(ROOT, 'bench'), join(ROOT, 'scripts')].flatMap(walk).map((f) => resolve(f));
    const tests = walk(join(ROOT, 'test')).map((f) => resolve(f));
    assert.ok(program.length > 200, `read ${program.length} program files`);
    const unused = unusedExports(src, program, tests, publicFiles(ROOT));
    const nowhere = unused.filter((u) => !u.byTests).map((u) => u.what);
    assert.deepEqual(
      nowhere,
      [],
      `${nowhere.length} exports are used by no program file nor test: drop the \`export\` (or the dead code):\n${nowhere.join('\n')}`,
    );
    const onlyTests = unused.filter((u) => u.byTests).map((u) => u.what);
    assert.deepEqual(
      onlyTests,
      [],
      `exported only for a test: test it through the program code that uses it, then drop the \`export\`:\n${onlyTests.join('\n')}`,
    );
  });

  void it('the check follows imports, re-exports, namespaces and import() and ignores tests', { timeout: 60_000 }, () => {
    const dir = join(ROOT, 'test', 'fixtures', 'unused-exports');
    const files = walk(dir).map((f) => resolve(f));
    const tests = files.filter((f) => f.startsWith(join(dir, 'test') + '/'));
    const program = files.filter((f) => !tests.includes(f));
    const found = unusedExports(join(dir, 'src'), program, tests, []).map(
      (u) => `${u.what.replace(/^.*\/src\//, '')}${u.byTests ? ' (tests)' : ''}`,
    );
    assert.deepEqual(found, ['a.ts: onlyTested (tests)', 'a.ts: unused', 'b.ts: unusedReexport']);
  });
});
