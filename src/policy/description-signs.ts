// Signs of prompt injection in what a server says about its own items — a tool's title, description
// and its parameters' descriptions, a prompt's description — read with the same heuristics as results
// (guards/injection.ts). A catalog's descriptions reach the model as they are, so one that speaks to
// the model ("ignore your previous instructions", a hidden <IMPORTANT> block) is flagged for the
// operator where they review a server (the console's server page); it flags, it does not prove.

import { injectionSigns } from '../guards/injection.js';

/** At most this many characters of one item's descriptions are read. */
const MAX_TEXT = 64 * 1024;
/** At most this many parameters' descriptions are read. */
const MAX_PARAMETERS = 256;

/** The ids of the injection signs in an item's descriptions, each once, in the heuristics' order; empty when clean. */
export function descriptionSigns(item: {
  readonly title?: unknown;
  readonly description?: unknown;
  readonly inputSchema?: unknown;
}): string[] {
  const texts: string[] = [];
  if (typeof item.title === 'string') texts.push(item.title);
  if (typeof item.description === 'string') texts.push(item.description);
  const properties = isObject(item.inputSchema) && isObject(item.inputSchema.properties) ? item.inputSchema.properties : {};
  for (const property of Object.values(properties).slice(0, MAX_PARAMETERS))
    if (isObject(property) && typeof property.description === 'string') texts.push(property.description);
  const ids = new Set<string>();
  for (const sign of injectionSigns(texts.join('\n').slice(0, MAX_TEXT))) ids.add(sign.id);
  return [...ids];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
