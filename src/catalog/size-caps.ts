// Size caps: what each server's `limits` (maxTools, maxResources, maxPrompts) cut from its catalog
// (so no server costs unbounded memory), kept for the status and logged once: a warning names the
// server and the numbers when a cut first appears or changes, not on every refresh that finds the
// same. Fetching and cutting is in servers/lists.ts; this only remembers.

import type { Logger } from '../observability/logger.js';
import type { ListKind, ListTrim } from '../servers/lists.js';

/** At most this many withheld tool names go into a log line or the status (the count is always exact). */
const MAX_NAMES = 10;

const LIMIT_NAME: Record<ListKind, string> = {
  tools: 'maxTools',
  resources: 'maxResources',
  resourceTemplates: 'maxResources',
  prompts: 'maxPrompts',
};
const NOUN: Record<ListKind, string> = {
  tools: 'tools',
  resources: 'resources',
  resourceTemplates: 'resource templates',
  prompts: 'prompts',
};

/** One server's cuts, as the status shows them. */
interface SizeCapReport {
  dropped: Partial<Record<ListKind, { max: number; listed: number }>>;
  withheld: { maxBytes: number; count: number; tools: string[] } | null;
}

export class SizeCaps {
  private readonly trims = new Map<string, Map<ListKind, ListTrim>>();

  constructor(private readonly log: Logger) {}

  /** Records what the fetch of `kinds` cut (a kind without a trim is clean now); warns about what is new. */
  record(server: string, kinds: readonly ListKind[], trims: Partial<Record<ListKind, ListTrim>>): void {
    let mine = this.trims.get(server);
    for (const kind of kinds) {
      const trim = trims[kind];
      const before = mine?.get(kind);
      if (trim === undefined) {
        mine?.delete(kind);
        continue;
      }
      if (mine === undefined) this.trims.set(server, (mine = new Map<ListKind, ListTrim>()));
      mine.set(kind, trim);
      if (trim.dropped !== undefined && (before?.dropped?.max !== trim.dropped.max || before.dropped.listed !== trim.dropped.listed)) {
        const { max, listed } = trim.dropped;
        this.log.warn(
          `server "${server}" lists more than ${max} ${NOUN[kind]} (at least ${listed}); only the first ${max} are served (limits.${LIMIT_NAME[kind]})`,
          { server, kind, max, listed },
        );
      }
      const tools = trim.oversized?.tools ?? [];
      if (trim.oversized !== undefined && tools.join('\u0000') !== (before?.oversized?.tools ?? []).join('\u0000')) {
        const maxBytes = trim.oversized.maxBytes;
        const names =
          tools
            .slice(0, MAX_NAMES)
            .map((n) => JSON.stringify(n.slice(0, 100)))
            .join(', ') + (tools.length > MAX_NAMES ? ', …' : '');
        this.log.warn(
          `server "${server}" has ${tools.length} ${tools.length === 1 ? 'tool' : 'tools'} withheld: a schema is larger than ${maxBytes} bytes (limits.maxSchemaBytes): ${names}`,
          { server, withheld: tools.length, maxBytes },
        );
      }
      const bad = trim.badHeaders ?? [];
      if (bad.length > 0 && JSON.stringify(bad) !== JSON.stringify(before?.badHeaders ?? [])) {
        const names =
          bad
            .slice(0, MAX_NAMES)
            .map((b) => `${JSON.stringify(b.tool.slice(0, 100))} (${b.why.slice(0, 200)})`)
            .join(', ') + (bad.length > MAX_NAMES ? ', …' : '');
        this.log.warn(
          `server "${server}" has ${bad.length} ${bad.length === 1 ? 'tool' : 'tools'} set aside for invalid x-mcp-header annotations: ${names}`,
          { server, setAside: bad.length },
        );
      }
    }
    if (mine?.size === 0) this.trims.delete(server);
  }

  /** Forgets a server (removed from the config). */
  forget(server: string): void {
    this.trims.delete(server);
  }

  report(server: string): SizeCapReport | null {
    const mine = this.trims.get(server);
    if (mine === undefined) return null;
    const out: SizeCapReport = { dropped: {}, withheld: null };
    for (const [kind, trim] of mine) {
      if (trim.dropped !== undefined) out.dropped[kind] = { ...trim.dropped };
      if (trim.oversized !== undefined)
        out.withheld = {
          maxBytes: trim.oversized.maxBytes,
          count: trim.oversized.tools.length,
          tools: trim.oversized.tools.slice(0, MAX_NAMES),
        };
    }
    return out;
  }
}
