// A skill's pin: the skill is pinned beside its server's tools, under the URI of its `SKILL.md` on that
// server, so the approval store, `mcpgate pins`, `mcpgate approve`, the console and the audit trail
// treat it as they treat a tool. What is pinned is what a person approves: the verbatim frontmatter
// and the manifest of the skill's files (every URI, digest and size, or "dynamic"). A skill nested
// in another has its own entry and so its own pin: approving one never approves the other.

import type { SkillEntry } from '../wire/skills.js';

/** Whether a pinned name is a skill's (a URI; no tool name holds `://`). */
export function isSkillPin(name: string): boolean {
  return name.includes('://');
}

/** The definition a skill is pinned by (digest.ts reads its `frontmatter` and `files`). */
export function skillPinOf(entry: SkillEntry): Record<string, unknown> {
  return {
    name: entry.uri,
    description: entry.frontmatter.description,
    frontmatter: entry.frontmatter,
    files: entry.resources === 'dynamic' ? 'dynamic' : entry.resources.map((f) => ({ uri: f.uri, digest: f.digest, size: f.size })),
  };
}
