// Fetching a server's tools, resources, resource templates and prompts, following pagination, and
// validating each page at the edge with the SDK's schemas: a server that sends garbage is reported
// (MCPG_SERVER_BAD_RESPONSE, naming it) instead of poisoning the catalog. A server's limits bound what
// is kept, a 2026-07-28 server's cache hint (`ttlMs`) lets a reconnect reuse a list, and what was cut
// is returned beside the lists (catalog/size-caps.ts logs it once and keeps it for the status). The
// limits, the cache hint and the direct look at a tool of the usual shape: src/servers/README.md,
// "Lists".

import type { Prompt, Resource, Tool } from '../wire/protocol.js';
import type { z } from 'zod';
import { GatewayError } from '../errors.js';
import { DEFAULT_LIMITS, type ServerLimits } from '../config/types.js';
import type { Connection } from './connection.js';
import { toolHeaders } from '../wire/tool-headers.js';
import { MODERN_PROTOCOL_VERSIONS } from '../wire/era.js';
import { serverSchemas } from './sdk-schemas.js';

export type ListKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';
export const LIST_KINDS: readonly ListKind[] = ['tools', 'resources', 'resourceTemplates', 'prompts'];

interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  [key: string]: unknown;
}

export interface ServerLists {
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  prompts: Prompt[];
}

/** What the limits cut from one list: items past the count, tools with oversized schemas or bad header annotations. */
export interface ListTrim {
  /** The server offered at least `listed` items; only the first `max` are kept. */
  dropped?: { max: number; listed: number };
  /** Tools withheld because a schema is larger than `maxBytes` (names, in list order). */
  oversized?: { maxBytes: number; tools: string[] };
  /** Tools set aside for `x-mcp-header` annotations a client must reject (wire/tool-headers.ts), with why. */
  badHeaders?: { tool: string; why: string }[];
}

interface FetchedLists {
  lists: Partial<ServerLists>;
  trims: Partial<Record<ListKind, ListTrim>>;
}

const LIMIT_OF: Record<ListKind, keyof ServerLimits> = {
  tools: 'maxTools',
  resources: 'maxResources',
  resourceTemplates: 'maxResources',
  prompts: 'maxPrompts',
};

/** The longest a server's cache hint keeps a list (a day): a bound, not a default. */
const MAX_TTL_MS = 24 * 60 * 60_000;

interface FreshList {
  items: unknown[];
  trim: ListTrim | undefined;
  /** performance.now() past which the list is stale. */
  until: number;
}

/** Lists still fresh by their server's cache hint, per connection (at most one per kind). */
const freshLists = new WeakMap<Connection, Map<ListKind, FreshList>>();

/** A server that keeps handing out cursors is cut off here rather than looping forever. */
const MAX_PAGES = 1000;

/** Each list's method, result field and capability; its schema is `serverSchemas()[kind]` (sdk-schemas.ts). */
const SPEC = {
  tools: { method: 'tools/list', field: 'tools', capability: 'tools' },
  resources: { method: 'resources/list', field: 'resources', capability: 'resources' },
  resourceTemplates: { method: 'resources/templates/list', field: 'resourceTemplates', capability: 'resources' },
  prompts: { method: 'prompts/list', field: 'prompts', capability: 'prompts' },
} as const;

/** Whether the server declared the capability this list needs (an undeclared list is simply empty). */
function supports(conn: Connection, kind: ListKind): boolean {
  return conn.info?.capabilities[SPEC[kind].capability] !== undefined;
}

