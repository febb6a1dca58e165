// An agent's own headers for remote servers (the rules' `serverHeaders`): expanded from the
// environment at load, validated (header names, reserved names, values, counts), refused on a server
// that is stdio or shared (one connection would carry one agent's credential for everyone) and on the
// `default` agent, never echoed in an error; their variables count as mcpgate's secrets (a stdio
// server does not inherit them); the pool's key digest and header merge (servers/pool.ts).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRules, type ServerRef } from '../../../src/rules/load.js';
import { secretEnvNames } from '../../../src/config/child-env.js';
import { credentialDigest, ConnectionPool } from '../../../src/servers/pool.js';
import { Connection } from '../../../src/servers/connection.js';
import type { RemoteServerConfig, ServerConfig } from '../../../src/config/types.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { byPath, failure } from '../../helpers/config.js';
import { FakeServer } from '../../helpers/fake-server.js';
import { scope } from '../../helpers/route-parts.js';

const FILE = '/srv/gateway-rules.json';
const SERVERS: ServerRef[] = [
  { name: 'github', type: 'http', sessions: 'per-agent' },
  { name: 'jira', type: 'sse', sessions: 'per-session' },
  { name: 'search', type: 'http', sessions: 'shared' },
  { name: 'files', type: 'stdio', sessions: 'per-agent' },
];
const ENV = { CI_GH_TOKEN: 'ghp_secret_value', EMPTY: '' };
const parse = (agents: unknown, servers: readonly ServerRef[] = SERVERS) =>
  parseRules(JSON.stringify({ agents }), FILE, servers, { env: ENV });

void describe('rules serverHeaders', () => {
  void it("compiles an agent's headers per server, ${VAR} expanded from the environment", { timeout: 5000 }, () => {
    const rules = parse({
      'ci-bot': {
        serverHeaders: { github: { Authorization: 'Bearer ${CI_GH_TOKEN}', 'X-Org': 'acme' }, jira: { 'X-Api-Key': '${EMPTY:-k1}' } },
      },
      dev: {},
    });
    const bot = rules.agents.get('ci-bot')!;
    assert.deepEqual(bot.serverHeaders.get('github'), { Authorization: 'Bearer ghp_secret_value', 'X-Org': 'acme' });
    assert.deepEqual(bot.serverHeaders.get('jira'), { 'X-Api-Key': 'k1' });
    assert.equal(rules.agents.get('dev')!.serverHeaders.size, 0);
    assert.ok(Object.isFrozen(bot.serverHeaders.get('github')));
    assert.deepEqual(rules.warnings, []);
  });

  void it(
    'refuses shared and stdio servers, the default agent, bad names and values, and never echoes a value',
    { timeout: 5000 },
    async () => {
      const { issues, message } = await failure(() =>
        parse({
          a: { serverHeaders: { search: { Authorization: 'Bearer ${CI_GH_TOKEN}' }, files: { 'X-K': 'v' } } },
          b: {
            serverHeaders: {
              github: { 'Bad Name': 'v', Host: 'evil', 'Mcp-Session-Id': 'x', 'X-N': 7, 'X-Unset': '${NOPE_UNSET}', 'X-CRLF': 'a\r\nb' },
            },
          },
          c: { serverHeaders: { github: { 'X-A': '1', 'x-a': '2' } } },
          d: { serverHeaders: 'github' },
          default: { serverHeaders: { github: { Authorization: 'Bearer ${CI_GH_TOKEN}' } } },
        }),
      );
      const found = byPath(issues);
      assert.match(found['$.agents.a.serverHeaders.search']!, /one session shared by all agents.*"sessions": "per-agent"/);
      assert.match(found['$.agents.a.serverHeaders.files']!, /stdio server: headers are for remote/);
      assert.match(found['$.agents.b.serverHeaders.github["Bad Name"]']!, /not a valid HTTP header name/);
      assert.match(found['$.agents.b.serverHeaders.github.Host']!, /set by mcpgate/);
      assert.match(found['$.agents.b.serverHeaders.github.Mcp-Session-Id']!, /set by mcpgate/);
      assert.match(found['$.agents.b.serverHeaders.github.X-N']!, /expected a string.*got number/);
      assert.match(found['$.agents.b.serverHeaders.github.X-Unset']!, /environment variable NOPE_UNSET is not set/);
      assert.match(found['$.agents.b.serverHeaders.github.X-CRLF']!, /line break/);
      assert.match(found['$.agents.c.serverHeaders.github.x-a']!, /listed twice/);
      assert.match(found['$.agents.d.serverHeaders']!, /expected an object mapping server names/);
      assert.match(found['$.agents.default.serverHeaders']!, /"default" agent may not hold server credentials/);
      assert.ok(!message.includes('ghp_secret_value') && !JSON.stringify(issues).includes('ghp_secret_value'), 'a credential was echoed');
    },
  );

  void it(
    'a server .mcp.json lacks is a warning; a server of unknown kind is an error; too many headers is an error',
    { timeout: 5000 },
    async () => {
      const rules = parse({ a: { serverHeaders: { gone: { 'X-K': 'v' } } } });
      assert.match(byPath(rules.warnings)['$.agents.a.serverHeaders.gone']!, /which .mcp.json does not define/);
      const unknownKind = await failure(() =>
        parseRules(JSON.stringify({ agents: { a: { serverHeaders: { github: { 'X-K': 'v' } } } } }), FILE, ['github']),
      );
      assert.match(byPath(unknownKind.issues)['$.agents.a.serverHeaders.github']!, /kind is not known/);
      const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`X-H${i}`, 'v']));
      const tooMany = await failure(() => parse({ a: { serverHeaders: { github: many } } }));
      assert.match(byPath(tooMany.issues)['$.agents.a.serverHeaders.github']!, /33 headers .* at most 32/);
    },
  );

  void it('a credential written literally (not ${VAR}) is a warning at load, never echoing the value', { timeout: 5000 }, () => {
    const rules = parse({
      a: {
        serverHeaders: {
          github: {
            Authorization: 'Bearer ghp_literal_value_0123',
            'X-Org': 'acme',
            'X-Team': 'red',
            'X-Opaque': 'AbCdEfGhIjKlMnOpQrStUvWxYz012345',
          },
          jira: { 'X-Api-Key': 'k1-literal', Cookie: '${CI_GH_TOKEN}' },
        },
      },
    });
    const found = byPath(rules.warnings);
    assert.deepEqual(Object.keys(found).sort(), [
      '$.agents.a.serverHeaders.github.Authorization',
      '$.agents.a.serverHeaders.github.X-Opaque',
      '$.agents.a.serverHeaders.jira.X-Api-Key',
    ]);
    assert.match(
      found['$.agents.a.serverHeaders.github.Authorization']!,
      /^the value of Authorization looks like a credential written in the rules file itself; prefer "\$\{VAR\}"/,
    );
    assert.ok(
      !JSON.stringify(rules.warnings).includes('ghp_literal') && !JSON.stringify(rules.warnings).includes('k1-literal'),
      'a value was echoed',
    );
  });

  void it("the variables serverHeaders read are mcpgate's secrets: a stdio server does not inherit them", { timeout: 5000 }, () => {
    const names = secretEnvNames({
      agents: { a: { serverHeaders: { github: { Authorization: 'Bearer ${CI_GH_TOKEN}', 'X-K': '${OTHER:-x}' } } } },
      auth: { jwt: { secret: '${JWT_S}' } },
    });
    assert.deepEqual([...names].sort(), ['CI_GH_TOKEN', 'JWT_S', 'OTHER']);
  });
});

