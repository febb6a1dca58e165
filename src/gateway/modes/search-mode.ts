// Search mode: instead of the whole catalog an agent is listed `search_tools`, `describe_tools`, the
// tools its rules mark as always shown and those it found in this agent session. A search answers one
// compact line per hit (tool-declarations.ts), describe_tools the full definitions; every tool the
// agent may call stays callable by name, found or not: search mode shortens the list, it is no
// permission. What a search returns, and what the list shows, passes the same rules
// (rules/decide.ts) and pins as a call, so a search never names a tool the agent may not call or a
// held one. Ranking: search-indexes.ts, optionally fused with embeddings (embeddings.ts).
//
// "Found in this session": a legacy (2025) agent's session remembers what its searches returned and
// lists it (announced with list_changed). A modern (2026-07-28) agent has no session, so nothing is
// remembered between its requests: it calls what a search returned by name.

import type { SkillHit } from '../routing/skill-search.js';
import type { Catalog, ToolEntry } from '../../catalog/catalog.js';
import { GatewayError } from '../../errors.js';
import { shows, type ModeSettings } from '../../rules/agent-mode.js';
import { MAX_TASK_CHARS } from '../../search/task-search.js';
import { hitOf } from './tool-declarations.js';

export const SEARCH_TOOL_NAME = 'search_tools';
/** The same name as code mode's describe_tools: search mode's gives definitions, code mode's declarations. */
export const DESCRIBE_NAME = 'describe_tools';
/** Tools one describe_tools call names at most. */
const MAX_DESCRIBE = 10;
const DEFAULT_SEARCH_LIMIT = 5;
const MAX_SEARCH_LIMIT = 50;
/** Tools one session remembers as found; past it the oldest are forgotten (still callable by name). */
const MAX_FOUND = 200;

const SEARCH_TOOL = {
  name: SEARCH_TOOL_NAME,
  title: 'Search tools',
  description:
    'Finds the tools for a task among all this gateway offers you: a few words ("create a GitHub issue") or ' +
    'several steps. One line per tool, best first: name(param: type, optional?: type) — summary; call it by ' +
    'that name. … marks what was cut: describe_tools gives the full definition.',
  inputSchema: {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_TASK_CHARS,
        description: 'The task: a few words or several steps.',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_SEARCH_LIMIT,
        default: DEFAULT_SEARCH_LIMIT,
        description: 'Most tools returned.',
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      tools: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            server: { type: 'string' },
            signature: { type: 'string' },
            summary: { type: 'string' },
            shortened: { type: 'boolean' },
          },
          required: ['name', 'server', 'signature', 'summary'],
        },
      },
    },
    required: ['tools'],
  },
} as const;

const DESCRIBE_TOOL = {
  name: DESCRIBE_NAME,
  title: 'Describe tools',
  description: `The full definitions (input schema included) of up to ${MAX_DESCRIBE} tools, by the names search_tools gave.`,
  inputSchema: {
    type: 'object',
    properties: { names: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_DESCRIBE } },
    required: ['names'],
    additionalProperties: false,
  },
} as const;

export interface SearchRequest {
  readonly query: string;
  readonly limit: number;
}

const invalid = (message: string): GatewayError => new GatewayError('MCPG_INVALID_PARAMS', message);

