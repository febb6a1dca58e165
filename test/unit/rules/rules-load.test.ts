// Loading `gateway-rules.json` (src/rules/load.ts, schema.ts): the compiled snapshot, every error at
// once with exact JSON paths, unknown keys and unknown servers as warnings (rules naming
// servers .mcp.json lacks load with warnings naming agent and server; a clean reload has none),
// invalid JSON by line and column, token hashes, deep freeze, and reading from disk (src/reload.ts
// `loadBoth`, as serve, reload and check read it: rules/ reads no files).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatIssues } from '../../../src/config/issues.js';
import { parseRules } from '../../../src/rules/load.js';
import type { Rules } from '../../../src/rules/load.js';
import { byPath, failure, loadRulesFile } from '../../helpers/config.js';

const FILE = '/srv/project/gateway-rules.json';
const SERVERS = ['brave-search', 'postgres', 'github-public', 'github-prod', 'memory'];
const parse = (value: unknown, servers: readonly string[] = SERVERS): Rules => parseRules(JSON.stringify(value), FILE, servers);
const HASH_A = `sha256:${'a'.repeat(64)}`;
const HASH_B = `sha256:${'0123456789abcdef'.repeat(4)}`;

void describe('parseRules: valid files', () => {
  const file = {
    agents: {
      researcher: {
        allow: { servers: ['brave-search'], tools: { 'brave-search': ['*'] } },
        deny: { servers: [], tools: { 'brave-search': ['brave_local_search'] } },
        tokens: [HASH_A],
      },
      backend: {
        allow: { servers: ['postgres', 'github-*'], tools: { postgres: ['query', 'list_*', 'query', 'list_*'] } },
        deny: { servers: ['github-prod'] },
      },
      'ci-bot': { tokens: [HASH_B] },
      empty: {},
    },
    defaults: { deny_on_missing_agent: false },
    auth: {
      jwt: {
        secret: '${MCPGATE_TEST_UNSET_SECRET:-0123456789abcdef0123456789abcdef}',
        issuer: 'https://issuer.test',
        audience: ['mcpgate', 'x'],
        agentClaim: 'sub',
      },
    },
  };

  void it('compiles every agent into exact names and globs, in file order', { timeout: 5000 }, () => {
    const rules = parse(file);
    assert.equal(rules.open, false);
    assert.equal(rules.file, FILE);
    assert.deepEqual(rules.warnings, []);
    assert.deepEqual(rules.defaults, { denyOnMissingAgent: false });
    assert.deepEqual([...rules.agents.keys()], ['researcher', 'backend', 'ci-bot', 'empty']);

    const researcher = rules.agents.get('researcher')!;
    assert.equal(researcher.id, 'researcher');
    assert.deepEqual([...researcher.allow.servers.exact], ['brave-search']);
    assert.deepEqual(researcher.allow.servers.patterns, []);
    const braveAllow = researcher.allow.tools.get('brave-search')!;
    assert.deepEqual([...braveAllow.exact], []);
    assert.deepEqual(braveAllow.patterns, ['*']);
    assert.equal(braveAllow.match('brave_web_search'), '*');
    assert.deepEqual([...researcher.deny.servers.exact], []);
    assert.deepEqual([...researcher.deny.tools.get('brave-search')!.exact], ['brave_local_search']);
    assert.deepEqual(researcher.tokens, [HASH_A]);

    const backend = rules.agents.get('backend')!;
    assert.deepEqual([...backend.allow.servers.exact], ['postgres']);
    assert.deepEqual(backend.allow.servers.patterns, ['github-*']);
    const pg = backend.allow.tools.get('postgres')!;
    assert.deepEqual([...pg.exact], ['query'], 'duplicates collapse');
    assert.deepEqual(pg.patterns, ['list_*']);
    assert.equal(pg.match('list_tables'), 'list_*');
    assert.equal(pg.match('query'), undefined, 'match looks at globs only');
    assert.deepEqual([...backend.deny.servers.exact], ['github-prod']);
    assert.equal(backend.deny.tools.size, 0);
    assert.deepEqual(backend.tokens, []);

    const empty = rules.agents.get('empty')!;
    assert.equal(empty.allow.servers.exact.size + empty.allow.servers.patterns.length + empty.allow.tools.size, 0);
  });

  void it('maps each token hash to its agent', { timeout: 5000 }, () => {
    assert.deepEqual(
      [...parse(file).tokens],
      [
        [HASH_A, 'researcher'],
        [HASH_B, 'ci-bot'],
      ],
    );
  });

  void it('keeps the validated JSON, auth included as written, for status', { timeout: 5000 }, () => {
    assert.deepEqual(parse(file).raw, file);
  });

  void it('defaults deny_on_missing_agent to true when defaults or the key is absent', { timeout: 5000 }, () => {
    assert.deepEqual(parse({ agents: { a: {} } }).defaults, { denyOnMissingAgent: true });
    assert.deepEqual(parse({ agents: { a: {} }, defaults: {} }).defaults, { denyOnMissingAgent: true });
    assert.deepEqual(parse({ agents: { a: {} }, defaults: { deny_on_missing_agent: true } }).defaults, { denyOnMissingAgent: true });
  });

  void it('accepts an empty agents object, warning when that denies everyone', { timeout: 5000 }, () => {
    assert.deepEqual(parse({ agents: {} }).warnings, [
      {
        file: FILE,
        path: '$.agents',
        message: 'no agents are listed and defaults.deny_on_missing_agent is true: every agent is denied everything',
      },
    ]);
    assert.deepEqual(parse({ agents: {}, defaults: { deny_on_missing_agent: false } }).warnings, []);
  });

  void it('reads a byte-order mark and surrounding whitespace', { timeout: 5000 }, () => {
    assert.deepEqual([...parseRules('\uFEFF\n  {"agents": {"a": {}}}\n', FILE, []).agents.keys()], ['a']);
  });

  void it('resolves a relative file name', { timeout: 5000 }, () => {
    assert.equal(parseRules('{"agents":{"a":{}}}', 'gateway-rules.json', []).file, path.resolve('gateway-rules.json'));
  });
});

