// Pins: with the dynamic fixture server, a tool
// added by SIGHUP under tofu is held and refused with approval instructions; `mcpgate approve`
// releases it and the agent is told; a rewritten description (SIGUSR1) is held and never reaches the
// agent; approving an outdated definition fails; pins survive a restart; strict holds everything;
// concurrent approvals never corrupt the store; a corrupt store releases nothing; and text from a
// server reaches the agent with escape sequences and invisible characters removed.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  fixtureServer,
  jsonOf,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
  cli,
} from '../helpers/gateway.js';

interface Rig {
  dir: TempDir;
  gw: GatewayProcess;
  pid: number;
  changed: number;
}

async function rig(dir: TempDir, options: { mode?: string; toolCount?: number } = {}): Promise<Rig> {
  const args = ['--pidfile', dir.file('dyn.pid')];
  if (options.toolCount !== undefined) {
    await writeFile(dir.file('count'), `${options.toolCount}\n`);
    args.push('--toolcount-file', dir.file('count'));
  }
  const config = await writeConfig(dir, { dyn: fixtureServer('dynamic-server', args) });
  const gw = await startGateway({ config, args: ['--pins', options.mode ?? 'tofu', '--state', dir.file('state')] });
  const r: Rig = { dir, gw, pid: Number((await readFile(dir.file('dyn.pid'), 'utf8')).trim()), changed: 0 };
  gw.client.setNotificationHandler('notifications/tools/list_changed', () => void r.changed++);
  return r;
}

const names = async (gw: GatewayProcess): Promise<string[]> => (await gw.client.listTools()).tools.map((t) => t.name).sort();
const held = async (dir: TempDir): Promise<Record<string, { digest: string; changes: string[] }>> =>
  (
    JSON.parse(await readFile(dir.file('state/held.json'), 'utf8').catch(() => '{"servers":{}}')) as {
      servers: Record<string, { tools: Record<string, { digest: string; changes: string[] }> }>;
    }
  ).servers.dyn?.tools ?? {};

describe('pins: tofu holds what changes after first use', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let r: Rig;

  before(async () => {
    dir = await tempDir();
    r = await rig(dir);
  });

  after(async () => {
    await r?.gw.stop();
    await dir?.remove();
  });

  it('pins the first definitions seen: echo is visible and works', { timeout: 10_000 }, async () => {
    assert.deepEqual(await names(r.gw), ['dyn__echo']);
    assert.deepEqual(jsonOf(await r.gw.client.callTool({ name: 'dyn__echo', arguments: { message: 'hi' } })), { echo_message: 'hi' });
    const pins = JSON.parse(await readFile(dir.file('state/pins.json'), 'utf8')) as {
      servers: { dyn: { tools: Record<string, { by: string }> } };
    };
    assert.equal(pins.servers.dyn.tools.echo?.by, 'first-use');
  });

  it('holds a tool added by SIGHUP and refuses calls to it with the command that approves it', { timeout: 15_000 }, async () => {
    process.kill(r.pid, 'SIGHUP');
    // held.json is written just before the catalog takes the change: wait for what the agent sees.
    assert.ok(
      await until(
        async () =>
          'calculator' in (await held(dir)) &&
          (await rpcError(r.gw.client.callTool({ name: 'dyn__calculator', arguments: {} }))).data.code === 'MCPG_TOOL_HELD',
      ),
      'calculator never held',
    );
    assert.deepEqual(await names(r.gw), ['dyn__echo']);
    const err = await rpcError(r.gw.client.callTool({ name: 'dyn__calculator', arguments: { a: 1, b: 2, operation: 'add' } }));
    assert.equal(err.code, -31017);
    assert.equal(err.data.code, 'MCPG_TOOL_HELD');
    assert.deepEqual(err.data.changes, ['new tool']);
    assert.equal(err.data.approve, `mcpgate approve dyn calculator --state ${dir.file('state')}`);
    assert.match(err.message, /new tool that has not been approved/);
  });

  it('mcpgate approve releases it; the agent is told and can call it', { timeout: 15_000 }, async () => {
    const before_ = r.changed;
    const approved = await cli(['approve', 'dyn', 'calculator', '--state', dir.file('state')]);
    assert.equal(approved.code, 0, approved.err);
    assert.match(approved.out, /approved calculator of server "dyn"/);
    assert.ok(await until(() => r.changed > before_), 'no list_changed after approval');
    assert.deepEqual(await names(r.gw), ['dyn__calculator', 'dyn__echo']);
    assert.deepEqual(jsonOf(await r.gw.client.callTool({ name: 'dyn__calculator', arguments: { a: 2, b: 3, operation: 'multiply' } })), {
      result: 6,
    });
  });

  it('holds a rewritten description (a rug pull): the new text never reaches the agent', { timeout: 15_000 }, async () => {
    process.kill(r.pid, 'SIGUSR1');
    assert.ok(
      await until(async () => (await held(dir)).echo !== undefined && !(await names(r.gw)).includes('dyn__echo')),
      'echo never held',
    );
    const { tools } = await r.gw.client.listTools();
    assert.ok(!tools.some((t) => t.name === 'dyn__echo'));
    assert.ok(!JSON.stringify(tools).includes('revised'));
    const err = await rpcError(r.gw.client.callTool({ name: 'dyn__echo', arguments: { message: 'x' } }));
    assert.equal(err.data.code, 'MCPG_TOOL_HELD');
    assert.deepEqual(err.data.changes, ['description']);
    assert.deepEqual(jsonOf(await r.gw.client.callTool({ name: 'dyn__calculator', arguments: { a: 1, b: 1, operation: 'add' } })), {
      result: 2,
    });
    const shown = await cli(['pins', 'dyn', '--state', dir.file('state')]);
    assert.equal(shown.code, 0);
    assert.match(shown.out, /echo: description/);
    assert.match(shown.out, /\+.*\(revised 1\)/);
  });

  it('refuses to approve a definition that changed again since it was shown', { timeout: 15_000 }, async () => {
    const shownDigest = (await held(dir)).echo!.digest;
    process.kill(r.pid, 'SIGUSR1');
    assert.ok(await until(async () => (await held(dir)).echo?.digest !== shownDigest), 'the second change was not seen');
    const outdated = await cli(['approve', 'dyn', `echo@${shownDigest}`, '--state', dir.file('state')]);
    assert.equal(outdated.code, 1);
    assert.match(outdated.err, /changed again since it was shown/);
    assert.ok(!(await names(r.gw)).includes('dyn__echo'));
    const current = (await held(dir)).echo!.digest;
    assert.equal((await cli(['approve', 'dyn', `echo@${current}`, '--state', dir.file('state')])).code, 0);
    assert.ok(await until(async () => (await names(r.gw)).includes('dyn__echo')));
    const echo = (await r.gw.client.listTools()).tools.find((t) => t.name === 'dyn__echo');
    assert.match(echo?.description ?? '', /\(revised 2\)/);
  });
});

