// How far one tools/call reaches, kept true: the gateway runs with V8's call counts on (the bench's
// probe, bench/call-path.ts) and a call over Streamable HTTP to a stdio server may run code in at most
// 19 files of src/, the files docs/architecture.md's walk lists — no more, no fewer. (12 until the
// agent session's protocol session and its calls to servers became two files: a call passes both;
// 13 until the built-in guards, on by default, screened every call: six files of policy/ and guards/;
// 19 until the server session's table of sent requests became a file of its own; 20 until the
// guards' walk stopped looking at strings shorter than any find, as all of this call's are; 18 until a
// tools/call's steps before it is sent and the session's requests in flight became two files.)

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { benchCallPath } from '../../bench/call-path.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_FILES = 19;

/** The files named in the walk's table ("| step | files |") of docs/architecture.md. */
async function walkTable(): Promise<string[]> {
  const text = await readFile(`${ROOT}docs/architecture.md`, 'utf8');
  const start = text.indexOf('| step | files |');
  assert.ok(start >= 0, 'docs/architecture.md has the walk table');
  const table = text.slice(start, text.indexOf('\n\n', start));
  return [...table.matchAll(/`([a-z/.-]+\.ts)`/g)].map((m) => `src/${m[1]}`).sort();
}

void describe('the call path', { timeout: 60_000 }, () => {
  void it(`a tools/call over HTTP to a stdio server runs code in at most ${MAX_FILES} files, those the walk names`, async () => {
    const path = await benchCallPath();
    const files = [...path.files.keys()].sort();
    assert.ok(files.length > 0 && files.includes('src/gateway/session/session.ts'), `the probe saw the call: ${files.join(', ')}`);
    assert.ok(files.length <= MAX_FILES, `${files.length} files: ${files.join(', ')}`);
    assert.deepEqual(files, await walkTable());
  });
});
