// Declared extensions (`capabilities.extensions`, keyed by extension id such as
// `io.modelcontextprotocol/ui`), both ways through mcpgate: to an agent, the merge of what its ready
// servers declare, of the extensions mcpgate can route (`ROUTABLE_EXTENSIONS`); to a server, what the
// agent its connection is made for declared, or on a shared connection only what mcpgate carries
// intact whatever the agent (MCP Apps). How the declarations merge, and why a shared connection
// declares so little: src/gateway/README.md, "Extensions".

import { SKILLS_EXTENSION } from '../../wire/skills.js';

/** The MCP Apps extension's id, and the one resource type its hosts render. */
const UI_EXTENSION = 'io.modelcontextprotocol/ui';
const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * The extensions mcpgate routes for agents, so declares to them when a server does. An extension
 * joins when its methods and resources are routed to the servers that declare it: MCP Apps, and
 * Skills (merged, renamed and verified by gateway/routing/skill-methods.ts).
 */
const ROUTABLE_EXTENSIONS: ReadonlySet<string> = new Set([UI_EXTENSION, SKILLS_EXTENSION]);

/** Of merged `extensions`, those mcpgate can route (`ROUTABLE_EXTENSIONS`), or undefined when none. */
export function routableExtensions(extensions: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (extensions === undefined) return undefined;
  const routable = Object.entries(extensions).filter(([id]) => ROUTABLE_EXTENSIONS.has(id));
  return routable.length === 0 ? undefined : Object.fromEntries(routable);
}

/** What a shared connection declares: the extensions mcpgate passes through for every agent. */
export const PASSED_THROUGH: Readonly<Record<string, unknown>> = Object.freeze({ [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `extensions` of a capabilities object, if it declares any (an object). */
export function extensionsOf(capabilities: unknown): Record<string, unknown> | undefined {
  const extensions = isRecord(capabilities) ? capabilities.extensions : undefined;
  return isRecord(extensions) && Object.keys(extensions).length > 0 ? extensions : undefined;
}

/** Two declarations of one setting merged: objects key by key, lists joined, else the earlier. */
function mergeSetting(earlier: unknown, later: unknown): unknown {
  if (isRecord(earlier) && isRecord(later)) {
    const merged: Record<string, unknown> = { ...earlier };
    for (const [key, value] of Object.entries(later)) merged[key] = key in merged ? mergeSetting(merged[key], value) : value;
    return merged;
  }
  if (Array.isArray(earlier) && Array.isArray(later)) {
    const first = earlier as unknown[];
    const seen = new Set(first.map((item) => JSON.stringify(item)));
    return [...first, ...(later as unknown[]).filter((item) => !seen.has(JSON.stringify(item)))];
  }
  return earlier;
}

/** The servers' `extensions` (earlier servers first) merged into one, or undefined when none declares any. */
export function mergeExtensions(declared: Iterable<Record<string, unknown> | undefined>): Record<string, unknown> | undefined {
  let merged: Record<string, unknown> | undefined;
  for (const extensions of declared) {
    if (extensions === undefined) continue;
    merged ??= {};
    for (const [id, settings] of Object.entries(extensions)) merged[id] = id in merged ? mergeSetting(merged[id], settings) : settings;
  }
  return merged;
}
