// A server's skill entry checked against the Skills extension's rules at the edge: the URI names a
// SKILL.md whose last path segment is the skill's name, the manifest lists the SKILL.md, every file
// lies inside the skill's directory, once; digests are sha256:{64 hex}; "dynamic" passes.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSkillEntry, skillFileDigest, contentBytes } from '../../../src/wire/skills.js';

const D = `sha256:${'a'.repeat(64)}`;
const entry = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  uri: 'skill://acme/refunds/SKILL.md',
  frontmatter: { name: 'refunds', description: 'd', license: 'MIT' },
  resources: [
    { uri: 'skill://acme/refunds/SKILL.md', digest: D, size: 3 },
    { uri: 'skill://acme/refunds/a/b.md', digest: D, size: 4 },
  ],
  ...over,
});

/** The reason a value was refused, or `accepted`. */
const why = (value: unknown): string => (typeof value === 'string' ? value : 'accepted');

describe('parseSkillEntry', () => {
  it('keeps a valid entry as the server sent it (frontmatter fields pass through)', () => {
    const value = entry();
    assert.equal(parseSkillEntry(value), value);
    assert.equal(typeof parseSkillEntry(entry({ resources: 'dynamic' })), 'object');
  });

  it('refuses an entry that breaks the extension', () => {
    assert.match(why(parseSkillEntry(entry({ uri: 'skill://acme/refunds/README.md' }))), /SKILL\.md/);
    assert.match(why(parseSkillEntry(entry({ uri: 'skill://acme/other/SKILL.md' }))), /final segment/);
    assert.match(why(parseSkillEntry(entry({ resources: [{ uri: 'skill://acme/refunds/a.md', digest: D, size: 1 }] }))), /does not list/);
    assert.match(
      why(
        parseSkillEntry(
          entry({
            resources: [
              { uri: 'skill://acme/refunds/SKILL.md', digest: D, size: 1 },
              { uri: 'skill://elsewhere/x', digest: D, size: 1 },
            ],
          }),
        ),
      ),
      /outside/,
    );
    assert.match(
      why(parseSkillEntry(entry({ resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest: 'md5:x', size: 1 }] }))),
      /digest/,
    );
    assert.equal(typeof parseSkillEntry(entry({ resources: undefined })), 'string');
  });

  it('digests raw bytes, text as UTF-8 and blobs decoded', () => {
    const bytes = contentBytes({ text: 'é' })!;
    assert.equal(bytes.length, 2);
    assert.equal(skillFileDigest(contentBytes({ blob: Buffer.from('é').toString('base64') })!), skillFileDigest(bytes));
    assert.match(skillFileDigest(bytes), /^sha256:[0-9a-f]{64}$/);
  });
});
