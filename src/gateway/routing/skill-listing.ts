// Listing one server's skills (`skills/list`, every page) when its connection declares the Skills
// extension, each entry checked at the edge (wire/skills.ts `parseSkillEntry`): an entry that breaks
// the extension's rules is left out with a warning, never loaded. Bounded: at most `MAX_PAGES` pages
// and `MAX_SKILLS` skills per server; a repeated cursor ends the walk. The listing's caching hints
// (`ttlMs`, `cacheScope`) are those of its first page, as the SDK's client keeps them.

import type { SkillCacheHint } from '../../catalog/skill-shelf.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';
import { parseSkillEntry, SKILLS_EXTENSION, type SkillEntry } from '../../wire/skills.js';

const MAX_PAGES = 100;
const MAX_SKILLS = 5_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The extension's settings a server declared, or undefined when it did not declare the extension. */
function skillsDeclared(conn: Connection): Record<string, unknown> | undefined {
  const extensions = conn.info?.capabilities.extensions;
  const declared = isRecord(extensions) ? extensions[SKILLS_EXTENSION] : undefined;
  return isRecord(declared) ? declared : undefined;
}

/** Whether a server declared `directoryRead: true` (only then may `resources/directory/read` go to it). */
export function readsDirectories(conn: Connection): boolean {
  return skillsDeclared(conn)?.directoryRead === true;
}

/** Every skill a server lists, checked; undefined when it does not declare the extension. */
export async function fetchSkills(conn: Connection, log: Logger): Promise<{ entries: SkillEntry[]; cache: SkillCacheHint } | undefined> {
  if (skillsDeclared(conn) === undefined) return undefined;
  const entries: SkillEntry[] = [];
  const seen = new Set<string>();
  const cursors = new Set<string>();
  let cache: SkillCacheHint | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await conn.request('skills/list', cursor === undefined ? {} : { cursor });
    cache ??= {
      ...(typeof result.ttlMs === 'number' && { ttlMs: result.ttlMs }),
      ...(typeof result.cacheScope === 'string' && { cacheScope: result.cacheScope }),
    };
    const skills = Array.isArray(result.skills) ? result.skills : [];
    for (const item of skills) {
      const entry = parseSkillEntry(item);
      if (typeof entry === 'string') {
        log.warn('a skill entry was left out: it breaks the Skills extension', { server: conn.name, why: entry });
        continue;
      }
      if (seen.has(entry.uri)) {
        log.warn('a skill entry was left out: its URI is listed twice', { server: conn.name, uri: entry.uri });
        continue;
      }
      if (entries.length >= MAX_SKILLS) {
        log.warn(`skills past the first ${MAX_SKILLS} were left out`, { server: conn.name });
        return { entries, cache };
      }
      seen.add(entry.uri);
      entries.push(entry);
    }
    const next = result.nextCursor;
    if (typeof next !== 'string' || next === '' || cursors.has(next)) break;
    cursors.add(next);
    cursor = next;
  }
  return { entries, cache: cache ?? {} };
}
