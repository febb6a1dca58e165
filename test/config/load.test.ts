// Loading `.mcp.json` from disk (src/config/load.ts): real temp files for relative cwd, a missing
// file, a directory, JSON syntax errors with line and column, and the `check` output format.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatIssues, loadServersConfig } from '../../src/config/load.js';
import { failure } from '../helpers/config.js';

void describe('loadServersConfig', () => {
  let dir = '';
  const write = async (name: string, text: string): Promise<string> => {
    const file = path.join(dir, name);
    await writeFile(file, text);
    return file;
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-config-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('loads a file and resolves cwd against its directory, not the process cwd', { timeout: 5000 }, async () => {
    await mkdir(path.join(dir, 'proj'));
    const file = await write(
      'proj/.mcp.json',
      JSON.stringify({ mcpServers: { a: { command: 'node', cwd: 'sub' }, b: { command: 'node' } } }),
    );
    const config = await loadServersConfig(path.relative(process.cwd(), file), {});
    assert.equal(config.file, file);
    assert.deepEqual(
      config.servers.map((s) => (s.type === 'stdio' ? s.cwd : '')),
      [path.join(dir, 'proj', 'sub'), path.join(dir, 'proj')],
    );
  });

  void it('uses process.env by default', { timeout: 5000 }, async () => {
    const file = await write('env.mcp.json', '{"mcpServers":{"a":{"command":"${MCPGATE_TEST_CMD:-x}","args":["${PATH}"]}}}');
    const [server] = (await loadServersConfig(file)).servers;
    assert.ok(server?.type === 'stdio');
    assert.deepEqual(server.args, [process.env.PATH]);
  });

  void it('names the absolute path of a missing file', { timeout: 5000 }, async () => {
    const missing = path.join(dir, 'nope', '.mcp.json');
    const { message, issues } = await failure(() => loadServersConfig(missing, {}));
    assert.equal(message, `configuration file not found: ${missing}`);
    assert.deepEqual(issues, [{ file: missing, path: '$', message: 'file not found' }]);
  });

  void it('says when the path is a directory', { timeout: 5000 }, async () => {
    const { message } = await failure(() => loadServersConfig(dir, {}));
    assert.equal(message, `cannot read configuration file ${dir}: is a directory, not a file`);
  });

  void it('reports invalid JSON with the file, line and column (positioned V8 message)', { timeout: 5000 }, async () => {
    const file = await write('comma.json', '{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}\n');
    const { message, issues } = await failure(() => loadServersConfig(file, {}));
    assert.equal(
      message,
      `invalid configuration in ${file}: 1 error\n  $: invalid JSON at line 4, column 5: expected ',' or '}' after property value`,
    );
    assert.equal(issues.length, 1);
  });

  void it('reports invalid JSON with line and column when V8 gives no position, without echoing the file', { timeout: 5000 }, async () => {
    const file = await write(
      'token.json',
      '{\n  "mcpServers": {\n    "a": { "command": "x", "env": { "T": "secret" }, "args": [tru] }\n  }\n}',
    );
    const { message } = await failure(() => loadServersConfig(file, {}));
    assert.equal(message, `invalid configuration in ${file}: 1 error\n  $: invalid JSON at line 3, column 66: unexpected character "]"`);
    assert.ok(!message.includes('secret'));
  });

  void it('reports truncated and empty files, and tolerates a byte-order mark', { timeout: 5000 }, async () => {
    const truncated = await write('truncated.json', '{\n  "mcpServers": {\n    "a": ');
    assert.match(
      (await failure(() => loadServersConfig(truncated, {}))).message,
      /\n {2}\$: invalid JSON at line 3, column 10: unexpected end of JSON input$/,
    );
    const cut = await write('cut.json', '{\n  "mcpServers": {\n');
    assert.match(
      (await failure(() => loadServersConfig(cut, {}))).message,
      /\n {2}\$: invalid JSON at line 3, column 1: expected property name or '\}'$/,
    );
    const empty = await write('empty.json', '\n');
    assert.match(
      (await failure(() => loadServersConfig(empty, {}))).message,
      /\$: the file is empty; expected a JSON object with "mcpServers"$/,
    );
    const bom = await write('bom.json', '\uFEFF{"mcpServers":{"a":{"command":"x"}}}');
    assert.equal((await loadServersConfig(bom, {})).servers.length, 1);
  });

  void it('passes an abort through as an abort, not as an invalid config', { timeout: 5000 }, async () => {
    const file = await write('abort.json', '{"mcpServers":{}}');
    await assert.rejects(loadServersConfig(file, {}, { signal: AbortSignal.abort() }), { name: 'AbortError' });
  });

  void it('formats issues as <file>: <path>: <message> lines for `mcpgate check`', { timeout: 5000 }, async () => {
    const file = await write(
      'bad.json',
      JSON.stringify({ mcpServers: { remote: { type: 'http', url: 'https://x.test', headers: { Authorization: '${TOKEN}' } } } }),
    );
    const { issues } = await failure(() => loadServersConfig(file, {}));
    assert.deepEqual(formatIssues(issues), [
      `${file}: $.mcpServers.remote.headers.Authorization: environment variable TOKEN is not set (server "remote")`,
    ]);
  });
});
