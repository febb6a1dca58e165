// Whether a call's arguments have the shape the tool's input schema declares: the keywords that
// decide what a value *is* — `type`, `enum`, `const`, `required`, `properties`,
// `additionalProperties`, `items`/`prefixItems`, `anyOf`/`oneOf`/`allOf` and local `$ref`s — and
// not its finer constraints (`pattern`, `format`, ranges, lengths), which stay the server's to
// enforce. The gate asks it before a rule reads the arguments, so that `"force": "true"` cannot
// pass a test written for `true` and reach a server that reads it as `true`. No regular expression
// from a schema is ever run here, and the work per call is bounded (MAX_STEPS).

import { canonicalJson } from '../wire/canonical-json.js';

/** Schema nodes visited per call at most; past it (or MAX_REF_DEPTH) the arguments are refused as too complex to check. */
const MAX_STEPS = 20_000;
/** Nested `$ref`s followed at most on one path. */
const MAX_REF_DEPTH = 32;

type Schema = Record<string, unknown>;

class TooComplex extends Error {}

/**
 * Undefined when `args` fits `schema`, else what does not fit (`arguments.force: expected boolean,
 * got string`). A schema that is not an object (absent, malformed) accepts anything.
 */
export function argumentMismatch(schema: unknown, args: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!isObject(schema)) return undefined;
  try {
    return new Walk(schema).mismatch(schema, args ?? {}, 'arguments', 0);
  } catch (err) {
    if (err instanceof TooComplex)
      return `the tool's input schema is too complex to check the arguments against (over ${MAX_STEPS} steps or ${MAX_REF_DEPTH} nested references)`;
    throw err;
  }
}

/** One check of one call's arguments: the schema's root (for `$ref`s) and the work done so far. */
class Walk {
  private steps = 0;
  constructor(private readonly root: Schema) {}

  mismatch(schema: unknown, value: unknown, at: string, refs: number): string | undefined {
    if (++this.steps > MAX_STEPS) throw new TooComplex();
    if (schema === true || schema === undefined) return undefined;
    if (schema === false) return `${at}: no value is allowed here`;
    if (!isObject(schema)) return undefined;
    if (typeof schema.$ref === 'string') {
      if (refs >= MAX_REF_DEPTH) throw new TooComplex();
      const target = resolve(this.root, schema.$ref);
      if (target !== undefined) {
        const wrong = this.mismatch(target, value, at, refs + 1);
        if (wrong !== undefined) return wrong;
      }
    }
    const types = schema.type;
    if (typeof types === 'string' || Array.isArray(types)) {
      const allowed = typeof types === 'string' ? [types] : types.filter((t): t is string => typeof t === 'string');
      if (allowed.length > 0 && !allowed.some((t) => isType(value, t)))
        return `${at}: expected ${allowed.join(' or ')}, got ${typeName(value)}`;
    }
    if ('const' in schema && !sameJson(schema.const, value)) return `${at}: expected ${JSON.stringify(schema.const)}`;
    if (Array.isArray(schema.enum) && !schema.enum.some((option) => sameJson(option, value)))
      return `${at}: expected one of ${schema.enum.map((o) => JSON.stringify(o)).join(', ')}`;
    for (const key of ['anyOf', 'oneOf'] as const) {
      const options = schema[key];
      if (!Array.isArray(options) || options.length === 0) continue;
      let first: string | undefined;
      let fits = false;
      for (const option of options) {
        const wrong = this.mismatch(option, value, at, refs);
        if (wrong === undefined) {
          fits = true;
          break;
        }
        first ??= wrong;
      }
      if (!fits) return first;
    }
    if (Array.isArray(schema.allOf))
      for (const part of schema.allOf) {
        const wrong = this.mismatch(part, value, at, refs);
        if (wrong !== undefined) return wrong;
      }
    if (isObject(value) && !Array.isArray(value)) return this.objectMismatch(schema, value, at, refs);
    if (Array.isArray(value)) return this.arrayMismatch(schema, value, at, refs);
    return undefined;
  }

  private objectMismatch(schema: Schema, value: Record<string, unknown>, at: string, refs: number): string | undefined {
    const properties = isObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required))
      for (const name of schema.required)
        if (typeof name === 'string' && !Object.hasOwn(value, name)) return `${at}.${name}: required, missing`;
    for (const [name, item] of Object.entries(value)) {
      const where = `${at}.${name}`;
      if (Object.hasOwn(properties, name)) {
        const wrong = this.mismatch(properties[name], item, where, refs);
        if (wrong !== undefined) return wrong;
        continue;
      }
      // `patternProperties` would mean running the schema's regular expressions: such a name is left
      // to the server, as a name the schema does not mention is when it allows others.
      if (isObject(schema.patternProperties) && Object.keys(schema.patternProperties).length > 0) continue;
      if (schema.additionalProperties === false) return `${where}: not a property the tool accepts`;
      const wrong = this.mismatch(schema.additionalProperties, item, where, refs);
      if (wrong !== undefined) return wrong;
    }
    return undefined;
  }

  private arrayMismatch(schema: Schema, value: readonly unknown[], at: string, refs: number): string | undefined {
    // Draft 2020-12 `prefixItems` + `items`; draft-07's array form of `items` is the same prefix.
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    for (let i = 0; i < value.length; i++) {
      const wrong = this.mismatch(i < prefix.length ? prefix[i] : rest, value[i], `${at}[${i}]`, refs);
      if (wrong !== undefined) return wrong;
    }
    return undefined;
  }
}

/** A local reference (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer into the schema); others are not followed. */
function resolve(root: Schema, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

function isType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value) && !Array.isArray(value);
    default:
      return true; // a type name JSON Schema does not define: not ours to refuse
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return canonicalJson(a) === canonicalJson(b);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
