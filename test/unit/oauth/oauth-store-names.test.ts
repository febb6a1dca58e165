// The token store's file names and login hints (per-agent accounts): pure, no file is touched.
// An agent's own login is a file of its own beside the shared one; no agent id, however it is spelt,
// can name the shared file or another agent's; the hints are commands a shell reads back as written.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { basename } from 'node:path';
import { TokenStore } from '../../../src/oauth/store.js';

void describe('TokenStore names (per-agent accounts)', () => {
  const shared = new TokenStore('/state');

  void it("keeps the shared file and each agent's apart", () => {
    assert.equal(shared.fileOf('linear'), '/state/oauth/linear.json');
    assert.equal(shared.forAgent('alice').fileOf('linear'), '/state/oauth/linear@alice.json');
    assert.equal(shared.forAgent('alice').agent, 'alice');
    assert.equal(shared.agent, undefined);
  });

  void it('encodes names so that neither part can forge the other', () => {
    // A server named "a@b" is not agent b's login of server a, nor is an agent named "../x" a path.
    assert.notEqual(shared.fileOf('a@b'), shared.forAgent('b').fileOf('a'));
    assert.equal(basename(shared.forAgent('../x').fileOf('s')), 's@..%2Fx.json');
    assert.notEqual(shared.forAgent('a@b').fileOf('s'), shared.forAgent('a').fileOf('s@b'));
  });

  void it('names a long agent id by its digest, which no short id can spell', () => {
    const long = 'x'.repeat(500);
    const name = basename(shared.forAgent(long).fileOf('s'));
    assert.match(name, /^s@~[0-9a-f]{64}\.json$/);
    assert.notEqual(basename(shared.forAgent(name.slice(2, -5)).fileOf('s')), name, 'a literal "~…" agent id is encoded');
  });

  void it('gives the command to run, quoted for a shell where needed', () => {
    assert.equal(shared.loginCommand('linear'), 'mcpgate login linear');
    assert.equal(shared.forAgent('alice@example.com').loginCommand('linear'), 'mcpgate login linear --agent alice@example.com');
    assert.equal(shared.forAgent("o'brien smith").logoutCommand('linear'), "mcpgate logout linear --agent 'o'\\''brien smith'");
  });
});
