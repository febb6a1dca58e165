// A stateful stdio server of both eras (test/fixtures/python-stateful-server.py, written the usual
// way with the Python SDK) runs as one process behind a plain entry: agents of both eras, on one
// HTTP front at once, see one state — a value one stores the other reads, a tool one adds is listed
// to both — as they would if the server were theirs alone. `"era": "both"` is the opt-in that speaks
// to it in each era on a process of its own (the state is then split, which the last test shows).

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, type HttpGateway } from '../helpers/http.js';
import { NO_PYTHON_MCP, pythonWithMcp } from '../helpers/python.js';

const python = pythonWithMcp();
const SERVER = join(ROOT, 'test', 'fixtures', 'python-stateful-server.py');
const TIMEOUT = 120_000;

async function connectModern(url: string): Promise<Client> {
  const client = new Client(
    { name: 'mcpgate-modern-test', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> =>
  textOf(await client.callTool({ name, arguments: args }));

const toolNames = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);

async function pidsStarted(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
}

/** A gateway on HTTP over the stateful server (its entry's `extra` fields added), with an agent of each era. */
interface Rig {
  dir: TempDir;
  gate: HttpGateway;
  legacy: Client;
  modern: Client;
}

async function openRig(extra: Record<string, unknown>): Promise<Rig> {
  const dir = await tempDir();
  const config = await writeConfig(dir, { kv: { command: python, args: [SERVER, '--pids', dir.file('pids')], timeout: 30_000, ...extra } });
  const gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--startup-timeout', '30000'] });
  const { client: legacy } = await connectAgent(gate.url);
  return { dir, gate, legacy, modern: await connectModern(gate.url) };
}

async function closeRig(rig: Partial<Rig>): Promise<void> {
  await rig.legacy?.close().catch(() => undefined);
  await rig.modern?.close().catch(() => undefined);
  await rig.gate?.stop();
  await rig.dir?.remove();
}

describe('a stateful stdio server of both eras behind a plain entry', { timeout: TIMEOUT, skip: python === null && NO_PYTHON_MCP }, () => {
  let rig: Partial<Rig> = {};
  let dir: TempDir;
  let legacy: Client;
  let modern: Client;

  before(async () => {
    rig = await openRig({});
    ({ dir, legacy, modern } = rig as Rig);
  });

  after(() => closeRig(rig));

  it('runs as one process, and both eras reach it', async () => {
    assert.deepEqual(await pidsStarted(dir.file('pids')), [await call(legacy, 'kv__pid')]);
    assert.equal(await call(modern, 'kv__pid'), await call(legacy, 'kv__pid'));
  });

  it('a value a 2025-era agent stores, a 2026-07-28 agent reads, and back', async () => {
    assert.equal(await call(legacy, 'kv__put', { key: 'colour', value: 'teal' }), 'stored');
    assert.equal(await call(modern, 'kv__get', { key: 'colour' }), 'teal');
    assert.equal(await call(modern, 'kv__put', { key: 'shape', value: 'cube' }), 'stored');
    assert.equal(await call(legacy, 'kv__get', { key: 'shape' }), 'cube');
  });

  it('a tool added at run time through one era is listed to agents of both, and callable by both', async () => {
    assert.equal(await call(legacy, 'kv__add_tool', { name: 'late' }), 'added');
    assert.ok(await until(async () => (await toolNames(legacy)).includes('kv__late')), `${(await toolNames(legacy)).join(', ')}`);
    assert.ok(await until(async () => (await toolNames(modern)).includes('kv__late')), `${(await toolNames(modern)).join(', ')}`);
    assert.equal(await call(modern, 'kv__late'), 'added:late');
    assert.equal(await call(legacy, 'kv__late'), 'added:late');
    assert.deepEqual((await pidsStarted(dir.file('pids'))).length, 1, 'still one process');
  });
});

describe(
  '"era": "both" on a stateful stdio server: a process per era, each with its own state',
  { timeout: TIMEOUT, skip: python === null && NO_PYTHON_MCP },
  () => {
    let rig: Partial<Rig> = {};
    let dir: TempDir;
    let legacy: Client;
    let modern: Client;

    before(async () => {
      rig = await openRig({ era: 'both' });
      ({ dir, legacy, modern } = rig as Rig);
    });

    after(() => closeRig(rig));

    it('two processes answer, and what one era stores the other does not see', async () => {
      assert.ok(await until(async () => (await pidsStarted(dir.file('pids'))).length === 2));
      assert.notEqual(await call(modern, 'kv__pid'), await call(legacy, 'kv__pid'));
      await call(legacy, 'kv__put', { key: 'colour', value: 'teal' });
      assert.equal(await call(modern, 'kv__get', { key: 'colour' }), '(none)');
    });
  },
);
