// The error registry as src/errors.ts writes it: every `MCPG_*` code with its JSON-RPC code and its
// summary, read from the source with the TypeScript compiler API. No program file needs the whole
// table (a program names the one code it reports), so the checks that walk every code read it here.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { JSONRPC } from '../../src/errors.js';

export interface RegistryEntry {
  /** `MCPG_…`. */
  readonly code: string;
  /** The JSON-RPC code it is sent with (the registry's; a rate-limited refusal's draft code aside). */
  readonly rpc: number;
  readonly summary: string;
}

// From dist/test/helpers/ back to the repository root.
const SOURCE = fileURLToPath(new URL('../../../src/errors.ts', import.meta.url));

/** The value of an `rpc:` entry: a number, a negative number, or `JSONRPC.NAME`. */
function numberOf(node: ts.Expression): number {
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) return -numberOf(node.operand);
  if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'JSONRPC') {
    const value = (JSONRPC as Record<string, number>)[node.name.text];
    if (value !== undefined) return value;
  }
  throw new Error(`src/errors.ts: an rpc this reader does not know: ${node.getText()}`);
}

/** Unwraps `{ … } as const satisfies …`. */
function objectOf(node: ts.Expression): ts.ObjectLiteralExpression {
  if (ts.isObjectLiteralExpression(node)) return node;
  if (ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isParenthesizedExpression(node)) return objectOf(node.expression);
  throw new Error(`src/errors.ts: ERROR_CODES is not an object literal: ${node.getText()}`);
}

let registry: readonly RegistryEntry[] | undefined;

/** Every code of the registry, in the order src/errors.ts lists them. */
export function errorRegistry(): readonly RegistryEntry[] {
  if (registry !== undefined) return registry;
  const source = ts.createSourceFile(SOURCE, readFileSync(SOURCE, 'utf8'), ts.ScriptTarget.ES2023, true);
  const entries: RegistryEntry[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (!ts.isIdentifier(declaration.name) || declaration.name.text !== 'ERROR_CODES' || declaration.initializer === undefined) continue;
      for (const property of objectOf(declaration.initializer).properties) {
        if (!ts.isPropertyAssignment(property) || !ts.isIdentifier(property.name)) throw new Error('src/errors.ts: an unexpected entry');
        const fields = new Map(
          objectOf(property.initializer)
            .properties.filter(ts.isPropertyAssignment)
            .map((field) => [field.name.getText(), field.initializer]),
        );
        const rpc = fields.get('rpc');
        const summary = fields.get('summary');
        if (rpc === undefined || summary === undefined || !ts.isStringLiteralLike(summary))
          throw new Error(`src/errors.ts: ${property.name.text} needs an rpc and a summary`);
        entries.push({ code: property.name.text, rpc: numberOf(rpc), summary: summary.text });
      }
    }
  }
  if (entries.length === 0) throw new Error('src/errors.ts: no ERROR_CODES found');
  registry = entries;
  return registry;
}