void describe('parseRules: warnings, never errors', () => {
  void it('names each unknown key and where it is', { timeout: 5000 }, () => {
    const rules = parse({
      agents: { a: { allow: { servers: ['memory'], prompts: ['x'] }, deny: { resources: [] }, role: 'admin' } },
      defaults: { deny_on_missing_agent: true, log: 'debug' },
      version: 2,
    });
    assert.deepEqual(rules.warnings, [
      { file: FILE, path: '$.version', message: 'unknown top-level key "version" is ignored' },
      { file: FILE, path: '$.defaults.log', message: 'unknown key "log" in defaults is ignored' },
      { file: FILE, path: '$.agents.a.role', message: 'unknown key "role" in agent "a" is ignored' },
      { file: FILE, path: '$.agents.a.allow.prompts', message: 'unknown key "prompts" in allow of agent "a" is ignored' },
      { file: FILE, path: '$.agents.a.deny.resources', message: 'unknown key "resources" in deny of agent "a" is ignored' },
    ]);
    assert.deepEqual([...rules.agents.get('a')!.allow.servers.exact], ['memory']);
  });

  void it('a rule naming a server .mcp.json lacks loads, with a warning naming agent and server', { timeout: 5000 }, () => {
    const rules = parse(
      {
        agents: { backend: { allow: { servers: ['postgres'], tools: { postgres: ['query', 'list_*'] } } } },
        defaults: { deny_on_missing_agent: true },
      },
      ['brave-search'],
    );
    assert.deepEqual(rules.warnings, [
      {
        file: FILE,
        path: '$.agents.backend.allow.servers[0]',
        message: 'agent "backend" names server "postgres", which .mcp.json does not define',
      },
      {
        file: FILE,
        path: '$.agents.backend.allow.tools.postgres',
        message: 'agent "backend" names server "postgres", which .mcp.json does not define',
      },
    ]);
    assert.ok(rules.agents.has('backend'));
  });

  void it('warnings name each agent with its own undefined server', { timeout: 5000 }, () => {
    const rules = parse(
      {
        agents: {
          agent1: { allow: { servers: ['undefined_server_1'], tools: { undefined_server_1: ['*'] } } },
          agent2: { allow: { servers: ['undefined_server_2'], tools: { undefined_server_2: ['query'] } }, deny: { servers: ['gone'] } },
        },
      },
      ['brave-search'],
    );
    assert.deepEqual(formatIssues(rules.warnings), [
      `${FILE}: $.agents.agent1.allow.servers[0]: agent "agent1" names server "undefined_server_1", which .mcp.json does not define`,
      `${FILE}: $.agents.agent1.allow.tools.undefined_server_1: agent "agent1" names server "undefined_server_1", which .mcp.json does not define`,
      `${FILE}: $.agents.agent2.allow.servers[0]: agent "agent2" names server "undefined_server_2", which .mcp.json does not define`,
      `${FILE}: $.agents.agent2.allow.tools.undefined_server_2: agent "agent2" names server "undefined_server_2", which .mcp.json does not define`,
      `${FILE}: $.agents.agent2.deny.servers[0]: agent "agent2" names server "gone", which .mcp.json does not define`,
    ]);
  });

  void it('the next clean load has no warnings', { timeout: 5000 }, () => {
    assert.equal(
      parse({ agents: { test: { allow: { servers: ['nonexistent'], tools: { nonexistent: ['*'] } } } } }, ['brave-search']).warnings.length,
      2,
    );
    const clean = parse({ agents: { researcher: { allow: { servers: ['brave-search'], tools: { 'brave-search': ['*'] } } } } }, [
      'brave-search',
    ]);
    assert.deepEqual(clean.warnings, []);
  });

  void it('"*" is not a server name; a server glob that matches nothing is a warning, one that matches is not', { timeout: 5000 }, () => {
    const rules = parse({ agents: { a: { allow: { servers: ['*', 'github-*', 'gitlab-*', 'mem?ry'] }, deny: { servers: ['*'] } } } });
    assert.deepEqual(rules.warnings, [
      {
        file: FILE,
        path: '$.agents.a.allow.servers[2]',
        message: 'agent "a" names server pattern "gitlab-*", which matches no server .mcp.json defines',
      },
    ]);
  });

  void it('a token hash listed twice for one agent is a warning', { timeout: 5000 }, () => {
    assert.deepEqual(parse({ agents: { a: { tokens: [HASH_A, HASH_A] } } }).warnings, [
      { file: FILE, path: '$.agents.a.tokens[1]', message: 'token hash is listed twice for agent "a"' },
    ]);
  });

  void it('quotes odd names in messages as JSON', { timeout: 5000 }, () => {
    assert.deepEqual(parse({ agents: { 'my "agent"': { allow: { servers: ['new\nline'] } } } }).warnings, [
      {
        file: FILE,
        path: '$.agents["my \\"agent\\""].allow.servers[0]',
        message: 'agent "my \\"agent\\"" names server "new\\nline", which .mcp.json does not define',
      },
    ]);
  });
});

