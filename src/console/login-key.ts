// The key that signs the console's login cookies, shared by every process that serves this state
// directory (the workers of `--workers N`, or several `serve` processes on one host): a login made on
// one is valid on all, with nothing kept in any one process's memory. 32 random bytes in
// `STATE/console-login.key` (mode 0600), made by the first process that needs it: written to a
// temporary file, then linked into place, so two workers starting together agree on one key (the
// second's link fails and it reads the first's). Deleting the file signs every admin out at the
// next start of the processes.

import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOGIN_KEY_FILE = 'console-login.key';
const KEY_BYTES = 32;

/** The login key of state directory `dir`, made if there is none yet. */
export function loginKey(dir: string): Buffer {
  const file = join(dir, LOGIN_KEY_FILE);
  const existing = readKey(file);
  if (existing !== undefined) return existing;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temporary);
  }
  const key = readKey(file);
  if (key === undefined) throw new Error(`the console's login key ${file} is not ${KEY_BYTES} bytes: remove it and restart`);
  return key;
}

function readKey(file: string): Buffer | undefined {
  let key: Buffer;
  try {
    key = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (key.length !== KEY_BYTES) throw new Error(`the console's login key ${file} is not ${KEY_BYTES} bytes: remove it and restart`);
  return key;
}
