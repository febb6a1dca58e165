// The 5,000 tools the latency and memory figures of tool search are taken over: the catalog benchmark's
// realistic tools (10 servers × 500), or the retrieval set's real tools repeated under numbered servers.

import type { SearchDoc } from '../src/search/tool-index.js';
import { realisticTool } from './bench-tool.js';
import type { RetrievalSet } from './search-quality.js';

/** The realistic catalog's 5,000 tools as the index is given them (exposed names as keys). */
export function realisticDocs(servers: number, toolsEach: number): SearchDoc[] {
  const docs: SearchDoc[] = [];
  for (let s = 0; s < servers; s++) {
    const server = `s${String(s).padStart(2, '0')}`;
    for (let i = 1; i <= toolsEach; i++) {
      const t = realisticTool(i) as { name: string; title: string; description: string; inputSchema: unknown };
      docs.push({
        key: `${server}__${t.name}`,
        name: t.name,
        server,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
      });
    }
  }
  return docs;
}

/** The real set's tools repeated under numbered server names until there are `count`. */
export function realDocs(set: RetrievalSet, count: number): SearchDoc[] {
  const docs: SearchDoc[] = [];
  for (let copy = 0; docs.length < count; copy++) {
    for (const d of set.docs) {
      if (docs.length === count) break;
      docs.push({ ...d, key: `${copy}:${d.key}`, server: `${d.server}-${copy}` });
    }
  }
  return docs;
}
