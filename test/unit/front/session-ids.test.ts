// Session ids under `serve --workers N` name their worker's slot (front/http/session-ids.ts), and the
// primary finds the session in a request head (cli/handoff.ts) to hand the connection to that worker:
// a real connection to the primary's shared port on 127.0.0.1, handed to stand-in workers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { mintSessionId, slotOfSessionId } from '../../../src/front/http/session-ids.js';
import { Handoff, type HandoffTarget } from '../../../src/cli/handoff.js';
import { Logger } from '../../../src/observability/logger.js';

/**
 * Where the primary hands a connection whose first request has `head`: to the worker of the slot
 * its session names (`owner`), or to the next worker in turn (`next`, the slot named nothing).
 */
async function handedFor(head: string): Promise<{ by: 'owner'; slot: number } | { by: 'next' }> {
  let delivered!: (slot: number) => void;
  const got = new Promise<number>((resolve) => (delivered = resolve));
  const workers: HandoffTarget[] = [0, 1, 2, 3].map((slot) => ({
    send: (_head: Buffer, socket: Socket) => {
      socket.destroy();
      delivered(slot);
    },
    pending: () => 0,
  }));
  const handoff = new Handoff({ worker: (slot) => workers[slot], ready: () => workers, log: new Logger('silent', () => {}) });
  try {
    const { port } = await handoff.listen('127.0.0.1', 0);
    const client = connect(port, '127.0.0.1');
    client.on('error', () => {});
    await once(client, 'connect');
    client.write(`${head}\r\n\r\n`);
    const slot = await got;
    client.destroy();
    assert.equal(handoff.handed.owner + handoff.handed.next, 1);
    return handoff.handed.owner === 1 ? { by: 'owner', slot } : { by: 'next' };
  } finally {
    handoff.close();
  }
}

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

  it('finds Mcp-Session-Id in a head, any case, trimmed; none or two: none', { timeout: 10_000 }, async () => {
    const head = (...lines: string[]): string => ['POST /mcp HTTP/1.1', 'host: 127.0.0.1', ...lines].join('\r\n');
    assert.deepEqual(await handedFor(head('Mcp-Session-Id:  w1.abc ')), { by: 'owner', slot: 1 });
    assert.deepEqual(await handedFor(head('MCP-SESSION-ID:w2.z', 'content-type: application/json')), { by: 'owner', slot: 2 });
    assert.deepEqual(await handedFor(head('content-type: application/json')), { by: 'next' });
    assert.deepEqual(await handedFor(head('mcp-session-id: w0.a', 'mcp-session-id: w1.b')), { by: 'next' });
    // The request line is not a header, whatever it says.
    assert.deepEqual(await handedFor('mcp-session-id: w1.a HTTP/1.1\r\nhost: x'), { by: 'next' });
    assert.deepEqual(await handedFor(head('x-mcp-session-id: w1.a')), { by: 'next' });
  });
});
