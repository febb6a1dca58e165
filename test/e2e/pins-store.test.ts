// The pin store (src/pins/store.ts): absent files are empty stores, corrupt ones are errors (never
// "no pins"), writes are atomic and readable, and read-modify-write of pins.json under the lock file
// loses nothing when many writers — in this process or in other processes, as a running gateway and
// `mcpgate approve` are — update it at once. A stale lock is taken over; a fresh one is waited for.
// The digests index (pin-digests.json) is read only while it is of the pins.json on disk.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../../src/errors.js';
import { definitionOf, toolDigest } from '../../src/pins/digest.js';
import { PinStore, digestsOf, emptyHeld, type HeldFile, type PinsFile } from '../../src/pins/store.js';

/** The store's name tables have no prototype (names are keys, never Object's members): compare contents. */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const AT = '2025-01-01T00:00:00.000Z';
/** A store with no pins, as a state directory without pins.json reads. */
const NO_PINS: PinsFile = { version: 1, servers: {} };
const LOCK = 'pins.json.lock';

let root = '';
let n = 0;
/** A fresh, empty state directory for one test. */
async function freshDir(): Promise<string> {
  const dir = join(root, `s${++n}`);
  await mkdir(dir);
  return dir;
}

/** The text of pins.json as a store holding `pins` writes it. */
async function layout(pins: PinsFile): Promise<string> {
  const store = new PinStore(await freshDir());
  await store.updatePins((read) => {
    read.version = pins.version;
    read.servers = pins.servers;
    return true;
  });
  return readFile(store.pinsPath, 'utf8');
}

/** Adds a first-use pin for tool `name` of `server` (read-modify-write, as the keeper does). */
function addTool(store: PinStore, server: string, name: string): Promise<PinsFile> {
  const tool = { name, description: `the ${name} tool` };
  return store
    .updatePins((pins) => {
      const record = (pins.servers[server] ??= { tools: {} });
      record.tools[name] = { digest: toolDigest(tool), definition: definitionOf(tool), approvedAt: AT, by: 'first-use' };
      return true;
    })
    .then(({ pins }) => pins);
}

/** Asserts that `promise` rejects with MCPG_PIN_STORE_INVALID and a message matching each pattern. */
async function rejectsInvalid(promise: Promise<unknown>, ...patterns: (string | RegExp)[]): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof GatewayError, String(err));
    assert.equal(err.code, 'MCPG_PIN_STORE_INVALID');
    for (const pattern of patterns) {
      if (typeof pattern === 'string') assert.ok(err.message.includes(pattern), `${JSON.stringify(err.message)} should name ${pattern}`);
      else assert.match(err.message, pattern);
    }
    return true;
  });
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcpgate-pin-store-'));
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