void describe('parseRules: errors', () => {
  void it('reports every error at once with its exact JSON path, and the warnings beside them', { timeout: 5000 }, async () => {
    const { message, issues, warnings } = await failure(() =>
      parse(
        {
          agents: {
            researcher: {
              allow: { servers: 'brave-search', tools: { 'brave-search': ['ok', 7, ''], postgres: 'query', '': ['x'] } },
              deny: { servers: [null], tools: ['x'] },
              tokens: 'sha256:abc',
            },
            backend: { allow: [], deny: 'all', extra: 1 },
            '': {},
            writer: 'yes',
            ops: { tokens: [42, `sha256:${'A'.repeat(64)}`, 'my-secret-token', 'sha256:abc', `sha256:${'g'.repeat(64)}`] },
          },
          defaults: { deny_on_missing_agent: 'yes' },
          auth: 'none',
        },
        ['brave-search'],
      ),
    );
    assert.deepEqual(byPath(issues), {
      '$.defaults.deny_on_missing_agent': 'expected true or false, got a string',
      '$.auth': 'expected an object (the token and JWT settings of the HTTP front), got a string',
      '$.agents.researcher.allow.servers': 'expected an array of server names or patterns, got a string',
      '$.agents.researcher.allow.tools.brave-search[1]': 'expected a tool name or pattern (a non-empty string), got 7',
      '$.agents.researcher.allow.tools.brave-search[2]': 'expected a tool name or pattern (a non-empty string), got ""',
      '$.agents.researcher.allow.tools.postgres': 'expected an array of tool names or patterns, got a string',
      '$.agents.researcher.allow.tools[""]': 'a server name must not be empty',
      '$.agents.researcher.deny.servers[0]': 'expected a server name or pattern (a non-empty string), got null',
      '$.agents.researcher.deny.tools': 'expected an object mapping server names to arrays of tool names or patterns, got an array',
      '$.agents.researcher.tokens': 'expected an array of "sha256:<64 hex digits>" token hashes, got a string',
      '$.agents.backend.allow': 'expected an object with "servers" and/or "tools", got an array',
      '$.agents.backend.deny': 'expected an object with "servers" and/or "tools", got a string',
      '$.agents[""]': 'an agent id must not be empty',
      '$.agents.writer': 'expected an object with "allow", "deny", "tokens" or "serverHeaders" (agent "writer"), got a string',
      '$.agents.ops.tokens[0]': 'expected "sha256:" followed by 64 lowercase hex digits, got 42',
      '$.agents.ops.tokens[1]': 'expected "sha256:" followed by 64 lowercase hex digits, got uppercase hex digits',
      '$.agents.ops.tokens[2]':
        'expected "sha256:" followed by 64 lowercase hex digits, got a string without the "sha256:" prefix (list the hash `mcpgate token` prints, never the token)',
      '$.agents.ops.tokens[3]': 'expected "sha256:" followed by 64 lowercase hex digits, got 3 characters after "sha256:"',
      '$.agents.ops.tokens[4]': 'expected "sha256:" followed by 64 lowercase hex digits, got characters other than 0-9 a-f after "sha256:"',
    });
    assert.equal(issues.length, 19);
    assert.ok(issues.every((i) => i.file === FILE));
    assert.deepEqual(byPath(warnings), {
      '$.agents.researcher.allow.tools.postgres': 'agent "researcher" names server "postgres", which .mcp.json does not define',
      '$.agents.backend.extra': 'unknown key "extra" in agent "backend" is ignored',
    });
    assert.ok(
      message.startsWith(
        `invalid configuration in ${FILE}: 19 errors\n  $.defaults.deny_on_missing_agent: expected true or false, got a string\n`,
      ),
      message,
    );
    assert.ok(
      !message.includes('my-secret-token') && !JSON.stringify(issues).includes('my-secret-token'),
      'a pasted token is never echoed',
    );
  });

  void it('an empty tool pattern is an error at its exact path', { timeout: 5000 }, async () => {
    const { message, issues } = await failure(() => parse({ agents: { researcher: { allow: { tools: { 'brave-search': [''] } } } } }));
    assert.deepEqual(issues, [
      {
        file: FILE,
        path: '$.agents.researcher.allow.tools.brave-search[0]',
        message: 'expected a tool name or pattern (a non-empty string), got ""',
      },
    ]);
    assert.equal(
      message,
      `invalid configuration in ${FILE}: 1 error\n  $.agents.researcher.allow.tools.brave-search[0]: expected a tool name or pattern (a non-empty string), got ""`,
    );
  });

  void it('an empty server name or pattern in servers is an error', { timeout: 5000 }, async () => {
    const { issues } = await failure(() => parse({ agents: { a: { deny: { servers: ['memory', ''] } } } }));
    assert.deepEqual(byPath(issues), { '$.agents.a.deny.servers[1]': 'expected a server name or pattern (a non-empty string), got ""' });
  });

  void it('requires agents to be an object', { timeout: 5000 }, async () => {
    assert.deepEqual((await failure(() => parse({ defaults: {} }))).issues, [
      { file: FILE, path: '$.agents', message: 'missing; expected an object mapping agent ids to their rules' },
    ]);
    assert.deepEqual(byPath((await failure(() => parse({ agents: ['a'] }))).issues), {
      '$.agents': 'expected an object mapping agent ids to their rules, got an array',
    });
  });

  void it('requires the file to be an object', { timeout: 5000 }, async () => {
    for (const [value, got] of [
      [[], 'an array'],
      [null, 'null'],
      ['agents', 'a string'],
      [3, '3'],
    ] as const) {
      const { issues } = await failure(() => parse(value));
      assert.deepEqual(issues, [{ file: FILE, path: '$', message: `expected an object with an "agents" key, got ${got}` }]);
    }
  });

  void it('defaults must be an object', { timeout: 5000 }, async () => {
    assert.deepEqual(byPath((await failure(() => parse({ agents: {}, defaults: true }))).issues), {
      '$.defaults': 'expected an object, got true',
    });
  });

  void it('a token hash may identify one agent only', { timeout: 5000 }, async () => {
    const { issues } = await failure(() => parse({ agents: { a: { tokens: [HASH_A] }, b: { tokens: [HASH_B, HASH_A] } } }));
    assert.deepEqual(issues, [
      { file: FILE, path: '$.agents.b.tokens[1]', message: 'token hash is also listed under agent "a"; a token must identify one agent' },
    ]);
  });

  void it('reports invalid JSON by line and column without echoing the text', { timeout: 5000 }, async () => {
    const cases: [string, string][] = [
      [
        '{\n  "agents": {\n    "a": {}\n    "b": {}\n  }\n}\n',
        "invalid JSON at line 4, column 5: expected ',' or '}' after property value",
      ],
      ['{"agents": {"a": {"allow": {"servers": ["x",]}}}}', 'invalid JSON at line 1, column 45: unexpected character "]"'],
      ['{"agents": tru}', 'invalid JSON at line 1, column 15: unexpected character "}"'],
      ['{"agents": {}', "invalid JSON at line 1, column 14: expected ',' or '}' after property value"],
    ];
    for (const [text, expected] of cases) {
      const { message, issues } = await failure(() => parseRules(text, FILE, []));
      assert.deepEqual(issues, [{ file: FILE, path: '$', message: expected }]);
      assert.equal(message, `invalid configuration in ${FILE}: 1 error\n  $: ${expected}`);
    }
  });

  void it('says when the file is empty', { timeout: 5000 }, async () => {
    const { issues } = await failure(() => parseRules(' \n', FILE, []));
    assert.deepEqual(issues, [{ file: FILE, path: '$', message: 'the file is empty; expected a JSON object with "agents"' }]);
  });
});

