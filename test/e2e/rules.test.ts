// Per-agent rules with real files and a real gateway process: what only the command line does.
// gateway-rules.json beside .mcp.json is found without --rules (src/cli/main.ts), and `mcpgate check
// --rules` reports errors (exit 2, file and JSON path) and names agent and server when a rule names a
// server .mcp.json lacks (a warning, exit 0). What the rules decide — the lists each agent is shown,
// denials, `default`, deny_on_missing_agent — is test/unit/rules/rules.test.ts, in-process: it needs no process.

import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
  cli,
  closeRig,
} from '../helpers/gateway.js';

interface Rig {
  dir: TempDir;
  gw: GatewayProcess;
}

/**
 * A gateway over `web` and `db` for `agent`. `rules` undefined: no rules file at all; `beside`: the
 * rules are written as gateway-rules.json beside .mcp.json and found without --rules.
 */
async function rig(agent: string, rules: unknown, options: { beside?: boolean } = {}): Promise<Rig> {
  const dir = await tempDir();
  try {
    const config = await writeConfig(dir, {
      web: fixtureServer('kitchen-sink-server', ['--name', 'web']),
      db: fixtureServer('kitchen-sink-server', ['--name', 'db']),
    });
    const args = ['--pins', 'off'];
    if (rules !== undefined) {
      const file = options.beside === true ? dir.file('gateway-rules.json') : dir.file('agents.json');
      await writeFile(file, JSON.stringify(rules, null, 2));
      if (options.beside !== true) args.push('--rules', file);
    }
    return { dir, gw: await startGateway({ config, agent, args }) };
  } catch (err) {
    await dir.remove();
    throw err;
  }
}

const close = closeRig;

describe('rules: gateway-rules.json found beside .mcp.json', { timeout: 30_000 }, () => {
  let r: Rig | undefined;
  before(
    async () =>
      (r = await rig('reader', { agents: { reader: { allow: { servers: ['web'], tools: { web: ['e*'] } } } } }, { beside: true })),
  );
  after(() => close(r));

  it('is used without --rules: the agent is shown and may call what it allows, and no more', { timeout: 10_000 }, async () => {
    const names = (await r!.gw.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('web__echo'), names.join(','));
    assert.ok(
      names.every((n) => n.startsWith('web__e')),
      names.join(','),
    );
    assert.equal(textOf(await r!.gw.client.callTool({ name: 'web__echo', arguments: { text: 'hi' } })), 'hi');
    const denied = await rpcError(r!.gw.client.callTool({ name: 'db__echo', arguments: { text: 'hi' } }));
    assert.deepEqual(denied.data, { code: 'MCPG_POLICY_DENIED', agent: 'reader', server: 'db' });
  });
});

describe('mcpgate check --rules', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let config: string;
  before(async () => {
    dir = await tempDir();
    config = await writeConfig(dir, { web: fixtureServer('kitchen-sink-server'), db: fixtureServer('kitchen-sink-server') });
  });
  after(() => dir?.remove());

  it('exits 2 on errors, naming the file and the JSON path of each', { timeout: 10_000 }, async () => {
    const file = dir.file('bad-rules.json');
    await writeFile(
      file,
      JSON.stringify({
        agents: { ops: { allow: { servers: 'web', tools: { db: ['echo', 7] } } } },
        defaults: { deny_on_missing_agent: 'yes' },
      }),
    );
    const r = await cli(['check', '--config', config, '--rules', file]);
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.equal(
      r.err,
      [
        `error: ${file}: $.defaults.deny_on_missing_agent: expected true or false, got a string`,
        `error: ${file}: $.agents.ops.allow.servers: expected an array of server names or patterns, got a string`,
        `error: ${file}: $.agents.ops.allow.tools.db[1]: expected a tool name or pattern (a non-empty string), got 7`,
        '',
      ].join('\n'),
    );
  });

  it('exits 2 on a file that is not JSON, naming line and column', { timeout: 10_000 }, async () => {
    const file = dir.file('broken.json');
    await writeFile(file, '{\n  "agents": {\n    "ops": { "allow": }\n  }\n}\n');
    const r = await cli(['check', '--config', config, '--rules', file]);
    assert.equal(r.code, 2);
    assert.match(r.err, new RegExp(`^error: ${escape(file)}: \\$: invalid JSON at line 3, column \\d+: .+\\n$`));
  });

  it('exits 0 with a warning naming agent and server when a rule names a server .mcp.json lacks', { timeout: 10_000 }, async () => {
    const file = dir.file('gateway-rules.json');
    await writeFile(
      file,
      JSON.stringify({ agents: { backend: { allow: { servers: ['postgres', 'db'], tools: { postgres: ['query'] } } } } }),
    );
    const r = await cli(['check', '--config', config, '--rules', file]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.err,
      [
        `warning: ${file}: $.agents.backend.allow.servers[0]: agent "backend" names server "postgres", which .mcp.json does not define`,
        `warning: ${file}: $.agents.backend.allow.tools.postgres: agent "backend" names server "postgres", which .mcp.json does not define`,
        '',
      ].join('\n'),
    );
    // Then one line per stdio server naming the variables it will get (test/cli covers those lines).
    assert.ok(r.out.startsWith(`${config}: OK, 2 server(s): web, db\n${file}: OK, 1 agent(s), 2 warning(s)\n  web: environment`), r.out);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
