// `npm pack` / `npm publish` run this first (the `prepack` script): the package ships dist/src, so it
// is compiled here from a clean slate. dist/src is emptied first so that the output of a source file
// deleted since the last build is not packed; tsconfig.build.json compiles src/ alone (no tests, no
// benches) and without source maps, which would point at .ts files the package does not carry.
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import process from 'node:process';

rmSync('dist/src', { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