void describe('the Rules snapshot is deeply frozen', () => {
  const rules = parse({
    agents: {
      a: {
        allow: { servers: ['memory', 'git*'], tools: { memory: ['read_*', 'x'] } },
        deny: { tools: { memory: ['delete_*'] } },
        tokens: [HASH_A],
      },
    },
    auth: { jwt: { secret: '${MCPGATE_TEST_UNSET_SECRET:-0123456789abcdef0123456789abcdef}', audience: ['k'] } },
  });

  void it('freezes objects and arrays all the way down', { timeout: 5000 }, () => {
    const agent = rules.agents.get('a')!;
    const memory = agent.allow.tools.get('memory')!;
    for (const value of [
      rules,
      rules.defaults,
      rules.warnings,
      agent,
      agent.allow,
      agent.deny,
      agent.allow.servers,
      agent.tokens,
      memory,
      memory.patterns,
    ]) {
      assert.ok(Object.isFrozen(value));
    }
    const raw = rules.raw as { agents: { a: { allow: { servers: string[] } } }; auth: { jwt: { audience: string[] } } };
    for (const value of [raw, raw.agents, raw.agents.a, raw.agents.a.allow, raw.agents.a.allow.servers, raw.auth.jwt.audience])
      assert.ok(Object.isFrozen(value));
    assert.throws(() => raw.agents.a.allow.servers.push('more'), TypeError);
  });

  void it('refuses to change maps and sets', { timeout: 5000 }, () => {
    const agent = rules.agents.get('a')!;
    const maps = [rules.agents, rules.tokens, agent.allow.tools, agent.deny.tools] as Map<unknown, unknown>[];
    for (const map of maps) {
      assert.throws(() => map.set('x', 1), { name: 'TypeError', message: 'the rules snapshot is frozen' });
      assert.throws(() => map.delete('a'), TypeError);
      assert.throws(() => map.clear(), TypeError);
    }
    const set = agent.allow.servers.exact as Set<string>;
    assert.throws(() => set.add('x'), TypeError);
    assert.throws(() => set.delete('memory'), TypeError);
    assert.throws(() => set.clear(), TypeError);
    assert.deepEqual([...rules.agents.keys()], ['a']);
    assert.deepEqual([...set], ['memory']);
  });

  void it('keeps matching after freezing (globs live in closures, not in the snapshot)', { timeout: 5000 }, () => {
    const memory = rules.agents.get('a')!.allow.tools.get('memory')!;
    assert.equal(memory.match('read_graph'), 'read_*');
    assert.equal(memory.match('write'), undefined);
    assert.equal(rules.agents.get('a')!.allow.servers.match('github'), 'git*');
  });

  void it('names the first glob in file order when several match', { timeout: 5000 }, () => {
    const matcher = parse({ agents: { a: { allow: { tools: { memory: ['x_*', '*_graph', 'read_*', '*'] } } } } })
      .agents.get('a')!
      .allow.tools.get('memory')!;
    assert.equal(matcher.match('read_graph'), '*_graph');
    assert.equal(matcher.match('read_x'), 'read_*');
    assert.equal(matcher.match('other'), '*');
    assert.equal(matcher.match(''), '*');
  });
});