async function fetchList<K extends ListKind>(
  conn: Connection,
  kind: K,
  limits: ServerLimits = DEFAULT_LIMITS,
): Promise<{ items: ServerLists[K]; trim: ListTrim | undefined; ttlMs?: number }> {
  if (!supports(conn, kind)) return { items: [], trim: undefined };
  // The shortest hint of the pages: the list is as fresh as its stalest page.
  let ttlMs = Infinity;
  const spec = SPEC[kind];
  const max = limits[LIMIT_OF[kind]];
  const modern = MODERN_PROTOCOL_VERSIONS.includes(conn.info?.protocolVersion ?? '');
  const items: unknown[] = [];
  let trim: ListTrim | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    let raw: Record<string, unknown>;
    try {
      raw = await conn.request(spec.method, cursor === undefined ? undefined : { cursor });
    } catch (err) {
      // Declaring `resources` without serving templates is common (SDK servers answer -32601).
      if (page === 0 && isMethodNotFound(err)) return { items: [], trim: undefined };
      throw err;
    }
    // Cut to what is kept before validating, so a flood of items is never copied by the schema check.
    let rawItems = raw[spec.field];
    let over = false;
    if (Array.isArray(rawItems)) {
      const room = max - items.length;
      if (rawItems.length > room) {
        over = true;
        trim = { dropped: { max, listed: items.length + rawItems.length } };
        rawItems = rawItems.slice(0, room);
      }
      if (kind === 'tools') {
        const kept = withoutOversized(rawItems as unknown[], limits.maxSchemaBytes);
        if (kept.withheld.length > 0) {
          trim ??= {};
          trim.oversized = { maxBytes: limits.maxSchemaBytes, tools: [...(trim.oversized?.tools ?? []), ...kept.withheld] };
          rawItems = kept.items;
        }
        // Header annotations belong to the 2026-07-28 revision: a 2025-era server's tools are served as listed.
        const valid = modern ? withoutBadHeaders(rawItems as unknown[]) : { items: rawItems as unknown[], rejected: [] };
        if (valid.rejected.length > 0) {
          trim ??= {};
          trim.badHeaders = [...(trim.badHeaders ?? []), ...valid.rejected];
          rawItems = valid.items;
        }
      }
      raw = { ...raw, [spec.field]: rawItems };
    }
    // Tools of the usual shape are accepted as they are (plainTool); the schema then checks the rest
    // of the result, and every tool again only when one of them is unusual or wrong.
    const usual = kind === 'tools' && Array.isArray(rawItems) && (rawItems as unknown[]).every(plainTool);
    const schema: z.ZodType = (await serverSchemas())[kind];
    const parsed = schema.safeParse(usual ? { ...raw, [spec.field]: [] } : raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue !== undefined && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      throw new GatewayError(
        'MCPG_SERVER_BAD_RESPONSE',
        `server "${conn.name}" sent an invalid ${spec.method} result${where}: ${issue?.message ?? 'invalid'}`,
        { server: conn.name },
      );
    }
    const data = parsed.data as Record<string, unknown>;
    ttlMs = Math.min(ttlMs, typeof raw.ttlMs === 'number' && Number.isFinite(raw.ttlMs) && raw.ttlMs > 0 ? raw.ttlMs : 0);
    // Keep the server's own objects (not zod's copies) so unknown fields pass through untouched.
    for (const item of rawItems as unknown[]) items.push(item);
    cursor = typeof data.nextCursor === 'string' && data.nextCursor.length > 0 ? data.nextCursor : undefined;
    // Past the limit there is nothing more to keep: do not page through the rest.
    if (cursor === undefined || over) return { items: items as ServerLists[K], trim, ttlMs: Math.min(ttlMs, MAX_TTL_MS) };
  }
  throw new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${conn.name}" returned more than ${MAX_PAGES} pages for ${spec.method}`, {
    server: conn.name,
  });
}

/**
 * A list read back from somewhere untrusted (a known catalog in the state directory): checked as a
 * server's page is — the limits' count and schema size, header annotations for a modern server's
 * tools, the SDK's schema — so a file cannot put into the catalog what the server could not.
 * Returns the items, or why they are refused.
 */