/** Checks `search_tools`' arguments; throws MCPG_INVALID_PARAMS saying what is wrong. */
export function searchRequest(args: unknown): SearchRequest {
  if (args === undefined || args === null || typeof args !== 'object' || Array.isArray(args))
    throw invalid('search_tools needs arguments {"query": string, "limit"?: integer}');
  const { query, limit, ...rest } = args as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw invalid(`search_tools takes "query" and "limit" only; unknown: ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
  if (typeof query !== 'string') throw invalid(`search_tools "query" must be a string${query === undefined ? ' (it is missing)' : ''}`);
  if (query.trim() === '') throw invalid('search_tools "query" must not be empty: describe the task in a few words');
  // The search library reads a task to MAX_TASK_CHARS; a longer query is refused rather than cut unseen.
  if (query.length > MAX_TASK_CHARS) throw invalid(`search_tools "query" is ${query.length} characters; at most ${MAX_TASK_CHARS}`);
  if (limit === undefined) return { query, limit: DEFAULT_SEARCH_LIMIT };
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw invalid(
      `search_tools "limit" must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${typeof limit === 'number' || typeof limit === 'string' ? JSON.stringify(limit) : typeof limit}`,
    );
  }
  return { query, limit };
}

/** One tool of a search result, as the agent calls it. */
export interface SearchResultTool {
  name: string;
  server: string;
  title?: string;
  description: string;
  inputSchema: unknown;
}

/** The tool as a search result: its listed view (public name, sanitized texts) and its server. */
export function resultTool(catalog: Catalog, key: string, entry: ToolEntry): SearchResultTool | undefined {
  const view = catalog.toolView(key) as Record<string, unknown> | undefined;
  if (view === undefined) return undefined;
  return {
    name: key,
    server: entry.server,
    ...(typeof view.title === 'string' && { title: view.title }),
    description: typeof view.description === 'string' ? view.description : '',
    inputSchema: view.inputSchema ?? { type: 'object' },
  };
}

const NOTHING_FOUND = 'No tool found; try other words.';
const SHORTENED_NOTE = '(… marks what was left out: describe_tools gives the full definitions.)';
const SKILLS_NOTE = '(A skill is instructions to follow: read its SKILL.md with resources/read, then the files it names.)';

/** Most skills a search answers beside its tools (a skill is found when its words match the task). */
export const MAX_SKILL_HITS = 3;

/**
 * The `tools/call` result of a search: one compact line per tool (tool-declarations.ts `hitOf`), and
 * the same as structured content — never the full schemas, which are context the agent pays for.
 * Skills the search found follow, one line each, marked as skills.
 */
export function searchResult(tools: readonly SearchResultTool[], skills: readonly SkillHit[] = []): Record<string, unknown> {
  const hits = tools.map((tool) => ({
    tool,
    hit: hitOf({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }),
  }));
  const lines = hits.map(({ hit }) => hit.line);
  if (hits.some(({ hit }) => hit.shortened)) lines.push(SHORTENED_NOTE);
  lines.push(...skillLines(skills));
  const structuredContent = {
    tools: hits.map(({ tool, hit }) => ({
      name: tool.name,
      server: tool.server,
      signature: hit.signature,
      summary: hit.summary,
      ...(hit.shortened && { shortened: true }),
    })),
    ...(skills.length > 0 && { skills }),
  };
  return { content: [{ type: 'text', text: lines.length === 0 ? NOTHING_FOUND : lines.join('\n') }], structuredContent };
}

/** The lines a search answers for the skills it found (none: none), marked as skills. */
export function skillLines(skills: readonly SkillHit[]): string[] {
  if (skills.length === 0) return [];
  return [...skills.map((skill) => `skill ${skill.uri} — ${oneLine(skill.description)}`), SKILLS_NOTE];
}

/** A description on one line (a skill's may hold line breaks). */
const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Checks `describe_tools`' arguments: the names (1 to MAX_DESCRIBE), each once. */
export function describeRequest(args: unknown): string[] {
  const names = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as { names?: unknown }).names : undefined;
  if (!Array.isArray(names) || names.length === 0 || names.length > MAX_DESCRIBE || !names.every((n) => typeof n === 'string'))
    throw invalid(`describe_tools needs "names": an array of 1 to ${MAX_DESCRIBE} tool names, as search_tools gave them`);
  return [...new Set(names)];
}

/**
 * The result of describe_tools: each tool's full definition as tools/list would show it; a name the
 * agent may not call, or that is held or unknown, is `unknown` alike (a denied tool is not told apart).
 */
export function describeResult(tools: readonly unknown[], unknown: readonly string[]): Record<string, unknown> {
  const structuredContent = { tools, unknown };
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
}

/**
 * The tools one agent session has found (public names, oldest first; bounded). `revision` moves
 * whenever it changes, so its list is encoded again only then.
 */
export class FoundTools {
  private readonly names = new Set<string>();
  revision = 0;

  /** Remembers `names`; true if any was new. */
  add(names: readonly string[]): boolean {
    let added = false;
    for (const name of names) {
      if (this.names.has(name)) continue;
      this.names.add(name);
      added = true;
      if (this.names.size > MAX_FOUND) this.names.delete(this.names.values().next().value!);
    }
    if (added) this.revision++;
    return added;
  }

  [Symbol.iterator](): IterableIterator<string> {
    return this.names.values();
  }
}

/**
 * The tools list of a search-mode session: `search_tools` and `describe_tools`, then the always-shown tools, then the
 * found ones, each shown only while the agent may call it and it is not held (`allowed`).
 * `lookup` finds a public name as the session sees it (its own catalogs first).
 */
export function searchModeList(
  settings: ModeSettings | undefined,
  found: Iterable<string>,
  among: {
    readonly catalogs: readonly Catalog[];
    readonly lookup: (name: string) => { catalog: Catalog; entry: ToolEntry } | undefined;
    readonly allowed: (entry: ToolEntry) => boolean;
  },
): unknown[] {
  const { catalogs, lookup, allowed } = among;
  // An agent with code mode's tools beside gets code mode's describe_tools (declarations) instead.
  const tools: unknown[] = settings?.codeMode === true ? [SEARCH_TOOL] : [SEARCH_TOOL, DESCRIBE_TOOL];
  const seen = new Set<string>([SEARCH_TOOL_NAME, DESCRIBE_NAME]);
  const add = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const hit = lookup(name);
    if (hit === undefined || !allowed(hit.entry)) return;
    const item = hit.catalog.toolView(name);
    if (item !== undefined) tools.push(item);
  };
  const always = settings?.alwaysShown;
  if (always !== undefined) {
    for (const name of always.exact) add(name);
    if (always.patterns.length > 0) {
      // Globs: every listed tool's public name is matched (once per change of the list, not per request).
      for (const catalog of catalogs) {
        for (const item of catalog.listTools()) {
          const name = (item as { name: string }).name;
          if (shows(always, name)) add(name);
        }
      }
    }
  }
  for (const name of found) add(name);
  return tools;
}
