// The result cap and the kept results: a result over its cap is cut with a note naming where the
// whole is; the pages of mcpgate://results/ID joined are its JSON exactly (multi-byte characters
// included); only its agent reads it; it expires; all kept results stay within their bound; binary
// contents are never inlined past the cap.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeptResults, KEPT_RESULTS_URI } from '../../../src/policy/kept-results.js';
import { cutResult } from '../../../src/policy/result-cap.js';
import { GatewayError } from '../../../src/errors.js';

const BOUNDS = { seconds: 60, maxBytes: 1024 * 1024 };

function readAll(kept: KeptResults, agent: string, uri: string): string {
  let text = '';
  let next: string | undefined = uri;
  while (next !== undefined) {
    const page = kept.read(agent, next);
    assert.ok(!(page instanceof GatewayError), page instanceof GatewayError ? page.message : '');
    text += (page.contents as { text: string }[])[0]!.text;
    next = (page._meta as Record<string, string | undefined>)['mcpgate/next'];
  }
  return text;
}

test('a kept result reads back page by page, byte for byte, by its agent only, until it expires', () => {
  let now = 1000;
  const kept = new KeptResults(() => now);
  const json = JSON.stringify({ content: [{ type: 'text', text: 'é€😀'.repeat(3000) + 'end' }] });
  const receipt = kept.keep('alice', json, 4096, BOUNDS)!;
  assert.ok(receipt.uri.startsWith(KEPT_RESULTS_URI));
  assert.ok(receipt.pages > 5);
  const back = readAll(kept, 'alice', receipt.uri);
  assert.equal(Buffer.compare(Buffer.from(back), Buffer.from(json)), 0);
  for (let n = 1; n <= receipt.pages; n++) {
    const page = kept.read('alice', `${receipt.uri}?page=${n}`) as { contents: { text: string }[] };
    assert.ok(Buffer.byteLength(page.contents[0]!.text) <= 4096);
  }
  const other = kept.read('mallory', receipt.uri);
  assert.ok(other instanceof GatewayError && other.code === 'MCPG_RESOURCE_NOT_FOUND');
  assert.ok(kept.read('alice', `${receipt.uri}?page=${receipt.pages + 1}`) instanceof GatewayError);
  now += 60_001;
  const gone = kept.read('alice', receipt.uri);
  assert.ok(gone instanceof GatewayError && gone.code === 'MCPG_RESOURCE_NOT_FOUND');
  assert.equal(kept.size, 0);
});

test('kept results stay within their bound: the oldest go first; one larger than the bound is not kept', () => {
  const kept = new KeptResults(() => 0);
  const bounds = { seconds: 60, maxBytes: 10_000 };
  const first = kept.keep('a', 'x'.repeat(6000), 2048, bounds)!;
  const second = kept.keep('a', 'y'.repeat(6000), 2048, bounds)!;
  assert.ok(kept.size <= 10_000);
  assert.ok(kept.read('a', first.uri) instanceof GatewayError);
  assert.ok(!(kept.read('a', second.uri) instanceof GatewayError));
  assert.equal(kept.keep('a', 'z'.repeat(10_001), 2048, bounds), undefined);
});

test('a cut result has the head, a note with the uri, and no binary content past the cap', () => {
  const big = 'line\n'.repeat(5000);
  const image = { type: 'image', mimeType: 'image/png', data: 'A'.repeat(40_000) };
  const result = { content: [{ type: 'text', text: 'intro' }, image, { type: 'text', text: big }], structuredContent: { n: 1 } };
  const json = JSON.stringify(result);
  const cut = cutResult(result, json, 4096, { uri: `${KEPT_RESULTS_URI}abc`, pages: 12, seconds: 600 });
  const content = cut.content as { type: string; text?: string }[];
  assert.ok(Buffer.byteLength(JSON.stringify(cut)) <= 4096, `${Buffer.byteLength(JSON.stringify(cut))} bytes`);
  assert.equal(content[0]!.text, 'intro');
  assert.ok(!content.some((c) => c.type === 'image'), 'the image is left out');
  assert.ok(content[1]!.text!.startsWith('line\nline\n'));
  const note = content[content.length - 1]!.text!;
  assert.match(note, /over the cap of 4096 bytes/);
  assert.match(note, /mcpgate:\/\/results\/abc/);
  assert.match(note, /image \(40000 bytes encoded\)/);
  assert.equal(cut.structuredContent, undefined);
});
