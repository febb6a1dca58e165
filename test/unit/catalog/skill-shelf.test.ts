// The skill shelf: skills kept per (server, SKILL.md URI), so two servers' skill://refunds/SKILL.md
// are two skills; every URI of an entry renamed with its server's prefix; what a read is checked
// against — the approved file of a skill listing it (a nested skill's file through its enclosing
// skill too), a held skill, a file the approved manifest does not list, or no skill at all.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SkillShelf, publicSkillEntry } from '../../../src/catalog/skill-shelf.js';
import { namespaceUri } from '../../../src/catalog/names.js';
import type { SkillEntry } from '../../../src/wire/skills.js';

const D = `sha256:${'b'.repeat(64)}`;
const skill = (path: string, files: string[]): SkillEntry => ({
  uri: `skill://${path}/SKILL.md`,
  frontmatter: { name: path.slice(path.lastIndexOf('/') + 1), description: 'd' },
  resources: ['SKILL.md', ...files].map((f) => ({ uri: `skill://${path}/${f}`, digest: D, size: 1 })),
});

describe('SkillShelf', () => {
  it("keeps two servers' same skill URI apart and names each under its server", () => {
    const shelf = new SkillShelf();
    shelf.set('docs', [skill('refunds', ['a.md'])], new Set());
    shelf.set('other', [skill('refunds', [])], new Set());
    assert.equal(shelf.entry('docs', 'skill://refunds/SKILL.md')?.entry.resources.length, 2);
    assert.equal(shelf.entry('other', 'skill://refunds/SKILL.md')?.entry.resources.length, 1);
    const shown = publicSkillEntry(shelf.entry('docs', 'skill://refunds/SKILL.md')!.entry, (u) => namespaceUri('docs', u));
    assert.equal(shown.uri, 'skill://docs/refunds/SKILL.md');
    assert.deepEqual(shown.resources !== 'dynamic' && shown.resources.map((f) => f.uri), [
      'skill://docs/refunds/SKILL.md',
      'skill://docs/refunds/a.md',
    ]);
    assert.equal(shelf.entry('docs', 'skill://refunds/SKILL.md')?.entry.uri, 'skill://refunds/SKILL.md', "the server's entry stays");
  });

  it('checks a read against the approved manifest, a held skill, or nothing', () => {
    const shelf = new SkillShelf();
    const parent = skill('refunds', ['a.md', 'partial/SKILL.md']);
    const nested = skill('refunds/partial', []);
    shelf.set('docs', [parent, nested], new Set(['skill://refunds/partial/SKILL.md']));
    assert.equal(shelf.check('docs', 'skill://refunds/a.md')?.kind, 'file');
    // The nested skill is held, but its SKILL.md is a supporting file of the approved enclosing one.
    assert.equal(shelf.check('docs', 'skill://refunds/partial/SKILL.md')?.kind, 'file');
    assert.equal(shelf.check('docs', 'skill://refunds/partial/other.md')?.kind, 'held');
    assert.equal(shelf.check('docs', 'skill://refunds/added.md')?.kind, 'unlisted');
    assert.equal(shelf.check('docs', 'skill://elsewhere/x.md'), undefined);
    assert.equal(shelf.check('nobody', 'skill://refunds/a.md'), undefined);
  });

  it('says when what agents may see changed', () => {
    const shelf = new SkillShelf();
    assert.equal(shelf.set('docs', [skill('a', [])], new Set()), true);
    assert.equal(shelf.set('docs', [skill('a', [])], new Set()), false);
    assert.equal(shelf.setHeld('docs', new Set(['skill://a/SKILL.md'])), true);
    assert.equal(shelf.setHeld('docs', new Set(['skill://a/SKILL.md'])), false);
    assert.equal(shelf.remove('docs'), true);
    assert.deepEqual(shelf.listedServers(), []);
  });
});
