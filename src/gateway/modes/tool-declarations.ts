// A tool as an agent reads it when context is dear: a compact TypeScript-style declaration made from
// its listed view (public name, sanitized texts, `inputSchema`, `outputSchema`, annotations), and
// the one-line hit a search returns. Code mode's describe_tools and run_code's description, and
// search hits in compact form, are all made here, so every place says a tool the same way.
//
//   /** Creates an issue. [needs approval] */
//   tools.github.create_issue(args: {title: string; body?: string; state?: "open"|"closed"}): Promise<{id: number}>
//
// Bounded: nested objects are shown two levels deep, enums while short, descriptions by their first
// sentence; what was cut is marked `…`. A schema the generator does not follow (`$ref`, `allOf`)
// reads `unknown`, never an error.

import type { ProgramTool } from '../../code/program.js';

/** What a declaration says besides the schemas: flags the rules and annotations give the tool. */
interface DeclarationFlags {
  /** A call from code waits for a person's approval (the rules' `approve` or `code.approve`). */
  readonly needsApproval: boolean;
  /** A program may not call it (a write the rules' `code.allow` does not name). */
  readonly notFromCode: boolean;
}

const MAX_DEPTH = 2;
const MAX_ENUM = 8;
const MAX_PROPERTIES = 24;
const MAX_SUMMARY = 160;
const MAX_PARAM_NOTE = 60;

/** A tool's listed view, as far as the generator reads it. */
type ToolView = Readonly<Record<string, unknown>>;

/** The first sentence of a description, at most `max` characters (`…` when cut). */
export function summaryOf(description: unknown, max = MAX_SUMMARY): string {
  if (typeof description !== 'string') return '';
  const flat = description.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end === -1 ? flat : flat.slice(0, end + 1);
  return sentence.length <= max ? sentence : `${sentence.slice(0, max - 1).trimEnd()}…`;
}

/** Whether the tool says it only reads (`annotations.readOnlyHint`). */
export function isReadOnly(view: ToolView): boolean {
  const annotations = view.annotations;
  return typeof annotations === 'object' && annotations !== null && (annotations as { readOnlyHint?: unknown }).readOnlyHint === true;
}

/** A search hit in one line: `name(req: type, opt?: type) — first sentence`. */
export function compactHit(view: ToolView): string {
  return hitOf(view).line;
}

/** A search hit, in parts: its line, its signature and summary apart, and whether anything was cut to make it. */
interface CompactHit {
  readonly line: string;
  /** `(id: number, format?: "short"|"long")`: every required parameter, optional ones marked `?` while they fit. */
  readonly signature: string;
  /** The description's first sentence (`…` when cut). */
  readonly summary: string;
  /** Something was left out (an optional parameter, an enum's values, a nested object's fields, the sentence's end): describe_tools has it all. */
  readonly shortened: boolean;
}

export function hitOf(view: ToolView): CompactHit {
  const name = typeof view.name === 'string' ? view.name : '';
  const summary = summaryOf(view.description, MAX_HIT_SUMMARY);
  const params = compactSignature(view.inputSchema);
  const line = `${name}${params.text}${summary === '' ? '' : ` — ${summary}`}`;
  return { line, signature: params.text, summary, shortened: params.shortened || summary.endsWith('…') };
}

const MAX_HIT_SUMMARY = 120;
/** Optional parameters shown at most; required ones are never left out (up to MAX_REQUIRED, for a schema that abuses it). */
const MAX_OPTIONAL = 8;
const MAX_REQUIRED = 64;
/** An enum is shown while it has at most this many values and they fit in MAX_HIT_ENUM characters. */
const MAX_HIT_VALUES = 6;
const MAX_HIT_ENUM = 60;

/**
 * A tool's parameters as one compact signature: required ones first, each with a short type (an
 * enum's values while short, `object` or `T[]` without their insides), then the optional ones marked
 * `?` while there are at most MAX_OPTIONAL; `…` marks what was left out.
 */
export function compactSignature(schema: unknown): { text: string; shortened: boolean } {
  const object = asObject(schema);
  const properties = asObject(object?.properties);
  if (properties === undefined) return { text: '()', shortened: false };
  const required = new Set(Array.isArray(object?.required) ? object.required.filter((r): r is string => typeof r === 'string') : []);
  const state = { shortened: false };
  const names = Object.keys(properties);
  const must = names.filter((n) => required.has(n));
  const may = names.filter((n) => !required.has(n));
  const parts = [
    ...must.slice(0, MAX_REQUIRED).map((n) => `${n}: ${shortType(properties[n], state)}`),
    ...may.slice(0, MAX_OPTIONAL).map((n) => `${n}?: ${shortType(properties[n], state)}`),
  ];
  if (must.length > MAX_REQUIRED || may.length > MAX_OPTIONAL) {
    parts.push('…');
    state.shortened = true;
  }
  return { text: `(${parts.join(', ')})`, shortened: state.shortened };
}