describe('pins: the store survives restarts, strict mode, concurrency and corruption', { timeout: 90_000 }, () => {
  let dir: TempDir;

  before(async () => {
    dir = await tempDir();
  });

  after(async () => {
    await dir?.remove();
  });

  it('keeps pins across a gateway restart: a tool that appears later is still held', { timeout: 30_000 }, async () => {
    let r = await rig(dir, { toolCount: 1 });
    assert.deepEqual(await names(r.gw), ['dyn__echo']);
    await r.gw.stop();
    r = await rig(dir, { toolCount: 2 });
    try {
      assert.deepEqual(await names(r.gw), ['dyn__echo']);
      assert.equal((await rpcError(r.gw.client.callTool({ name: 'dyn__calculator', arguments: {} }))).data.code, 'MCPG_TOOL_HELD');
    } finally {
      await r.gw.stop();
    }
  });

  it(
    'approves with no gateway running: what the stopped gateway held stays in held.json, and the next one serves the tool',
    { timeout: 45_000 },
    async () => {
      const offline = await tempDir();
      try {
        let r = await rig(offline, { toolCount: 1 });
        assert.deepEqual(await names(r.gw), ['dyn__echo']);
        await r.gw.stop();
        r = await rig(offline, { toolCount: 2 });
        assert.ok(await until(async () => 'calculator' in (await held(offline))), 'calculator never held');
        assert.deepEqual(await names(r.gw), ['dyn__echo']);
        await r.gw.stop();
        // No gateway runs now: the held definition is still on disk, and approve pins it.
        assert.ok('calculator' in (await held(offline)), 'the stopped gateway emptied held.json');
        const shown = await cli(['pins', 'dyn', '--state', offline.file('state')]);
        assert.match(shown.out, /calculator: new tool/);
        const approved = await cli(['approve', 'dyn', 'calculator', '--state', offline.file('state')]);
        assert.equal(approved.code, 0, approved.err);
        assert.match(approved.out, /approved calculator of server "dyn"/);
        r = await rig(offline, { toolCount: 2 });
        try {
          assert.deepEqual(await names(r.gw), ['dyn__calculator', 'dyn__echo']);
          assert.deepEqual(jsonOf(await r.gw.client.callTool({ name: 'dyn__calculator', arguments: { a: 2, b: 3, operation: 'add' } })), {
            result: 5,
          });
          assert.ok(await until(async () => !('calculator' in (await held(offline)))), 'held.json still lists the approved tool');
        } finally {
          await r.gw.stop();
        }
      } finally {
        await offline.remove();
      }
    },
  );

  it('strict holds everything; concurrent approvals all land in a valid store', { timeout: 30_000 }, async () => {
    const strictDir = await tempDir();
    const r = await rig(strictDir, { mode: 'strict', toolCount: 4 });
    try {
      assert.deepEqual(await names(r.gw), []);
      const all = ['echo', 'calculator', 'counter', 'echo4'];
      assert.ok(await until(async () => Object.keys(await held(strictDir)).length === 4));
      const results = await Promise.all(all.map((tool) => cli(['approve', 'dyn', tool, '--state', strictDir.file('state')])));
      for (const result of results) assert.equal(result.code, 0, result.err);
      const pins = JSON.parse(await readFile(strictDir.file('state/pins.json'), 'utf8')) as {
        servers: { dyn: { tools: Record<string, unknown> } };
      };
      assert.deepEqual(Object.keys(pins.servers.dyn.tools).sort(), [...all].sort());
      assert.ok(await until(async () => (await names(r.gw)).length === 4), 'not every approval was picked up');
    } finally {
      await r.gw.stop();
      await strictDir.remove();
    }
  });

  it('a corrupt store is reported and releases nothing', { timeout: 30_000 }, async () => {
    const badDir = await tempDir();
    const state = badDir.file('state');
    await mkdir(state);
    await writeFile(`${state}/pins.json`, '{"version":1,"servers":');
    const r = await rig(badDir);
    try {
      assert.deepEqual(await names(r.gw), []);
      await r.gw.waitForLog((l) => l.level === 'error' && typeof l.msg === 'string' && l.msg.includes('pin store unusable'));
      const shown = await cli(['pins', '--state', state]);
      assert.equal(shown.code, 2);
      assert.match(shown.err, /not valid JSON/);
    } finally {
      await r.gw.stop();
      await badDir.remove();
    }
  });
});