void describe('pool credentials', () => {
  const config: RemoteServerConfig = Object.freeze({
    type: 'http',
    name: 'github',
    url: 'https://x.test/mcp',
    headers: Object.freeze({ authorization: 'Bearer shared', 'X-Base': '1' }),
    disabled: false,
    timeout: 1000,
    sessions: 'per-agent',
  });

  void it("an agent's header replaces a same-named entry header whatever its case; others stay", { timeout: 5000 }, async () => {
    // The pool makes the agent's connection from the entry with the agent's headers in place.
    const made: ServerConfig[] = [];
    const pool = new ConnectionPool({
      create: (cfg) => {
        made.push(cfg);
        const server = new FakeServer(cfg.name, { tools: [{ name: 'get' }] });
        const hooks = {
          notification: () => undefined,
          serverRequest: () => undefined,
          ready: () => Promise.resolve(),
          interrupted: () => undefined,
          lost: () => undefined,
        };
        return new Connection(cfg, hooks, silentLogger, {
          startupTimeoutMs: 5000,
          supervision: { retries: 0 },
          transport: (_c, _l, events) => server.open(events),
        });
      },
      busy: () => false,
      log: silentLogger,
    });
    try {
      await pool.get(config, scope('agent:a'), { agent: 'a', identified: true }, { Authorization: 'Bearer mine' });
      await pool.get(config, scope('agent:b'), { agent: 'b', identified: true });
      assert.deepEqual(
        made.map((m) => (m.type === 'stdio' ? undefined : m.headers)),
        [{ 'X-Base': '1', Authorization: 'Bearer mine' }, config.headers],
        "the agent's headers, then the entry's for an agent without its own",
      );
      assert.deepEqual(config.headers, { authorization: 'Bearer shared', 'X-Base': '1' }, 'the entry is untouched');
    } finally {
      await pool.close();
    }
  });

  void it('the key digest differs by value, not by order or name case, and does not hold the value', { timeout: 5000 }, () => {
    const a = credentialDigest({ Authorization: 'Bearer one', 'X-A': '1' });
    assert.equal(credentialDigest({ 'x-a': '1', authorization: 'Bearer one' }), a);
    assert.notEqual(credentialDigest({ Authorization: 'Bearer two', 'X-A': '1' }), a);
    assert.ok(!a.includes('one'));
  });
});