export async function checkList(
  kind: ListKind,
  items: unknown,
  limits: ServerLimits = DEFAULT_LIMITS,
  modern = false,
): Promise<unknown[] | string> {
  if (!Array.isArray(items)) return `${kind} is not an array`;
  const max = limits[LIMIT_OF[kind]];
  if (items.length > max) return `${kind} has ${items.length} items, more than the limit of ${max}`;
  let kept: unknown[] = items;
  if (kind === 'tools') {
    const sized = withoutOversized(kept, limits.maxSchemaBytes);
    if (sized.withheld.length > 0) return `tool "${sized.withheld[0]}" has a schema larger than ${limits.maxSchemaBytes} bytes`;
    const valid = modern ? withoutBadHeaders(kept) : { items: kept, rejected: [] };
    if (valid.rejected.length > 0) return `tool "${valid.rejected[0]!.tool}" has invalid x-mcp-header annotations`;
    kept = valid.items;
  }
  const spec = SPEC[kind];
  const parsed = ((await serverSchemas())[kind] as z.ZodType).safeParse({ [spec.field]: kept });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue !== undefined && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    return `invalid ${kind}${where}: ${issue?.message ?? 'invalid'}`;
  }
  return kept;
}

/**
 * Fetches the lists of `kinds`. With `reuse`, a list its server's cache hint still calls fresh is
 * taken as it was (no round trip); every list fetched replaces what was kept of it.
 */
