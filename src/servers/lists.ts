// Fetching a server's tools, resources, resource templates and prompts, following pagination, and
// validating each page at the edge with the SDK's schemas: a server that sends garbage is reported
// (MCPG_SERVER_BAD_RESPONSE, naming it) instead of poisoning the catalog.

import {
  ListPromptsResultSchema, ListResourcesResultSchema, ListResourceTemplatesResultSchema, ListToolsResultSchema,
} from '@modelcontextprotocol/core';
import type { Prompt, Resource, Tool } from '../wire/protocol.js';
import type { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { Connection } from './connection.js';

export type ListKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';
export const LIST_KINDS: readonly ListKind[] = ['tools', 'resources', 'resourceTemplates', 'prompts'];

export interface ResourceTemplate {
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

/** A server that keeps handing out cursors is cut off here rather than looping forever. */
const MAX_PAGES = 1000;

const SPEC = {
  tools: { method: 'tools/list', field: 'tools', schema: ListToolsResultSchema, capability: 'tools' },
  resources: { method: 'resources/list', field: 'resources', schema: ListResourcesResultSchema, capability: 'resources' },
  resourceTemplates: { method: 'resources/templates/list', field: 'resourceTemplates', schema: ListResourceTemplatesResultSchema, capability: 'resources' },
  prompts: { method: 'prompts/list', field: 'prompts', schema: ListPromptsResultSchema, capability: 'prompts' },
} as const;

/** Whether the server declared the capability this list needs (an undeclared list is simply empty). */
export function supports(conn: Connection, kind: ListKind): boolean {
  return conn.info?.capabilities[SPEC[kind].capability] !== undefined;
}

export async function fetchList<K extends ListKind>(conn: Connection, kind: K): Promise<ServerLists[K]> {
  if (!supports(conn, kind)) return [];
  const spec = SPEC[kind];
  const items: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    let raw: Record<string, unknown>;
    try {
      raw = await conn.request(spec.method, cursor === undefined ? undefined : { cursor });
    } catch (err) {
      // Declaring `resources` without serving templates is common (SDK servers answer -32601).
      if (page === 0 && isMethodNotFound(err)) return [];
      throw err;
    }
    const parsed = (spec.schema as z.ZodType).safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue !== undefined && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      throw new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${conn.name}" sent an invalid ${spec.method} result${where}: ${issue?.message ?? 'invalid'}`, { server: conn.name });
    }
    const data = parsed.data as Record<string, unknown>;
    // Keep the server's own objects (not zod's copies) so unknown fields pass through untouched.
    const rawItems = raw[spec.field] as unknown[];
    items.push(...rawItems);
    cursor = typeof data.nextCursor === 'string' && data.nextCursor.length > 0 ? data.nextCursor : undefined;
    if (cursor === undefined) return items as ServerLists[K];
  }
  throw new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${conn.name}" returned more than ${MAX_PAGES} pages for ${spec.method}`, { server: conn.name });
}

export async function fetchLists(conn: Connection, kinds: readonly ListKind[] = LIST_KINDS): Promise<Partial<ServerLists>> {
  const out: Partial<ServerLists> = {};
  await Promise.all(kinds.map(async (kind) => {
    (out as Record<ListKind, unknown>)[kind] = await fetchList(conn, kind);
  }));
  return out;
}

function isMethodNotFound(err: unknown): boolean {
  const serverError = err instanceof GatewayError ? (err.detail?.serverError as { code?: unknown } | undefined) : undefined;
  return serverError?.code === -32601;
}
