// A package registry on 127.0.0.1 for the packaging test: it serves exactly mcpgate's runtime
// dependencies (the lockfile's entries not marked dev), so `npm install -g mcpgate-*.tgz` and `npx`
// resolve and fetch them with no network. Why not `npm install --offline`: npm resolves a range from
// the full packument, while `npm ci` caches only the abbreviated one, so an offline install of a
// tarball fails with ENOTCACHED even right after `npm ci`. The tarballs themselves are the registry's
// own bytes, taken from the npm cache by `npm pack NAME@VERSION --offline` (their integrity is
// checked against the lockfile's); the packuments are built from the lockfile's entries.

import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** The fields of a lockfile entry npm reads when it resolves and places a package. */
const MANIFEST_FIELDS = [
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
  'license',
] as const;

interface LockEntry {
  name?: string;
  version?: string;
  integrity?: string;
  dev?: boolean;
  link?: boolean;
  [field: string]: unknown;
}

export interface RuntimePackage {
  name: string;
  version: string;
  integrity: string;
  manifest: Record<string, unknown>;
}

/** The runtime dependencies the lockfile pins: every non-dev package entry, by name and version. */
export async function runtimePackages(root: string): Promise<RuntimePackage[]> {
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const seen = new Map<string, RuntimePackage>();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '' || entry.dev === true || entry.link === true) continue;
    const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (entry.version === undefined || entry.integrity === undefined)
      throw new Error(`package-lock.json: ${key} has no version or integrity`);
    const manifest: Record<string, unknown> = { name, version: entry.version };
    for (const field of MANIFEST_FIELDS) if (entry[field] !== undefined) manifest[field] = entry[field];
    seen.set(`${name}@${entry.version}`, { name, version: entry.version, integrity: entry.integrity, manifest });
  }
  return [...seen.values()];
}

export interface LocalRegistry {
  /** The registry's URL, with a trailing slash (what `npm --registry` takes). */
  readonly url: string;
  /** The package names npm asked for (packuments), in order. */
  readonly asked: string[];
  /** Requests the registry could not answer (404), e.g. a package that is not a runtime dependency. */
  readonly missing: string[];
  close(): Promise<void>;
}

/** Copies the runtime dependencies' tarballs out of the npm cache into `dir` and serves them. */
export async function startRuntimeRegistry(root: string, dir: string, env: NodeJS.ProcessEnv): Promise<LocalRegistry> {
  const packages = await runtimePackages(root);
  await mkdir(dir, { recursive: true });
  const specs = packages.map((p) => `${p.name}@${p.version}`);
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('npm', ['pack', '--offline', '--json', '--pack-destination', dir, ...specs], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    }));
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`the runtime dependencies are not all in the npm cache (run \`npm ci\` first): ${e.stderr ?? e.message}`, {
      cause: err,
    });
  }
  const packed = JSON.parse(stdout) as { id: string; filename: string; integrity: string }[];
  const files = new Map<string, string>();
  for (const p of packages) {
    const out = packed.find((o) => o.id === `${p.name}@${p.version}`);
    if (out === undefined) throw new Error(`npm pack gave no tarball for ${p.name}@${p.version}`);
    if (out.integrity !== p.integrity)
      throw new Error(`${p.name}@${p.version} from the npm cache does not match package-lock.json's integrity`);
    files.set(out.filename, join(dir, out.filename));
  }
  const asked: string[] = [];
  const missing: string[] = [];
  let url = '';
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://registry').pathname);
    if (path.startsWith('/-/')) {
      const file = files.get(path.slice('/-/'.length));
      if (file !== undefined) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        createReadStream(file).pipe(res);
        return;
      }
    } else {
      const name = path.slice(1);
      const versions = packages.filter((p) => p.name === name);
      if (versions.length > 0) {
        asked.push(name);
        const packument = {
          name,
          'dist-tags': { latest: versions[versions.length - 1]!.version },
          versions: Object.fromEntries(
            versions.map((p) => {
              const filename = packed.find((o) => o.id === `${p.name}@${p.version}`)!.filename;
              return [p.version, { ...p.manifest, dist: { tarball: `${url}-/${filename}`, integrity: p.integrity } }];
            }),
          ),
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(packument));
        return;
      }
    }
    missing.push(`${req.method} ${path}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the registry has no port');
  url = `http://127.0.0.1:${address.port}/`;
  return {
    url,
    asked,
    missing,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