void describe('PinStore reads and writes', { timeout: 10_000 }, () => {
  void it('reads absent files as empty stores', { timeout: 5000 }, async () => {
    const store = new PinStore(join(root, 'never-created'));
    assert.deepEqual(plain(await store.readPins()), plain({ version: 1, servers: {} }));
    assert.deepEqual(plain(await store.readHeld()), plain({ version: 1, updatedAt: '1970-01-01T00:00:00.000Z', servers: {} }));
    assert.equal(await store.pinsVersion(), 'absent');
  });

  void it('round-trips updatePins, and a second store instance reads the same', { timeout: 5000 }, async () => {
    const dir = await freshDir();
    const store = new PinStore(dir);
    const returned = await addTool(store, 'fs', 'read');
    const expected: PinsFile = {
      version: 1,
      servers: {
        fs: {
          tools: {
            read: {
              digest: toolDigest({ name: 'read', description: 'the read tool' }),
              definition: { name: 'read', description: 'the read tool' },
              approvedAt: AT,
              by: 'first-use',
            },
          },
        },
      },
    };
    assert.deepEqual(plain(returned), plain(expected));
    assert.deepEqual(plain(await store.readPins()), plain(expected));
    assert.deepEqual(plain(await new PinStore(dir).readPins()), plain(expected));
    const { pins: withInstructions } = await store.updatePins((pins) => {
      pins.servers.fs!.instructions = { digest: 'sha256:00', text: 'Be careful.', approvedAt: AT, by: 'operator' };
      return true;
    });
    assert.equal(withInstructions.servers.fs?.instructions?.text, 'Be careful.');
    assert.deepEqual(plain(await store.readPins()), plain(withInstructions));
  });

  void it('keeps unknown definition members through a round trip', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    const definition = {
      name: 'x',
      inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
      annotations: { readOnlyHint: true },
    };
    await store.updatePins((pins) => {
      pins.servers.s = { tools: { x: { digest: toolDigest(definition), definition, approvedAt: AT, by: 'operator' } } };
      return true;
    });
    assert.deepEqual((await store.readPins()).servers.s?.tools.x?.definition, definition);
  });

  void it('writes nothing when the change returns false', { timeout: 5000 }, async () => {
    const dir = await freshDir();
    const store = new PinStore(dir);
    const { pins: seen } = await store.updatePins((pins) => {
      pins.servers.ignored = { tools: {} };
      return false;
    });
    assert.deepEqual(plain(seen.servers), plain({ ignored: { tools: {} } }));
    assert.deepEqual(await readdir(dir), []);
    assert.deepEqual(plain(await store.readPins()), plain(NO_PINS));
  });

  void it(
    'writes indented JSON ending in a newline, each definition on one line, leaves no temp files and releases the lock',
    { timeout: 5000 },
    async () => {
      const dir = await freshDir();
      const store = new PinStore(dir);
      const pins = await addTool(store, 'fs', 'read');
      await addTool(store, 'fs', 'write');
      const text = await readFile(store.pinsPath, 'utf8');
      const parsed = JSON.parse(text) as PinsFile;
      assert.equal(await layout(parsed), text);
      assert.ok(text.endsWith('}\n'));
      assert.ok(text.includes('\n          "definition": {"description":"the read tool","name":"read"}\n'), text);
      assert.ok(text.includes('\n          "by": "first-use",\n'), text);
      assert.deepEqual(Object.keys(parsed.servers.fs?.tools ?? {}), ['read', 'write']);
      assert.deepEqual(plain(parsed.servers.fs?.tools.read), plain(pins.servers.fs?.tools.read));
      const held: HeldFile = {
        ...emptyHeld(),
        updatedAt: AT,
        servers: { fs: { tools: { x: { digest: 'sha256:1', definition: { name: 'x' }, changes: ['new tool'], since: AT } } } },
      };
      await store.writeHeld(held);
      const heldText = await readFile(store.heldPath, 'utf8');
      assert.equal(heldText, JSON.stringify(held, null, 2) + '\n');
      assert.deepEqual(plain(await store.readHeld()), plain(held));
      assert.deepEqual((await readdir(dir)).sort(), ['held.json', 'pin-digests.json', 'pins.json']);
    },
  );

  void it('lays out any store as JSON that reads back the same', { timeout: 5000 }, async () => {
    const pin = (name: string): PinsFile['servers'][string]['tools'][string] => ({
      digest: toolDigest({ name }),
      definition: { name, inputSchema: { type: 'object', properties: { 'a "b"\n': { type: 'string', enum: ['x', '\u202e'] } } } },
      approvedAt: AT,
      by: 'operator',
    });
    const instructions = { digest: 'sha256:00', text: 'line one\nline "two"', approvedAt: AT, by: 'first-use' as const };
    const stores: PinsFile[] = [
      NO_PINS,
      { version: 1, servers: { empty: { tools: {} } } },
      { version: 1, servers: { only: { tools: {}, instructions } } },
      { version: 1, servers: { a: { tools: { x: pin('x'), 'y"z': pin('y"z') }, instructions }, 'b\u2028': { tools: { w: pin('w') } } } },
    ];
    for (const store of stores) assert.deepEqual(JSON.parse(await layout(store)), plain(store));
  });

  void it('creates the state directory on the first write', { timeout: 5000 }, async () => {
    const dir = join(await freshDir(), 'a', 'b');
    const store = new PinStore(dir);
    await store.writeHeld(emptyHeld());
    await addTool(store, 's', 't');
    assert.deepEqual((await readdir(dir)).sort(), ['held.json', 'pin-digests.json', 'pins.json']);
  });

  void it('pinsVersion changes with each write', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    await addTool(store, 's', 'a');
    const first = await store.pinsVersion();
    assert.notEqual(first, 'absent');
    await addTool(store, 's', 'b');
    assert.notEqual(await store.pinsVersion(), first);
  });
});

