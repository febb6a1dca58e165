// What a pin covers: the parts of a tool definition a model reads, encoded canonically and hashed, so
// a server that rewrites a trusted tool ("rug pull") is caught while key order, whitespace and
// transport-only fields (`_meta`, icons) never raise a false alarm. Also the diff an operator reads
// before approving a change.
// The parts are the name, title, description, input and output schemas and annotations, in a canonical
// JSON form (sorted keys, no whitespace) hashed with SHA-256. `changes()` and `describeDiff()` say
// what differs, for the error an agent gets and the operator's review.

import { createHash } from 'node:crypto';
import { visible } from '../wire/sanitize.js';
import { canonicalJson, scalarJson } from '../wire/canonical-json.js';

// A type alias, not an interface: it then fits `Record<string, unknown>`-shaped (zod loose object) types.
export type ToolDefinition = {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  /** A skill's pin only (skill-pins.ts): its verbatim frontmatter. */
  frontmatter?: unknown;
  /** A skill's pin only: the manifest of its files (`[{uri, digest, size}]`) or `"dynamic"`. */
  files?: unknown;
};

export type Change =
  'new tool' | 'description' | 'title' | 'input schema' | 'output schema' | 'annotations' | 'name' | 'frontmatter' | 'files';

/** Each part of a definition, in the order changes and diffs list them. */
const PARTS: readonly (readonly [Exclude<Change, 'new tool'>, keyof ToolDefinition])[] = [
  ['description', 'description'],
  ['title', 'title'],
  ['input schema', 'inputSchema'],
  ['output schema', 'outputSchema'],
  ['annotations', 'annotations'],
  ['name', 'name'],
  ['frontmatter', 'frontmatter'],
  ['files', 'files'],
];

/** The parts of a tool's pin: a skill's two (frontmatter, files) are read only from a skill's pin. */
const TOOL_PARTS = PARTS.filter(([change]) => change !== 'frontmatter' && change !== 'files');

/**
 * A skill is pinned beside its server's tools under its own URI (skill-pins.ts `isSkillPin`: a name
 * with `://`, which no tool name has), so a server's tools keep their digests whatever fields they carry.
 */
function partsOf(name: unknown): typeof PARTS {
  return typeof name === 'string' && name.includes('://') ? PARTS : TOOL_PARTS;
}

export function definitionOf(tool: Record<string, unknown>): ToolDefinition {
  const definition: Record<string, unknown> = {};
  for (const [, field] of partsOf(tool.name)) if (tool[field] !== undefined) definition[field] = tool[field];
  if (typeof definition.name !== 'string') throw new TypeError('a tool definition needs a string name');
  return definition as unknown as ToolDefinition;
}

/** The operator's diff (sorted, pretty), or (indent undefined) the canonical form the long way: the reference for `canonicalJson` (wire/canonical-json.ts). */
function encode(value: unknown, indent: string | undefined, pad: string): string {
  const scalar = scalarJson(value);
  if (scalar !== undefined) return scalar;
  const inner = indent === undefined ? '' : pad + indent;
  let items: string[];
  let open = '{';
  let close = '}';
  if (Array.isArray(value)) {
    items = (value as unknown[]).map((item) => (item === undefined ? 'null' : encode(item, indent, inner)));
    open = '[';
    close = ']';
  } else {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    const colon = indent === undefined ? ':' : ': ';
    items = keys.map((key) => JSON.stringify(key) + colon + encode(record[key], indent, inner));
  }
  if (items.length === 0 || indent === undefined) return open + items.join(',') + close;
  return `${open}\n${inner}${items.join(`,\n${inner}`)}\n${pad}${close}`;
}

function sha256(text: string): string {
  return 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');
}

export function toolDigest(tool: Record<string, unknown>): string {
  return sha256(canonicalJson(definitionOf(tool)));
}

export function instructionsDigest(text: string | undefined): string | undefined {
  return text === undefined ? undefined : sha256(text);
}

const encodePart = (value: unknown): string => (value === undefined ? '' : canonicalJson(value));

export function changes(before: ToolDefinition | undefined, after: ToolDefinition): Change[] {
  if (before === undefined) return ['new tool'];
  return partsOf(after.name)
    .filter(([, field]) => encodePart(before[field]) !== encodePart(after[field]))
    .map(([change]) => change);
}

/**
 * For the operator: each changed part as `  part:` then `-`/`+` lines (unchanged lines of a long text
 * or schema shown around the changes, as context). Hidden characters are shown as escapes.
 */
export function describeDiff(before: ToolDefinition | undefined, after: ToolDefinition): string {
  const changed = before === undefined ? PARTS.filter(([, field]) => after[field] !== undefined).map(([c]) => c) : changes(before, after);
  const out: string[] = [];
  for (const [change, field] of PARTS) {
    if (!changed.includes(change)) continue;
    out.push(`  ${change}:`, ...lineDiff(linesOf(before?.[field]), linesOf(after[field])));
  }
  return out.join('\n');
}

function linesOf(value: unknown): string[] {
  if (value === undefined) return [];
  const text = typeof value === 'string' ? value : encode(value, '  ', '');
  return text.split('\n').map(visible);
}

const CONTEXT = 2;
/** Past this many LCS cells, a diff shows all old lines then all new ones rather than spend the memory. */
const MAX_CELLS = 4_000_000;

function lineDiff(a: string[], b: string[]): string[] {
  const ops = diffOps(a, b);
  const out: string[] = [];
  const changedAt = ops.map(([op]) => op !== ' ');
  let skipping = false;
  ops.forEach(([op, line], i) => {
    if (!changedAt.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).includes(true)) {
      if (!skipping) out.push('      ...');
      skipping = true;
      return;
    }
    skipping = false;
    out.push(`    ${op} ${line}`.trimEnd());
  });
  return out;
}

/** A longest-common-subsequence line diff: ' ' kept, '-' removed, '+' added. */
function diffOps(a: string[], b: string[]): [' ' | '-' | '+', string][] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_CELLS) return [...a.map((l) => ['-', l] as ['-', string]), ...b.map((l) => ['+', l] as ['+', string])];
  const lcs = new Uint32Array((n + 1) * (m + 1)); // lcs[i*(m+1)+j]: LCS of a[i..] and b[j..]
  const at = (i: number, j: number): number => lcs[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i * (m + 1) + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
  }
  const ops: [' ' | '-' | '+', string][] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push([' ', a[i++] ?? '']);
      j++;
    } else if (j >= m || (i < n && at(i + 1, j) >= at(i, j + 1))) ops.push(['-', a[i++] ?? '']);
    else ops.push(['+', b[j++] ?? '']);
  }
  return ops;
}
