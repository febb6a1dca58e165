// Skills found by `search_tools`: every origin's skills in a ranking index of their own (the same
// ToolIndex tools are ranked by, over a skill's name, description and origin), so an agent on a big
// catalog finds the skill for its task as it finds a tool. A hit is marked a skill and carries what
// the agent needs to load it: the public `SKILL.md` URI (read with resources/read or skills/get) and
// the description. The index follows the skill shelf (rebuilt when its version moves); which hits an
// agent gets is asked of the skills methods, so a skill it cannot list is never found either.

import type { SkillShelf } from '../../catalog/skill-shelf.js';
import { searchTask } from '../../search/task-search.js';
import { ToolIndex } from '../../search/tool-index.js';
import type { SkillEntry } from '../../wire/skills.js';

/** One skill as a search returns it. */
export interface SkillHit {
  readonly kind: 'skill';
  /** The public URI of its `SKILL.md`. */
  readonly uri: string;
  readonly name: string;
  readonly description: string;
  readonly server: string;
}

/** Characters of a skill's description a hit carries (the rest is in its SKILL.md). */
const HIT_DESCRIPTION = 300;

export class SkillSearch {
  private readonly index = new ToolIndex();
  private readonly skills = new Map<string, { server: string; entry: SkillEntry }>();
  private version = -1;

  constructor(
    private readonly shelf: SkillShelf,
    /** The URI agents see for a server's URI (its prefix put in). */
    private readonly publicUri: (server: string, uri: string) => string,
  ) {}

  /** The best `limit` skills for a query among those `shown` lets the agent see, best first. */
  search(query: string, limit: number, shown: (server: string, entry: SkillEntry) => boolean): SkillHit[] {
    this.refresh();
    if (this.skills.size === 0) return [];
    const allow = (key: string): boolean => {
      const skill = this.skills.get(key);
      return skill !== undefined && shown(skill.server, skill.entry);
    };
    return searchTask(this.index, query, limit, allow).map(({ key }) => {
      const { server, entry } = this.skills.get(key)!;
      const description = String(entry.frontmatter.description);
      return {
        kind: 'skill',
        uri: this.publicUri(server, entry.uri),
        name: entry.frontmatter.name,
        description: description.length > HIT_DESCRIPTION ? `${description.slice(0, HIT_DESCRIPTION - 1)}…` : description,
        server,
      };
    });
  }

  /** Brings the index to the shelf's skills: new and changed ones in, gone ones out. */
  private refresh(): void {
    if (this.version === this.shelf.version) return;
    this.version = this.shelf.version;
    const now = new Set<string>();
    for (const server of this.shelf.listedServers())
      for (const entry of this.shelf.entriesOf(server)) {
        const key = `${server}\u0000${entry.uri}`;
        now.add(key);
        if (this.skills.get(key)?.entry === entry) continue;
        this.skills.set(key, { server, entry });
        this.index.upsert({ key, name: entry.frontmatter.name, server, description: String(entry.frontmatter.description) });
      }
    for (const key of [...this.skills.keys()])
      if (!now.has(key)) {
        this.skills.delete(key);
        this.index.remove(key);
      }
  }
}
