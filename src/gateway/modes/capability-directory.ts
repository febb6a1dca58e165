// The capability directory: a few lines in the gateway's `instructions` (initialize, a modern
// agent's server/discover) naming each server the agent may use and what it is for, so an agent
// whose list is search_tools knows what there is to search for. One line per server: its name, how
// many tools the agent may call there, and its purpose — the first sentence of the server's own
// instructions (while the pins let agents see them), else the names of a few of its tools.
// On by default for an agent in search or code mode; the agent's rules turn it off
// (`"capabilityDirectory": false`) or on in another mode (`true`). Bounded: MAX_DIRECTORY_CHARS,
// with a line saying how many servers were left out. Only servers with a tool the agent may call
// (allowed by its rules, not held) are named: the directory tells no more than a search would.

import type { Catalog } from '../../catalog/catalog.js';
import type { AgentMode } from '../../rules/agent-mode.js';
import type { Claims } from '../../rules/decide.js';
import { visible } from '../../wire/sanitize.js';
import { summaryOf } from './tool-declarations.js';
import type { ToolSearch } from './tool-search.js';

/** The directory's size at most (characters); past it the servers left out are counted. */
const MAX_DIRECTORY_CHARS = 2_000;
const MAX_PURPOSE = 120;
const TOOL_NAMES_SHOWN = 5;

const HEADER = 'Servers you can use (name, how many tools you may call, what it is for):';

interface DirectoryParts {
  readonly catalog: Catalog;
  readonly search: ToolSearch;
  /** A server's own instructions when agents may see them (ready, not withheld by pins). */
  readonly serverInstructions: (server: string) => string | undefined;
}

/** Who the instructions are for: the agent, its token's claims and its mode now. */
export interface DirectoryReader {
  readonly agent: string;
  readonly claims: Claims | undefined;
  readonly mode: AgentMode;
}

export class CapabilityDirectory {
  constructor(private readonly parts: DirectoryParts) {}

  /** The directory for this agent, or undefined when it is off for it (or it may call nothing). */
  for(reader: DirectoryReader): string | undefined {
    const { catalog, search } = this.parts;
    const setting = search.modeSettingsOf(reader.agent)?.capabilityDirectory;
    if (!(setting ?? (reader.mode === 'search' || reader.mode === 'code'))) return undefined;
    const allowed = search.allowed({ agent: reader.agent, claims: reader.claims, own: undefined });
    const lines: string[] = [];
    for (const server of catalog.listedServers()) {
      const names: string[] = [];
      for (const tool of catalog.serverTools(server)) {
        const entry = catalog.tool(catalog.publicName(server, tool.name) ?? '');
        if (entry !== undefined && entry.server === server && entry.held === undefined && allowed(entry)) names.push(tool.name);
      }
      if (names.length > 0) lines.push(`- ${server} (${names.length} tools): ${this.purposeOf(server, names)}`);
    }
    return directoryText(lines);
  }

  /** What a server is for: its instructions' first sentence, else a few of its tools' names. */
  private purposeOf(server: string, names: readonly string[]): string {
    // A server's words, flattened to one line and without escape sequences or invisible characters.
    const said = visible(summaryOf(this.parts.serverInstructions(server), MAX_PURPOSE));
    if (said !== '') return said;
    const shown = names.slice(0, TOOL_NAMES_SHOWN).join(', ');
    return names.length > TOOL_NAMES_SHOWN ? `tools such as ${shown}, …` : `tools ${shown}`;
  }
}

/** The lines under their header, cut to MAX_DIRECTORY_CHARS with a count of what was left out. */
function directoryText(lines: readonly string[], max = MAX_DIRECTORY_CHARS): string | undefined {
  if (lines.length === 0) return undefined;
  let text = HEADER;
  let shown = 0;
  for (const line of lines) {
    const left = lines.length - shown - 1;
    // Room is kept for the note on what was left out, unless this is the last line.
    const note = left > 0 ? leftOut(lines.length).length + 1 : 0;
    if (text.length + 1 + line.length + note > max) break;
    text += `\n${line}`;
    shown++;
  }
  return shown === lines.length ? text : `${text}\n${leftOut(lines.length - shown)}`;
}

function leftOut(count: number): string {
  return `(${count} more server${count === 1 ? '' : 's'} not listed here, for room; their tools are found all the same.)`;
}

/** The gateway's instructions with the directory after the servers' own. */
export function withDirectory(instructions: string | undefined, directory: string | undefined): string | undefined {
  if (directory === undefined) return instructions;
  return instructions === undefined ? directory : `${instructions}\n\n${directory}`;
}
