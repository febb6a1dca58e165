// `mcpgate approve-call` prints what agents and servers wrote (agent ids, tool names, arguments):
// bidi, zero-width, C0 and C1 characters are shown escaped, as the console shows them, so the
// operator approves the arguments the decision binds to. The admin's token comes from MCPGATE_TOKEN
// (kept out of argv). Against a stand-in for the gateway's /approvals on 127.0.0.1.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../../src/cli/main.js';

const HOSTILE = {
  bidi: 'main\u202e\u2066txet\u2069',
  zeroWidth: 'ma\u200bin',
  c1: 'x\u009b31mred\u0085',
  c0: 'a\u001b[2Jb',
};

describe('approve-call output', { timeout: 10_000 }, () => {
  let server: Server;
  let url: string;
  const seen: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method === 'POST') {
        res.end(JSON.stringify({ decision: 'approved', agent: `bot${HOSTILE.bidi}`, tool: `git__push${HOSTILE.zeroWidth}` }));
        return;
      }
      res.end(
        JSON.stringify({
          approvals: [
            {
              id: 'c1',
              agent: `bot${HOSTILE.c1}`,
              server: 'git',
              publicName: `git__push${HOSTILE.bidi}`,
              arguments: { branch: HOSTILE.bidi, note: HOSTILE.zeroWidth, c1: HOSTILE.c1, c0: HOSTILE.c0 },
              digest: 'd',
              rule: '$.agents.bot.approve[0]',
              expiresAt: Date.now() + 60_000,
              url: null,
            },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(['approve-call', ...args, '--url', url], env, { out: (t) => void (out += t), err: (t) => void (err += t) });
    return { code, out, err };
  }

  /** A character the terminal would act on or hide: C0 but TAB/LF, DEL, C1, zero-width, bidi. */
  const RAW = new RegExp('[' + String.raw`\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff` + ']');

  it('escapes bidi, zero-width, C0 and C1 characters in the list', async () => {
    const { code, out } = await run([], { MCPGATE_TOKEN: 'admin-token-from-env' });
    assert.equal(code, 0);
    assert.doesNotMatch(out, RAW, JSON.stringify(out));
    assert.match(out, /\\u202e/);
    assert.match(out, /\\u200b/);
    assert.match(out, /\\x9b/);
    assert.match(out, /\\x85/);
  });

  it('escapes them in a decision it prints, and takes the token from MCPGATE_TOKEN', async () => {
    seen.length = 0;
    const { code, out } = await run(['c1'], { MCPGATE_TOKEN: 'admin-token-from-env' });
    assert.equal(code, 0);
    assert.doesNotMatch(out, RAW, JSON.stringify(out));
    assert.deepEqual(seen, ['Bearer admin-token-from-env']);
  });
});