void describe('PinStore with corrupt files', { timeout: 10_000 }, () => {
  const cases: [string, string, RegExp][] = [
    ['not JSON', '{"version":1,"servers":', /is not valid JSON/],
    ['an empty file', '', /is not valid JSON/],
    ['a JSON array', '[]', /is not a valid pin store/],
    ['a wrong version', '{"version":2,"servers":{}}', /is not a valid pin store: version:/],
    [
      'a pin without a sha256 digest',
      JSON.stringify({
        version: 1,
        servers: { s: { tools: { t: { digest: 'md5:1', definition: { name: 't' }, approvedAt: AT, by: 'first-use' } } } },
      }),
      /is not a valid pin store: servers\.s\.tools\.t\.digest:/,
    ],
    [
      'a pin by an unknown approver',
      JSON.stringify({
        version: 1,
        servers: { s: { tools: { t: { digest: 'sha256:1', definition: { name: 't' }, approvedAt: AT, by: 'someone' } } } },
      }),
      /servers\.s\.tools\.t\.by:/,
    ],
  ];
  for (const [what, content, pattern] of cases) {
    void it(`rejects pins.json holding ${what} with MCPG_PIN_STORE_INVALID naming the file`, { timeout: 5000 }, async () => {
      const store = new PinStore(await freshDir());
      await writeFile(store.pinsPath, content);
      await rejectsInvalid(store.readPins(), store.pinsPath, pattern, /nothing is released/);
      // updatePins never writes over a corrupt store (it would lose the operator's pins).
      let called = false;
      await rejectsInvalid(
        store.updatePins(() => (called = true)),
        store.pinsPath,
      );
      assert.equal(called, false);
      assert.equal(await readFile(store.pinsPath, 'utf8'), content);
      // A gateway's read of the digests is as strict.
      assert.throws(() => store.readDigestsNow(), { code: 'MCPG_PIN_STORE_INVALID', message: pattern });
      await rejectsInvalid(store.readDigests(), store.pinsPath, pattern);
      await assert.rejects(stat(join(store.dir, LOCK)), { code: 'ENOENT' });
    });
  }

  void it('rejects a corrupt held.json naming the file', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    await writeFile(store.heldPath, 'nope');
    await rejectsInvalid(store.readHeld(), store.heldPath, /is not valid JSON/);
    await writeFile(store.heldPath, JSON.stringify({ version: 1, servers: {} }));
    await rejectsInvalid(store.readHeld(), store.heldPath, /is not a valid pin store: updatedAt:/);
  });

  void it('reports a pins.json that cannot be read (a directory) as MCPG_PIN_STORE_INVALID', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    await mkdir(store.pinsPath);
    await rejectsInvalid(store.readPins(), `cannot read ${store.pinsPath}`);
    assert.throws(() => store.readDigestsNow(), { code: 'MCPG_PIN_STORE_INVALID', message: new RegExp(`cannot read ${store.pinsPath}`) });
    await rejectsInvalid(store.readDigests(), `cannot read ${store.pinsPath}`);
  });
});

void describe('PinStore digests index', { timeout: 10_000 }, () => {
  /** Edits pins.json as a writer that knows nothing of the index would: a new file renamed over it. */
  async function replaceByHand(store: PinStore, edit: (text: string) => string): Promise<void> {
    await writeFile(`${store.pinsPath}.hand`, edit(await readFile(store.pinsPath, 'utf8')));
    await rename(`${store.pinsPath}.hand`, store.pinsPath);
  }

  void it('is written with pins.json, small, and read instead of it while it is of that file', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    await addTool(store, 'fs', 'read');
    const pins = await addTool(store, 'fs', 'write');
    for (const read of [store.readDigestsNow(), await store.readDigests(), new PinStore(store.dir).readDigestsNow()]) {
      assert.equal(read.indexed, true);
      assert.equal(read.version, await store.pinsVersion());
      assert.deepEqual(plain(read.digests), plain(digestsOf(pins)));
    }
    const index = JSON.parse(await readFile(store.digestsPath, 'utf8')) as { of: string; servers: unknown };
    assert.equal(index.of, await store.pinsVersion());
    assert.equal(JSON.stringify(index).includes('the read tool'), false, 'the index holds no definition');
  });

  void it('is not used once another writer replaced pins.json, even with a file of the same size', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    const pins = await addTool(store, 'fs', 'read');
    const before = (await stat(store.pinsPath)).size;
    // The operator's pin of another definition: a digest of the same length, so the file's size is the same.
    const other = toolDigest({ name: 'read', description: 'the read tool, changed' });
    const old = pins.servers.fs!.tools.read!.digest;
    await replaceByHand(store, (text) => text.replace(JSON.stringify(old), JSON.stringify(other)));
    assert.equal((await stat(store.pinsPath)).size, before);
    for (const read of [store.readDigestsNow(), await store.readDigests()]) {
      assert.equal(read.indexed, false);
      assert.equal(read.digests.servers.fs?.tools.read?.digest, other);
    }
    // Written afresh for this file, it is used again.
    const read = store.readDigestsNow();
    await store.writeDigests(read.digests, read.version);
    assert.equal(store.readDigestsNow().indexed, true);
    assert.equal(store.readDigestsNow().digests.servers.fs?.tools.read?.digest, other);
  });

  void it('is ignored, never an error, when it does not parse or check', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    const pins = await addTool(store, 'fs', 'read');
    const version = await store.pinsVersion();
    for (const content of [
      'nope',
      '[]',
      JSON.stringify({
        version: 1,
        of: version,
        servers: { fs: { tools: { read: { digest: 'md5:1', approvedAt: AT, by: 'first-use' } } } },
      }),
      JSON.stringify({ version: 2, of: version, servers: {} }),
      JSON.stringify({
        version: 1,
        of: version,
        servers: { fs: { tools: { read: { digest: 'sha256:1', approvedAt: AT, by: 'someone' } } } },
      }),
      JSON.stringify({ version: 1, of: version, servers: { fs: { tools: [] } } }),
      JSON.stringify({ version: 1, of: version, servers: { fs: { tools: {}, instructions: { digest: 'sha256:1' } } } }),
    ]) {
      await writeFile(store.digestsPath, content);
      for (const read of [store.readDigestsNow(), await store.readDigests()]) {
        assert.equal(read.indexed, false, content);
        assert.deepEqual(plain(read.digests), plain(digestsOf(pins)), content);
      }
    }
    await unlink(store.digestsPath);
    assert.equal(store.readDigestsNow().indexed, false);
  });

  void it('keeps tools named like Object members as names', { timeout: 5000 }, async () => {
    const store = new PinStore(await freshDir());
    await addTool(store, '__proto__', 'constructor');
    const read = store.readDigestsNow();
    assert.equal(read.indexed, true);
    assert.deepEqual(Object.keys(read.digests.servers), ['__proto__']);
    assert.equal(Object.getPrototypeOf(read.digests.servers), null);
    assert.deepEqual(Object.keys(read.digests.servers['__proto__']!.tools), ['constructor']);
  });
});

