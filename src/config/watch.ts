// Watches configuration files for hot reload. It watches their *directories*, because editors save by
// writing a temp file and renaming it over the original (a watch on the file itself would follow the
// old inode and miss every later change). Events are debounced on the trailing edge (~200 ms): one
// reload serves a burst of writes, and the last write is always seen.

import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from '../observability/logger.js';

export const DEFAULT_DEBOUNCE_MS = 200;

export interface FileWatch {
  close(): void;
}

/** Calls `onChange` (debounced) whenever any of `files` is written, created, renamed over or removed. */
export function watchFiles(files: readonly string[], onChange: () => void, log: Logger, debounceMs = DEFAULT_DEBOUNCE_MS): FileWatch {
  const byDir = new Map<string, Set<string>>();
  for (const file of files) {
    const names = byDir.get(dirname(file)) ?? new Set<string>();
    names.add(basename(file));
    byDir.set(dirname(file), names);
  }
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const fire = (): void => {
    timer = undefined;
    if (!closed) onChange();
  };
  const watchers: FSWatcher[] = [];
  for (const [dir, names] of byDir) {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, filename) => {
        // Some platforms omit the name; then any change in the directory counts.
        if (filename !== null && !names.has(filename.toString())) return;
        clearTimeout(timer);
        timer = setTimeout(fire, debounceMs);
      });
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
