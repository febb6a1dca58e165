// A tool as the fields the ranker weighs: its name in words, title, the first sentence of its
// description (what the tool does; the rest is often usage notes that name other tools and cases),
// the whole description, the names and the descriptions of its parameters, its server's name and
// instructions. The input schema is walked to a
// bounded depth and breadth, so a hostile or huge schema costs a bounded amount.
// The fields are eight, of a `SearchDoc`: name, title, summary (the description's first sentence),
// description, parameter names, parameter descriptions, server, server instructions. The schema is
// walked breadth first to depth 4 and 128 parameters, its descriptions read to 16 KB.

import { terms } from './words.js';

/** The fields of a tool, in the order of FieldWeights' keys and of the index's per-field arrays. */
export const FIELDS = ['name', 'title', 'summary', 'description', 'paramNames', 'paramDescriptions', 'server', 'instructions'] as const;
type Field = (typeof FIELDS)[number];
export type FieldWeights = Record<Field, number>;

/** What the index is told of a tool. `key` is the caller's identity for it (e.g. its exposed name). */
export interface SearchDoc {
  key: string;
  name: string;
  server: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  serverInstructions?: string;
}

/** Deepest nesting of the input schema walked for parameters (objects within arrays within objects…). */
const MAX_SCHEMA_DEPTH = 4;
/** Most parameters (at all depths) read from one schema. */
const MAX_PARAMETERS = 128;
/** Characters of parameter descriptions read from one schema, all together. */
const MAX_DESCRIBED = 16_384;
/** Terms one server's instructions give each of its tools: the start of them says what it is for. */
const MAX_INSTRUCTION_TERMS = 256;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parameter names and descriptions of a JSON Schema, breadth first, bounded. */
export function schemaParameters(schema: unknown): { names: string[]; descriptions: string[] } {
  const names: string[] = [];
  const descriptions: string[] = [];
  let described = 0;
  let queue: unknown[] = [schema];
  for (let depth = 0; depth < MAX_SCHEMA_DEPTH && queue.length > 0 && names.length < MAX_PARAMETERS; depth++) {
    const next: unknown[] = [];
    for (const node of queue) {
      if (!isRecord(node)) continue;
      const properties = node.properties;
      if (isRecord(properties)) {
        for (const name of Object.keys(properties)) {
          if (names.length >= MAX_PARAMETERS) break;
          names.push(name);
          const property = properties[name];
          if (isRecord(property)) {
            if (typeof property.description === 'string' && described < MAX_DESCRIBED) {
              descriptions.push(property.description.slice(0, MAX_DESCRIBED - described));
              described += descriptions[descriptions.length - 1]!.length;
            }
            next.push(property);
          }
        }
      }
      // Arrays of objects and the schema combinators hold parameters one level further down.
      if (isRecord(node.items)) next.push(node.items);
      for (const combinator of ['anyOf', 'oneOf', 'allOf'] as const) {
        const list = node[combinator];
        if (Array.isArray(list)) next.push(...(list as unknown[]).slice(0, 16));
      }
      if (next.length > MAX_PARAMETERS) break;
    }
    queue = next;
  }
  return { names, descriptions };
}

/** Longest first sentence taken as a description's summary. */
const MAX_SUMMARY = 300;

/** The first sentence of a description: up to the first full stop before a space, or the first line. */
function summaryOf(description: string): string {
  const text = description.trimStart().slice(0, MAX_SUMMARY);
  const end = text.search(/[.!?](?:\s|$)|\n/);
  return end < 0 ? text : text.slice(0, end);
}

/** The terms of each field of a tool, in FIELDS order. */
export function fieldTerms(doc: SearchDoc): string[][] {
  const parameters = schemaParameters(doc.inputSchema);
  return [
    terms(doc.name),
    terms(doc.title ?? ''),
    terms(summaryOf(doc.description ?? '')),
    terms(doc.description ?? ''),
    terms(parameters.names.join(' ')),
    terms(parameters.descriptions.join('\n')),
    terms(doc.server),
    terms(doc.serverInstructions ?? '', MAX_INSTRUCTION_TERMS),
  ];
}
