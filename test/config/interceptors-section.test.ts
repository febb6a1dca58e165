// `.mcp.json`'s `interceptors` section: interceptor servers, each entry read as a server's (stdio or
// remote, `${VAR}` expanded), kept apart from `mcpServers`; a mistake is an error with its JSON path.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseServersConfig } from '../../src/config/load.js';
import { byPath, failure } from '../helpers/config.js';

const FILE = '/srv/project/.mcp.json';
const parse = (value: unknown, env: NodeJS.ProcessEnv = {}) => parseServersConfig(JSON.stringify(value), FILE, env);

void describe('parseServersConfig: the interceptors section', () => {
  void it('reads interceptor servers like servers, apart from them', { timeout: 5000 }, () => {
    const config = parse(
      {
        mcpServers: { files: { command: 'npx', args: ['server-filesystem'] } },
        interceptors: { secrets: { command: 'node', args: ['${DIR}/secrets.js'] }, policy: { url: 'https://policy.test/mcp' } },
      },
      { DIR: '/opt/i' },
    );
    assert.deepEqual(config.warnings, []);
    assert.deepEqual(
      config.servers.map((s) => s.name),
      ['files'],
    );
    assert.deepEqual(
      config.interceptors?.map((s) => [s.name, s.type]),
      [
        ['secrets', 'stdio'],
        ['policy', 'http'],
      ],
    );
    const secrets = config.interceptors[0]!;
    assert.ok(secrets.type === 'stdio' && secrets.args[0] === '/opt/i/secrets.js');
  });

  void it('has no interceptors without the section', { timeout: 5000 }, () => {
    assert.equal(parse({ mcpServers: {} }).interceptors, undefined);
  });

  void it('names a mistake by its JSON path', { timeout: 5000 }, async () => {
    const f = await failure(() => parse({ mcpServers: {}, interceptors: { bad: { command: 3 }, none: {} } }));
    const issues = byPath(f.issues);
    assert.ok(issues['$.interceptors.bad.command'], JSON.stringify(issues));
    assert.ok(issues['$.interceptors.none'], JSON.stringify(issues));
    const list = await failure(() => parse({ mcpServers: {}, interceptors: [] }));
    assert.ok(byPath(list.issues)['$.interceptors']);
  });
});