export async function fetchLists(
  conn: Connection,
  kinds: readonly ListKind[] = LIST_KINDS,
  options: { reuse?: boolean } = {},
): Promise<FetchedLists> {
  const out: FetchedLists = { lists: {}, trims: {} };
  const limits = conn.config.limits ?? DEFAULT_LIMITS;
  let kept = freshLists.get(conn);
  await Promise.all(
    kinds.map(async (kind) => {
      const cached = options.reuse === true ? kept?.get(kind) : undefined;
      let items: unknown[];
      let trim: ListTrim | undefined;
      if (cached !== undefined && cached.until > performance.now()) {
        ({ items, trim } = cached);
      } else {
        const fetched = await fetchList(conn, kind, limits);
        ({ items, trim } = fetched);
        if (fetched.ttlMs !== undefined && fetched.ttlMs > 0) {
          if (kept === undefined) freshLists.set(conn, (kept = new Map<ListKind, FreshList>()));
          kept.set(kind, { items, trim, until: performance.now() + fetched.ttlMs });
        } else {
          kept?.delete(kind);
        }
      }
      (out.lists as Record<ListKind, unknown>)[kind] = items;
      if (trim !== undefined) out.trims[kind] = trim;
    }),
  );
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optional = (v: unknown, type: 'string' | 'boolean'): boolean => v === undefined || typeof v === type;

/**
 * A tool the tools/list schema (ToolsResultSchema) certainly accepts, by a direct look at the fields
 * it checks: name, title, description, inputSchema (type "object", properties, required),
 * outputSchema, annotations' hints and _meta. A tool with icons or execution, or anything else that
 * is not plainly right, is left to the schema. The schema walk copies every object of every tool
 * (tens of ms for a few hundred realistic tools); this look copies nothing.
 */
function plainTool(tool: unknown): boolean {
  if (!isRecord(tool)) return false;
  const { name, title, description, inputSchema, outputSchema, annotations, icons, execution, _meta: meta } = tool;
  if (typeof name !== 'string' || !optional(title, 'string') || !optional(description, 'string')) return false;
  if (icons !== undefined || execution !== undefined || (meta !== undefined && !isRecord(meta))) return false;
  if (!isRecord(inputSchema) || inputSchema.type !== 'object') return false;
  if (inputSchema.properties !== undefined && !isRecord(inputSchema.properties)) return false;
  const required = inputSchema.required;
  if (required !== undefined && !(Array.isArray(required) && required.every((r) => typeof r === 'string'))) return false;
  if (outputSchema !== undefined && !(isRecord(outputSchema) && optional(outputSchema.$schema, 'string'))) return false;
  if (annotations === undefined) return true;
  if (!isRecord(annotations) || !optional(annotations.title, 'string')) return false;
  return (
    optional(annotations.readOnlyHint, 'boolean') &&
    optional(annotations.destructiveHint, 'boolean') &&
    optional(annotations.idempotentHint, 'boolean') &&
    optional(annotations.openWorldHint, 'boolean')
  );
}

/**
 * Splits off the tools whose `x-mcp-header` annotations a client must reject: such a tool cannot be
 * called as its server expects (its headers would be wrong or missing), so it is not served; the
 * server's other tools are.
 */
function withoutBadHeaders(tools: unknown[]): { items: unknown[]; rejected: { tool: string; why: string }[] } {
  const rejected: { tool: string; why: string }[] = [];
  const items = tools.filter((tool) => {
    const why = toolHeaders((tool as { inputSchema?: unknown } | null)?.inputSchema);
    if (typeof why !== 'string') return true;
    const name = (tool as { name?: unknown }).name;
    rejected.push({ tool: typeof name === 'string' ? name : '?', why });
    return false;
  });
  return { items, rejected };
}

/** Splits off the tools whose inputSchema or outputSchema is over `maxBytes` (a malformed tool is left to validation). */
function withoutOversized(tools: unknown[], maxBytes: number): { items: unknown[]; withheld: string[] } {
  const withheld: string[] = [];
  const items = tools.filter((tool) => {
    if (typeof tool !== 'object' || tool === null) return true;
    const { name, inputSchema, outputSchema } = tool as Record<string, unknown>;
    if (surelyWithin(inputSchema, maxBytes) && surelyWithin(outputSchema, maxBytes)) return true;
    if (jsonSize(inputSchema, maxBytes) <= maxBytes && jsonSize(outputSchema, maxBytes) <= maxBytes) return true;
    withheld.push(typeof name === 'string' ? name : '(unnamed)');
    return false;
  });
  return { items, withheld };
}

/**
 * True when `JSON.stringify(value)` is certainly at most `maxBytes` long in UTF-8, by a bound that
 * needs no encoding: 3 bytes for each UTF-16 unit of a string, 24 for a number; false past the bound
 * (the caller then counts exactly). A usual schema is a few KB against a limit of hundreds.
 */
function surelyWithin(value: unknown, maxBytes: number): boolean {
  let bound = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') bound += 3 * v.length + 2;
    else if (typeof v === 'object' && v !== null) {
      if (Array.isArray(v)) {
        bound += 1 + v.length;
        for (const item of v) stack.push(item);
      } else {
        bound += 2;
        const record = v as Record<string, unknown>;
        for (const key in record) {
          bound += 3 * key.length + 4;
          stack.push(record[key]);
        }
      }
    } else bound += 24;
    if (bound > maxBytes) return false;
  }
  return true;
}

/**
 * The UTF-8 length of `JSON.stringify(value)` (escapes aside), counted by an iterative walk that
 * stops as soon as it passes `stopAbove`: a 50 MB schema costs a walk to its first 256 KiB, no copy.
 */
function jsonSize(value: unknown, stopAbove = Infinity): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= stopAbove) {
    const v = stack.pop();
    if (typeof v === 'string') total += Buffer.byteLength(v) + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') total += String(v).length;
    else if (v === null) total += 4;
    else if (Array.isArray(v)) {
      total += 2 + Math.max(0, v.length - 1);
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      const entries = Object.entries(v);
      total += 2 + Math.max(0, entries.length - 1);
      for (const [key, item] of entries) {
        total += Buffer.byteLength(key) + 3;
        stack.push(item);
      }
    }
    // undefined (an absent schema) counts nothing
  }
  return total;
}

function isMethodNotFound(err: unknown): boolean {
  const serverError = err instanceof GatewayError ? (err.detail?.serverError as { code?: unknown } | undefined) : undefined;
  return serverError?.code === -32601;
}