void describe('PinStore lock', { timeout: 60_000 }, () => {
  void it('loses no update from 20 concurrent writers in this process', { timeout: 20_000 }, async () => {
    const dir = await freshDir();
    const names = Array.from({ length: 20 }, (_, i) => `tool${String(i).padStart(2, '0')}`);
    await Promise.all(names.map((name) => addTool(new PinStore(dir), 'srv', name)));
    const text = await readFile(join(dir, 'pins.json'), 'utf8');
    const parsed = JSON.parse(text) as PinsFile;
    assert.deepEqual(Object.keys(parsed.servers.srv?.tools ?? {}).sort(), names);
    assert.deepEqual(Object.keys((await new PinStore(dir).readPins()).servers.srv?.tools ?? {}).sort(), names);
    assert.deepEqual((await readdir(dir)).sort(), ['pin-digests.json', 'pins.json']);
    // The index left by the last writer is of the last pins.json, and says what it says.
    const read = new PinStore(dir).readDigestsNow();
    assert.equal(read.indexed, true);
    assert.deepEqual(plain(read.digests), plain(digestsOf(await new PinStore(dir).readPins())));
  });

  void it('loses no update from 6 processes writing 5 times each', { timeout: 40_000 }, async () => {
    const dir = await freshDir();
    const storeUrl = new URL('../../src/pins/store.js', import.meta.url).href;
    const script = `
      (async () => {
        const { PinStore } = await import(${JSON.stringify(storeUrl)});
        const [dir, worker] = process.argv.slice(1);
        const store = new PinStore(dir);
        for (let i = 0; i < 5; i++) {
          const name = 'w' + worker + '_' + i;
          await store.updatePins((pins) => {
            const record = (pins.servers.srv ??= { tools: {} });
            record.tools[name] = { digest: 'sha256:' + name, definition: { name }, approvedAt: new Date().toISOString(), by: 'first-use' };
            return true;
          });
        }
      })().catch((err) => { console.error(err); process.exit(1); });
    `;
    const run = (worker: number): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', script, dir, String(worker)], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      });
    const results = await Promise.all(Array.from({ length: 6 }, (_, w) => run(w)));
    for (const [w, result] of results.entries()) assert.deepEqual(result, { code: 0, stderr: '' }, `worker ${w}`);
    const expected = Array.from({ length: 6 }, (_, w) => Array.from({ length: 5 }, (_, i) => `w${w}_${i}`))
      .flat()
      .sort();
    const pins = JSON.parse(await readFile(join(dir, 'pins.json'), 'utf8')) as PinsFile;
    assert.deepEqual(Object.keys(pins.servers.srv?.tools ?? {}).sort(), expected);
    assert.equal(pins.servers.srv?.tools.w3_4?.digest, 'sha256:w3_4');
    const read = new PinStore(dir).readDigestsNow();
    assert.equal(read.indexed, true);
    assert.deepEqual(Object.keys(read.digests.servers.srv?.tools ?? {}).sort(), expected);
    assert.deepEqual((await readdir(dir)).sort(), ['pin-digests.json', 'pins.json']);
  });

  void it('takes over a lock older than 30 s', { timeout: 5000 }, async () => {
    const dir = await freshDir();
    const lock = join(dir, LOCK);
    await writeFile(lock, '999999\n');
    const past = new Date(Date.now() - 60_000);
    await utimes(lock, past, past);
    const started = Date.now();
    await addTool(new PinStore(dir), 's', 't');
    assert.ok(Date.now() - started < 2000, 'a stale lock is not waited for');
    assert.deepEqual(Object.keys((await new PinStore(dir).readPins()).servers.s?.tools ?? {}), ['t']);
    await assert.rejects(stat(lock), { code: 'ENOENT' });
  });

  void it('takes over a stale lock even when a stale lock-breaking guard was left behind', { timeout: 5000 }, async () => {
    const dir = await freshDir();
    const past = new Date(Date.now() - 60_000);
    for (const file of [LOCK, `${LOCK}.break`]) {
      await writeFile(join(dir, file), '');
      await utimes(join(dir, file), past, past);
    }
    await addTool(new PinStore(dir), 's', 't');
    assert.deepEqual(Object.keys((await new PinStore(dir).readPins()).servers.s?.tools ?? {}), ['t']);
    assert.deepEqual((await readdir(dir)).sort(), ['pin-digests.json', 'pins.json']);
  });

  void it('loses no update when 20 concurrent writers all find the same stale lock', { timeout: 30_000 }, async () => {
    // Two writers that both saw the stale lock must not both remove "it": the second would remove
    // the lock the first had just taken, and both would write. The race is narrow, so it is run
    // repeatedly (each round is ~0.1 s).
    const names = Array.from({ length: 20 }, (_, i) => `tool${String(i).padStart(2, '0')}`);
    for (let round = 0; round < 30; round++) {
      const dir = await freshDir();
      const lock = join(dir, LOCK);
      await writeFile(lock, '999999\n');
      const past = new Date(Date.now() - 60_000);
      await utimes(lock, past, past);
      await Promise.all(names.map((name) => addTool(new PinStore(dir), 'srv', name)));
      const pins = JSON.parse(await readFile(join(dir, 'pins.json'), 'utf8')) as PinsFile;
      assert.deepEqual(Object.keys(pins.servers.srv?.tools ?? {}).sort(), names, `round ${round}`);
      assert.deepEqual((await readdir(dir)).sort(), ['pin-digests.json', 'pins.json'], `round ${round}`);
    }
  });

  void it('waits for a fresh lock held by someone else, then succeeds once it is removed', { timeout: 5000 }, async () => {
    const dir = await freshDir();
    const lock = join(dir, LOCK);
    await writeFile(lock, '999999\n');
    let removedAt = 0;
    const timer = setTimeout(() => {
      void unlink(lock).then(() => (removedAt = Date.now()));
    }, 100);
    try {
      let changedAt = 0;
      await new PinStore(dir).updatePins((pins) => {
        changedAt = Date.now();
        pins.servers.s = { tools: {} };
        return true;
      });
      assert.ok(removedAt > 0, 'the lock was removed before the update ran');
      assert.ok(changedAt >= removedAt, 'the update ran only after the lock was removed');
      assert.deepEqual(plain((await new PinStore(dir).readPins()).servers), plain({ s: { tools: {} } }));
      await assert.rejects(stat(lock), { code: 'ENOENT' });
    } finally {
      clearTimeout(timer);
    }
  });

  void it('gives up on a fresh lock that is never removed, after about 5 s, and leaves it alone', { timeout: 15_000 }, async () => {
    const dir = await freshDir();
    const lock = join(dir, LOCK);
    await writeFile(lock, '999999\n');
    const started = Date.now();
    let called = false;
    await rejectsInvalid(
      new PinStore(dir).updatePins(() => (called = true)),
      /locked/,
      lock,
    );
    const waited = Date.now() - started;
    assert.ok(waited >= 4900 && waited < 8000, `waited ${waited} ms`);
    assert.equal(called, false);
    assert.equal(await readFile(lock, 'utf8'), '999999\n');
    await assert.rejects(stat(join(dir, 'pins.json')), { code: 'ENOENT' });
  });
});
