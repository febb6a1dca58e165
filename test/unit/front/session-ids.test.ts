// Session ids under `serve --workers N` name their worker's slot (front/http/session-ids.ts), and the
// primary finds the session in a request head (cli/handoff.ts) to hand the connection to that worker.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mintSessionId, slotOfSessionId } from '../../../src/front/http/session-ids.js';
import { sessionOfHead } from '../../../src/cli/handoff.js';

describe('session ids that name a worker slot', () => {
  it("a worker's ids carry its slot before a random UUID; a plain gateway's are plain UUIDs", () => {
    const a = mintSessionId(3);
    assert.match(a, /^w3\.[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(mintSessionId(3), a);
    assert.equal(slotOfSessionId(a), 3);
    const plain = mintSessionId();
    assert.match(plain, /^[0-9a-f]{8}-/);
    assert.equal(slotOfSessionId(plain), undefined);
  });

  it('reads a slot only from the exact prefix', () => {
    assert.equal(slotOfSessionId('w0.x'), 0);
    assert.equal(slotOfSessionId('w63.x'), 63);
    for (const id of ['w.x', 'w1234.x', 'W1.x', 'w1x', 'xw1.x', '', 'w-1.x']) assert.equal(slotOfSessionId(id), undefined, id);
  });

  it('finds Mcp-Session-Id in a head, any case, trimmed; none or two: none', () => {
    const head = (...lines: string[]): string => ['POST /mcp HTTP/1.1', 'host: 127.0.0.1', ...lines].join('\r\n');
    assert.equal(sessionOfHead(head('Mcp-Session-Id:  w1.abc ')), 'w1.abc');
    assert.equal(sessionOfHead(head('MCP-SESSION-ID:w0.z', 'content-type: application/json')), 'w0.z');
    assert.equal(sessionOfHead(head('content-type: application/json')), undefined);
    assert.equal(sessionOfHead(head('mcp-session-id: w0.a', 'mcp-session-id: w1.b')), undefined);
    // The request line is not a header, whatever it says.
    assert.equal(sessionOfHead('mcp-session-id: w1.a HTTP/1.1\r\nhost: x'), undefined);
    assert.equal(sessionOfHead(head('x-mcp-session-id: w1.a')), undefined);
  });
});