/** A parameter's type in a word or two; what it leaves out sets `state.shortened`. */
function shortType(schema: unknown, state: { shortened: boolean }): string {
  const s = asObject(schema);
  if (s === undefined) return 'unknown';
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) {
    const values = s.enum.map(literal);
    const text = values.join('|');
    if (values.length > 0 && values.length <= MAX_HIT_VALUES && text.length <= MAX_HIT_ENUM) return text;
    state.shortened = true;
    return `${typeof s.enum[0] === 'string' ? 'string' : 'unknown'}…`;
  }
  const union = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (union !== undefined) return [...new Set(union.slice(0, MAX_HIT_VALUES).map((m) => shortType(m, state)))].join('|') || 'unknown';
  const type = s.type;
  if (Array.isArray(type)) return type.map((t: unknown) => shortType({ ...s, type: t }, state)).join('|');
  const scalar = scalarType(type);
  if (scalar !== undefined) return scalar;
  switch (type) {
    case 'array': {
      const item = asObject(s.items) === undefined ? 'unknown' : shortType(s.items, state);
      return /^\w+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    default: {
      const inner = asObject(s.properties);
      if (inner !== undefined && Object.keys(inner).length > 0) state.shortened = true;
      return type === 'object' || inner !== undefined ? 'object' : 'unknown';
    }
  }
}

/** The tool's declaration: its summary and flags as a comment, then its call with typed arguments and result. */
export function declaration(view: ToolView, path: ProgramTool, flags: DeclarationFlags): string {
  const notes: string[] = [];
  if (isReadOnly(view)) notes.push('[read-only]');
  if (flags.needsApproval) notes.push('[needs approval]');
  if (flags.notFromCode) notes.push('[not callable from code]');
  const summary = summaryOf(view.description);
  const comment = [summary, ...notes].filter((s) => s !== '').join(' ');
  const callee =
    isIdentifier(path.server) && isIdentifier(path.tool)
      ? `tools.${path.server}.${path.tool}`
      : `tools.call(${JSON.stringify(path.name)}, `;
  const args = typeOf(view.inputSchema ?? { type: 'object' }, 0);
  const output = view.outputSchema === undefined ? 'CallToolResult' : typeOf(view.outputSchema, 0);
  const call = callee.endsWith(', ') ? `${callee}args: ${args})` : `${callee}(args: ${args})`;
  return `${comment === '' ? '' : `/** ${comment} */\n`}${call}: Promise<${output}>`;
}

/** A JSON Schema scalar type as TypeScript names it; undefined for arrays, objects and the rest. */
function scalarType(type: unknown): string | undefined {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    default:
      return undefined;
  }
}

/** A JSON Schema as a compact TypeScript type. */
function typeOf(schema: unknown, depth: number): string {
  const s = asObject(schema);
  if (s === undefined) return schema === true || schema === undefined ? 'unknown' : 'never';
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) {
    const values = s.enum.slice(0, MAX_ENUM).map(literal);
    return s.enum.length > MAX_ENUM ? `${values.join('|')}|…` : values.join('|') || 'never';
  }
  const union = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (union !== undefined)
    return (
      union
        .slice(0, MAX_ENUM)
        .map((member) => typeOf(member, depth))
        .join('|') || 'unknown'
    );
  const type = s.type;
  if (Array.isArray(type)) return type.map((t: unknown) => typeOf({ ...s, type: t }, depth)).join('|');
  const scalar = scalarType(type);
  if (scalar !== undefined) return scalar;
  switch (type) {
    case 'array': {
      const item = typeOf(s.items, depth + 1);
      return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object':
      return objectType(s, depth);
    default:
      return s.properties !== undefined ? objectType(s, depth) : 'unknown';
  }
}

function objectType(s: Readonly<Record<string, unknown>>, depth: number): string {
  const properties = asObject(s.properties);
  if (properties === undefined || Object.keys(properties).length === 0)
    return s.additionalProperties === false ? '{}' : 'Record<string, unknown>';
  if (depth >= MAX_DEPTH) return '{…}';
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  const fields: string[] = [];
  for (const [name, sub] of Object.entries(properties).slice(0, MAX_PROPERTIES)) {
    const key = isIdentifier(name) ? name : JSON.stringify(name);
    const note = depth === 0 ? summaryOf(asObject(sub)?.description, MAX_PARAM_NOTE) : '';
    fields.push(
      `${key}${required.has(name) ? '' : '?'}: ${typeOf(sub, depth + 1)}${note === '' ? '' : ` /* ${note.replaceAll('*/', '* /')} */`}`,
    );
  }
  if (Object.keys(properties).length > MAX_PROPERTIES) fields.push('…');
  return `{${fields.join('; ')}}`;
}

function literal(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length <= 40 ? text : `${text.slice(0, 39)}…`;
}

function isIdentifier(name: string): boolean {
  return /^[A-Za-z_$][\w$]*$/.test(name);
}

function asObject(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
