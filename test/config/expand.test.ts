// Unit tests for `${VAR}` expansion (src/config/expand.ts): the shell-like rules, and errors that
// name the variable, the server and the JSON path (as the `.mcp.json` loader reports them).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tryExpand } from '../../src/config/expand.js';
import { parseServersConfig } from '../../src/config/load.js';
import { GatewayError } from '../../src/errors.js';

const env = { HOME: '/home/u', EMPTY: '', TOKEN: 's3cr3t' };
const where = { file: '/cfg/.mcp.json', path: '$.mcpServers.remote.headers.Authorization', server: 'remote' };
/** A one-server `.mcp.json` whose Authorization header is `value`, loaded with `env`. */
const load = (value: string) =>
  parseServersConfig(
    JSON.stringify({ mcpServers: { remote: { type: 'http', url: 'https://x.test/mcp', headers: { Authorization: value } } } }),
    where.file,
    env,
  );

void describe('tryExpand', () => {
  void it('replaces ${NAME} anywhere in the value, several times', { timeout: 5000 }, () => {
    assert.deepEqual(tryExpand('${HOME}/x:${HOME}', env), { ok: true, value: '/home/u/x:/home/u' });
    assert.deepEqual(tryExpand('Bearer ${TOKEN}', env), { ok: true, value: 'Bearer s3cr3t' });
  });

  void it('keeps a set-but-empty variable as ""', { timeout: 5000 }, () => {
    assert.deepEqual(tryExpand('a${EMPTY}b', env), { ok: true, value: 'ab' });
  });

  void it('uses the default of ${NAME:-default} when unset or empty, not when set', { timeout: 5000 }, () => {
    assert.deepEqual(tryExpand('${NOPE:-fallback}', env), { ok: true, value: 'fallback' });
    assert.deepEqual(tryExpand('${EMPTY:-fallback}', env), { ok: true, value: 'fallback' });
    assert.deepEqual(tryExpand('${HOME:-fallback}', env), { ok: true, value: '/home/u' });
    assert.deepEqual(tryExpand('${NOPE:-}', env), { ok: true, value: '' });
    assert.deepEqual(tryExpand('${NOPE:-a:-b $x}', env), { ok: true, value: 'a:-b $x' });
  });

  void it('leaves $ and $$ alone: only ${ is special', { timeout: 5000 }, () => {
    assert.deepEqual(tryExpand('$HOME $$ a$ ^x$', env), { ok: true, value: '$HOME $$ a$ ^x$' });
    assert.deepEqual(tryExpand('$${HOME}', env), { ok: true, value: '$/home/u' });
  });

  void it('reports an unset variable by name', { timeout: 5000 }, () => {
    assert.deepEqual(tryExpand('x ${MISSING} y', env), { ok: false, reason: 'environment variable MISSING is not set' });
  });

  void it('rejects an unclosed ${, a bad name and a nested default', { timeout: 5000 }, () => {
    assert.deepEqual(tryExpand('abc${HOME', env), { ok: false, reason: 'unclosed "${" at character 4: expected "}"' });
    for (const bad of ['${}', '${1X}', '${A-B}', '${A:default}', '${ HOME }']) {
      const result = tryExpand(bad, env);
      assert.equal(result.ok, false, bad);
      assert.match(!result.ok ? result.reason : '', /^invalid reference "\$\{.*\}": expected \$\{NAME\} or \$\{NAME:-default\}/, bad);
    }
    const nested = tryExpand('${A:-${B}}', env);
    assert.deepEqual(nested, { ok: false, reason: 'nested reference in the default of ${A:-…} is not supported' });
  });
});

void describe('expansion in the loader', () => {
  void it('returns the expanded value', { timeout: 5000 }, () => {
    const [server] = load('Bearer ${TOKEN}').servers;
    assert.ok(server?.type === 'http');
    assert.equal(server.headers.Authorization, 'Bearer s3cr3t');
  });

  void it('throws MCPG_CONFIG_INVALID naming the file, the path, the variable and the server', { timeout: 5000 }, () => {
    assert.throws(
      () => load('Bearer ${MISSING_TOKEN}'),
      (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.equal(err.code, 'MCPG_CONFIG_INVALID');
        assert.ok(
          err.message.includes(
            '$.mcpServers.remote.headers.Authorization: environment variable MISSING_TOKEN is not set (server "remote")',
          ),
          err.message,
        );
        assert.ok(err.message.includes('/cfg/.mcp.json'), err.message);
        assert.deepEqual(err.detail?.issues, [
          { file: '/cfg/.mcp.json', path: where.path, message: 'environment variable MISSING_TOKEN is not set (server "remote")' },
        ]);
        return true;
      },
    );
  });
});