describe('pins: server instructions', { timeout: 60_000 }, () => {
  let dir: TempDir;

  before(async () => {
    dir = await tempDir();
  });

  after(async () => {
    await dir?.remove();
  });

  const start = async (instructions: string): Promise<GatewayProcess> =>
    startGateway({
      config: await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server', ['--instructions', instructions]) }),
      args: ['--state', dir.file('state')],
    });

  it('holds changed instructions until approved, then passes them on', { timeout: 45_000 }, async () => {
    let gw = await start('Use sink__echo for echoes.');
    assert.match(gw.client.getInstructions() ?? '', /Use sink__echo for echoes\./);
    await gw.stop();

    gw = await start('Always call sink__fail first.');
    try {
      const seen = gw.client.getInstructions() ?? '';
      assert.ok(!seen.includes('Always call sink__fail first.'), seen);
      assert.match(await readFile(dir.file('state/held.json'), 'utf8'), /Always call sink__fail first\./);
      assert.equal(textOf(await gw.client.callTool({ name: 'sink__echo', arguments: { text: 'tools still work' } })), 'tools still work');
      const approved = await cli(['approve', 'sink', '--instructions', '--state', dir.file('state')]);
      assert.equal(approved.code, 0, approved.err);
    } finally {
      await gw.stop();
    }

    gw = await start('Always call sink__fail first.');
    try {
      assert.match(gw.client.getInstructions() ?? '', /Always call sink__fail first\./);
    } finally {
      await gw.stop();
    }
  });
});

describe('sanitizing: what a server hides from a terminal never reaches the agent', { timeout: 30_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  // Escape sequences, C0/C1 controls, zero-width/bidi and Unicode tag characters.
  const HIDDEN =
    // eslint-disable-next-line no-control-regex -- the point is to find control characters
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|\udb40[\udc00-\udc7f]/;

  before(async () => {
    dir = await tempDir();
    gw = await startGateway({
      config: await writeConfig(dir, { evil: fixtureServer('kitchen-sink-server', ['--evil']) }),
      args: ['--state', dir.file('state')],
    });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('cleans tool descriptions and text results', { timeout: 10_000 }, async () => {
    const ansi = (await gw.client.listTools()).tools.find((t) => t.name === 'evil__ansi');
    assert.ok(ansi !== undefined);
    assert.equal(ansi.description, 'Prints red text here');
    assert.doesNotMatch(ansi.description ?? '', HIDDEN);
    const result = textOf(await gw.client.callTool({ name: 'evil__ansi', arguments: {} }));
    assert.equal(result, 'alert done');
  });

  it('shows the operator what was hidden, visibly (strict mode holds it for review)', { timeout: 20_000 }, async () => {
    const strictDir = await tempDir();
    const strict = await startGateway({
      config: await writeConfig(strictDir, { evil: fixtureServer('kitchen-sink-server', ['--evil']) }),
      args: ['--pins', 'strict', '--state', strictDir.file('state')],
    });
    try {
      assert.ok(await until(async () => (await readFile(strictDir.file('state/held.json'), 'utf8').catch(() => '')).includes('"ansi"')));
      const shown = await cli(['pins', 'evil', '--state', strictDir.file('state')]);
      assert.equal(shown.code, 0, shown.err);
      assert.match(shown.out, /ansi: new tool/);
      assert.ok(shown.out.includes('\\x1b[31m'), shown.out);
      assert.ok(shown.out.includes('\\u{e0069}'), shown.out);
      assert.doesNotMatch(shown.out, HIDDEN);
    } finally {
      await strict.stop();
      await strictDir.remove();
    }
  });
});
