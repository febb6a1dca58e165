// A SKILL.md's frontmatter read into JSON as skills write it: scalars typed by YAML 1.2's core
// schema, quoted strings, nested maps, block and flow lists, block scalars; refused with a reason
// for what is not read (no frontmatter, anchors, maps inside lists, a repeated key).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFrontmatter } from '../../../src/wire/frontmatter.js';

/** The reason a value was refused, or `accepted`. */
const why = (value: unknown): string => (typeof value === 'string' ? value : 'accepted');

describe('parseFrontmatter', () => {
  it('reads what skills write', () => {
    const text = [
      '---',
      'name: pdf-processing',
      'description: "Extract: fill, and assemble"',
      "license: 'Apache-2.0'",
      'version: 2',
      'ratio: 1.5',
      'draft: false',
      'nothing: ~',
      'tags: [a, b]',
      'steps:',
      '  - one',
      '  - two',
      'metadata:',
      '  author: me # a comment',
      '  level: "3"',
      'notes: |',
      '  line one',
      '  line two',
      '---',
      '# body',
    ].join('\n');
    assert.deepEqual(parseFrontmatter(text), {
      name: 'pdf-processing',
      description: 'Extract: fill, and assemble',
      license: 'Apache-2.0',
      version: 2,
      ratio: 1.5,
      draft: false,
      nothing: null,
      tags: ['a', 'b'],
      steps: ['one', 'two'],
      metadata: { author: 'me', level: '3' },
      notes: 'line one\nline two\n',
    });
  });

  it('refuses what it does not read, with a reason', () => {
    assert.match(why(parseFrontmatter('# no frontmatter')), /must begin with/);
    assert.match(why(parseFrontmatter('---\nname: x\n')), /no closing/);
    assert.match(why(parseFrontmatter('---\nname: &a x\n---\n')), /not read/);
    assert.match(why(parseFrontmatter('---\nname: x\nname: y\n---\n')), /twice/);
    assert.match(why(parseFrontmatter('---\nlist:\n  - a: b\n---\n')), /maps inside lists/);
  });
});
