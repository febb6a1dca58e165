// How `mcpgate import` writes its two files, which hold private servers and secrets: created with mode
// 0600 (never the umask's 0644), its directory 0700 when it is made, and never through a symbolic
// link (O_NOFOLLOW; checked first, so nothing is written when either file is a link): a `.mcp.env`
// planted as a link to another file must not receive the secrets.

import { constants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { GatewayError } from '../../errors.js';

/** Refuses a path that is a symbolic link (a missing file is fine). */
export async function refuseLink(file: string): Promise<void> {
  let link = false;
  try {
    link = (await lstat(file)).isSymbolicLink();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (link)
    throw new GatewayError(
      'MCPG_USAGE',
      `${file} is a symbolic link: mcpgate does not write private files through links; remove it or choose another path (--config, --secrets)`,
    );
}

/** Writes `text` to `file`: created 0600, not through a link; `private` also makes an existing file 0600. */
export async function writePrivateFile(file: string, text: string, options: { private: boolean }): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  let handle;
  try {
    handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') await refuseLink(file);
    throw err;
  }
  try {
    if (options.private) await handle.chmod(0o600);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
