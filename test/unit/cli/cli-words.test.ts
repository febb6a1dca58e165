// The CLI's small parsers: "did you mean" (src/cli/suggest.ts), the env file's lines
// (src/cli/env-file.ts), JSONC as VS Code writes it (read by `import --from`, src/cli/import/clients.ts)
// and the variable names `import` makes of what a person wrote (src/cli/import/translate.ts).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closest, editDistance } from '../../../src/cli/suggest.js';
import { appendEnvFile, parseEnvFile, withEnvFile } from '../../../src/cli/env-file.js';
import { readFrom } from '../../../src/cli/import/clients.js';
import { translateEntry } from '../../../src/cli/import/translate.js';

void describe('cli words', { timeout: 5000 }, () => {
  void it('edit distance counts a swap of neighbours as one edit', () => {
    assert.equal(editDistance('serve', 'serve'), 0);
    assert.equal(editDistance('serv', 'serve'), 1);
    assert.equal(editDistance('improt', 'import'), 1);
    assert.equal(editDistance('', 'abc'), 3);
  });

  void it('closest offers a near word or an abbreviation, never a far one', () => {
    const words = ['config', 'rules', 'env-file', 'state'];
    assert.equal(closest('confg', words), 'config');
    assert.equal(closest('env', words), 'env-file');
    assert.equal(closest('frobnicate', ['serve', 'check', 'import']), undefined);
    assert.equal(closest('x', ['serve']), undefined);
  });

  void it('an env file line gives back exactly the value written, quotes included', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcpgate-env-file-'));
    try {
      const values = ['plain', 'with spaces ', "it's", 'say "hi"', `both ' and "`, '', '#not a comment', '=x='];
      for (const [i, value] of values.entries()) {
        const file = join(dir, `env-${i}`);
        await appendEnvFile(file, undefined, [['NAME', value]], 'a test');
        assert.equal((await withEnvFile(file, {})).NAME, value, value);
      }
      await assert.rejects(appendEnvFile(join(dir, 'env-lines'), undefined, [['NAME', 'two\nlines']], 'a test'), /spans lines/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('an env file skips comments and blank lines and names the line of a mistake, not its text', () => {
    const vars = parseEnvFile('# comment\n\nA=1\nB="two"\r\n', 'f');
    assert.deepEqual(
      [...vars],
      [
        ['A', '1'],
        ['B', 'two'],
      ],
    );
    assert.throws(
      () => parseEnvFile('A=1\nsecret-value-here\n', '/x/.mcp.env'),
      (err: Error) => err.message === '/x/.mcp.env: line 2: expected NAME=value, NAME made of letters, digits and _',
    );
  });

  void it('JSONC: comments and trailing commas go, strings stay as written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcpgate-jsonc-'));
    try {
      const file = join(dir, 'mcp.json');
      const text = '{\n // a\n "url": "http://x//y", /* b */ "s": "a /* c */ \\" d",\n "l": [1, 2,],\n}';
      await writeFile(file, `{ // the servers\n "mcpServers": { "x": ${text}, },\n}`);
      const [source] = await readFrom(file, dir);
      assert.deepEqual(source?.servers, [['x', { url: 'http://x//y', s: 'a /* c */ " d', l: [1, 2] }]]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('variable names from what a person wrote', () => {
    const ctx = { home: '/home/ada', project: '/p', editorVariables: true, secrets: new Map<string, string>() };
    const named = (label: string): readonly string[] => translateEntry('x', { command: 'x', args: [`\${input:${label}}`] }, ctx).inputs;
    assert.deepEqual(named('perplexity-key'), ['PERPLEXITY_KEY']);
    assert.deepEqual(named('1password'), ['_1PASSWORD']);
    const moved = translateEntry('x', { command: 'x', env: { github_Authorization: 'ghp_0123456789abcdef' } }, ctx);
    assert.deepEqual(moved.moved, ['GITHUB_AUTHORIZATION']);
    assert.deepEqual(moved.entry?.env, { github_Authorization: '${GITHUB_AUTHORIZATION}' });
  });
});
