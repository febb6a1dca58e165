// A server for the code-mode benchmark (bench/code-mode.ts): deterministic tools whose results are
// what real ones look like in size and shape. `lab` (a file tree of 120 files, a graph of 80 nodes, a
// slow call, a chart image) or `crm` (a table of 400 orders, 500 items in pages of 50, accounts, a
// feature flag, reports of which one fails, and a write), chosen by the first argument.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const set = process.argv[2] === 'crm' ? 'crm' : 'lab';
const readOnly = { readOnlyHint: true };
const object = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> => ({
  type: 'object',
  properties,
  ...(required.length > 0 && { required }),
});

const FILES = 120;
const NODES = 80;
const ROWS = 400;
const ITEMS = 500;
const PAGE = 50;
const REGIONS = ['north', 'south', 'east', 'west'];

const LAB_TOOLS = [
  {
    name: 'list_files',
    description: 'Lists every file in the repository with its path and size in bytes.',
    annotations: readOnly,
    inputSchema: object({ dir: { type: 'string', description: 'A folder to list (default: the whole tree).' } }),
  },
  {
    name: 'read_file',
    description: 'Reads one file of the repository as text.',
    annotations: readOnly,
    inputSchema: object({ path: { type: 'string' } }, ['path']),
  },
  {
    name: 'graph_nodes',
    description: 'Lists the ids of every node in the dependency graph.',
    annotations: readOnly,
    inputSchema: object({}),
  },
  {
    name: 'graph_edges',
    description: 'Lists the nodes one node of the dependency graph depends on.',
    annotations: readOnly,
    inputSchema: object({ node: { type: 'integer' } }, ['node']),
  },
  {
    name: 'wait_build',
    description: 'Runs one build step and answers when it is done (about a second).',
    annotations: readOnly,
    inputSchema: object({ step: { type: 'string' }, ms: { type: 'integer' } }, ['step']),
  },
  {
    name: 'render_chart',
    description: 'Renders the build-time chart as a PNG image.',
    annotations: readOnly,
    inputSchema: object({ width: { type: 'integer' } }),
  },
];

const CRM_TOOLS = [
  {
    name: 'query_orders',
    description: 'Returns every order: id, region, amount in cents and status (paid, open or refunded).',
    annotations: readOnly,
    inputSchema: object({ since: { type: 'string', description: 'ISO date (default: all).' } }),
  },
  {
    name: 'list_items',
    description: 'Lists catalog items 50 at a time; pass the answer’s nextCursor for the next page.',
    annotations: readOnly,
    inputSchema: object({ cursor: { type: 'string' } }),
  },
  {
    name: 'get_account',
    description: 'Reads one customer account: its tier and balance in cents.',
    annotations: readOnly,
    inputSchema: object({ id: { type: 'integer' } }, ['id']),
  },
  {
    name: 'check_flag',
    description: 'Says whether a feature flag is enabled.',
    annotations: readOnly,
    inputSchema: object({ name: { type: 'string' } }, ['name']),
  },
  {
    name: 'fetch_report',
    description: 'Fetches one monthly report with its totals.',
    annotations: readOnly,
    inputSchema: object({ month: { type: 'integer', minimum: 1, maximum: 12 } }, ['month']),
  },
  {
    name: 'save_record',
    description: 'Saves a record under a key, replacing any record with that key.',
    inputSchema: object({ key: { type: 'string' }, value: { type: 'string' } }, ['key', 'value']),
  },
];

/** File `i`'s text: a markdown page of about 1.5 KB with `i % 7` TODO lines. */
function fileText(i: number): string {
  const lines = [`# Module ${i}`, ''];
  for (let n = 0; n < 30; n += 1) {
    const todo = n < i % 7 ? ' TODO: revisit this' : '';
    lines.push(`- step ${n} of module ${i} handles case ${(i * 31 + n) % 97}${todo}`);
  }
  return lines.join('\n');
}

const filePath = (i: number): string => `docs/module-${String(i).padStart(3, '0')}.md`;
/** The nodes node `n` depends on. */
const edgesOf = (n: number): number[] => [1, 2, 3].map((k) => (n * 7 + k * 13) % NODES).filter((m) => m !== n);
const order = (i: number): { id: number; region: string; amount: number; status: string } => ({
  id: i + 1,
  region: REGIONS[(i * 3) % 4]!,
  amount: ((i * 7919) % 10_000) + 100,
  status: ['paid', 'paid', 'open', 'refunded'][(i * 5) % 4]!,
});
const item = (i: number): { id: number; name: string; tags: string[] } => ({
  id: i + 1,
  name: `item-${i + 1}`,
  tags: i % 9 === 0 ? ['urgent', 'review'] : ['normal'],
});
const account = (id: number): { id: number; tier: string; balance: number } => ({
  id,
  tier: id % 3 === 0 ? 'gold' : 'silver',
  balance: (id * 1237) % 50_000,
});

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
const structured = (value: Record<string, unknown>) => ({ ...text(JSON.stringify(value)), structuredContent: value });
/** A deterministic 300 KB "PNG". */
const CHART = Buffer.alloc(300 * 1024, 7).toString('base64');
const records = new Map<string, string>();

const server = new Server({ name: set, version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: set === 'lab' ? LAB_TOOLS : CRM_TOOLS }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  switch (req.params.name) {
    case 'list_files':
      return structured({ files: Array.from({ length: FILES }, (_, i) => ({ path: filePath(i), bytes: fileText(i).length })) });
    case 'read_file': {
      const i = Number(/module-(\d+)/.exec(String(args.path))?.[1] ?? NaN);
      if (!(i >= 0 && i < FILES)) return { ...text(`no such file: ${String(args.path)}`), isError: true };
      return text(fileText(i));
    }
    case 'graph_nodes':
      return structured({ nodes: Array.from({ length: NODES }, (_, i) => i) });
    case 'graph_edges':
      return structured({ node: Number(args.node), dependsOn: edgesOf(Number(args.node)) });
    case 'wait_build': {
      const ms = typeof args.ms === 'number' ? args.ms : 1000;
      await new Promise((resolve) => setTimeout(resolve, ms));
      return structured({ step: String(args.step), ok: true, ms });
    }
    case 'render_chart':
      return { content: [{ type: 'image' as const, mimeType: 'image/png', data: CHART }] };
    case 'query_orders':
      return structured({ orders: Array.from({ length: ROWS }, (_, i) => order(i)) });
    case 'list_items': {
      const from = Number(args.cursor ?? 0);
      const items = Array.from({ length: Math.min(PAGE, ITEMS - from) }, (_, k) => item(from + k));
      const next = from + PAGE;
      return structured({ items, ...(next < ITEMS && { nextCursor: String(next) }) });
    }
    case 'get_account':
      return structured(account(Number(args.id)));
    case 'check_flag':
      return structured({ name: String(args.name), enabled: args.name === 'new_pricing' });
    case 'fetch_report': {
      const month = Number(args.month);
      if (month === 3) return { ...text('report service: month 3 is being rebuilt, try later'), isError: true };
      return structured({ month, revenue: month * 10_000 + 123, orders: month * 40 });
    }
    case 'save_record':
      records.set(String(args.key), String(args.value));
      return structured({ saved: String(args.key), bytes: String(args.value).length, records: records.size });
    default:
      return { ...text(`no tool ${req.params.name}`), isError: true };
  }
});
server.onclose = () => process.exit(0);
await server.connect(new StdioServerTransport());
