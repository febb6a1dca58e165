// The Skills extension's wire shapes (`io.modelcontextprotocol/skills`): a skill entry (its `SKILL.md`
// URI, verbatim frontmatter and the manifest of its files with SHA-256 digests, or "dynamic"), checked
// at the edge, and the digest of a skill file's bytes as the extension writes it (`sha256:{hex}`).
// A server's entry that breaks the extension's rules (no `resources`, a manifest without the
// `SKILL.md`, a final path segment other than the skill's name) is not a skill a host may load.

import { createHash } from 'node:crypto';
import * as z from 'zod';

export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

/** The extension's per-skill limits: a manifest longer or larger than these is refused. */
export const SKILL_MAX_FILES = 512;
export const SKILL_MAX_BYTES = 16 * 1024 * 1024;

export interface SkillFile {
  readonly uri: string;
  readonly digest: string;
  readonly size: number;
}

export interface SkillEntry {
  /** The URI of the skill's `SKILL.md`. */
  readonly uri: string;
  readonly frontmatter: Readonly<Record<string, unknown>> & { readonly name: string; readonly description: string };
  readonly resources: readonly SkillFile[] | 'dynamic';
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

const fileSchema = z.object({
  uri: z.string().min(1).max(4096),
  digest: z.string().regex(DIGEST),
  size: z.number().int().min(0).max(SKILL_MAX_BYTES),
});

const entrySchema = z.object({
  uri: z.string().min(1).max(4096),
  frontmatter: z.looseObject({ name: z.string().min(1).max(64), description: z.string().max(4096) }),
  resources: z.union([z.literal('dynamic'), z.array(fileSchema).max(SKILL_MAX_FILES)]),
});

/** The skill's root: its `SKILL.md` URI without `/SKILL.md` (undefined if the URI does not end so). */
export function skillRoot(uri: string): string | undefined {
  return uri.endsWith('/SKILL.md') ? uri.slice(0, -'/SKILL.md'.length) : undefined;
}

/** A server's skill entry checked against the extension's rules, or why it is not one. */
export function parseSkillEntry(value: unknown): SkillEntry | string {
  const parsed = entrySchema.safeParse(value);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  const entry = parsed.data;
  const root = skillRoot(entry.uri);
  if (root === undefined) return `uri ${entry.uri} does not name a SKILL.md`;
  if (root.slice(root.lastIndexOf('/') + 1) !== entry.frontmatter.name)
    return `the final segment of ${root} is not the skill's name "${entry.frontmatter.name}"`;
  if (entry.resources !== 'dynamic') {
    const seen = new Set<string>();
    let bytes = 0;
    for (const file of entry.resources) {
      if (seen.has(file.uri)) return `${file.uri} is listed twice`;
      if (file.uri !== entry.uri && !file.uri.startsWith(`${root}/`)) return `${file.uri} is outside the skill's directory`;
      seen.add(file.uri);
      bytes += file.size;
    }
    if (!seen.has(entry.uri)) return 'the manifest does not list the SKILL.md';
    if (bytes > SKILL_MAX_BYTES) return `the files total ${bytes} bytes, more than ${SKILL_MAX_BYTES}`;
  }
  // The server's own object: frontmatter fields pass through untouched.
  return value as SkillEntry;
}

/** `sha256:{hex}` of a file's raw bytes. */
export function skillFileDigest(bytes: Uint8Array): string {
  return 'sha256:' + createHash('sha256').update(bytes).digest('hex');
}

/** The raw bytes of one `resources/read` content item (text as UTF-8, a blob decoded), or undefined. */
export function contentBytes(item: unknown): Buffer | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const { text, blob } = item as { text?: unknown; blob?: unknown };
  if (typeof text === 'string') return Buffer.from(text, 'utf8');
  if (typeof blob === 'string') return Buffer.from(blob, 'base64');
  return undefined;
}
