#!/usr/bin/env node
// The `mcpgate` executable (package.json `bin`): Node's compile cache first (compile-cache.ts), then
// the command line (main.ts). main.ts is imported dynamically because a static import would be
// compiled, with everything it imports, before the cache is on.

import { enableCompileCache } from './compile-cache.js';

enableCompileCache();
const { runAsProcess } = await import('./main.js');
runAsProcess(process.argv.slice(2));
