// The direct look at a listed tool (servers/lists.ts `plainTool`) that spares the tools/list schema
// walk: it may accept only what the schema accepts. Every field of a realistic tool is replaced by
// wrong and unusual values (and removed), and the list a server sends with each variant must be
// taken exactly when the schema accepts the variant, refused (MCPG_SERVER_BAD_RESPONSE) otherwise.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { Connection } from '../../../src/servers/connection.js';
import { fetchLists } from '../../../src/servers/lists.js';
import { serverSchemas } from '../../../src/servers/sdk-schemas.js';
import { realisticTool } from '../../../bench/bench-tool.js';
import { FakeServer, stdioConfig } from '../../helpers/fake-server.js';

const VALUES: unknown[] = [
  undefined,
  null,
  0,
  1.5,
  '',
  'text',
  true,
  false,
  [],
  ['a'],
  [1],
  {},
  { type: 'object' },
  { type: 'string' },
  { $schema: 1 },
  { $schema: 'x' },
];

const { tools: toolsResult } = await serverSchemas();
const schemaAccepts = (tool: unknown): boolean => toolsResult.safeParse({ tools: [tool] }).success;

function variants(base: Record<string, unknown>): unknown[] {
  const out: unknown[] = [base, null, [], 'tool', { ...base, extra: 1 }];
  const fields = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'icons', 'execution', '_meta'];
  for (const field of fields) for (const value of VALUES) out.push({ ...base, [field]: value });
  const input = base.inputSchema as Record<string, unknown>;
  for (const field of ['type', 'properties', 'required'])
    for (const value of VALUES) out.push({ ...base, inputSchema: { ...input, [field]: value } });
  const annotations = { title: 'T', readOnlyHint: true };
  for (const field of ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
    for (const value of VALUES) out.push({ ...base, annotations: { ...annotations, [field]: value } });
  }
  out.push(
    { ...base, inputSchema: { ...input, required: ['a', 2] } },
    { ...base, icons: [{ src: 'x' }] },
    { ...base, execution: { taskSupport: 'optional' } },
  );
  return out;
}

void describe('plainTool: the direct look at a listed tool', () => {
  /** What the server lists next: its answer to tools/list carries these tools as they are. */
  let listed: unknown[] = [];
  let conn: Connection;

  before(async () => {
    const server = new FakeServer('shape', { tools: [{ name: 'get' }] });
    const hooks = {
      notification: () => undefined,
      serverRequest: () => undefined,
      ready: () => Promise.resolve(),
      interrupted: () => undefined,
      lost: () => undefined,
    };
    conn = new Connection(stdioConfig('shape'), hooks, silentLogger, {
      startupTimeoutMs: 5000,
      supervision: { retries: 0 },
      transport: (_config, _log, events) =>
        server.open({
          ...events,
          line: (line, related) => {
            const msg = JSON.parse(line) as { result?: { tools?: unknown } };
            if (msg.result?.tools !== undefined) msg.result.tools = listed;
            events.line(JSON.stringify(msg), related);
          },
        }),
    });
    assert.equal(await conn.start(), true);
  });

  after(async () => {
    await conn.close();
  });

  /** Whether the gateway takes a list holding `tool` (false: refused as a bad response). */
  const taken = async (tool: unknown): Promise<boolean> => {
    listed = [tool];
    try {
      await fetchLists(conn, ['tools']);
      return true;
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'MCPG_SERVER_BAD_RESPONSE') return false;
      throw err;
    }
  };

  void it('takes a realistic tool', async () => {
    const tool = JSON.parse(JSON.stringify(realisticTool(3))) as unknown;
    assert.equal(await taken(tool), true);
    assert.equal(schemaAccepts(tool), true);
  });

  void it('takes exactly what the tools/list schema accepts', async () => {
    const base = JSON.parse(JSON.stringify(realisticTool(7))) as Record<string, unknown>;
    let accepted = 0;
    let rejected = 0;
    for (const tool of variants(base)) {
      const schema = schemaAccepts(tool);
      assert.equal(await taken(tool), schema, `${schema ? 'accepted' : 'rejected'} by the schema: ${JSON.stringify(tool)}`);
      if (schema) accepted++;
      else rejected++;
    }
    assert.ok(accepted > 20 && rejected > 20, `both sides exercised (${accepted} accepted, ${rejected} rejected)`);
  });
});
