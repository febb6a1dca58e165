// Watches configuration files for hot reload. It watches their *directories*, because editors save by
// writing a temp file and renaming it over the original (a watch on the file itself would follow the
// old inode and miss every later change), and a Kubernetes ConfigMap volume changes by swapping a
// `..data` symlink (kubelet writes `..2026_…` then renames `..data_tmp` over `..data`): no event then
// names the file itself. So any event in a watched directory counts; once the burst is over (trailing
// debounce, ~200 ms) the files are read and hashed, and `onChange` runs only if a digest differs —
// unrelated files in the directory cost a hash, never a reload.

import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../observability/logger.js';

const DEFAULT_DEBOUNCE_MS = 200;

export interface FileWatch {
  close(): void;
}

/** sha256 of a file's contents, streamed (bounded memory whatever its size); a read error is its own digest. */
export function fileDigest(file: string): Promise<string> {
  return new Promise((resolve) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', (err: NodeJS.ErrnoException) => resolve(`unreadable:${err.code ?? err.message}`));
  });
}

/** fileDigest, synchronously (64 KiB at a time): the first digests are taken before watching returns. */
function fileDigestSync(file: string): string {
  const hash = createHash('sha256');
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const chunk = Buffer.allocUnsafe(64 * 1024);
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
    return hash.digest('hex');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return `unreadable:${e.code ?? e.message}`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

async function digests(files: readonly string[]): Promise<string> {
  return (await Promise.all(files.map(fileDigest))).join('\n');
}

/**
 * Calls `onChange` (debounced) whenever the contents of any of `files` change: written in place,
 * renamed over, removed, or swapped behind a symlink. The first digests are taken before this returns,
 * so a change right after it is seen.
 */
export function watchFiles(files: readonly string[], onChange: () => void, log: Logger, debounceMs = DEFAULT_DEBOUNCE_MS): FileWatch {
  let last = files.map(fileDigestSync).join('\n');
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let checking = false;
  let again = false;
  const check = async (): Promise<void> => {
    timer = undefined;
    if (closed) return;
    // One check at a time; events during it ask for one more (the last write is always seen).
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    try {
      const now = await digests(files);
      if (closed || now === last) return;
      last = now;
      onChange();
    } finally {
      checking = false;
      if (again && !closed) {
        again = false;
        schedule();
      }
    }
  };
  const schedule = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => void check(), debounceMs);
  };
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(files.map((file) => dirname(file)))) {
    try {
      const watcher = watch(dir, { persistent: false }, schedule);
      watcher.on('error', (err) => log.warn('stopped watching a configuration directory', { dir, error: err }));
      watchers.push(watcher);
    } catch (err) {
      log.warn('cannot watch a configuration directory; reload with SIGHUP instead', { dir, error: err });
    }
  }
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
