// An agent's own way of seeing the catalog: `"mode"` (aggregate, discovery, search or code; absent:
// the gateway's `--mode`), `"codeMode": true` (code mode's tools beside an aggregate or search mode's
// list) and, for search mode, `"alwaysShown"` — the tools listed to the agent from the
// start without a search (globs over the public names the agent sees, e.g. `github__get_*`);
// `"capabilityDirectory"` turns the capability directory in the gateway's instructions off (`false`;
// it is on by default in search and code modes) or on in another mode (`true`). Being
// always shown grants nothing: the tools are still filtered by the agent's allow and deny rules.
// At most 256 entries in `alwaysShown`; a warning says they grant nothing when the agent's mode is not
// search. Compiled into `CompiledAgent.modeSettings`; not to be confused with curated views
// (views.ts).

import { describeValue } from '../config/issues.js';
import { compileMatcher, type Matcher } from './globs.js';

const AGENT_MODES = ['aggregate', 'discovery', 'search', 'code'] as const;
export type AgentMode = (typeof AGENT_MODES)[number];

/** The keys of an agent entry read here. */
export const AGENT_MODE_KEYS = ['mode', 'alwaysShown', 'codeMode', 'capabilityDirectory'] as const;

/** Past this many entries `alwaysShown` is an error: it is meant for a few tools, not a catalog. */
const MAX_ALWAYS_SHOWN = 256;

export interface ModeSettings {
  /** Undefined: the gateway's mode. */
  readonly mode: AgentMode | undefined;
  /** Public tool names (or globs) listed without a search in search mode; undefined: none. */
  readonly alwaysShown: Matcher | undefined;
  /** Code mode's tools (describe_tools, run_code) listed beside an aggregate or search mode's. */
  readonly codeMode: boolean;
  /** The capability directory in the gateway's instructions; undefined: on in search and code modes only. */
  readonly capabilityDirectory: boolean | undefined;
}

interface ModeSettingsContext {
  error(at: readonly PropertyKey[], message: string): void;
  warn(at: readonly PropertyKey[], message: string): void;
}

/** Reads `mode` and `alwaysShown` of one agent's entry (already known to be an object). */
export function readModeSettings(id: string, entry: Record<string, unknown>, ctx: ModeSettingsContext): ModeSettings {
  const base = ['agents', id];
  let mode: AgentMode | undefined;
  if (entry.mode !== undefined) {
    if (typeof entry.mode === 'string' && (AGENT_MODES as readonly string[]).includes(entry.mode)) mode = entry.mode as AgentMode;
    else
      ctx.error(
        [...base, 'mode'],
        `expected one of ${AGENT_MODES.map((m) => `"${m}"`).join(', ')}, got ${describeValue(entry.mode, true)}`,
      );
  }
  let alwaysShown: Matcher | undefined;
  const list = entry.alwaysShown;
  if (list !== undefined) {
    if (!Array.isArray(list)) {
      ctx.error(
        [...base, 'alwaysShown'],
        `expected an array of public tool names or globs (e.g. "github__get_*"), got ${describeValue(list)}`,
      );
    } else if (list.length > MAX_ALWAYS_SHOWN) {
      ctx.error(
        [...base, 'alwaysShown'],
        `at most ${MAX_ALWAYS_SHOWN} names or globs, got ${list.length}; use globs, or aggregate mode for a whole catalog`,
      );
    } else {
      const names: string[] = [];
      list.forEach((item: unknown, i) => {
        if (typeof item === 'string' && item !== '') names.push(item);
        else ctx.error([...base, 'alwaysShown', i], `expected a public tool name or glob (a non-empty string), got ${describeValue(item)}`);
      });
      if (names.length === list.length) alwaysShown = compileMatcher(names);
    }
    if (mode !== undefined && mode !== 'search')
      ctx.warn([...base, 'alwaysShown'], `only search mode reads alwaysShown; agent "${id}" has mode "${mode}"`);
  }
  let codeMode = false;
  if (entry.codeMode !== undefined) {
    if (typeof entry.codeMode === 'boolean') codeMode = entry.codeMode;
    else ctx.error([...base, 'codeMode'], `expected true or false, got ${describeValue(entry.codeMode, true)}`);
    if (codeMode && mode !== undefined && mode !== 'aggregate' && mode !== 'search')
      ctx.warn([...base, 'codeMode'], `only aggregate and search modes add code mode's tools; agent "${id}" has mode "${mode}"`);
  }
  let capabilityDirectory: boolean | undefined;
  if (entry.capabilityDirectory !== undefined) {
    if (typeof entry.capabilityDirectory === 'boolean') capabilityDirectory = entry.capabilityDirectory;
    else ctx.error([...base, 'capabilityDirectory'], `expected true or false, got ${describeValue(entry.capabilityDirectory, true)}`);
  }
  return Object.freeze({ mode, alwaysShown, codeMode, capabilityDirectory });
}

/** Whether a matcher takes a public name. */
export function shows(matcher: Matcher | undefined, publicName: string): boolean {
  return matcher !== undefined && (matcher.exact.has(publicName) || matcher.match(publicName) !== undefined);
}
