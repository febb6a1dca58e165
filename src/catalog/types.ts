// The catalog's public types: what a name routes to (a tool's or a prompt's entry), where a listed
// item came from, why a tool is held, the options and counts of a `Catalog`, and a server as it is named.
// They are `ToolEntry`, `PromptEntry`, `ItemRef`, `HeldInfo`, `CatalogOptions`, `CatalogCounts` and
// `ServerNaming`, re-exported by catalog.ts.

import type { Tool } from '../wire/protocol.js';

/** Why a tool is held back until approved (pins/review.ts produces these; the catalog only keeps them). */
export interface HeldInfo {
  readonly digest: string;
  readonly changes: readonly string[];
}

export interface ToolEntry {
  readonly server: string;
  /** The tool's name on its server. */
  readonly original: string;
  readonly tool: Tool;
  /** Set when the tool's definition is not approved (pins): hidden from lists, calls refused. */
  readonly held?: HeldInfo;
}

export interface CatalogOptions {
  separator?: string;
  /** Told each warning once when it first appears (a clash found on a list change, a renamed tool). */
  onWarning?: (warning: string) => void;
  /** Neutralize escape sequences and invisible characters in descriptions and titles (default true). */
  sanitize?: boolean;
}

export interface ItemRef {
  readonly server: string;
  /** The item's name on its server (tools and prompts). */
  readonly original?: string;
}

export interface PromptEntry {
  readonly server: string;
  readonly original: string;
}

export interface CatalogCounts {
  tools: number;
  resources: number;
  resourceTemplates: number;
  prompts: number;
}

/** A server as the catalog names it: its name and its `prefix` from .mcp.json (absent: its name; false: none). */
export type ServerNaming = string | { readonly name: string; readonly prefix?: string | false };
