// Errors that carry the tool's signature, in process over the real stdio front and Gateway: when
// mcpgate refuses a call's arguments (MCPG_ARGUMENTS_INVALID, the gate's check before an approval
// rule reads them) or the server answers the tools/call with -32602, the error names the tool and
// gives its compact signature in the message and in `data` (the server's own data kept), for a
// legacy and a modern agent, in aggregate and in search mode. Other errors are left as they are.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer } from '../../helpers/fake-server.js';
import { stdioFront, type InProcessStdio } from '../../helpers/in-process.js';
import { rpcCodeOf } from '../../../src/errors.js';

const TIMEOUT = 30_000;
const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

const PUSH_SCHEMA = {
  type: 'object',
  properties: { branch: { type: 'string' }, force: { type: 'boolean' }, mode: { type: 'string', enum: ['fast', 'safe'] } },
  required: ['branch'],
  additionalProperties: false,
};
const PUSH_SIGNATURE = 'g__push(branch: string, force?: boolean, mode?: "fast"|"safe")';
const PICKY_SIGNATURE = 'g__picky(count: number)';

for (const mode of ['aggregate', 'search'] as const)
  describe(`errors about a call's arguments carry the tool's signature (${mode} mode)`, { timeout: TIMEOUT }, () => {
    let r: InProcessStdio;
    let server: FakeServer;

    before(async () => {
      server = new FakeServer('g', {
        tools: [
          { name: 'push', description: 'Pushes a branch.', inputSchema: PUSH_SCHEMA, text: () => 'pushed' },
          {
            name: 'picky',
            description: 'Refuses its arguments.',
            inputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
            refuses: { code: -32602, message: 'count must be positive', data: { field: 'count' } },
          },
          {
            name: 'plain',
            description: 'Refuses with a string as data.',
            inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
            refuses: { code: -32602, message: 'bad q', data: 'q is odd' },
          },
          { name: 'broken', description: 'Fails otherwise.', refuses: { code: -32603, message: 'internal trouble' } },
        ],
      });
      r = await stdioFront({
        servers: [server],
        agent: 'tester',
        rules: {
          agents: { tester: { allow: { servers: ['*'] }, mode, approve: { g: [{ tool: 'push', when: { args: { force: true } } }] } } },
        },
      });
      await r.agent.initialize();
    });

    after(async () => {
      await r?.close();
    });

    for (const era of ['legacy', 'modern'] as const) {
      const meta = era === 'modern' ? { _meta: ENVELOPE } : {};

      it(`${era}: mcpgate's own refusal of the arguments names the tool and gives its signature`, async () => {
        const err = await r.agent.error('tools/call', { name: 'g__push', arguments: { branch: 'main', force: 'yes' }, ...meta });
        assert.equal(err.code, rpcCodeOf('MCPG_ARGUMENTS_INVALID'));
        assert.match(String(err.message), /g__push: arguments\.force: expected boolean/);
        assert.ok(String(err.message).endsWith(`the tool takes ${PUSH_SIGNATURE}`), String(err.message));
        assert.equal(err.data.code, 'MCPG_ARGUMENTS_INVALID');
        assert.equal(err.data.tool, 'g__push');
        assert.equal(err.data.signature, PUSH_SIGNATURE);
        assert.ok(!server.calls.some((c) => c.name === 'push'), 'the server was not called');
      });

      it(`${era}: a server's -32602 gets the tool's signature in its message and data, its own data kept`, async () => {
        const err = await r.agent.error('tools/call', { name: 'g__picky', arguments: { count: -1 }, ...meta });
        assert.equal(err.code, -32602);
        assert.equal(err.message, `count must be positive — the tool takes ${PICKY_SIGNATURE}`);
        assert.deepEqual(err.data, { field: 'count', tool: 'g__picky', signature: PICKY_SIGNATURE });
        const plain = await r.agent.error('tools/call', { name: 'g__plain', arguments: {}, ...meta });
        assert.deepEqual(plain.data, { tool: 'g__plain', signature: 'g__plain(q?: string)', serverData: 'q is odd' });
      });

      it(`${era}: another error of the server is passed on as it came`, async () => {
        const err = await r.agent.error('tools/call', { name: 'g__broken', arguments: {}, ...meta });
        assert.equal(err.code, -32603);
        assert.equal(err.message, 'internal trouble');
        assert.equal(err.data.signature, undefined);
      });
    }
  });
