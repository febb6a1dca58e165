// What the tool index costs in memory, alone in a process: `node --expose-gc
// dist/bench/search-index-memory.js realistic|real` builds the documents first, collects, reads RSS and
// the heap, builds the index over them, collects again, and prints the differences as JSON. A process
// of its own, so nothing else the benchmark did (servers, earlier indexes) is in the figures.

import { ToolIndex } from '../src/search/tool-index.js';
import { loadSet } from './search-quality.js';
import { realDocs, realisticDocs } from './search-docs.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const docs = process.argv[2] === 'real' ? realDocs(loadSet(), 5000) : realisticDocs(10, 500);
gc();
const before = process.memoryUsage();
const index = new ToolIndex();
for (const doc of docs) index.upsert(doc);
gc();
const after = process.memoryUsage();
process.stdout.write(
  JSON.stringify({
    tools: index.size,
    rssMiB: (after.rss - before.rss) / 2 ** 20,
    heapMiB: (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / 2 ** 20,
  }) + '\n',
);
