// One JSON file replaced atomically, for the stores in the state directory (pins/store.ts, the pins and
// the held tools; oauth/store.ts, the server logins): a temp file beside the target (created, never
// reused: `wx`, with the file's mode from the start), written and fsynced, renamed over the target,
// then the directory fsynced. A reader — a running gateway watching the directory, `mcpgate pins` — sees
// the old file or the new one, never half of one. It lives here because this is the one room both
// stores may import (ROOMS in eslint.config.js), beside the audit trail, the other writer of files.

import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Replaces `path` with `value` as indented JSON (and a final newline); `mode` is the new file's (default 0644). */
export async function writeJsonAtomic(path: string, value: unknown, mode = 0o644): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await dir.close();
  }
}
