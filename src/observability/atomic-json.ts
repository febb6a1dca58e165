// One JSON file replaced atomically, for the stores in the state directory (pins/store.ts, the pins and
// the held tools; oauth/store.ts, the server logins): a temp file beside the target (created, never
// reused: `wx`, with the file's mode from the start), written and fsynced, renamed over the target,
// then the directory fsynced. A reader — a running gateway watching the directory, `mcpgate pins` — sees
// the old file or the new one, never half of one. It lives here because this is the one room both
// stores may import (ROOMS in eslint.config.js), beside the audit trail, the other writer of files.

import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Replaces `path` with `value` as indented JSON (and a final newline); `mode` is the new file's (default
 * 0644). Returns the written file's stat, taken before the rename (which keeps its inode, size and
 * mtime): what it names is this content, even if someone replaces the file right after.
 */
export function writeJsonAtomic(path: string, value: unknown, mode = 0o644): Promise<Stats> {
  return writeTextAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode);
}

/** Written at once: the pieces of a text given in parts are joined up to about this many UTF-16 units. */
const WRITE_PIECE = 1 << 20;

/**
 * The same with the file's text as given (a store that lays its JSON out itself), whole or in parts:
 * parts are written about a MiB at a time, so a large file is never one string and one buffer.
 */
export async function writeTextAtomic(path: string, text: string | Iterable<string>, mode = 0o644): Promise<Stats> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', mode);
  let written: Stats;
  try {
    if (typeof text === 'string') await handle.writeFile(text);
    else {
      let piece = '';
      for (const part of text) {
        piece += part;
        if (piece.length >= WRITE_PIECE) {
          await handle.writeFile(piece);
          piece = '';
        }
      }
      await handle.writeFile(piece);
    }
    await handle.sync();
    written = await handle.stat();
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
  return written;
}
