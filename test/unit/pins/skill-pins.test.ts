// A skill is pinned beside its server's tools under its SKILL.md URI: its digest covers the
// frontmatter and the file manifest (a file's digest or size, a file added), a review holds a changed
// skill and names what changed, and a tool's digest never reads a skill's fields.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { review } from '../../../src/pins/review.js';
import { toolDigest } from '../../../src/pins/digest.js';
import { isSkillPin, skillPinOf } from '../../../src/pins/skill-pins.js';
import type { SkillEntry } from '../../../src/wire/skills.js';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const entry = (digest: string, description = 'd'): SkillEntry => ({
  uri: 'skill://refunds/SKILL.md',
  frontmatter: { name: 'refunds', description },
  resources: [{ uri: 'skill://refunds/SKILL.md', digest, size: 10 }],
});

describe('skill pins', () => {
  it('a skill pin is named by its URI, which no tool name holds', () => {
    assert.equal(isSkillPin('skill://refunds/SKILL.md'), true);
    assert.equal(isSkillPin('read_file'), false);
  });

  it('the digest covers the manifest and the frontmatter; a review holds a change and names it', () => {
    const pinned = skillPinOf(entry(D1));
    const pins = { tools: { 'skill://refunds/SKILL.md': { digest: toolDigest(pinned), definition: pinned as never } } };
    assert.equal(review('tofu', pins, [pinned], undefined).held.size, 0);
    const files = review('tofu', pins, [skillPinOf(entry(D2))], undefined).held.get('skill://refunds/SKILL.md');
    assert.deepEqual(files?.changes, ['files']);
    const front = review('tofu', pins, [skillPinOf(entry(D1, 'other'))], undefined).held.get('skill://refunds/SKILL.md');
    assert.deepEqual(front?.changes, ['description', 'frontmatter']);
  });

  it("a tool carrying fields named like a skill's keeps its digest", () => {
    const tool = { name: 'read', description: 'd', inputSchema: { type: 'object' } };
    assert.equal(toolDigest({ ...tool, files: ['x'], frontmatter: { a: 1 } }), toolDigest(tool));
  });
});