void describe('reading the rules file', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-rules-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('loads a file written atomically (temp file, rename) as editors do', { timeout: 5000 }, async () => {
    const file = path.join(dir, 'gateway-rules.json');
    await writeFile(`${file}.tmp`, JSON.stringify({ agents: { researcher: { allow: { servers: ['brave-search'] } } } }, null, 2));
    const { rename } = await import('node:fs/promises');
    await rename(`${file}.tmp`, file);
    const rules = await loadRulesFile(path.relative(process.cwd(), file), ['brave-search']);
    assert.equal(rules.file, file);
    assert.deepEqual([...rules.agents.keys()], ['researcher']);
    assert.deepEqual(rules.warnings, []);
  });

  void it('names the absolute path of a missing file', { timeout: 5000 }, async () => {
    const missing = path.join(dir, 'nope', 'gateway-rules.json');
    const { message, issues } = await failure(() => loadRulesFile(missing, []));
    assert.equal(message, `rules file not found: ${missing}`);
    assert.deepEqual(issues, [{ file: missing, path: '$', message: 'file not found' }]);
  });

  void it('says when the path is a directory', { timeout: 5000 }, async () => {
    const { message } = await failure(() => loadRulesFile(dir, []));
    assert.equal(message, `cannot read rules file ${dir}: is a directory, not a file`);
  });

  void it('reports errors with the absolute path of the file', { timeout: 5000 }, async () => {
    const file = path.join(dir, 'bad.json');
    await writeFile(file, '{"agents": {"a": {"allow": {"servers": [1]}}}}');
    const { issues } = await failure(() => loadRulesFile(file, []));
    assert.deepEqual(issues, [
      { file, path: '$.agents.a.allow.servers[0]', message: 'expected a server name or pattern (a non-empty string), got 1' },
    ]);
  });
});
