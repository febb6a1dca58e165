// Console logins signed out before their cookie expires: a short deny-list of login ids, kept in the
// state directory (`STATE/console-signed-out.json`) so that a sign-out on one worker holds on every
// worker that shares the directory. Each entry lives until the login would have expired anyway, so
// the list holds at most the sign-outs of the last ABSOLUTE hours (and at most MAX_ENTRIES; the
// oldest go first). Read again when the file's modification time changes: console requests are an
// operator's, few, so a stat per request is cheap. Written whole to a temporary file and renamed.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SIGNED_OUT_FILE = 'console-signed-out.json';
const MAX_ENTRIES = 4096;

export class SignedOut {
  private readonly file: string;
  private entries = new Map<string, number>();
  /** The file's inode and mtime when last read: each write renames a new file into place. */
  private version = '';

  constructor(
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = join(dir, SIGNED_OUT_FILE);
  }

  /** Whether login `id` was signed out. */
  has(id: string): boolean {
    this.refresh();
    const until = this.entries.get(id);
    return until !== undefined && until > this.now();
  }

  /** Signs login `id` out everywhere, until `until` (ms since 1970), when its cookie expires anyway. */
  add(id: string, until: number): void {
    this.refresh();
    const now = this.now();
    for (const [other, end] of this.entries) if (end <= now) this.entries.delete(other);
    this.entries.set(id, until);
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(temporary, JSON.stringify(Object.fromEntries(this.entries)), { mode: 0o600 });
    renameSync(temporary, this.file);
    this.version = '';
  }

  private refresh(): void {
    let version: string;
    try {
      const stat = statSync(this.file);
      version = `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    } catch {
      this.entries.clear();
      this.version = '';
      return;
    }
    if (version === this.version) return;
    this.version = version;
    const entries = new Map<string, number>();
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.file, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        for (const [id, until] of Object.entries(parsed)) if (typeof until === 'number') entries.set(id, until);
      }
    } catch {
      // A torn or damaged file signs no one out; the next sign-out rewrites it whole.
    }
    this.entries = entries;
  }
}
