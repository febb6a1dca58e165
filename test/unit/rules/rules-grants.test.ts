// Grants by claim ("rules may also grant by a claim"): the `grants` section of
// gateway-rules.json, validated with its JSON paths, and how the grants a token's claims meet combine
// with the agent's own entry (or `default`'s) in rules/decide.ts — allows add up, a deny anywhere wins.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideServer, decideTool, grantMayUse, matchedGrants, serverVisible } from '../../../src/rules/decide.js';
import { parseRules } from '../../../src/rules/load.js';
import type { Rules } from '../../../src/rules/load.js';
import { GatewayError } from '../../../src/errors.js';

const FILE = '/srv/project/gateway-rules.json';
const SERVERS = ['github', 'fs', 'db'];
const rules = (value: unknown): Rules => parseRules(JSON.stringify(value), FILE, SERVERS);

function issues(value: unknown): { path: string; message: string }[] {
  try {
    parseRules(JSON.stringify(value), FILE, SERVERS);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return (err.detail?.issues as { path: string; message: string }[]).map(({ path, message }) => ({ path, message }));
  }
  assert.fail('expected the rules to be refused');
}

const FILE_WITH_GRANTS = {
  agents: { alice: { allow: { servers: ['fs'] } } },
  grants: {
    engineering: { when: { groups: 'eng' }, allow: { servers: ['github'] } },
    readers: { when: { scope: 'tools:read' }, allow: { tools: { db: ['query', 'list_*'] } }, deny: { tools: { db: ['list_secrets'] } } },
    'no-prod': { when: { groups: ['contractors', 'interns'] }, deny: { servers: ['db'] } },
    keycloak: { when: { 'realm_access.roles': 'admin', email_verified: 'yes' }, allow: { servers: ['*'] } },
  },
};

void describe('grants: matching claims', () => {
  const r = rules(FILE_WITH_GRANTS);

  void it('a string claim equals a value; an array claim contains one; scope is split on spaces', { timeout: 5000 }, () => {
    assert.deepEqual(matchedGrants(r, { groups: ['ops', 'eng'] }), ['engineering']);
    assert.deepEqual(matchedGrants(r, { groups: 'eng' }), ['engineering']);
    assert.deepEqual(matchedGrants(r, { scope: 'openid tools:read' }), ['readers']);
    assert.deepEqual(matchedGrants(r, { scp: ['tools:read'] }), []); // `scp` is a claim of its own
    assert.deepEqual(matchedGrants(r, { groups: 'engineering' }), []); // equality, not a prefix
    assert.deepEqual(matchedGrants(r, { groups: ['interns'] }), ['no-prod']);
  });

  void it('every condition of when must hold; a dotted name walks into objects', { timeout: 5000 }, () => {
    assert.deepEqual(matchedGrants(r, { realm_access: { roles: ['admin'] } }), []);
    assert.deepEqual(matchedGrants(r, { realm_access: { roles: ['admin'] }, email_verified: 'yes' }), ['keycloak']);
  });

  void it('no claims (a static token, stdio): no grant, whatever the claims would say', { timeout: 5000 }, () => {
    assert.deepEqual(matchedGrants(r, undefined), []);
    assert.equal(decideServer(r, 'bob', 'github').allowed, false);
  });

  void it('claims of other types never match', { timeout: 5000 }, () => {
    assert.deepEqual(matchedGrants(r, { groups: { eng: true } }), []);
    assert.deepEqual(matchedGrants(r, { groups: [1, null, 'x'] }), []);
  });
});

