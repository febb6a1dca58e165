// observability/atomic-json.ts, the one write both state-directory stores use (pins, server logins):
// the file is replaced whole, with the mode asked for, and no temp file is left behind, also when
// the rename fails (the old file then stays as it was). A temp directory, no process.

import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeJsonAtomic, writeTextAtomic } from '../../../src/observability/atomic-json.js';

void describe('writeJsonAtomic', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcpgate-atomic-json-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('replaces the file whole, as indented JSON with a final newline, in the mode asked for', { timeout: 5000 }, async () => {
    const file = join(dir, 'tokens.json');
    await writeFile(file, '{"old": true}');
    await writeJsonAtomic(file, { version: 1, tokens: { access_token: 'a' } }, 0o600);
    assert.equal(await readFile(file, 'utf8'), '{\n  "version": 1,\n  "tokens": {\n    "access_token": "a"\n  }\n}\n');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    await writeJsonAtomic(join(dir, 'pins.json'), { servers: {} });
    assert.equal((await stat(join(dir, 'pins.json'))).mode & 0o777, 0o644 & ~process.umask());
    assert.deepEqual((await readdir(dir)).sort(), ['pins.json', 'tokens.json'], 'no temp file is left');
  });

  void it(
    'writes a text given in parts (over several MiB, multi-byte characters included) as the parts joined',
    { timeout: 5000 },
    async () => {
      const file = join(dir, 'parts.json');
      const parts = Array.from({ length: 3000 }, (_, i) => `${i}:${'é€😀x'.repeat(i % 700)}\n`);
      const written = await writeTextAtomic(file, parts.values());
      const expected = parts.join('');
      assert.ok(expected.length > (3 * (1 << 20)) / 2, 'more than one piece');
      assert.equal(await readFile(file, 'utf8'), expected);
      assert.equal(written.size, Buffer.byteLength(expected));
      assert.equal(written.ino, (await stat(file)).ino, 'the stat returned is of the file now in place');
    },
  );

  void it('leaves the old file and no temp file when the rename fails', { timeout: 5000 }, async () => {
    const target = join(dir, 'taken');
    await mkdir(join(target, 'inside'), { recursive: true }); // a non-empty directory: rename over it fails
    await assert.rejects(writeJsonAtomic(target, { x: 1 }));
    assert.deepEqual(await readdir(target), ['inside']);
    assert.ok(!(await readdir(dir)).some((name) => name.endsWith('.tmp')), 'the temp file was removed');
  });
});
