// A lean stdio MCP server for the catalog benchmarks: `node many-tools-server.js N` offers N tools
// with a small input schema (~400 bytes each: bench/catalog.ts); `node many-tools-server.js N realistic`
// N tools as real servers list them (~1.3 KB each: bench/catalog-startup.ts). Calling its tool `bump` drops its
// last tool and sends notifications/tools/list_changed, so the benchmark can time what one server's
// change costs the gateway (a tool gone, not a new or changed one: those would be held by the pins). Hand-rolled JSON-RPC (no SDK) so 100 of them stay small.

import { readLines, send, negotiateVersion, type Params } from '../test/fixtures/raw-stdio.js';
import { benchTool, realisticTool } from './bench-tool.js';

const count = Number(process.argv[2] ?? 50);
const realistic = process.argv[3] === 'realistic';
let generation = 0;

function tools(): unknown[] {
  const list: unknown[] = [];
  for (let i = 0; i < Math.max(1, count - generation); i++) {
    const name = i === 0 ? 'bump' : `tool_${String(i).padStart(2, '0')}`;
    if (realistic && i > 0) list.push(realisticTool(i));
    else list.push(benchTool(name, `Tool ${i} of a benchmark server: looks a record up by id and returns its fields.`));
  }
  return list;
}

readLines(
  (line) => {
    const msg = JSON.parse(line) as { id?: string | number; method?: string; params?: Params };
    if (msg.id === undefined || msg.method === undefined) return;
    switch (msg.method) {
      case 'initialize':
        return send({
          jsonrpc: '2.0',
          id: msg.id,
          result: {
            protocolVersion: negotiateVersion(msg.params?.protocolVersion),
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: 'many-tools', version: '1.0.0' },
          },
        });
      case 'ping':
        return send({ jsonrpc: '2.0', id: msg.id, result: {} });
      case 'tools/list':
        return send({ jsonrpc: '2.0', id: msg.id, result: { tools: tools() } });
      case 'tools/call':
        if ((msg.params as { name?: string } | undefined)?.name === 'bump') {
          generation += 1;
          send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `generation ${generation}` }] } });
          return send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
        }
        return send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'ok' }] } });
      default:
        return send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
    }
  },
  () => process.exit(0),
);
