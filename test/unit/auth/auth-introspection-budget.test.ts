// The introspection budget is per source: a client flooding mcpgate with made-up opaque tokens spends
// its own share of the issuer's `maxPerSecond`, and half of it stays with the sources that recently
// presented active tokens, so a known agent's new token is still checked (not 503) through the flood,
// even one from many addresses. A refusal is remembered for the source that presented it only. The
// introspection endpoint is a small RFC 7662 server on loopback counting its calls.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IntrospectionLimited, IssuerKeys } from '../../../src/auth/issuers.js';
import type { OAuthIssuer } from '../../../src/rules/auth-types.js';

const RATE = 8;

void describe('introspection budget per source', { timeout: 20_000 }, () => {
  let server: Server;
  let issuer: OAuthIssuer;
  let calls = 0;
  /** Tokens the issuer calls active. */
  const active = new Set<string>();

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        calls += 1;
        const token = new URLSearchParams(body).get('token') ?? '';
        const answer = active.has(token) ? { active: true, sub: 'agent', exp: Math.floor(Date.now() / 1000) + 300 } : { active: false };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    issuer = {
      issuer: url,
      introspection: { endpoint: `${url}/introspect`, clientId: 'gw', clientSecret: 's', maxPerSecond: RATE, cacheSeconds: 300 },
    } as unknown as OAuthIssuer;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const ask = async (keys: IssuerKeys, token: string, source: string): Promise<'active' | 'inactive' | 'limited'> => {
    try {
      return (await keys.introspect(issuer, token, source)).active === true ? 'active' : 'inactive';
    } catch (err) {
      if (err instanceof IntrospectionLimited) return 'limited';
      throw err;
    }
  };
  const flood = (keys: IssuerKeys, sources: string[], each: number): Promise<string[]> =>
    Promise.all(sources.flatMap((source) => Array.from({ length: each }, (_, i) => ask(keys, `made-up-${source}-${i}`, source))));

  it("a flood from one source, then from ten, leaves a known agent's new tokens checked", async () => {
    const keys = new IssuerKeys();
    active.add('agent-first');
    assert.equal(await ask(keys, 'agent-first', '10.0.0.7'), 'active', 'the agent is known from now on');

    const one = await flood(keys, ['10.0.0.66'], 25);
    assert.ok(one.filter((a) => a === 'inactive').length <= Math.ceil(RATE / 4), `one source spent ${one.join(',')}`);
    // A new agent from an address of its own still gets its share.
    active.add('stranger');
    assert.equal(await ask(keys, 'stranger', '10.0.0.8'), 'active');
    for (const n of [1, 2]) {
      active.add(`agent-new-${n}`);
      assert.equal(await ask(keys, `agent-new-${n}`, '10.0.0.7'), 'active', 'the known agent is checked through the flood');
    }

    const before = calls;
    await flood(
      keys,
      Array.from({ length: 10 }, (_, i) => `10.0.1.${i}`),
      25,
    );
    assert.ok(calls - before <= RATE, `${calls - before} introspection calls for a flood from ten sources`);
    active.add('agent-new-3');
    assert.equal(await ask(keys, 'agent-new-3', '10.0.0.7'), 'active', 'half of the budget stays with known agents');
  });

  it('a refusal is remembered for the source that presented it only', async () => {
    const keys = new IssuerKeys();
    assert.equal(await ask(keys, 'soon-active', '10.0.2.1'), 'inactive');
    active.add('soon-active');
    assert.equal(await ask(keys, 'soon-active', '10.0.2.1'), 'inactive', 'the same source: the negative cache answers');
    assert.equal(await ask(keys, 'soon-active', '10.0.2.2'), 'active', "another source's refusal does not refuse this one");
  });
});
