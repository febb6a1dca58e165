// Every server's skills (`io.modelcontextprotocol/skills`), each under the pair the extension makes its
// identity — the server and the skill's `SKILL.md` URI on that server — never under the URI alone, and
// which of them the pins hold back. Agents see a skill under its public URI: the server's prefix put
// after the scheme (`skill://PREFIX/refunds/SKILL.md`, names.ts `namespaceUri`), so the final segment
// is still the skill's name and two servers' `skill://refunds/SKILL.md` are two skills, neither
// shadowing the other. Every URI inside an entry (its `uri`, each manifest entry) is renamed the same
// way. It also answers what a read of a skill's file must be checked against: the approved manifest
// of a skill that lists it, or the held skill whose directory holds it; and it remembers the skills
// a read failed to verify, which are neither listed nor read again until their entry changes.

import { skillRoot, type SkillEntry, type SkillFile } from '../wire/skills.js';

/** The caching hints of a server's listing (2026-07-28 `CacheableResult`). */
export interface SkillCacheHint {
  readonly ttlMs?: number;
  readonly cacheScope?: string;
}

interface ServerSkills {
  /** By the `SKILL.md` URI on the server. */
  readonly entries: ReadonlyMap<string, SkillEntry>;
  /** Skills the pins hold back (new or changed, not approved), by the same URI. */
  held: ReadonlySet<string>;
  readonly cache: SkillCacheHint;
  /**
   * Skills a read failed to verify (a file's bytes, size or the SKILL.md's frontmatter other than the
   * entry says), by URI, with why: the extension forbids loading such a skill, so none of its files
   * is relayed and it is not listed until the server lists a different entry for it.
   */
  readonly failed: Map<string, string>;
}

/** What a read of one URI of a server must meet: the approved file, a held skill, or nothing (not a skill's file). */
type SkillFileCheck =
  | { readonly kind: 'file'; readonly skill: SkillEntry; readonly file: SkillFile }
  | { readonly kind: 'unlisted'; readonly skill: SkillEntry }
  | { readonly kind: 'held'; readonly skill: SkillEntry }
  | { readonly kind: 'dynamic'; readonly skill: SkillEntry }
  | undefined;

export class SkillShelf {
  private readonly servers = new Map<string, ServerSkills>();
  /** Bumped on every change: caches of what agents are shown compare it. */
  version = 0;

  /** Replaces a server's skills and which are held; true if what agents may see changed. */
  set(server: string, entries: readonly SkillEntry[], held: ReadonlySet<string>, cache: SkillCacheHint = {}): boolean {
    const before = this.servers.get(server);
    const map = new Map(entries.map((e) => [e.uri, e]));
    const same =
      before !== undefined &&
      sameSet(before.held, held) &&
      before.entries.size === map.size &&
      [...map].every(([uri, e]) => JSON.stringify(before.entries.get(uri)) === JSON.stringify(e));
    // A failed skill stays failed while the server lists the very entry that failed.
    const failed = new Map(
      [...(before?.failed ?? [])].filter(([uri]) => JSON.stringify(before!.entries.get(uri)) === JSON.stringify(map.get(uri))),
    );
    this.servers.set(server, { entries: map, held, cache, failed });
    if (same) return false;
    this.version++;
    return true;
  }

  /** Which of a server's skills are held (a review of the pins); true if that changed anything. */
  setHeld(server: string, held: ReadonlySet<string>): boolean {
    const skills = this.servers.get(server);
    if (skills === undefined || sameSet(skills.held, held)) return false;
    skills.held = held;
    this.version++;
    return true;
  }

  /** Records that a read of one of the skill's files failed verification; true if that is news. */
  markFailed(server: string, skillUri: string, why: string): boolean {
    const skills = this.servers.get(server);
    if (skills === undefined || !skills.entries.has(skillUri) || skills.failed.has(skillUri)) return false;
    skills.failed.set(skillUri, why);
    this.version++;
    return true;
  }

  /** Why a skill failed verification, if it did (and its entry has not changed since). */
  failedOf(server: string, skillUri: string): string | undefined {
    return this.servers.get(server)?.failed.get(skillUri);
  }

  /** Withdraws a server's skills; true if it had any. */
  remove(server: string): boolean {
    const had = (this.servers.get(server)?.entries.size ?? 0) > 0;
    if (this.servers.delete(server) && had) this.version++;
    return had;
  }

  /** A server's skills as it lists them (held ones included), for reviewing them against the pins. */
  entriesOf(server: string): readonly SkillEntry[] {
    return [...(this.servers.get(server)?.entries.values() ?? [])];
  }

  /** A server's held skills, by their URI on the server. */
  heldOf(server: string): ReadonlySet<string> {
    return this.servers.get(server)?.held ?? new Set();
  }

  cacheOf(server: string): SkillCacheHint {
    return this.servers.get(server)?.cache ?? {};
  }

  /** Servers with skills listed now. */
  listedServers(): string[] {
    return [...this.servers].filter(([, s]) => s.entries.size > 0).map(([server]) => server);
  }

  /** One skill of a server by its `SKILL.md` URI there, and whether it is held. */
  entry(server: string, uri: string): { entry: SkillEntry; held: boolean } | undefined {
    const skills = this.servers.get(server);
    const entry = skills?.entries.get(uri);
    return entry === undefined ? undefined : { entry, held: skills!.held.has(uri) };
  }

  /**
   * What a read of `uri` on `server` is checked against. A file some approved skill lists: that
   * file's digest and size (a file of a nested skill is also its enclosing skill's supporting file).
   * Else the deepest skill whose directory holds the URI: held, a "dynamic" one (nothing to check),
   * or an approved one that does not list it (a file added since it was approved).
   */
  check(server: string, uri: string): SkillFileCheck {
    const skills = this.servers.get(server);
    if (skills === undefined) return undefined;
    let deepest: SkillEntry | undefined;
    let depth = -1;
    for (const entry of skills.entries.values()) {
      const held = skills.held.has(entry.uri);
      if (!held && entry.resources !== 'dynamic') {
        const file = entry.resources.find((f) => f.uri === uri);
        if (file !== undefined) return { kind: 'file', skill: entry, file };
      }
      const root = skillRoot(entry.uri);
      if (root !== undefined && (uri === root || uri.startsWith(`${root}/`)) && root.length > depth) {
        deepest = entry;
        depth = root.length;
      }
    }
    if (deepest === undefined) return undefined;
    if (skills.held.has(deepest.uri)) return { kind: 'held', skill: deepest };
    if (deepest.resources === 'dynamic') return { kind: 'dynamic', skill: deepest };
    return { kind: 'unlisted', skill: deepest };
  }
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/** An entry as agents see it: its `uri` and every manifest entry's renamed by `ns` (a copy; the server's stays). */
export function publicSkillEntry(entry: SkillEntry, ns: (uri: string) => string): SkillEntry {
  return {
    ...entry,
    uri: ns(entry.uri),
    resources: entry.resources === 'dynamic' ? 'dynamic' : entry.resources.map((f) => ({ ...f, uri: ns(f.uri) })),
  };
}
