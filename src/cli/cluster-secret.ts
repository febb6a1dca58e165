// The cluster secret of the workers of one host when no `--cluster-secret` is given (a Redis on
// loopback only): a random key in the state directory (`cluster-secret`, mode 0600), made by the
// first worker to start and read by the others — every worker of `serve --workers N`, and separate
// `serve --redis` processes that share the state directory. Never agreed through Redis: anyone who
// can write to the Redis could then choose the key that signs forwards and records.

import { hkdfSync, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SECRET_FILE = 'cluster-secret';
/** A secret shorter than this (a truncated or foreign file) is refused rather than used. */
const MIN_CHARS = 32;

/**
 * The key sealing modern agents' requestState in a cluster (unless MCPGATE_REQUEST_STATE_KEY gives
 * one): derived from the cluster secret (HKDF-SHA256), so a retry sealed by one worker opens on any.
 */
export function requestStateKeyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'mcpgate cluster', 'requestState sealing key v1', 32));
}

/** The host's cluster secret from `stateDir`, made there (atomically: first writer wins) if absent. */
export async function localClusterSecret(stateDir: string): Promise<string> {
  const file = join(stateDir, SECRET_FILE);
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  // Written whole under a private name, then linked into place: a reader never sees a half-written
  // key, and link() fails when another worker's key is already there (theirs wins).
  const draft = join(stateDir, `.${SECRET_FILE}.${process.pid}.${randomBytes(6).toString('hex')}`);
  await writeFile(draft, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(draft).catch(() => undefined);
  }
  const secret = (await readFile(file, 'utf8')).trim();
  if (secret.length < MIN_CHARS)
    throw new Error(
      `${file} holds no cluster secret (fewer than ${MIN_CHARS} characters): remove it to have a new one made, or give --cluster-secret`,
    );
  return secret;
}