void describe("grants: combined with the agent's own entry", () => {
  const r = rules(FILE_WITH_GRANTS);

  void it('a new employee with no entry gets what the grants give, and nothing else', { timeout: 5000 }, () => {
    const claims = { sub: 'newbie', groups: ['eng'] };
    assert.deepEqual(decideTool(r, 'newbie', 'github', 'create_issue', claims), {
      allowed: true,
      reason:
        'tool "create_issue" of server "github" is allowed to agent "newbie" (grant "engineering") by allow.servers, with no allow.tools entry for the server (all its tools)',
    });
    assert.equal(decideTool(r, 'newbie', 'fs', 'read_file', claims).allowed, false);
    // Without the claim it is an agent the rules do not cover.
    assert.deepEqual(decideTool(r, 'newbie', 'github', 'create_issue'), {
      allowed: false,
      reason: 'agent "newbie" is not in the rules and deny_on_missing_agent is true',
    });
  });

  void it('allows add up: the own entry and a grant each allow their servers', { timeout: 5000 }, () => {
    const claims = { groups: ['eng'] };
    assert.equal(decideTool(r, 'alice', 'fs', 'read_file', claims).allowed, true);
    assert.equal(decideTool(r, 'alice', 'github', 'create_issue', claims).allowed, true);
    assert.equal(decideTool(r, 'alice', 'github', 'create_issue').allowed, false);
  });

  void it('a deny in a grant beats an allow in the own entry or another grant', { timeout: 5000 }, () => {
    const claims = { groups: ['interns'], scope: 'tools:read' };
    assert.deepEqual(decideTool(r, 'alice', 'db', 'query', claims), {
      allowed: false,
      reason: 'server "db" is denied to agent "alice" (grant "no-prod") by deny.servers',
    });
    assert.equal(decideTool(r, 'alice', 'db', 'query', { scope: 'tools:read' }).allowed, true);
    assert.deepEqual(decideTool(r, 'alice', 'db', 'list_secrets', { scope: 'tools:read' }), {
      allowed: false,
      reason: 'tool "list_secrets" of server "db" is denied to agent "alice" (grant "readers") by deny.tools',
    });
  });

  void it('a grant naming tools lends those tools, not the server', { timeout: 5000 }, () => {
    const claims = { scope: 'tools:read' };
    assert.equal(decideTool(r, 'bob', 'db', 'list_tables', claims).allowed, true);
    assert.deepEqual(decideTool(r, 'bob', 'db', 'drop_table', claims), {
      allowed: false,
      reason: 'tool "drop_table" of server "db" is not in allow.tools of agent "bob" (grant "readers")',
    });
    assert.equal(decideServer(r, 'bob', 'db', claims).allowed, false);
    assert.equal(serverVisible(r, 'bob', 'db', claims), true);
    assert.equal(serverVisible(r, 'bob', 'db', { scope: 'tools:read', groups: 'interns' }), false);
  });

  void it('default applies alongside the grants to an agent the file does not list', { timeout: 5000 }, () => {
    const d = rules({
      agents: { default: { allow: { servers: ['fs'] } } },
      grants: { eng: { when: { groups: 'eng' }, allow: { servers: ['github'] } } },
    });
    assert.equal(decideServer(d, 'carol', 'fs', { groups: 'eng' }).allowed, true);
    assert.deepEqual(decideServer(d, 'carol', 'db', { groups: 'eng' }), {
      allowed: false,
      reason: 'server "db" is not in allow.servers of agent "carol" (rules of agent "default", grant "eng")',
    });
  });

  void it('grantMayUse: what a reload keeps pooled connections for', { timeout: 5000 }, () => {
    assert.equal(grantMayUse(r, 'github'), true);
    assert.equal(grantMayUse(r, 'db'), true);
    assert.equal(grantMayUse(rules({ agents: {}, grants: { x: { when: { groups: 'a' }, allow: { servers: ['fs'] } } } }), 'github'), false);
  });
});

void describe('grants: validation', () => {
  void it('when is required, non-empty, and names claims with string values', { timeout: 5000 }, () => {
    assert.deepEqual(issues({ agents: {}, grants: { a: { allow: { servers: ['fs'] } } } }), [
      {
        path: '$.grants.a.when',
        message:
          'missing; a grant applies to the tokens whose claims match {CLAIM: VALUE or [VALUE, …]}, e.g. {"groups": "eng"} or {"scope": "tools:read"}',
      },
    ]);
    assert.match(
      issues({ agents: {}, grants: { a: { when: {}, allow: {} } } })[0]!.message,
      /an empty object \(a grant for every token is what "default" is for\)/,
    );
    assert.deepEqual(
      issues({ agents: {}, grants: { a: { when: { groups: [] } } } }).map((i) => i.path),
      ['$.grants.a.when.groups'],
    );
    assert.deepEqual(
      issues({ agents: {}, grants: { a: { when: { groups: 7 } } } }).map((i) => i.path),
      ['$.grants.a.when.groups'],
    );
  });

  void it("tokens and serverHeaders belong to agents, not grants; the sides are checked like an agent's", { timeout: 5000 }, () => {
    assert.deepEqual(issues({ agents: {}, grants: { a: { when: { groups: 'x' }, tokens: [] } } }), [
      { path: '$.grants.a.tokens', message: 'a grant has no "tokens": it names no agent; put tokens under the agent in "agents"' },
    ]);
    assert.deepEqual(
      issues({ agents: {}, grants: { a: { when: { groups: 'x' }, allow: { servers: 'fs' } } } }).map((i) => i.path),
      ['$.grants.a.allow.servers'],
    );
    assert.deepEqual(
      issues({ agents: {}, grants: [] }).map((i) => i.path),
      ['$.grants'],
    );
  });

  void it('warnings name the grant: an unknown server, an unknown key, a grant that changes nothing', { timeout: 5000 }, () => {
    const r = rules({
      agents: {},
      grants: { a: { when: { groups: 'x' }, allow: { servers: ['nope'] }, note: 1 }, b: { when: { groups: 'y' } } },
    });
    assert.deepEqual(
      r.warnings.map(({ path, message }) => ({ path, message })),
      [
        { path: '$.grants.a.note', message: 'unknown key "note" in grant "a" is ignored' },
        { path: '$.grants.a.allow.servers[0]', message: 'grant "a" names server "nope", which .mcp.json does not define' },
        { path: '$.grants.b', message: 'grant "b" has neither "allow" nor "deny": it changes nothing' },
      ],
    );
  });
});
